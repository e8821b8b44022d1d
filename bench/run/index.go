package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// targetIndexUnitMS is kgrag's own ms per text unit with an instant server.
const targetIndexUnitMS = 5

// benchFigure is the median of a benchmark's metric as the tables print
// it: the value itself for an odd count, four significant digits for the
// mean of the middle two, "?" when there is none.
func benchFigure(vs []float64) (float64, string) {
	m := median(vs)
	switch {
	case math.IsNaN(m):
		return m, "?"
	case len(vs)%2 == 1:
		return m, strconv.FormatFloat(m, 'f', -1, 64)
	default:
		return m, strconv.FormatFloat(m, 'g', 4, 64)
	}
}

// indexRow is one input and cache setting of BenchmarkIndexInstant.
type indexRow struct {
	Words         int    `json:"words"`
	Cache         string `json:"cache"`
	Units         num    `json:"text_units"`
	Calls         num    `json:"model_calls"`
	WallMSPerUnit num    `json:"wall_ms_per_unit"`
	OwnMSPerUnit  num    `json:"kgrag_ms_per_unit"`
	OwnMSPerRun   num    `json:"kgrag_ms_per_run"`
}

type indexResult struct {
	Rows        []indexRow        `json:"instant"`
	Targets     []target          `json:"targets"`
	Note        string            `json:"note,omitempty"`
	ProfileNote string            `json:"profile_note,omitempty"`
	Profile     map[string]string `json:"profile_cum_share,omitempty"`
	LatencyNote string            `json:"latency_note,omitempty"`
}

