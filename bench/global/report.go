package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// report is everything measured, written as a Markdown section.
type report struct {
	cfg            config
	sets           []*dataset
	encoder        float64 // NewEncoder, ms, median of 3
	rtt, rttServer float64
	overheads      []*overheadRun
	latency        []latencyRun
	contexts       []*contextRun
}

func (r *report) write(out io.Writer) error {
	w := bufio.NewWriter(out)
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	c := r.cfg
	p("%s", c.title)
	p("")
	p("The model is kgrag's OpenAI-compatible test server (internal/llm/llmtest) in the benchmark's process on 127.0.0.1;")
	p("kgrag reaches it over HTTP through the real llm.Client (default HTTP client and retries, as `kgrag ask` makes it),")
	p("and globalsearch.Searcher reads the reports from retrieval.MemoryBackend, as `kgrag ask --mode global --input DIR`")
	p("does, with kgrag's defaults: GraphRAG's budgets (12,000-token map batches and reduce context, cl100k_base), shuffle")
	p("seed 86, JSON mode, concurrency 4 unless said. The server answers map calls with valid JSON, one point of ~70 words")
	p("per report for the first five reports of the batch (scores 0-100 from a hash of question and report: the zeros are")
	p("dropped), rating calls by a rule (two communities in three rated 2, the rest 0), and the reduce call with a")
	p("200-word answer, streamed word by word as on a terminal. Every run checks that all replies parsed and no call failed.")
	p("")

	p("### Set-up, once per process (not part of a question)")
	p("")
	p("| data | graphrag.Open | NewMemoryBackend | NewEncoder (cl100k_base, median of 3) |")
	p("|---|---|---|---|")
	for _, d := range r.sets {
		p("| %s | %s | %s | %s |", d.label, fms(ms(d.open)), fms(ms(d.index)), fms(r.encoder))
	}
	p("")
	p("One-word chat request and reply, p50 of %d: %s round trip through llm.Client, of which %s inside the server's handler.",
		c.probes, fms(r.rtt), fms(r.rttServer))
	p("")

	r.writeOverhead(p)
	r.writeLatency(p)
	r.writeContexts(p)

	p("Reproduce (after `make build`; the synthetic dataset is made by `go run ./bench/run`, or by `go run ./cmd/kgrag-synth`):")
	p("")
	p("```")
	p("go run ./bench/run -steps global")
	p("# or the harness alone:")
	py := c.python
	if py == "" {
		py = "$(bash scripts/graphrag-py.sh)"
	}
	p("go run ./bench/global -sample %s -synth %s -level %d -questions %d -repeat %d -latency %s -graphrag-python %s",
		c.sample, c.synth, c.level, c.questions, c.repeat, c.latency, py)
	p("```")
	p("")
	return w.Flush()
}

func (r *report) writeOverhead(p func(string, ...any)) {
	c := r.cfg
	p("### Per question, server answering at once (level %d, %d questions)", c.level, c.questions)
	p("")
	p("Each question on a fresh Encoder and with no connection open, as one `kgrag ask` process answers one (cold); then the")
	p("same questions on one Encoder after a warm-up question (warm). Nearest-rank p50 / p95 in ms. The parts are Result.Timings:")
	p("reading the reports (CommunityReports), batching (Batches), the map phase (prompts, calls, parsing) and the reduce phase")
	p("(ranking the points, the call). **kgrag-side** is the wall time minus the time at least one request was inside the")
	p("server's handler (the union of the requests' spans there, recorded around llmtest's ServeHTTP): the time during which")
	p("the question waited on kgrag, its HTTP client (JSON encoding and decoding, connections) and the loopback, never on the")
	p("model. kgrag's work done while another call is in the server is hidden by it, as in a real run; on this 2-core machine")
	p("the in-process server and kgrag share the CPUs.")
	p("")
	head, sep := "| measure |", "|---|"
	for _, o := range r.overheads {
		head += fmt.Sprintf(" %s p50 | p95 |", o.d.label)
		sep += "---|---|"
	}
	p("%s", head)
	p("%s", sep)
	row := func(name string, f func(a asked) float64, warm bool) {
		line := "| " + name + " |"
		for _, o := range r.overheads {
			set := o.cold
			if warm {
				set = o.warm
			}
			var v []float64
			for _, a := range set {
				v = append(v, f(a))
			}
			line += fmt.Sprintf(" %s | %s |", fnum(pct(v, 50)), fnum(pct(v, 95)))
		}
		p("%s", line)
	}
	line := "| reports up to the level; map calls + 1 reduce; points in the reduce context |"
	for _, o := range r.overheads {
		line += fmt.Sprintf(" %d; %d + 1; %d | |", o.reports, o.maps, o.points)
	}
	p("%s", line)
	timing := func(k string) func(a asked) float64 { return func(a asked) float64 { return a.res.Timings[k] } }
	row("wall", func(a asked) float64 { return ms(a.wall) }, false)
	row("reading reports", timing("reports"), false)
	row("batching", timing("batch"), false)
	row("map phase", timing("map"), false)
	row("reduce phase", timing("reduce"), false)
	row("server busy (union of handler spans)", func(a asked) float64 { return ms(a.busy) }, false)
	row("server handler time, summed over calls", func(a asked) float64 { return ms(a.handlers) }, false)
	row("**kgrag-side = wall − server busy**", func(a asked) float64 { return ms(a.wall - a.busy) }, false)
	row("kgrag-side per model call", func(a asked) float64 { return ms(a.wall-a.busy) / float64(a.res.LLMCalls) }, false)
	row("warm: wall", func(a asked) float64 { return ms(a.wall) }, true)
	row("warm: batching", timing("batch"), true)
	row("warm: kgrag-side", func(a asked) float64 { return ms(a.wall - a.busy) }, true)
	p("")
}

