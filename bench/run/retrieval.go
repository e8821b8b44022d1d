package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// slowQuestions is where the slowest 5% of bench/retrieval's questions
// go against the middle half: mean time and records per lookup.
type slowQuestions struct {
	Data, Backend string
	Slowest       int                      `json:"slowest"`
	SlowMS        float64                  `json:"slow_total_ms"`
	MiddleMS      float64                  `json:"middle_total_ms"`
	Slow, Middle  map[string]lookupAverage `json:"-"`
}

// lookupAverage is the mean time and records of one lookup.
type lookupAverage struct {
	MS   float64 `json:"ms"`
	Rows float64 `json:"rows"`
}

// traceQuestion is one line of bench/retrieval -trace.
type traceQuestion struct {
	TotalMS float64                  `json:"total_ms"`
	Lookups map[string]lookupAverage `json:"lookups"`
}

// lookupNames are the lookups of a question, in the table's order.
func lookupNames() []string { return []string{"entities", "relationships", "text_units", "reports"} }

// slowOf summarises the questions of a trace.
func slowOf(qs []traceQuestion) slowQuestions {
	slices.SortStableFunc(qs, func(a, b traceQuestion) int { return cmp.Compare(a.TotalMS, b.TotalMS) })
	slow := qs[len(qs)-max(1, len(qs)/20):]
	mid := qs[len(qs)/4 : len(qs)*3/4]
	avg := func(g []traceQuestion) (float64, map[string]lookupAverage) {
		var total []float64
		m := map[string]lookupAverage{}
		for _, name := range lookupNames() {
			var ms, rows []float64
			for _, q := range g {
				ms = append(ms, q.Lookups[name].MS)
				rows = append(rows, q.Lookups[name].Rows)
			}
			m[name] = lookupAverage{mean(ms), mean(rows)}
		}
		for _, q := range g {
			total = append(total, q.TotalMS)
		}
		return mean(total), m
	}
	s := slowQuestions{Slowest: len(slow)}
	s.SlowMS, s.Slow = avg(slow)
	s.MiddleMS, s.Middle = avg(mid)
	return s
}

// cells are the table cells after data and back end.
func (s slowQuestions) cells() []string {
	cells := []string{fmt.Sprintf("%d slowest: %.1f ms; middle half: %.1f ms", s.Slowest, s.SlowMS, s.MiddleMS)}
	for _, name := range lookupNames() {
		a, m := s.Slow[name], s.Middle[name]
		cells = append(cells, fmt.Sprintf("%.1f ms, %.0f rows (middle half: %.1f ms, %.0f rows)", a.MS, a.Rows, m.MS, m.Rows))
	}
	return cells
}

// readTrace reads a bench/retrieval trace file.
func readTrace(file string) ([]traceQuestion, error) {
	fh, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var qs []traceQuestion
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var q traceQuestion
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			return nil, fmt.Errorf("trace %s: %w", filepath.Base(file), err)
		}
		qs = append(qs, q)
	}
	return qs, sc.Err()
}

// settle waits until the server listening on port has used no CPU for
// 10 s, at most cfg.Settle seconds, and says what it waited.
func (b *bench) settle(ctx context.Context, port int) string {
	out, _ := b.output(ctx, "", "ss", "-ltnpH", fmt.Sprintf("sport = :%d", port))
	m := regexp.MustCompile(`pid=([0-9]+)`).FindStringSubmatch(out)
	if m == nil {
		return "pid not found"
	}
	stat := "/proc/" + m[1] + "/stat"
	prev, ok := cpuTicks(stat)
	if !ok {
		return "pid not found"
	}
	idle := 0
	for i := 1; i <= b.cfg.Settle; i++ {
		select {
		case <-ctx.Done():
			return "interrupted"
		case <-time.After(time.Second):
		}
		now, ok := cpuTicks(stat)
		if !ok {
			return "pid not found"
		}
		// clock ticks (100 a second): 2 or fewer is idle
		if now-prev <= 2 {
			idle++
		} else {
			idle = 0
		}
		prev = now
		if idle >= 10 {
			return fmt.Sprintf("idle after %d s", i-10)
		}
	}
	return fmt.Sprintf("still busy after %d s", b.cfg.Settle)
}

// cpuTicks is utime + stime of /proc/PID/stat.
func cpuTicks(stat string) (int64, bool) {
	data, err := os.ReadFile(stat)
	if err != nil {
		return 0, false
	}
	return parseStatTicks(string(data))
}

// parseStatTicks reads fields 14 and 15 (utime, stime) of a
// /proc/PID/stat line; the command name, field 2, may hold spaces.
func parseStatTicks(stat string) (int64, bool) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	fs := strings.Fields(stat[i+1:]) // fs[0] is field 3
	if len(fs) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseInt(fs[11], 10, 64)
	s, err2 := strconv.ParseInt(fs[12], 10, 64)
	return u + s, err1 == nil && err2 == nil
}

type retrievalResult struct {
	Rows     []string        `json:"rows"` // bench/retrieval's table rows
	Failures []string        `json:"failures,omitempty"`
	Slow     []slowQuestions `json:"slow_questions,omitempty"`
	Python   string          `json:"python_table"`
}

