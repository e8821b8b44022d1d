// Command global times kgrag's global search (map-reduce over community
// reports) against a model that costs nothing and against one that takes a
// fixed time per call, and times its context building beside GraphRAG's.
// bench/run runs it in its global step.
//
//	go run ./bench/global -sample DIR -synth DIR [-graphrag-python PY]
//
// The model is the project's OpenAI-compatible test server
// (internal/llm/llmtest), in this process on 127.0.0.1, scripted to answer
// map calls with a few valid points, rating calls by a rule and the reduce
// call with a short answer; kgrag talks to it over HTTP through the real
// llm.Client, and globalsearch.Searcher reads the reports from
// retrieval.MemoryBackend, as `kgrag ask --mode global --input DIR` does.
// The server's handler records when each request entered and left it, so
// the time kgrag adds to a question is told from the model's: the wall
// time minus the time at least one request was inside the server.
//
// It prints a Markdown section for the bench report on stdout; progress
// goes to stderr.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/globalsearch"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/internal/tokens"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "global bench:", err)
		os.Exit(1)
	}
}

// config is the command line.
type config struct {
	sample, synth, synthLabel string
	level                     int64
	questions, repeat, probes int
	latency                   time.Duration
	python, pythonNote        string
	work, repo, title         string
	cpuProfile                string
}

func parseFlags() (config, error) {
	var c config
	flag.StringVar(&c.sample, "sample", "", "GraphRAG 3.x sample `DIR` (the v3 test sample)")
	flag.StringVar(&c.synth, "synth", "", "synthetic dataset `DIR` (kgrag-synth)")
	flag.StringVar(&c.synthLabel, "synth-label", "synthetic", "name of the synthetic dataset in the report")
	flag.Int64Var(&c.level, "level", 2, "community level of the per-question and context runs")
	flag.IntVar(&c.questions, "questions", 20, "questions per dataset against the instant server")
	flag.IntVar(&c.repeat, "repeat", 3, "runs of each fixed-latency question and of each context build")
	flag.IntVar(&c.probes, "probes", 50, "empty chat requests timed for the round trip")
	flag.DurationVar(&c.latency, "latency", 500*time.Millisecond, "time the slow server takes per call")
	flag.StringVar(&c.python, "graphrag-python", "", "python of the PyPI graphrag venv (scripts/graphrag-py.sh); empty: GraphRAG not run")
	flag.StringVar(&c.pythonNote, "graphrag-note", "", "why GraphRAG is not run, for the report")
	flag.StringVar(&c.work, "work", "", "scratch `DIR` (default: a temporary one)")
	flag.StringVar(&c.repo, "repo", ".", "repository root (for scripts/oracle)")
	flag.StringVar(&c.title, "title", "## Global search", "heading of the report section")
	flag.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the per-question runs (instant server) to `FILE`")
	flag.Parse()
	switch {
	case c.sample == "" || c.synth == "":
		return c, errors.New("-sample and -synth are required")
	case c.questions < 1 || c.repeat < 1 || c.probes < 1:
		return c, errors.New("-questions, -repeat and -probes must be >= 1")
	}
	return c, nil
}

// dataset is one GraphRAG output, opened once.
type dataset struct {
	label, dir  string
	ds          *graphrag.Dataset
	src         *retrieval.MemoryBackend
	open, index time.Duration
}

func openDataset(ctx context.Context, label, dir string) (*dataset, error) {
	logf("opening %s (%s)", label, dir)
	t := time.Now()
	ds, err := graphrag.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	d := &dataset{label: label, dir: dir, ds: ds, open: time.Since(t)}
	t = time.Now()
	d.src = retrieval.NewMemoryBackend(ds)
	d.index = time.Since(t)
	return d, nil
}