func (r *report) writeLatency(p func(string, ...any)) {
	c := r.cfg
	per := ms(c.latency)
	p("### Against a server taking %s per call", c.latency)
	p("")
	p("Wall time of one question (median of %d runs, each on a fresh Encoder) against two ideals: the issue's, calls /", c.repeat)
	p("concurrency × %s, and the exact lower bound for this schedule: the map calls run `concurrency` at a time and the", c.latency)
	p("reduce call can only start after the last, so (ceil(map calls / concurrency) + 1) × %s; with dynamic selection each", c.latency)
	p("level's ratings must also finish before the next level is rated, adding the sum over levels of ceil(rated / concurrency).")
	p("The issue's ideal cannot be reached when calls do not divide into full rounds; the target (within 10 percent) is")
	p("checked against the lower bound. \"map call p50\" is the client-observed time of one map call (%s of it the server's sleep).", c.latency)
	p("")
	p("| data | level | concurrency | dynamic selection | calls: rating + map + reduce | wall (runs) | calls / concurrency × %s | wall / that | lower bound | wall / bound | map call p50 | wall ≤ 1.10 × bound |", c.latency)
	p("|---|---|---|---|---|---|---|---|---|---|---|---|")
	var notes []string
	for _, lr := range r.latency {
		wall := median(lr.walls)
		bound := lr.bounds[0]
		ideal := float64(lr.calls) / float64(lr.concurrency) * per
		rated := 0
		var levels []string
		for _, l := range lr.levels {
			rated += l.Rated
			levels = append(levels, fmt.Sprintf("level %d: %d rated, %d relevant", l.Level, l.Rated, l.Relevant))
		}
		dyn := "off"
		if lr.dynamic {
			dyn = "on"
			notes = append(notes, fmt.Sprintf("Dynamic selection on %s: %s (rating call p50 %s); %d reports mapped.",
				lr.d.label, strings.Join(levels, "; "), fms(lr.rateCall), lr.selected))
		}
		var runs []string
		for _, w := range lr.walls {
			runs = append(runs, fmt.Sprintf("%.2f", w/1000))
		}
		ratio := wall / bound
		verdict := "met"
		if ratio > 1.10 {
			verdict = "MISSED"
		}
		p("| %s | %d | %d | %s | %d + %d + 1 = %d | %.2f s (%s) | %.2f s | %.2f | %.2f s | %.2f | %s | %s |",
			lr.d.label, lr.level, lr.concurrency, dyn, rated, lr.maps, lr.calls, wall/1000, strings.Join(runs, ", "),
			ideal/1000, wall/ideal, bound/1000, ratio, fms(lr.mapCall), verdict)
	}
	p("")
	for _, n := range notes {
		p("%s", n)
		p("")
	}
}

func (r *report) writeContexts(p func(string, ...any)) {
	c := r.cfg
	version := "?"
	if c.python != "" {
		if b, err := os.ReadFile(filepath.Join(filepath.Dir(filepath.Dir(c.python)), ".kgrag-graphrag-version")); err == nil {
			version = strings.TrimSpace(string(b))
		}
	}
	p("### Context building: GraphRAG %s vs kgrag (level %d, median of %d runs)", version, c.level, c.repeat)
	p("")
	p("GraphRAG: scripts/oracle/graphrag_global.py, what global_search does up to the map calls, no model. \"adapters\" is")
	p("read_indexer_communities/_reports/_entities plus the GlobalCommunityContext's construction, on tables already read")
	p("from parquet (reading them is not timed); \"build_context\" is GlobalCommunityContext.build_context (shuffle, weights,")
	p("batches, tiktoken counts). kgrag: MemoryBackend.CommunityReports on the opened dataset, then GlobalBuilder.Batches")
	p("with exact counts (as shipped), each run on a fresh Encoder. Batches are also counted with kgrag's GraphRAG-count mode,")
	p("which must give GraphRAG's batches.")
	p("")
	p("| data | reports: kgrag / GraphRAG | batches: GraphRAG / kgrag GraphRAG-count / kgrag exact | GraphRAG adapters | GraphRAG build_context | kgrag CommunityReports | kgrag Batches | build_context / Batches | GraphRAG total / kgrag total |")
	p("|---|---|---|---|---|---|---|---|---|")
	var notes []string
	for _, cr := range r.contexts {
		if cr.grNote != "" {
			notes = append(notes, cr.d.label+": "+cr.grNote+".")
		}
		if cr.grBuild == 0 {
			p("| %s | %d / - | - / %d / %d | - | - | %s | %s | - | - |", cr.d.label, cr.reports, cr.grCount, cr.batches,
				fms(cr.read), fms(cr.batch))
			continue
		}
		p("| %s | %d / %d | %d / %d / %d | %s | %s | %s | %s | %.1fx | %.1fx |", cr.d.label, cr.reports, cr.grReports,
			cr.grBatches, cr.grCount, cr.batches, fms(cr.grAdapt), fms(cr.grBuild), fms(cr.read), fms(cr.batch),
			cr.grBuild/cr.batch, (cr.grAdapt+cr.grBuild)/(cr.read+cr.batch))
	}
	p("")
	for _, n := range notes {
		p("%s", n)
		p("")
	}
}

// fms prints milliseconds with a precision that suits their size.
func fms(v float64) string {
	switch {
	case v >= 1000:
		return fmt.Sprintf("%.2f s", v/1000)
	case v >= 10:
		return fmt.Sprintf("%.1f ms", v)
	default:
		return fmt.Sprintf("%.2f ms", v)
	}
}

// fnum is fms without the unit, for tables headed in ms.
func fnum(v float64) string {
	switch {
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}
