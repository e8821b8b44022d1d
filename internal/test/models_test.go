package test_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kgrag/kgrag/internal/test"
)

// spawn runs scripts/lib.sh's kg_spawn on args, as scripts/models.sh
// starts the model server, and returns the pid it wrote.
func spawn(t *testing.T, pidfile, logfile string, args ...string) int {
	t.Helper()
	lib := filepath.Join(test.RepoRoot(t), "scripts", "lib.sh")
	script := `. "$0"; KG_NAME=models kg_spawn "$@"`
	cmd := exec.Command("bash", append([]string{"-c", script, lib, pidfile, logfile}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kg_spawn: %v\n%s", err, out)
	}
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid file %q: %v", b, err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	return pid
}

// waitLog waits until the log at path holds want.
func waitLog(t *testing.T, path, want string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(path)
		if strings.Contains(string(b), want) {
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("log %s = %q; want it to hold %q", path, b, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSpawnRecordsHowItEnded: the shell kg_spawn puts in front of a
// server appends the exit status, or the signal, to the server's log.
func TestSpawnRecordsHowItEnded(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		signal syscall.Signal // sent to the pid; 0 to let it end
		want   string
	}{
		{"segfault", []string{"sleep", "30"}, syscall.SIGSEGV, "sleep (pid %d) was killed by signal 11 (SIGSEGV)"},
		{"killed", []string{"sleep", "30"}, syscall.SIGKILL, "sleep (pid %d) was killed by signal 9 (SIGKILL)"},
		{"exit", []string{"sh", "-c", "echo started; exit 3"}, 0, "sh (pid %d) exited with status 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			logfile := filepath.Join(dir, "server.log")
			pid := spawn(t, filepath.Join(dir, "server.pid"), logfile, tt.args...)
			if tt.signal != 0 {
				if err := syscall.Kill(pid, tt.signal); err != nil {
					t.Fatal(err)
				}
			}
			log := waitLog(t, logfile, "kgrag models: ")
			if want := fmt.Sprintf(tt.want, pid); !strings.Contains(log, want) {
				t.Errorf("log = %q; want it to say %q", log, want)
			}
		})
	}
}

// TestModelServerCheck: Check passes while a server answers /v1/models,
// and once it has crashed says so with the signal from its log.
func TestModelServerCheck(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		test.SkipOrFail(t, "python3: %v", err)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "www", "v1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "www", "v1", "models"), []byte(`{"data":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	logfile := filepath.Join(dir, "server.log")
	pid := spawn(t, filepath.Join(dir, "server.pid"), logfile,
		"python3", "-m", "http.server", "--bind", "127.0.0.1", "--directory", filepath.Join(dir, "www"), strconv.Itoa(port))
	m := test.ModelServer{URL: fmt.Sprintf("http://127.0.0.1:%d/v1", port), Log: logfile}

	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for {
		err := m.Check(ctx)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("Check of a running server: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}

	if err := syscall.Kill(pid, syscall.SIGSEGV); err != nil {
		t.Fatal(err)
	}
	waitLog(t, logfile, "killed by signal")
	err = m.Check(t.Context())
	if err == nil {
		t.Fatal("Check of a crashed server = nil; want an error")
	}
	for _, want := range []string{"does not answer", "last lines of " + logfile, fmt.Sprintf("python3 (pid %d) was killed by signal 11 (SIGSEGV)", pid)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Check = %q; want it to hold %q", err, want)
		}
	}
}

// TestModelServerCheckStatus: a server that answers with an error status
// does not pass.
func TestModelServerCheckStatus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "loading", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	logfile := filepath.Join(t.TempDir(), "server.log")
	if err := os.WriteFile(logfile, []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := test.ModelServer{URL: srv.URL + "/v1", Log: logfile}.Check(t.Context())
	if err == nil || !strings.Contains(err.Error(), "503") || !strings.HasSuffix(err.Error(), "one\ntwo\nthree") {
		t.Errorf("Check = %v; want the 503 and the log's tail", err)
	}
}