func run(ctx context.Context, stdout io.Writer) error {
	c, err := parseFlags()
	if err != nil {
		return err
	}
	if c.work == "" {
		if c.work, err = os.MkdirTemp("", "kgrag-bench-global-"); err != nil {
			return err
		}
		defer os.RemoveAll(c.work)
	}
	var rep report
	rep.cfg = c
	sample, err := openDataset(ctx, "GraphRAG 3.x sample (v3)", c.sample)
	if err != nil {
		return err
	}
	synth, err := openDataset(ctx, c.synthLabel, c.synth)
	if err != nil {
		return err
	}
	rep.sets = []*dataset{sample, synth}
	var encs []float64
	for range 3 {
		t := time.Now()
		if _, err := tokens.NewEncoder(tokens.EncodingCL100K); err != nil {
			return err
		}
		encs = append(encs, msSince(t))
	}
	rep.encoder = median(encs)

	// 1. A server that answers at once.
	fast := startModel(0)
	defer fast.Close()
	client, err := newClient(fast)
	if err != nil {
		return err
	}
	if rep.rtt, rep.rttServer, err = probe(ctx, fast, client, c.probes); err != nil {
		return err
	}
	stop, err := startProfile(c.cpuProfile)
	if err != nil {
		return err
	}
	for _, d := range rep.sets {
		logf("%s: %d questions at level %d, instant server", d.label, c.questions, c.level)
		o, err := overhead(ctx, d, fast, client, c)
		if err != nil {
			return fmt.Errorf("%s: %w", d.label, err)
		}
		rep.overheads = append(rep.overheads, o)
	}
	if err := stop(); err != nil {
		return err
	}

	// 2. A server that takes c.latency per call.
	slow := startModel(c.latency)
	defer slow.Close()
	slowClient, err := newClient(slow)
	if err != nil {
		return err
	}
	if err := slow.rateReports(ctx, sample, c.level); err != nil {
		return err
	}
	for _, lr := range []latencyRun{
		{d: sample, level: c.level, concurrency: 4},
		{d: sample, level: c.level, concurrency: 4, dynamic: true},
		{d: synth, level: 1, concurrency: 8},
		{d: synth, level: c.level, concurrency: 16},
	} {
		logf("%s: level %d, concurrency %d, dynamic %v, %v per call, %d runs", lr.d.label, lr.level, lr.concurrency, lr.dynamic, c.latency, c.repeat)
		if err := lr.measure(ctx, slow, slowClient, c); err != nil {
			return fmt.Errorf("%s: %w", lr.d.label, err)
		}
		rep.latency = append(rep.latency, lr)
	}

	// 3. Context building beside GraphRAG's.
	for _, d := range rep.sets {
		logf("%s: context building, kgrag and GraphRAG", d.label)
		cb, err := contextBuild(ctx, d, c)
		if err != nil {
			return fmt.Errorf("%s: %w", d.label, err)
		}
		rep.contexts = append(rep.contexts, cb)
	}
	return rep.write(stdout)
}

// newClient is the client kgrag ask makes: the default HTTP client and
// retry policy.
func newClient(m *model) (*llm.Client, error) {
	return llm.New(llm.Config{BaseURL: m.URL(), ChatModel: "bench-chat"})
}

// probe times n chat requests of one word each: the client's round trip
// and the part of it spent in the server's handler, p50.
func probe(ctx context.Context, m *model, client *llm.Client, n int) (rtt, server float64, err error) {
	var rtts, servers []float64
	for i := -1; i < n; i++ { // one warm-up, not counted: the first connection
		m.Reset()
		t := time.Now()
		if _, _, err := client.Chat(ctx, []llm.Message{{Role: llm.RoleUser, Content: "ping"}}, llm.ChatOptions{Model: "bench-chat"}); err != nil {
			return 0, 0, fmt.Errorf("round-trip probe: %w", err)
		}
		end := time.Now()
		if i < 0 {
			continue
		}
		_, sum, _ := m.Busy(t, end)
		rtts = append(rtts, ms(end.Sub(t)))
		servers = append(servers, ms(sum))
	}
	return median(rtts), median(servers), nil
}

