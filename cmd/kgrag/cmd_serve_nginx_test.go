package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kgrag/kgrag/internal/test"
)

// startNginx runs nginx with docs/deploy/nginx.conf, its upstreams and
// port replaced, in front of upstreams; it returns nginx's address.
func startNginx(t *testing.T, upstreams [2]string) string {
	t.Helper()
	root := test.RepoRoot(t)
	out, err := exec.Command(filepath.Join(root, "scripts", "nginx.sh"), "--check").Output()
	bin := strings.TrimSpace(string(out))
	if err != nil || bin == "" {
		test.SkipOrFail(t, "no nginx: scripts/nginx.sh unpacks Debian's (%v)", err)
	}
	site, err := os.ReadFile(filepath.Join(root, "docs", "deploy", "nginx.conf"))
	if err != nil {
		t.Fatal(err)
	}
	addr := freePort(t)
	conf := string(site)
	for old, repl := range map[string]string{"127.0.0.1:8765": upstreams[0], "127.0.0.1:8766": upstreams[1], "listen 127.0.0.1:8080": "listen " + addr} {
		if !strings.Contains(conf, old) {
			t.Fatalf("docs/deploy/nginx.conf has no %q to replace", old)
		}
		conf = strings.Replace(conf, old, repl, 1)
	}
	dir := t.TempDir()
	// nginx's workers run as nobody when the master is root: they write
	// temporary files here.
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kgrag.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	main := fmt.Sprintf(`daemon off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log info;
events {}
http {
    access_log %[1]s/access.log;
    client_body_temp_path %[1]s/body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
    include %[1]s/kgrag.conf;
}
`, dir)
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-p", dir, "-c", filepath.Join(dir, "nginx.conf"))
	var log lockedBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGQUIT)
		cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Logf("nginx: %s\nerror.log:\n%s", log.String(), b)
		}
	})
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get("http://" + addr + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return addr
			}
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("nginx at %s did not answer /readyz within 20 s: %s\n%s", addr, log.String(), b)
		}
	}
}

// TestServeBehindNginx runs two kgrag serve processes behind nginx with
// the configuration the docs ship: readiness and a streamed answer come
// through, and when one server is sent SIGTERM while 8 clients ask, its
// questions in flight finish, the rest go to the other server, and no
// client sees an error.
func TestServeBehindNginx(t *testing.T) {
	f := newAskFixture(t)
	var procs [2]*serveProc
	for i := range procs {
		procs[i] = startServeProc(t, "--input", f.input, "--index", f.index, "--llm-url", f.srv.URL(),
			"--embed-model", askEmbedModel, "--chat-model", "test-chat")
	}
	for deadline := time.Now().Add(30 * time.Second); procs[0].version() != 1 || procs[1].version() != 1; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the servers are not ready within 30 s:\n%s\n%s", procs[0].out, procs[1].out)
		}
	}
	proxy := &serveProc{addr: startNginx(t, [2]string{procs[0].addr, procs[1].addr})}

	// A streamed answer, through the proxy, arrives as events.
	body, _ := json.Marshal(map[string]any{"model": "kgrag-local", "stream": true,
		"messages": []map[string]string{{"role": "user", "content": "Who is Scrooge's clerk?"}}})
	resp, err := http.Post("http://"+proxy.addr+"/v1/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	events, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") ||
		!bytes.Contains(events, []byte("data: [DONE]")) || bytes.Count(events, []byte("data: ")) < 3 {
		t.Fatalf("streamed chat through nginx: %s %s\n%s", resp.Status, resp.Header.Get("Content-Type"), events)
	}

	// Drain: SIGTERM to the first server under load.
	var (
		mu       sync.Mutex
		failures []string
		served   int
	)
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	questions := askQuestions(t, f)
	for c := range 8 {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				_, err := proxy.ask(ctx, questions[(c+i)%len(questions)])
				if ctx.Err() != nil {
					return
				}
				mu.Lock()
				served++
				if err != nil {
					failures = append(failures, err.Error())
				}
				mu.Unlock()
			}
		})
	}
	time.Sleep(time.Second)
	if err := procs[0].cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- procs[0].cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the first server after SIGTERM: %v; want exit 0", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the first server did not stop within 30 s of SIGTERM")
	}
	mu.Lock()
	atStop := served
	mu.Unlock()
	time.Sleep(time.Second)
	stop()
	wg.Wait()
	t.Logf("8 clients through nginx: %d questions, %d of them after the first server stopped; %d failed", served, served-atStop, len(failures))
	if len(failures) > 0 {
		t.Errorf("%d of %d questions through nginx failed while a server drained; first: %s", len(failures), served, failures[0])
	}
	if served == atStop {
		t.Errorf("no question was answered after the first server stopped")
	}
}