func (b *bench) index(ctx context.Context) (string, any, error) {
	data := b.cfg.TestData
	text := filepath.Join(data, "text", "a-christmas-carol.txt")
	env := []string{"KGRAG_TESTDATA=" + data, "KGRAG_TEST_DISALLOW_SKIP=1"}
	count := strconv.Itoa(b.cfg.IndexCount)
	var res indexResult
	var err error
	b.logf("index: go test -bench IndexInstant (-benchtime 3x, -count %s)", count)
	if res.Note, err = b.goBench(ctx, "index-instant", env, "-bench", "IndexInstant", "-benchtime", "3x", "-count", count, "./bench/index"); err != nil {
		return "", nil, err
	}
	b.logf("index: CPU profile of the whole-book runs")
	if note, err := b.goBench(ctx, "index-profile", env, "-bench", "IndexInstant/words=[0-9]{5,}/cache=on", "-benchtime", "5x",
		"-cpuprofile", b.runFile("index-cpu.out"), "-o", b.runFile("index.test"), "./bench/index"); err != nil {
		return "", nil, err
	} else if note != "" {
		res.ProfileNote = "failed: " + tail(1, "", 160, b.runFile("index-profile.txt"), b.runFile("index-profile.err"))
	} else if _, err := b.exec(ctx, cmdSpec{stdout: b.runFile("index-profile-top.txt")}, "go", "tool", "pprof", "-top", "-cum", "-nodecount", "300",
		b.runFile("index.test"), b.runFile("index-cpu.out")); err != nil {
		return "", nil, err
	}
	b.logf("index: bench/index, 500 ms per call, concurrency %s", strings.Join(b.cfg.IndexConcurrency, " "))
	latencyMD, latencyErr := b.runFile("index-latency.md"), b.runFile("index-latency.err")
	latencyRC := 1
	if bin, err := b.tool(ctx, "bench-index", "./bench/index"); err == nil {
		u, err := b.exec(ctx, cmdSpec{stdout: latencyMD, stderr: latencyErr}, bin, "-text", text, "-words", strconv.Itoa(b.cfg.IndexWords),
			"-concurrency", strings.Join(b.cfg.IndexConcurrency, ","), "-latency", "500ms", "-title", "### Against a server taking 500 ms per call")
		if err != nil {
			return "", nil, err
		}
		latencyRC = u.RC
	} else if ctx.Err() != nil {
		return "", nil, ctx.Err()
	} else {
		appendFile(latencyErr, err.Error()+"\n")
	}
	bs, bsErr := b.benchstat(ctx)

	var sb strings.Builder
	fmt.Fprintf(&sb, `## 7. Indexing pipeline (kgrag index) against the test model server

internal/indexer.Run as `+"`kgrag index`"+` runs it (llm.Client over HTTP to the project's test server in the same process,
scripted by indexertest.Script: extraction replies name the book's characters, gleaning finds nothing more, summaries
and reports are short and valid; a cache of replies in a fresh folder per run) on A Christmas Carol (%s).

### Per text unit, server answering at once

`, text)
	if res.Note != "" {
		sb.WriteString("BenchmarkIndexInstant: " + res.Note + "\n")
	} else {
		b.indexInstant(ctx, &sb, &res, bs, bsErr)
	}
	if res.ProfileNote != "" {
		sb.WriteString("CPU profile: " + res.ProfileNote + "\n")
	} else if top, err := os.ReadFile(b.runFile("index-profile-top.txt")); err == nil && len(top) > 0 {
		total, shares := profileShares(string(top), []string{"tokens.NewEncoder", "llmcache.(*Cache).Put", "llmcache.(*Cache).Get", "documents.Read",
			"extraction.(*Extractor).Extract", "graphbuild.(*Summarizer).Summarize", "indexer.(*run).communities",
			"reports.(*Generator).Run", "indexer.writeAtomic", "llm.(*Client).Chat", "llmtest.(*Server).ServeHTTP"})
		res.Profile = map[string]string{}
		sb.WriteString("Where the CPU time of the whole-book runs (cache on) goes: cumulative share of the profile's samples, for the parts\n" +
			"of the pipeline (`go test -bench 'IndexInstant/words=[0-9]{5,}/cache=on' -benchtime 5x -cpuprofile`; the\n" +
			"in-process test server's share is its own):\n\n| part | cumulative CPU | share |\n|---|---|---|\n")
		for _, s := range shares {
			sb.WriteString(row(s[0], s[1], s[2]))
			res.Profile[s[0]] = s[2]
		}
		if total == "" {
			total = "?"
		}
		fmt.Fprintf(&sb, "\nAll samples: %s; profile: %s (binary index.test beside it). CPU time only: the\n"+
			"cache's waits on the file system show in the cache on/off rows above, not here.\n\n", total, b.rel(b.runFile("index-cpu.out")))
	}
	section, lat := b.driverSection("### Against a server taking 500 ms per call", latencyMD, latencyErr, latencyRC)
	res.LatencyNote = lat.Note
	sb.WriteString(section)
	return sb.String(), res, nil
}