// questions are what the benchmark asks; with more than there are, they
// come round again, numbered.
var questions = []string{
	"What are the main themes of the corpus?",
	"Who are the most influential people and what do they do?",
	"Which organisations appear most often and how are they related?",
	"What conflicts or disputes does the data describe?",
	"How did the situation change over time?",
	"What places matter most and why?",
	"What are the key events and their consequences?",
	"Which communities are the largest and what holds them together?",
	"What risks or threats are mentioned?",
	"What relationships connect the leading figures?",
	"Summarise the corpus for a newcomer.",
	"What are the economic aspects described?",
	"Which groups cooperate and which compete?",
	"What decisions shaped the outcome?",
	"What remains uncertain or disputed in the reports?",
	"What technologies or methods are discussed?",
	"How do the smaller communities relate to the larger ones?",
	"What are the most surprising findings?",
	"Who holds authority and how is it used?",
	"What would an analyst highlight first?",
}

func question(i int) string {
	q := questions[i%len(questions)]
	if i >= len(questions) {
		q += fmt.Sprintf(" (%d)", i/len(questions)+1)
	}
	return q
}

// searcher builds what one kgrag ask process builds for a question: a
// GlobalBuilder on enc and a Searcher with kgrag's defaults.
func searcher(d *dataset, enc *tokens.Encoder, client *llm.Client, level int64, concurrency int, dynamic bool) (*globalsearch.Searcher, error) {
	p := retrieval.DefaultGlobalParams()
	p.CommunityLevel = level
	b, err := retrieval.NewGlobalBuilder(p, enc)
	if err != nil {
		return nil, err
	}
	o := globalsearch.DefaultOptions()
	o.Concurrency = concurrency
	o.Dynamic = dynamic
	zero := float32(0)
	o.Chat = llm.ChatOptions{Model: "bench-chat", Temperature: &zero}
	return globalsearch.New(d.src, b, client, o)
}

// freshEncoder is a new Encoder, its count memo empty, and no connection
// kept open to the server: the state of a new kgrag ask process (whose
// Encoder is built while the dataset opens, not timed here).
func freshEncoder() (*tokens.Encoder, error) {
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		t.CloseIdleConnections()
	}
	return tokens.NewEncoder(tokens.EncodingCL100K)
}

// asked is one question's figures.
type asked struct {
	res *globalsearch.Result
	// wall is Search's; busy the time at least one request was in the
	// server; handlers the sum of the requests' times there.
	wall, busy, handlers time.Duration
	requests             int
}

// ask runs one search and checks it went the normal way: every reply
// valid, no call failed, an answer.
func ask(ctx context.Context, s *globalsearch.Searcher, m *model, q string) (asked, error) {
	m.Reset()
	// The reduce answer is streamed, as kgrag ask prints it on a terminal.
	h := globalsearch.Hooks{Answer: func(string) error { return nil }}
	t := time.Now()
	res, err := s.Search(ctx, q, h)
	end := time.Now()
	if err != nil {
		return asked{}, err
	}
	a := asked{res: res, wall: end.Sub(t)}
	a.busy, a.handlers, a.requests = m.Busy(t, end)
	switch {
	case res.MapFailed > 0 || res.MapParse.Valid != len(res.Batches):
		return a, fmt.Errorf("question %q: map replies %+v, %d failed; want all valid", q, res.MapParse, res.MapFailed)
	case res.NoData || res.Answer == "":
		return a, fmt.Errorf("question %q: no answer", q)
	case res.Selection != nil && (res.Selection.Failed > 0 || res.Selection.Parse.Valid != len(res.Selection.Rated)):
		return a, fmt.Errorf("question %q: rating replies %+v, %d failed; want all valid", q, res.Selection.Parse, res.Selection.Failed)
	case a.requests != res.LLMCalls:
		return a, fmt.Errorf("question %q: the server saw %d requests for %d model calls", q, a.requests, res.LLMCalls)
	}
	return a, nil
}

