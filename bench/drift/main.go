// Command drift times kgrag's DRIFT and basic search against a model that
// costs nothing and against one that takes a fixed time per call.
// bench/run runs it in its drift step.
//
//	go run ./bench/drift -sample DIR [-questions N] [-latency 500ms]
//
// The model is the project's OpenAI-compatible test server
// (internal/llm/llmtest) in this process on 127.0.0.1, with the time of
// every request inside it recorded (llmtest.Timed), scripted to answer
// DRIFT's calls with valid JSON: the primer with one follow-up question
// per report it read, each follow-up with two more. The indexes are flat
// files of the server's own deterministic embeddings, as kgrag embed
// --tables all writes them. kgrag's own time for a question is the wall
// time minus the time at least one request was inside the server.
//
// It prints a Markdown section for the bench report on stdout; progress
// goes to stderr.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kgrag/kgrag/embedindex/flat"
	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/basicsearch"
	"github.com/kgrag/kgrag/internal/driftsearch"
	"github.com/kgrag/kgrag/internal/embedtext"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/localsearch"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/internal/tokens"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "drift bench:", err)
		os.Exit(1)
	}
}

// questions are asked in turn; the bench asks -questions of them.
var questions = []string{
	"How do the ghosts change Scrooge?",
	"Who is Scrooge's clerk?",
	"What does Marley's ghost warn Scrooge of?",
	"What happens at Fezziwig's ball?",
	"How does the Cratchit family keep Christmas?",
	"What does the Ghost of Christmas Yet to Come show?",
	"Who is Fred and what does he want from Scrooge?",
	"What becomes of Tiny Tim?",
	"What did Belle say to the young Scrooge?",
	"How does Scrooge keep Christmas at the end?",
}

const (
	embedModel = "bench-embed"
	dim        = 64
)

type config struct {
	sample      string
	questions   int
	latency     time.Duration
	concurrency int
}

func run(ctx context.Context, w io.Writer) error {
	var c config
	flag.StringVar(&c.sample, "sample", "", "GraphRAG 3.x output `DIR` (the v3 test sample)")
	flag.IntVar(&c.questions, "questions", 10, "questions against the instant server (at most 10)")
	flag.DurationVar(&c.latency, "latency", 500*time.Millisecond, "time the slow server takes per chat call")
	flag.IntVar(&c.concurrency, "concurrency", 4, "model calls in flight at once (kgrag's default)")
	flag.Parse()
	if c.sample == "" {
		return errors.New("-sample is required")
	}
	c.questions = min(max(c.questions, 1), len(questions))
	ds, err := graphrag.Open(ctx, c.sample)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "kgrag-bench-drift-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	idx, err := writeIndexes(ctx, ds, dir)
	if err != nil {
		return err
	}
	enc, err := tokens.NewEncoder(tokens.EncodingCL100K)
	if err != nil {
		return err
	}
	src := retrieval.NewMemorySource(ds)

	fmt.Fprintf(w, "## DRIFT and basic search (bench/drift)\n\n")
	fmt.Fprintf(w, "%s: %d entities embedded, %d text units, %d reports; GraphRAG's defaults (DRIFT: 20 reports primed in 5 folds, 3 rounds of up to 20 follow-ups; basic: 10 text units), concurrency %d.\n\n",
		c.sample, idx[0].Info().Count, len(ds.TextUnits), idx[2].Info().Count, c.concurrency)

	fast := start(ds, 0)
	defer fast.Close()
	fmt.Fprintf(w, "kgrag's own time per question (wall time less the time a request was inside the instant server; %d questions):\n\n", c.questions)
	fmt.Fprintf(w, "| mode | p50 ms | p95 ms | max ms | model calls per question | target |\n|---|---|---|---|---|---|\n")
	for _, mode := range []string{"basic", "drift"} {
		var own []float64
		calls := 0
		for _, q := range questions[:c.questions] {
			fast.Reset()
			t := time.Now()
			n, err := ask(ctx, mode, q, src, idx, fast, enc, c.concurrency)
			if err != nil {
				return fmt.Errorf("%s %q: %w", mode, q, err)
			}
			end := time.Now()
			union, _, _ := fast.Busy(t, end)
			own = append(own, ms(end.Sub(t)-union))
			calls += n
		}
		target := ""
		if mode == "basic" {
			target = "p50 < 10 ms: " + map[bool]string{true: "met", false: "MISSED"}[pct(own, 50) < 10]
		}
		fmt.Fprintf(w, "| %s | %.2f | %.2f | %.2f | %.1f | %s |\n", mode, pct(own, 50), pct(own, 95), slices.Max(own), float64(calls)/float64(c.questions), target)
	}

	slow := start(ds, c.latency)
	defer slow.Close()
	fmt.Fprintf(w, "\nWall time against a server taking %v per chat call (the lower bound: the calls' waves, each as long as one call, %d calls at once; embeddings are instant):\n\n", c.latency, c.concurrency)
	fmt.Fprintf(w, "| mode | question | calls | waves | lower bound s | wall s | over the bound |\n|---|---|---|---|---|---|---|\n")
	for _, mode := range []string{"basic", "drift"} {
		for _, q := range questions[:2] {
			slow.Reset()
			t := time.Now()
			res, err := askDetailed(ctx, mode, q, src, idx, slow, enc, c.concurrency)
			if err != nil {
				return err
			}
			wall := time.Since(t)
			bound := time.Duration(res.waves) * c.latency
			fmt.Fprintf(w, "| %s | %s | %d | %d | %.1f | %.2f | %+.1f%% |\n", mode, q, res.calls, res.waves, bound.Seconds(), wall.Seconds(),
				100*(wall.Seconds()/bound.Seconds()-1))
		}
	}
	return nil
}