// indexInstant writes the tables of BenchmarkIndexInstant.
func (b *bench) indexInstant(ctx context.Context, sb *strings.Builder, res *indexResult, bs string, bsErr error) {
	file := b.runFile("index-instant.txt")
	data, _ := os.ReadFile(file)
	out := string(data)
	var words []int
	re := regexp.MustCompile(`^BenchmarkIndexInstant/words=([0-9]+)/`)
	for _, line := range strings.Split(out, "\n") {
		if m := re.FindStringSubmatch(line); m != nil {
			w, _ := strconv.Atoi(m[1])
			if !slices.Contains(words, w) {
				words = append(words, w)
			}
		}
	}
	slices.Sort(words)
	if len(words) == 0 {
		words = []int{0}
	}
	big, small := words[len(words)-1], words[0]
	ix := func(w int, cache, unit string) (float64, string) {
		return benchFigure(benchValues(out, fmt.Sprintf("BenchmarkIndexInstant/words=%d/cache=%s", w, cache), unit))
	}
	fmt.Fprintf(sb, "GraphRAG's chunking (1200 tokens, 100 overlap), concurrency 4, %d runs of 3 each (median). **kgrag's own** time is the\n", b.cfg.IndexCount)
	sb.WriteString(`run's wall time minus the time at least one request was inside the server's handler: kgrag, its HTTP client and the
loopback, never the model (on this shared 2-core machine the in-process server competes for the CPUs). The cost per
unit beyond the run's fixed cost is the difference of kgrag's own time per run between the two inputs over the
difference of their text units. The whole book, cache on, is what ` + "`kgrag index`" + ` does; cache off tells the cache's
share (` + "`kgrag index`" + ` has no switch for it).

| input | cache | text units | model calls | wall per unit (ms) | kgrag's own per unit (ms) | kgrag's own per run (ms) |
|---|---|---|---|---|---|---|
`)
	for _, w := range []int{big, small} {
		for _, cache := range []string{"on", "off"} {
			r := indexRow{Words: w, Cache: cache}
			var cells [5]string
			for i, p := range []struct {
				unit string
				dst  *num
			}{{"units", &r.Units}, {"calls/op", &r.Calls}, {"ms/unit", &r.WallMSPerUnit}, {"kgrag-ms/unit", &r.OwnMSPerUnit}, {"kgrag-ms/op", &r.OwnMSPerRun}} {
				v, s := ix(w, cache, p.unit)
				*p.dst, cells[i] = num(v), s
			}
			res.Rows = append(res.Rows, r)
			sb.WriteString(row(append([]string{fmtInt(float64(w)) + " words", cache}, cells[:]...)...))
		}
	}
	sb.WriteString("\n| measure | value | target | |\n|---|---|---|---|\n")
	for _, cache := range []string{"on", "off"} {
		v, vs := ix(big, cache, "kgrag-ms/unit")
		a, _ := ix(big, cache, "kgrag-ms/op")
		c, _ := ix(small, cache, "kgrag-ms/op")
		ua, _ := ix(big, cache, "units")
		ub, _ := ix(small, cache, "units")
		marg := math.NaN()
		if ua-ub > 0 {
			marg = (a - c) / (ua - ub)
		}
		tgt := fmt.Sprintf("< %d ms", targetIndexUnitMS)
		if cache == "on" {
			_, wall := ix(big, cache, "ms/unit")
			res.Targets = append(res.Targets,
				target{"", "kgrag's own time per text unit, whole book (as kgrag index)", vs + " ms", tgt, verdict(v, lt, targetIndexUnitMS)},
				target{"", "wall time per text unit, whole book", wall + " ms", "", ""},
				target{"", "kgrag's own time per text unit beyond the fixed cost (cache on)", f(marg, 2) + " ms", tgt, verdict(marg, lt, targetIndexUnitMS)})
		} else {
			res.Targets = append(res.Targets,
				target{"", "kgrag's own time per text unit, whole book, cache off", vs + " ms", "", ""},
				target{"", "kgrag's own time per text unit beyond the fixed cost, cache off", f(marg, 2) + " ms", "", ""})
		}
	}
	for _, t := range res.Targets {
		sb.WriteString(row(t.Measure, t.Value, t.Target, t.Verdict))
	}
	sb.WriteString("\n")
	if bsErr == nil {
		sb.WriteString("```\n" + b.benchstatOf(ctx, bs, "-filter", ".unit:(ms/unit OR kgrag-ms/unit)", file) + "\n```\n\n")
	}
}

// profileShares finds each function of names in `go tool pprof -top -cum`
// output: its cumulative time and share. total is the profile's "Total
// samples".
func profileShares(top string, names []string) (total string, shares [][3]string) {
	if m := regexp.MustCompile(`Total samples = ([0-9.]*m?s)`).FindStringSubmatch(top); m != nil {
		total = m[1]
	}
	lines := strings.Split(top, "\n")
	for _, name := range names {
		for _, l := range lines {
			fs := strings.Fields(l)
			if len(fs) < 6 {
				continue
			}
			last := fs[len(fs)-1]
			if last == name || strings.HasSuffix(last, "/"+name) {
				shares = append(shares, [3]string{name, fs[3], fs[4]})
				break
			}
		}
	}
	return total, shares
}