// overheadRun is part 1 on one dataset.
type overheadRun struct {
	d                     *dataset
	cold, warm            []asked
	reports, maps, points int
}

// overhead asks the questions twice: each on a fresh Encoder (cold, as
// one kgrag ask process), then all on one Encoder after a warm-up
// question (a process answering many).
func overhead(ctx context.Context, d *dataset, m *model, client *llm.Client, c config) (*overheadRun, error) {
	o := &overheadRun{d: d}
	for i := range c.questions {
		enc, err := freshEncoder()
		if err != nil {
			return nil, err
		}
		s, err := searcher(d, enc, client, c.level, globalsearch.DefaultOptions().Concurrency, false)
		if err != nil {
			return nil, err
		}
		a, err := ask(ctx, s, m, question(i))
		if err != nil {
			return nil, err
		}
		o.cold = append(o.cold, a)
	}
	enc, err := tokens.NewEncoder(tokens.EncodingCL100K)
	if err != nil {
		return nil, err
	}
	s, err := searcher(d, enc, client, c.level, globalsearch.DefaultOptions().Concurrency, false)
	if err != nil {
		return nil, err
	}
	for i := -1; i < c.questions; i++ {
		a, err := ask(ctx, s, m, question(max(i, 0)))
		if err != nil {
			return nil, err
		}
		if i >= 0 {
			o.warm = append(o.warm, a)
		}
	}
	r := o.cold[0].res
	o.reports, o.maps = r.Reports, len(r.Batches)
	for _, a := range o.cold {
		o.points += len(a.res.Reduce.Context.Points)
	}
	o.points /= len(o.cold)
	return o, nil
}

// latencyRun is one question against the slow server, repeated.
type latencyRun struct {
	d           *dataset
	level       int64
	concurrency int
	dynamic     bool

	walls, bounds []float64 // ms, per run
	calls, maps   int
	selected      int
	levels        []globalsearch.LevelCount
	mapCall       float64 // p50 of the map calls' client-observed ms
	rateCall      float64
}

func (lr *latencyRun) measure(ctx context.Context, m *model, client *llm.Client, c config) error {
	per := ms(c.latency)
	var mapCalls, rateCalls []float64
	for i := range c.repeat {
		enc, err := freshEncoder()
		if err != nil {
			return err
		}
		s, err := searcher(lr.d, enc, client, lr.level, lr.concurrency, lr.dynamic)
		if err != nil {
			return err
		}
		a, err := ask(ctx, s, m, question(i))
		if err != nil {
			return err
		}
		r := a.res
		rounds := ceilDiv(len(r.Batches), lr.concurrency) + 1
		lr.levels = nil
		if r.Selection != nil {
			lr.levels = r.Selection.Levels
			for _, l := range r.Selection.Levels {
				rounds += ceilDiv(l.Rated, lr.concurrency)
			}
			for _, rt := range r.Selection.Rated {
				rateCalls = append(rateCalls, rt.Millis)
			}
		}
		for _, b := range r.Batches {
			mapCalls = append(mapCalls, b.Millis)
		}
		lr.walls = append(lr.walls, ms(a.wall))
		lr.bounds = append(lr.bounds, float64(rounds)*per)
		lr.calls, lr.maps, lr.selected = r.LLMCalls, len(r.Batches), r.Selected
	}
	lr.mapCall = median(mapCalls)
	if len(rateCalls) > 0 {
		lr.rateCall = median(rateCalls)
	}
	return nil
}

// contextRun is part 3 on one dataset.
type contextRun struct {
	d                 *dataset
	reports           int
	read, batch       float64 // kgrag, ms, median
	batches, grCount  int     // kgrag exact; kgrag with GraphRAG's count
	grBatches         int
	grAdapt, grBuild  float64 // GraphRAG, ms, median
	grReports         int
	grNote, grDataDir string
}

