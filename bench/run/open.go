package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// targetOpen1MMS is one kgrag ask process on 1M entities with graph.snap.
const targetOpen1MMS = 300

// openRun is the processes of one size and one way of opening.
type openRun struct {
	Entities  int       `json:"entities"`
	How       string    `json:"how"` // snapshot or parquet
	WallMS    []float64 `json:"wall_ms,omitempty"`
	P50MS     num       `json:"p50_ms"`
	MaxMS     num       `json:"max_ms"`
	PeakRSSMB num       `json:"peak_rss_mb"`
	Note      string    `json:"note,omitempty"`
}

type openResult struct {
	Runs      []openRun `json:"runs"`
	ServeRows []string  `json:"serve_rows"`
	Notes     []string  `json:"notes"`
}

func (b *bench) open(ctx context.Context) (string, any, error) {
	c := b.cfg
	llmtest, err := b.tool(ctx, "kgrag-llmtest", "./cmd/kgrag-llmtest")
	if err != nil {
		return "", nil, err
	}
	benchServe, err := b.tool(ctx, "bench-serve", "./bench/serve")
	if err != nil {
		return "", nil, err
	}
	serveRows := b.runFile("open-serve.rows")
	if err := os.WriteFile(serveRows, nil, 0o644); err != nil {
		return "", nil, err
	}
	llm, err := b.background(ctx, b.runFile("open-llmtest.log"), llmtest, "-addr", fmt.Sprintf("127.0.0.1:%d", c.OpenPort), "-dim", strconv.Itoa(c.OpenDim))
	if err != nil {
		return "", nil, err
	}
	defer llm.stop()
	llmURL := fmt.Sprintf("http://127.0.0.1:%d/v1", c.OpenPort)
	var res openResult
	var rows []string
	for _, n := range c.OpenSizes {
		data, err := b.makeSynth(ctx, n, 3*n, n/5, n/20)
		if err != nil {
			return "", nil, err
		}
		idx := fmt.Sprintf("%s-index-d%d", data, c.OpenDim)
		ns := strconv.Itoa(n)
		if fileSize(filepath.Join(idx, "entities.vec")) == 0 || fileSize(filepath.Join(idx, "graph.snap")) == 0 {
			tag := "open-embed-" + ns
			u, err := b.measure(ctx, tag, nil, b.kgrag, "embed", "--input", data, "--index", idx, "--llm-url", llmURL,
				"--embed-model", "bench-word-hash", "--ann", c.OpenANN)
			if err != nil {
				return "", nil, err
			}
			if u.RC != 0 {
				rows = append(rows, row(ns, "kgrag embed", "failed: "+b.why(tag, u.RC), "", "", ""))
				continue
			}
			errText, _ := os.ReadFile(b.runFile(tag + ".err"))
			snap := regexp.MustCompile(`graph snapshot .*`).Find(errText)
			rows = append(rows, row(ns, "kgrag embed (index and snapshot, once)", f(u.Wall, 2)+" s", "", f(u.RSSMB, 0)+" MB", string(snap)))
		}
		for _, how := range []string{"snapshot", "parquet"} {
			r, err := b.openProcesses(ctx, n, how, data, idx, llmURL)
			if err != nil {
				return "", nil, err
			}
			res.Runs = append(res.Runs, r)
			if r.Note != "" && len(r.WallMS) == 0 {
				rows = append(rows, row(ns, how, r.Note, "", "", ""))
				continue
			}
			rows = append(rows, row(ns, how, strconv.Itoa(len(r.WallMS)), f(float64(r.P50MS), 0)+" ms", f(float64(r.MaxMS), 0)+" ms",
				f(float64(r.PeakRSSMB), 0)+" MB", r.Note))
			if how == "snapshot" && n >= 1000000 {
				rows = append(rows, row(fmt.Sprintf("target at %d: under %d ms per process", n, targetOpen1MMS), "", "",
					verdict(float64(r.P50MS), lt, targetOpen1MMS), "", "", ""))
			}
		}
		// kgrag serve on the same graph: its start, then one question at a time.
		t0 := time.Now()
		logf := b.runFile("open-serve-" + ns + ".log")
		srv, err := b.serveStart(ctx, data, idx, c.OpenServePort, c.OpenPort, logf)
		if err != nil {
			if ctx.Err() != nil {
				return "", nil, ctx.Err()
			}
			res.Notes = append(res.Notes, ns+": "+err.Error())
			continue
		}
		res.Notes = append(res.Notes, fmt.Sprintf("%s: kgrag serve answered /readyz %d ms after it was started", ns, time.Since(t0).Milliseconds()))
		serveErr := b.runFile("open-serve.err")
		u, err := b.exec(ctx, cmdSpec{stdout: serveRows, appendOut: true, stderr: serveErr, appendErr: true}, benchServe,
			"-url", fmt.Sprintf("http://127.0.0.1:%d", c.OpenServePort), "-data", data, "-name", ns, "-clients", "1",
			"-n", strconv.Itoa(c.OpenServeN), "-context-only")
		srv.stop()
		if err != nil {
			return "", nil, err
		}
		if u.RC != 0 {
			res.Notes = append(res.Notes, ns+": bench-serve failed: "+lastLine(serveErr, 300))
		}
	}
	served, _ := os.ReadFile(serveRows)
	res.ServeRows = lines(string(served))
	var sb strings.Builder
	fmt.Fprintf(&sb, `## 14. Opening a large graph: one kgrag ask --input --context-only process per question

Synthetic sets (3 relationships per entity), indexed by kgrag embed with kgrag-llmtest (%d-dimension
word-hash vectors, searched exactly: HNSW misses recall 0.98 on such vectors, and step 13 times kNN on clustered
ones; BENCH_OPEN_ANN=auto builds the graph). Wall time of the whole process: open the graph and the index, embed the
question (test server, about 1 ms), kNN, local search context, print. "snapshot" maps graph.snap;
"parquet" reads the tables and indexes them in memory, as before snapshots.

| entities | how | processes | p50 wall | max wall | peak RSS | notes |
|---|---|---|---|---|---|---|
`, c.OpenDim)
	sb.WriteString(strings.Join(rows, ""))
	fmt.Fprintf(&sb, `
kgrag serve --input on the same graphs (graph.snap), %d context-only questions one at a time (bench/serve):

| data | what | clients | requests | q/s | p50 | p99 | kgrag's own p50 | own p99 | 429 | errors |
|---|---|---|---|---|---|---|---|---|---|---|
`, c.OpenServeN)
	sb.Write(served)
	sb.WriteString("\n")
	for _, n := range res.Notes {
		sb.WriteString("- " + n + "\n")
	}
	sb.WriteString("\n")
	return sb.String(), res, nil
}

