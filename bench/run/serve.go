package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// serveStart starts kgrag serve on data and index against the model
// server on llmPort, output in logFile, and waits until /readyz answers.
func (b *bench) serveStart(ctx context.Context, data, index string, port, llmPort int, logFile string, flags ...string) (*bgProc, error) {
	args := append([]string{"serve", "-q", "--input", data, "--index", index, "--embed-model", "bench-word-hash", "--chat-model", "bench",
		"--llm-url", fmt.Sprintf("http://127.0.0.1:%d/v1", llmPort), "--addr", fmt.Sprintf("127.0.0.1:%d", port), "--admin"}, flags...)
	p, err := b.background(ctx, logFile, b.kgrag, args...)
	if err != nil {
		return nil, err
	}
	ready := fmt.Sprintf("http://127.0.0.1:%d/readyz", port)
	for range 600 {
		if httpOK(ctx, ready) {
			return p, nil
		}
		if p.exited() {
			break
		}
		select {
		case <-ctx.Done():
			p.stop()
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	p.stop()
	return nil, fmt.Errorf("kgrag serve did not start: %s", tail(2, " ", 400, logFile))
}

// httpOK reports whether url answers 2xx within 5 s.
func httpOK(ctx context.Context, url string) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode/100 == 2
}

// askRow is the mean of cfg.ServeAskN kgrag ask processes.
type askRow struct {
	Data    string `json:"data"`
	Mode    string `json:"mode"`
	N       int    `json:"processes"`
	MeanMS  int64  `json:"mean_ms"`
	PerSec  num    `json:"per_s"`
	Errored int    `json:"errors"`
}

type serveResult struct {
	Rows     []string `json:"rows"`      // bench/serve's table rows
	SoakRows []string `json:"soak_rows"` // its memory rows
	Ask      []askRow `json:"ask"`
	Notes    []string `json:"notes"`
}

func (b *bench) serve(ctx context.Context) (string, any, error) {
	synth, err := b.synthSet(ctx)
	if err != nil {
		return "", nil, err
	}
	c := b.cfg
	benchServe, err := b.tool(ctx, "bench-serve", "./bench/serve")
	if err != nil {
		return "", nil, err
	}
	retrieval, err := b.tool(ctx, "bench-retrieval", "./bench/retrieval")
	if err != nil {
		return "", nil, err
	}
	llmtest, err := b.tool(ctx, "kgrag-llmtest", "./cmd/kgrag-llmtest")
	if err != nil {
		return "", nil, err
	}
	if err := os.MkdirAll(filepath.Join(b.out, "index"), 0o755); err != nil {
		return "", nil, err
	}
	llm, err := b.background(ctx, b.runFile("serve-llmtest.log"), llmtest, "-addr", fmt.Sprintf("127.0.0.1:%d", c.LLMTestPort), "-dim", "768")
	if err != nil {
		return "", nil, err
	}
	defer llm.stop()
	// A slower model server (2 ms per streamed piece) keeps questions in
	// flight long enough for the model-call limit to refuse some.
	slowPort := c.LLMTestPort + 1
	slow, err := b.background(ctx, b.runFile("serve-llmtest-slow.log"), llmtest, "-addr", fmt.Sprintf("127.0.0.1:%d", slowPort), "-dim", "768", "-chunk-delay", "2ms")
	if err != nil {
		return "", nil, err
	}
	defer slow.stop()
	sets := []retrievalSet{
		{name: "sample", data: c.Sample, index: filepath.Join(b.out, "index", "sample.vec")},
		{name: "synthetic", data: synth, index: filepath.Join(b.out, "index", filepath.Base(synth)+".vec")},
	}
	rowsFile, soakFile, benchErr := b.runFile("serve.rows"), b.runFile("serve-soak.rows"), b.runFile("serve-bench.err")
	for _, f := range []string{rowsFile, soakFile, benchErr} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			return "", nil, err
		}
	}
	var res serveResult
	note := func(format string, args ...any) { res.Notes = append(res.Notes, fmt.Sprintf(format, args...)) }
	url := fmt.Sprintf("http://127.0.0.1:%d", c.ServePort)
	// benchServe runs bench/serve, its rows appended to file.
	runBenchServe := func(file, what string, args ...string) error {
		u, err := b.exec(ctx, cmdSpec{stdout: file, appendOut: true, stderr: benchErr, appendErr: true}, benchServe, append([]string{"-url", url}, args...)...)
		if err == nil && u.RC != 0 {
			note("%s: failed: %s", what, lastLine(benchErr, 300))
		}
		return err
	}
	for _, d := range sets {
		b.logf("serve: %s", d.name)
		errf := b.runFile("serve-index-" + d.name + ".err")
		u, err := b.exec(ctx, cmdSpec{stderr: errf}, retrieval, "-data", d.data, "-index", d.index, "-name", d.name, "-questions", "1")
		if err != nil {
			return "", nil, err
		}
		if u.RC != 0 {
			note("%s: index failed: %s", d.name, lastLine(errf, 300))
			continue
		}
		t0 := time.Now()
		srv, err := b.serveStart(ctx, d.data, d.index, c.ServePort, c.LLMTestPort, b.runFile("serve-"+d.name+".log"), "--max-model-calls", "64", "--max-queued", "256")
		if err != nil {
			if ctx.Err() != nil {
				return "", nil, ctx.Err()
			}
			note("%s: %v", d.name, err)
			continue
		}
		note("%s: kgrag serve loaded and answered /readyz in %d ms", d.name, time.Since(t0).Milliseconds())
		for _, mode := range []string{"chat", "context"} {
			args := []string{"-data", d.data, "-name", d.name, "-clients", "1,8,64", "-n", strconv.Itoa(c.ServeN)}
			if mode == "context" {
				args = append(args, "-context-only")
			}
			if err := runBenchServe(rowsFile, d.name+" "+mode, args...); err != nil {
				srv.stop()
				return "", nil, err
			}
		}
		if d.name == "sample" {
			b.logf("serve: soak, %d requests", c.ServeSoak)
			if err := runBenchServe(soakFile, "soak", "-data", d.data, "-name", d.name, "-soak", strconv.Itoa(c.ServeSoak)); err != nil {
				srv.stop()
				return "", nil, err
			}
		}
		srv.stop()
		// The same questions through one kgrag ask process each.
		for _, mode := range []string{"context", "chat"} {
			a, err := b.askProcesses(ctx, d, mode, c.ServeAskN)
			if err != nil {
				return "", nil, err
			}
			res.Ask = append(res.Ask, a)
			appendFile(rowsFile, row(d.name, "kgrag ask process, "+mode, "1", strconv.Itoa(a.N), f(float64(a.PerSec), 1),
				fmt.Sprintf("%d ms (mean)", a.MeanMS), "", "", "", "0", strconv.Itoa(a.Errored)))
		}
	}
	b.logf("serve: the model-call limit at 64 clients")
	if srv, err := b.serveStart(ctx, c.Sample, sets[0].index, c.ServePort, slowPort, b.runFile("serve-limit.log"), "--max-model-calls", "4", "--max-queued", "8"); err == nil {
		err := runBenchServe(rowsFile, "limit", "-data", c.Sample, "-name", "sample, --max-model-calls 4 --max-queued 8, 2 ms/piece model", "-clients", "64", "-n", strconv.Itoa(c.ServeN))
		srv.stop()
		if err != nil {
			return "", nil, err
		}
	} else if ctx.Err() != nil {
		return "", nil, ctx.Err()
	} else {
		note("limit: kgrag serve did not start")
	}
	rows, _ := os.ReadFile(rowsFile)
	soak, _ := os.ReadFile(soakFile)
	res.Rows, res.SoakRows = lines(string(rows)), lines(string(soak))
	var sb strings.Builder
	sb.WriteString(`## 8. kgrag serve under load

kgrag serve in memory, backed by the project's test model server (kgrag-llmtest, 768-dimension word-hash
embeddings, answers at once), questions "What is <entity>?" (fixed seed); chat is POST /v1/chat/completions
(kgrag-local, not streamed), context is POST /api/ask with context_only. Each client sends its next question
when the last is answered. Latency is the client's, loopback HTTP included; kgrag's own time is the server's
(its Server-Timing header: the request's time less its waits for the model server). The load generator and
the model server share the 2 cores with kgrag. Target: kgrag's own time at 8 clients under 5 ms p50 on the
sample, no errors; at 64 clients with a lower model-call limit, 429s counted and no error.
The kgrag ask rows are one process per question (open the data, embed, kNN, context, answer).

| data | what | clients | requests | q/s | p50 | p99 | kgrag's own p50 | own p99 | 429 | errors |
|---|---|---|---|---|---|---|---|---|---|---|
`)
	sb.Write(rows)
	sb.WriteString(`
Memory and goroutines of the server (its /admin/stats after a GC), 8 clients:

| data | what | requests | heap after 1,000 | heap after all | goroutines idle before | after 1,000 | after all, idle | errors + 429 |
|---|---|---|---|---|---|---|---|---|
`)
	sb.Write(soak)
	sb.WriteString("\n")
	for _, n := range res.Notes {
		sb.WriteString("- " + n + "\n")
	}
	sb.WriteString("\n")
	return sb.String(), res, nil
}

// askProcesses times n kgrag ask processes, one question each, against
// the instant model server; mode "context" adds --context-only.
func (b *bench) askProcesses(ctx context.Context, d retrievalSet, mode string, n int) (askRow, error) {
	a := askRow{Data: d.name, Mode: mode, N: n}
	t0 := time.Now()
	for i := range n {
		args := []string{"ask", "-q", "--input", d.data, "--index", d.index, "--embed-model", "bench-word-hash", "--chat-model", "bench",
			"--llm-url", fmt.Sprintf("http://127.0.0.1:%d/v1", b.cfg.LLMTestPort)}
		if mode == "context" {
			args = append(args, "--context-only")
		}
		u, err := b.exec(ctx, cmdSpec{stderr: b.runFile("serve-ask.err"), appendErr: true}, b.kgrag, append(args, fmt.Sprintf("What is question %d?", i))...)
		if err != nil {
			return a, err
		}
		if u.RC != 0 {
			a.Errored++
		}
	}
	if n > 0 {
		a.MeanMS = time.Since(t0).Milliseconds() / int64(n)
		a.PerSec = num(ratio(1000, float64(a.MeanMS)))
	}
	return a, nil
}

// lines splits s into its non-empty lines.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}