// writeIndexes writes the entities', text units' and reports' flat
// indexes of ds, of the test server's embeddings of the texts kgrag embed
// embeds, and opens them.
func writeIndexes(ctx context.Context, ds *graphrag.Dataset, dir string) ([3]*flat.Index, error) {
	var out [3]*flat.Index
	tables := [3]struct {
		name       string
		ids, texts []string
	}{{name: "entities"}, {name: "text_units"}, {name: "community_reports"}}
	for _, e := range ds.Entities {
		if !e.Placeholder {
			tables[0].ids, tables[0].texts = append(tables[0].ids, e.ID), append(tables[0].texts, embedtext.Entity(e))
		}
	}
	for _, u := range ds.TextUnits {
		tables[1].ids, tables[1].texts = append(tables[1].ids, u.ID), append(tables[1].texts, u.Text)
	}
	for _, c := range ds.Communities {
		if c.Report != nil {
			tables[2].ids, tables[2].texts = append(tables[2].ids, c.Community), append(tables[2].texts, c.Report.FullContent)
		}
	}
	for i, t := range tables {
		vecs := make([][]float32, len(t.texts))
		for j, text := range t.texts {
			vecs[j] = llmtest.Embed(embedModel, text, dim)
		}
		path := filepath.Join(dir, t.name+".vec")
		if err := flat.Write(ctx, path, embedModel, t.ids, vecs); err != nil {
			return out, err
		}
		x, err := flat.Open(ctx, path, flat.Options{})
		if err != nil {
			return out, err
		}
		out[i] = x
	}
	return out, nil
}

// start starts a timed test server taking latency per chat call, scripted
// for DRIFT and basic search.
func start(ds *graphrag.Dataset, latency time.Duration) *llmtest.Timed {
	titles := map[string]string{}
	for _, c := range ds.Communities {
		if c.Report != nil {
			titles[c.Report.FullContent] = c.Report.Title
		}
	}
	srv := llmtest.New(llmtest.Config{Dim: dim, Latency: latency})
	srv.Respond(func(r llmtest.Request) (string, bool) {
		if len(r.Messages) == 0 {
			return "", false
		}
		first, last := r.Messages[0].Content, r.Messages[len(r.Messages)-1].Content
		switch {
		case strings.HasPrefix(first, "Write a hypothetical answer"):
			return "# The question, answered\n\nA hypothetical answer in the shape of a report.", true
		case strings.Contains(first, "---Reports---"):
			var follow []string
			for text, title := range titles {
				if strings.Contains(first, text) {
					follow = append(follow, fmt.Sprintf("%q", "What is said about "+title+"?"))
				}
			}
			slices.Sort(follow)
			return `{"intermediate_answer": "An intermediate answer from the reports.", "score": 60, "follow_up_queries": [` + strings.Join(follow, ", ") + `]}`, true
		case strings.Contains(first, "The larger question is"):
			return fmt.Sprintf(`{"response": "An answer to the step [Data: Sources (1)].", "score": 50, "follow_up_queries": [%q, %q]}`,
				"And what came of it: "+last, "Who else took part: "+last), true
		}
		return "The answer [Data: Sources (1)].", true
	})
	return llmtest.StartTimed(srv)
}

// result is what one question cost: its chat calls and their waves.
type result struct{ calls, waves int }

func ask(ctx context.Context, mode, q string, src *retrieval.MemorySource, idx [3]*flat.Index, m *llmtest.Timed, enc *tokens.Encoder, conc int) (int, error) {
	r, err := askDetailed(ctx, mode, q, src, idx, m, enc, conc)
	return r.calls, err
}

// askDetailed answers q with mode over a client of m.
func askDetailed(ctx context.Context, mode, q string, src *retrieval.MemorySource, idx [3]*flat.Index, m *llmtest.Timed, enc *tokens.Encoder, conc int) (result, error) {
	client, err := llm.New(llm.Config{BaseURL: m.URL(), ChatModel: "bench-chat", EmbedModel: embedModel})
	if err != nil {
		return result{}, err
	}
	if mode == "basic" {
		p := retrieval.DefaultBasicParams()
		s, err := basicsearch.New(src, idx[1], client.Embedder(), client, basicsearch.Options{Params: p, Encoder: enc})
		if err != nil {
			return result{}, err
		}
		_, err = s.Search(ctx, q, localsearch.Hooks{})
		return result{calls: 1, waves: 1}, err
	}
	opts := driftsearch.DefaultOptions()
	opts.Concurrency = conc
	s, err := driftsearch.New(src, idx[0], idx[2], client.Embedder(), client, enc, opts)
	if err != nil {
		return result{}, err
	}
	res, err := s.Search(ctx, q, driftsearch.Hooks{})
	if err != nil {
		return result{}, err
	}
	// The bound: the expansion, the primer's calls, each round's, the
	// answer; each step waits for the one before it.
	rounds := map[int]int{}
	for _, a := range res.Actions[1:] {
		if a.Call != nil {
			rounds[a.Round]++
		}
	}
	waves := 2 + ceil(len(res.Primer), conc)
	for _, n := range rounds {
		waves += ceil(n, conc)
	}
	return result{calls: res.LLMCalls, waves: waves}, nil
}

func ceil(n, k int) int { return (n + k - 1) / k }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// pct is the p-th percentile of xs (nearest rank).
func pct(xs []float64, p int) float64 {
	s := slices.Sorted(slices.Values(xs))
	i := (p*len(s) + 99) / 100
	return s[max(i-1, 0)]
}