// contextBuild times kgrag's CommunityReports and Batches (fresh Encoder
// each run) and GraphRAG's adapters and build_context on the same data.
func contextBuild(ctx context.Context, d *dataset, c config) (*contextRun, error) {
	cr := &contextRun{d: d}
	var reads, builds []float64
	for range c.repeat {
		enc, err := tokens.NewEncoder(tokens.EncodingCL100K)
		if err != nil {
			return nil, err
		}
		p := retrieval.DefaultGlobalParams()
		p.CommunityLevel = c.level
		b, err := retrieval.NewGlobalBuilder(p, enc)
		if err != nil {
			return nil, err
		}
		t := time.Now()
		all, err := d.src.CommunityReports(ctx, c.level)
		if err != nil {
			return nil, err
		}
		reads = append(reads, msSince(t))
		t = time.Now()
		batches := b.Batches(b.Select(all))
		builds = append(builds, msSince(t))
		cr.reports, cr.batches = len(all), len(batches)
		p.GraphRAGTokenCount = true
		if b, err = retrieval.NewGlobalBuilder(p, enc); err != nil {
			return nil, err
		}
		cr.grCount = len(b.Batches(b.Select(all)))
	}
	cr.read, cr.batch = median(reads), median(builds)

	if c.python == "" {
		cr.grNote = "not run: " + cmp.Or(c.pythonNote, "no -graphrag-python")
		return cr, nil
	}
	outs, err := runOracle(ctx, c.python, c.repo, d.dir, c.level, retrieval.DefaultGlobalParams().MaxContextTokens, c.repeat)
	if err != nil {
		// kgrag-synth output written before graphrag.Write3x wrote empty
		// children lists has null ones, which GraphRAG's reader refuses:
		// give GraphRAG the same data as kgrag read it, in 3.x layout.
		copyDir := filepath.Join(c.work, "graphrag-3x-"+filepath.Base(d.dir))
		logf("%s: GraphRAG cannot read %s (%v); writing it with graphrag.Write3x to %s", d.label, d.dir, err, copyDir)
		cr.grNote = fmt.Sprintf("GraphRAG could not read %s (%s); it read a copy that graphrag.Write3x wrote from what kgrag read", d.dir, err)
		if werr := graphrag.Write3x(ctx, copyDir, d.ds); werr != nil {
			cr.grNote = fmt.Sprintf("failed: GraphRAG could not read %s (%s), and writing a 3.x copy failed: %v", d.dir, err, werr)
			return cr, nil
		}
		defer os.RemoveAll(copyDir)
		cr.grDataDir = copyDir
		if outs, err = runOracle(ctx, c.python, c.repo, copyDir, c.level, retrieval.DefaultGlobalParams().MaxContextTokens, c.repeat); err != nil {
			cr.grNote = fmt.Sprintf("failed: on %s and on a graphrag.Write3x copy: %v", d.dir, err)
			return cr, nil
		}
	}
	var adapts, secs []float64
	for _, o := range outs {
		adapts = append(adapts, o.AdaptSeconds*1000)
		secs = append(secs, o.Seconds*1000)
	}
	cr.grAdapt, cr.grBuild = median(adapts), median(secs)
	cr.grReports, cr.grBatches = outs[0].Reports, len(outs[0].Batches)
	return cr, nil
}

// startProfile starts a CPU profile into path ("" for none); stop ends
// it and closes the file.
func startProfile(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

func msSince(t time.Time) float64 { return ms(time.Since(t)) }

// pct is the nearest-rank percentile p (0-100) of v.
func pct(v []float64, p float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[max(0, int(math.Ceil(p*float64(len(s))/100))-1)]
}

func median(v []float64) float64 { return pct(v, 50) }

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "global bench: "+format+"\n", args...)
}
