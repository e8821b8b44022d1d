package main

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer a process writes to while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestServeProcessSignals runs kgrag serve as a process: it answers on
// --addr, SIGHUP reloads the graph (its version goes up), a wrong --addr
// is a usage error, and SIGTERM ends it with status 0 and no secret in
// what it printed.
func TestServeProcessSignals(t *testing.T) {
	f := newAskFixture(t)
	addr := freePort(t)
	const key = "proc-key-789"
	cmd := exec.Command(os.Args[0], "serve", "--input", f.input, "--index", f.index, "--llm-url", f.srv.URL(),
		"--embed-model", askEmbedModel, "--chat-model", "test-chat", "--addr", addr)
	cmd.Env = append(os.Environ(), "KGRAG_TEST_RUN_MAIN=1", "KGRAG_SERVE_KEY="+key)
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	version := (&serveProc{addr: addr}).version
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !ok(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 20 s; output:\n%s", what, out.String())
			}
		}
	}
	waitFor("kgrag serve answers /readyz", func() bool { return version() == 1 })

	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/v1/models", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("/v1/models without the key from KGRAG_SERVE_KEY: %d; want 401", resp.StatusCode)
	}

	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor("SIGHUP reloads (version 2)", func() bool { return version() == 2 })

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("after SIGTERM: %v; want exit 0\n%s", err, out.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("kgrag serve did not stop within 20 s of SIGTERM:\n%s", out.String())
	}
	log := out.String()
	for _, want := range []string{"serving", "graph loaded", "version=2", "stopped"} {
		if !strings.Contains(log, want) {
			t.Errorf("output has no %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, key) {
		t.Errorf("the output shows the API key:\n%s", log)
	}

	_, stderr, code := runKgrag(t, "serve", "--input", f.input, "--addr", "no-port")
	if code != exitUsage || !strings.Contains(stderr, "--addr") {
		t.Errorf("--addr no-port: exit %d, %q; want %d naming --addr", code, stderr, exitUsage)
	}
}
