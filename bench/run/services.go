package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// serverStart starts scripts/NAME.sh on port with dir; its output goes to
// RUN/NAME-start.log. stopServers stops it if serverStop does not.
func (b *bench) serverStart(ctx context.Context, name string, port int, dir string) error {
	b.servers = append(b.servers, server{name, port, dir})
	u, err := b.exec(ctx, cmdSpec{env: []string{"KGRAG_FUSEKI_HEAP=" + b.cfg.JavaHeap}, stdout: b.runFile(name + "-start.log"),
		stderr: b.runFile(name + "-start.log"), appendOut: true},
		filepath.Join(b.repo, "scripts", name+".sh"), "start", "--port", strconv.Itoa(port), "--dir", dir)
	if err != nil {
		return err
	}
	if u.RC != 0 {
		return fmt.Errorf("%s did not start (%s)", name, lastLine(b.runFile(name+"-start.log"), 120))
	}
	return nil
}

// serverStop stops a server serverStart started; it runs even when ctx
// is done.
func (b *bench) serverStop(name string, port int, dir string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, _ = b.exec(ctx, cmdSpec{stdout: b.runFile(name + "-start.log"), stderr: b.runFile(name + "-start.log"), appendOut: true},
		filepath.Join(b.repo, "scripts", name+".sh"), "stop", "--port", strconv.Itoa(port), "--dir", dir)
	b.servers = slices.DeleteFunc(b.servers, func(s server) bool { return s == server{name, port, dir} })
}

// stopServers stops what the run started and left running.
func (b *bench) stopServers() {
	for _, s := range slices.Clone(b.servers) {
		b.serverStop(s.name, s.port, s.dir)
	}
	for _, p := range b.bg {
		p.stop()
	}
	b.bg = nil
}

// bgProc is a process started in the background; done closes when it
// has exited.
type bgProc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// background starts name args with output to logFile; stopServers ends it
// unless stop did.
func (b *bench) background(ctx context.Context, logFile, name string, args ...string) (*bgProc, error) {
	cmd, closeFn, err := b.command(ctx, cmdSpec{stdout: logFile, stderr: logFile}, name, args...)
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		closeFn()
		return nil, fmt.Errorf("start %s: %w", filepath.Base(name), err)
	}
	p := &bgProc{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); closeFn(); close(p.done) }()
	b.bg = append(b.bg, p)
	return p, nil
}

// exited reports whether the process has ended.
func (p *bgProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends TERM and waits up to 10 s for the process to go, then kills
// it.
func (p *bgProc) stop() {
	if p == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// portBusy reports whether something listens on 127.0.0.1:port.
func portBusy(port int) bool {
	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// storePort is the configured port of store, or the next free one when
// something else listens there; Virtuoso also needs its ISQL port (HTTP +
// 220) free.
func (b *bench) storePort(store string) int {
	want := b.cfg.Ports[store]
	p := want
	for i := 0; i < 50; i, p = i+1, p+1 {
		if portBusy(p) || (store == "virtuoso" && portBusy(p+220)) {
			continue
		}
		break
	}
	if p != want {
		b.logf("%s: configured port busy; using %d", store, p)
	}
	return p
}

// storeURL is the kgrag --store URL of store on port; queryURL its SPARQL
// query endpoint.
func storeURL(store string, port int) string {
	if store == "fuseki" {
		return fmt.Sprintf("http://127.0.0.1:%d/ds", port)
	}
	return fmt.Sprintf("http://127.0.0.1:%d", port)
}

func queryURL(store string, port int) string {
	switch store {
	case "oxigraph":
		return fmt.Sprintf("http://127.0.0.1:%d/query", port)
	case "fuseki":
		return fmt.Sprintf("http://127.0.0.1:%d/ds/query", port)
	default:
		return fmt.Sprintf("http://127.0.0.1:%d/sparql", port)
	}
}

// sparqlCount counts the triples of graph at endpoint.
func (b *bench) sparqlCount(ctx context.Context, endpoint, graph string) (float64, error) {
	body, err := b.sparqlCSV(ctx, endpoint, fmt.Sprintf("SELECT (COUNT(*) AS ?n) WHERE { GRAPH <%s> { ?s ?p ?o } }", graph))
	if err != nil {
		return math.NaN(), fmt.Errorf("count %s: %w", endpoint, err)
	}
	return parseCountCSV(body)
}

// sparqlCSV runs a SELECT query at endpoint and returns its answer as
// SPARQL CSV.
func (b *bench) sparqlCSV(ctx context.Context, endpoint, query string) (string, error) {
	form := url.Values{"query": {query}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "text/csv")
	resp, err := b.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode/100 != 2 {
		return "", errors.New(resp.Status)
	}
	return string(body), nil
}

// parseCountCSV reads the one value of a SPARQL CSV result.
func parseCountCSV(body string) (float64, error) {
	lines := strings.Split(strings.TrimSpace(body), "\n")
	v := strings.Trim(strings.TrimSpace(lines[len(lines)-1]), `"`)
	n, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return math.NaN(), errors.New("count: no number in the answer")
	}
	return n, nil
}