// retrievalSet is one dataset of the step.
type retrievalSet struct{ name, data, index, graph string }

func (b *bench) retrieval(ctx context.Context) (string, any, error) {
	synth, err := b.synthSet(ctx)
	if err != nil {
		return "", nil, err
	}
	bin, err := b.tool(ctx, "bench-retrieval", "./bench/retrieval")
	if err != nil {
		return "", nil, err
	}
	if err := os.MkdirAll(filepath.Join(b.out, "index"), 0o755); err != nil {
		return "", nil, err
	}
	sets := []retrievalSet{
		{"sample", b.cfg.Sample, filepath.Join(b.out, "index", "sample.vec"), graphIRI + "/sample"},
		{"synthetic", synth, filepath.Join(b.out, "index", filepath.Base(synth)+".vec"), graphIRI + "/synthetic"},
	}
	n := strconv.Itoa(b.cfg.RetrievalN)
	rowsFile := b.runFile("retrieval.rows")
	if err := os.WriteFile(rowsFile, nil, 0o644); err != nil {
		return "", nil, err
	}
	var res retrievalResult
	fail := func(cells ...string) {
		res.Failures = append(res.Failures, row(append(cells, "", "", "", "")...))
	}
	for _, d := range sets {
		b.logf("retrieval: embedded mode, %s", d.name)
		errf := b.runFile("retrieval-memory-" + d.name + ".err")
		u, err := b.exec(ctx, cmdSpec{stdout: rowsFile, appendOut: true, stderr: errf}, bin,
			"-data", d.data, "-index", d.index, "-name", d.name, "-questions", n)
		if err != nil {
			return "", nil, err
		}
		if u.RC != 0 {
			fail(d.name, "memory", "failed: "+lastLine(errf, 120))
		}
	}
	for _, s := range b.cfg.RetStores {
		b.logf("retrieval: SPARQL mode, %s", s)
		if err := b.retrievalRuns(ctx, s, bin, sets, &res, fail); err != nil {
			return "", nil, err
		}
	}
	if b.cfg.Entities > b.cfg.RetrievalPyMax {
		res.Python = fmt.Sprintf("not run: %d entities is above BENCH_RETRIEVAL_PY_MAX (%d); GraphRAG's builder holds every table in pandas", b.cfg.Entities, b.cfg.RetrievalPyMax)
	} else {
		b.logf("retrieval: GraphRAG's Python context builder")
		cmd, closeFn, err := b.command(ctx, cmdSpec{env: []string{"BENCH_DIR=" + b.out, "BENCH_SYNTH=" + synth, "BENCH_RETRIEVAL_N=" + n},
			stderr: b.runFile("retrieval-py.err")}, filepath.Join(b.repo, "scripts", "bench-retrieval-py.sh"))
		if err != nil {
			return "", nil, err
		}
		out, err := cmd.Output()
		closeFn()
		res.Python = strings.TrimRight(string(out), "\n")
		if err != nil {
			if ctx.Err() != nil {
				return "", nil, ctx.Err()
			}
			res.Python = "failed: " + tail(3, "\n", 1000, b.runFile("retrieval-py.err"))
		}
	}
	rows, _ := os.ReadFile(rowsFile)
	res.Rows = strings.Split(strings.TrimRight(string(rows), "\n"), "\n")
	var sb strings.Builder
	fmt.Fprintf(&sb, `## 4. Retrieval without the LLM call

%d questions ("What is <entity>?", fixed seed), embedded beforehand with a deterministic 768-dimension
word-hash embedder (no model server); per question: kNN in the flat index (top 20) and the local search
context (GraphRAG's defaults: 12,000 tokens, cl100k). Targets: embedded p50 < 10 ms on the sample, SPARQL
p50 < 100 ms at 100000 entities on Oxigraph (this run: %d). Word-hash vectors defeat HNSW, so the kNN is
an exact scan (about 70 ms at 1M); with real embeddings the index's graph answers in under a millisecond, and
the p50 less the kNN p50 is what a question costs.
`, b.cfg.RetrievalN, b.cfg.Entities)
	if b.cfg.RetrievalBulk {
		sb.WriteString("The synthetic set was loaded by each store's bulk loader (BENCH_RETRIEVAL_BULK).\n")
	}
	sb.WriteString("\n| data | back end | questions | p50 | p95 | kNN p50 | SPARQL requests per question |\n|---|---|---|---|---|---|---|\n")
	sb.Write(rows)
	sb.WriteString(strings.Join(res.Failures, ""))
	sb.WriteString("\nGraphRAG's LocalSearchMixedContext.build_context (PyPI graphrag) against kgrag's Builder.LocalContext\n" +
		"(memory back end, context only, no kNN) on the same selections:\n\n" + res.Python + "\n\n")
	if len(res.Slow) > 0 {
		sb.WriteString("Where the slow questions go (bench/retrieval -trace): the slowest 5% of questions against the middle half,\n" +
			"per lookup, mean time and records returned:\n\n" +
			"| data | back end | questions | entities | relationships | text units | reports |\n|---|---|---|---|---|---|---|\n")
		for _, s := range res.Slow {
			sb.WriteString(row(append([]string{s.Data, s.Backend}, s.cells()...)...))
		}
		sb.WriteString("\n")
	}
	return sb.String(), res, nil
}