// openProcesses times kgrag ask --context-only processes on data: with
// graph.snap, or with the parquet tables alone (graph.snap moved aside
// meanwhile; fewer runs, and the context compared with the snapshot's).
func (b *bench) openProcesses(ctx context.Context, n int, how, data, idx, llmURL string) (openRun, error) {
	r := openRun{Entities: n, How: how, P50MS: num(nan()), MaxMS: num(nan())}
	runs := b.cfg.OpenQuestions
	if how == "parquet" {
		runs = 3
		if n >= 1000000 {
			runs = 1
		}
		snap := filepath.Join(idx, "graph.snap")
		if err := os.Rename(snap, snap+".aside"); err != nil {
			return r, fmt.Errorf("open: %w", err)
		}
		defer os.Rename(snap+".aside", snap)
	}
	var rss float64
	for q := range runs {
		tag := fmt.Sprintf("open-%d-%s-%d", n, how, q)
		u, err := b.measure(ctx, tag, nil, b.kgrag, "ask", "--input", data, "--index", idx, "--llm-url", llmURL,
			"--embed-model", "bench-word-hash", "--context-only", fmt.Sprintf("What is ENTITY %d?", q*7919%n))
		if err != nil {
			return r, err
		}
		if u.RC != 0 {
			r.Note = "failed: " + b.why(tag, u.RC)
			r.WallMS = nil
			return r, nil
		}
		if how == "snapshot" {
			errText, _ := os.ReadFile(b.runFile(tag + ".err"))
			if i := bytes.Index(errText, []byte("warning")); i >= 0 {
				line := errText[bytes.LastIndexByte(errText[:i], '\n')+1:]
				if j := bytes.IndexByte(line, '\n'); j >= 0 {
					line = line[:j]
				}
				r.Note = "snapshot not used: " + cut(string(line), 160)
				r.WallMS = nil
				return r, nil
			}
		}
		r.WallMS = append(r.WallMS, math.Round(u.Wall*1000))
		rss = max(rss, u.RSSMB)
	}
	r.P50MS, r.MaxMS, r.PeakRSSMB = num(median(r.WallMS)), num(slicesMax(r.WallMS)), num(rss)
	if how == "parquet" {
		a, _ := os.ReadFile(b.runFile(fmt.Sprintf("open-%d-snapshot-0.out", n)))
		p, _ := os.ReadFile(b.runFile(fmt.Sprintf("open-%d-parquet-0.out", n)))
		r.Note = "CONTEXT DIFFERS from the snapshot's"
		if bytes.Equal(a, p) {
			r.Note = "context identical to the snapshot's"
		}
	}
	return r, nil
}

// slicesMax is the largest of vs, NaN when there are none.
func slicesMax(vs []float64) float64 {
	m := nan()
	for _, v := range vs {
		if math.IsNaN(m) || v > m {
			m = v
		}
	}
	return m
}