// retrievalRuns loads the sets into a fresh store (kgrag load --in-place,
// or the synthetic set by the bulk loader with BENCH_RETRIEVAL_BULK) and
// runs bench/retrieval on each, right after the load and once the store
// has settled.
func (b *bench) retrievalRuns(ctx context.Context, s, bin string, sets []retrievalSet, res *retrievalResult, fail func(...string)) error {
	sets = slices.Clone(sets)
	port := b.storePort(s)
	dir := filepath.Join(b.out, "stores", s+"-retrieval")
	os.RemoveAll(dir)
	defer os.RemoveAll(dir)
	// With BENCH_RETRIEVAL_BULK the synthetic set goes in by the store's own
	// bulk loader, before the server starts: what is measured here is the
	// queries, and at 1M kgrag's upload (the stores step) takes 40 min on
	// Oxigraph against the bulk loader's 13.
	bulk := ""
	kept := filepath.Join(b.out, "stores", s+"-bulk-kept")
	if b.cfg.RetrievalBulk && fileSize(filepath.Join(kept, ".kept")) > 0 {
		if err := os.Rename(kept, dir); err != nil {
			return fmt.Errorf("retrieval: reuse %s: %w", kept, err)
		}
		sets[1].graph = graphIRI // the stores step's graph
		bulk = "synthetic"
		b.logf("  reusing the stores step's bulk load of the synthetic set into %s", s)
	} else if b.cfg.RetrievalBulk && s != "virtuoso" {
		ttl, err := b.synthTTL(ctx)
		if err != nil {
			return err
		}
		tag := "retrieval-bulk-" + s
		u, _, whyNot, err := b.bulkFile(ctx, s, port, dir, sets[1].graph, ttl, tag)
		switch {
		case err != nil:
			return err
		case whyNot != "":
			fail("synthetic", "SPARQL "+s, "not run: "+whyNot)
			return nil
		case u.RC != 0:
			fail("synthetic", "SPARQL "+s, "failed to bulk load: "+b.why(tag, u.RC))
			return nil
		}
		bulk = "synthetic"
		b.logf("  bulk loaded the synthetic set into %s in %.2fs", s, u.Wall)
	}
	defer b.serverStop(s, port, dir)
	if err := b.serverStart(ctx, s, port, dir); err != nil {
		fail("all", "SPARQL "+s, "not run: "+s+" did not start")
		return ctx.Err()
	}
	url := storeURL(s, port)
	// On Fuseki one streamed PUT: TDB2 writes every batch's transaction
	// anew, and 136 batches of the 100k set grew it to 30 GB and failed.
	var up []string
	if s == "fuseki" {
		up = []string{"--upload", "stream"}
	}
	for _, d := range sets {
		tag := "retrieval-load-" + s + "-" + d.name
		if d.name != bulk {
			u, err := b.exec(ctx, cmdSpec{stdout: b.runFile(tag + ".out"), stderr: b.runFile(tag + ".err")}, b.kgrag,
				append([]string{"load", "--input", d.data, "--store", url, "--store-type", s, "--graph", d.graph, "--in-place"}, up...)...)
			if err != nil {
				return err
			}
			if u.RC != 0 {
				fail(d.name, "SPARQL "+s, "failed to load: "+b.why(tag, u.RC))
				continue
			}
		}
		// Right after the load; then again once the store has settled (no
		// CPU for 10 s: a store compacting after a load is busy meanwhile),
		// to tell its background work from the queries. The second pass asks
		// other questions (another seed), so that it does not merely find
		// the first pass's pages in the caches.
		for _, when := range []string{"fresh", "settled"} {
			name, seed := d.name, "11"
			if when == "settled" {
				name, seed = fmt.Sprintf("%s, settled (%s), other questions", d.name, b.settle(ctx, port)), "12"
			}
			base := b.runFile("retrieval-" + s + "-" + d.name + "-" + when)
			u, err := b.exec(ctx, cmdSpec{stdout: b.runFile("retrieval.rows"), appendOut: true, stderr: base + ".err"}, bin,
				"-data", d.data, "-index", d.index, "-name", name, "-seed", seed, "-store", url, "-store-type", s,
				"-graph", d.graph, "-questions", strconv.Itoa(b.cfg.RetrievalN), "-trace", base+".trace")
			if err != nil {
				return err
			}
			if u.RC != 0 {
				fail(name, "SPARQL "+s, "failed: "+lastLine(base+".err", 120))
			}
			if qs, err := readTrace(base + ".trace"); err == nil && len(qs) > 0 {
				sq := slowOf(qs)
				sq.Data, sq.Backend = name, "SPARQL "+s
				res.Slow = append(res.Slow, sq)
			}
		}
	}
	return nil
}
