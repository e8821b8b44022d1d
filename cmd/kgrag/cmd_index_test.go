package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/indexer/indexertest"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/test"
)

// TestIndexThenLoad indexes a piece of A Christmas Carol with a scripted
// model through the command, then converts the output with kgrag load.
func TestIndexThenLoad(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{})
	indexertest.Script(srv)
	dir := t.TempDir()
	out := filepath.Join(dir, "output")
	var errb bytes.Buffer
	term := terminal{out: &bytes.Buffer{}, err: &errb}
	err := runIndex(context.Background(), indexRunOptions{
		input: indexertest.CarolInput(t, 2000), output: out, chatModel: "m",
		concurrency: 2, chunkSize: 300, overlap: 30, maxGleanings: 1,
		entityTypes: "person, geo,event", temperature: 0.25, maxTokens: 900,
		llm: llmOptions{url: srv.URL()},
	}, term)
	if err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	calls := srv.Count("/chat/completions")
	// Every stage's calls carry the sampling settings.
	kinds := map[string]bool{}
	for _, r := range srv.Requests() {
		temp, _ := r.Extra["temperature"].(float64)
		max, _ := r.Extra["max_tokens"].(float64)
		if temp < 0.249 || temp > 0.251 || max != 900 {
			t.Errorf("%s request: temperature %v, max_tokens %v; want 0.25, 900", indexertest.Kind(r), r.Extra["temperature"], r.Extra["max_tokens"])
		}
		kinds[indexertest.Kind(r)] = true
	}
	if !kinds[indexertest.KindExtraction] || !kinds[indexertest.KindSummary] || !kinds[indexertest.KindReport] {
		t.Errorf("request kinds %v; want extraction, summary and report", kinds)
	}
	for _, want := range []string{"extraction", "summaries", "reports", "indexed 1 documents"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb.String())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, defaultIndexCache)); err != nil {
		t.Errorf("default cache beside the output: %v", err)
	}
	ttl := filepath.Join(dir, "g.ttl")
	if err := runLoad(context.Background(), loadOptions{input: out, turtle: ttl, base: defaultBase, quiet: true}, term); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(ttl)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"SCROOGE"`, "a gr:Community", "a gr:Chunk", "gr:full_content \"# Scrooge and his circle"} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("turtle lacks %s", want)
		}
	}
	t.Logf("%d model calls; stderr:\n%s", calls, errb.String())
}

func TestIndexUsage(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"no input", []string{"index", "--output", t.TempDir()}, "--input is required"},
		{"no output", []string{"index", "--input", t.TempDir()}, "--output is required"},
		{"overlap", []string{"index", "--input", t.TempDir(), "--output", t.TempDir(), "--chunk-size", "10", "--chunk-overlap", "10"}, "--chunk-size"},
		{"dedup threshold", []string{"index", "--input", t.TempDir(), "--output", t.TempDir(), "--dedup", "--dedup-threshold", "1.5"}, "--dedup-threshold"},
		{"load without store", []string{"index", "--input", t.TempDir(), "--output", t.TempDir(), "--load"}, "--load needs --store"},
		{"load without graph", []string{"index", "--input", t.TempDir(), "--output", t.TempDir(), "--load", "--store", "http://127.0.0.1:9/ds"}, "--graph"},
		{"bad method", []string{"index", "--input", t.TempDir(), "--output", t.TempDir(), "--method", "quick"}, `--method must be standard or fast, not "quick"`},
		{"bad reports", []string{"index", "--input", t.TempDir(), "--output", t.TempDir(), "--method", "fast", "--reports", "no"}, `--reports must be model or none, not "no"`},
		{"fast claims", []string{"index", "--input", t.TempDir(), "--output", t.TempDir(), "--method", "fast", "--claims"}, "--claims needs the model's extraction"},
		{"fast dedup", []string{"index", "--input", t.TempDir(), "--output", t.TempDir(), "--method", "fast", "--dedup"}, "--dedup joins the model's entities"},
		{"fast plan", []string{"index", "--input", t.TempDir(), "--output", t.TempDir(), "--method", "fast", "--plan"}, "--method fast makes none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runKgrag(t, tt.args...)
			if code != 2 || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tt.stderr)
			}
		})
	}
}

// TestIndexPlan checks that --plan needs no model server and writes
// nothing: not the output, not the cache.
func TestIndexPlan(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "output")
	stdout, stderr, code := runKgrag(t, "index", "--input", indexertest.CarolInput(t, 3000), "--output", out,
		"--plan", "--chunk-size", "300", "--chunk-overlap", "0", "--llm-url", "http://127.0.0.1:9/v1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"text units", "calls (exact)", "0 of ", "reports      ~"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("plan lacks %q:\n%s", want, stdout)
		}
	}
	for _, p := range []string{out, filepath.Join(dir, defaultIndexCache)} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("--plan made %s", p)
		}
	}
}

// TestIndexCSV indexes the rows of a CSV file by a named text column, one
// document a row; a row too short to hold the text stops the run before
// any model call, unless --skip-bad-input leaves it out and lists it.
func TestIndexCSV(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{})
	indexertest.Script(srv)
	in := t.TempDir()
	csv := "id,body,headline\n" +
		"1,\"Scrooge and Marley were partners, and Marley was dead.\",Partners\n" +
		"2,\"Fred wished his uncle Scrooge a merry Christmas in London.\",Nephew\n" +
		"3\n" // too short to hold the text
	if err := os.WriteFile(filepath.Join(in, "rows.csv"), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "output")
	args := []string{"index", "--input", in, "--output", out, "--chat-model", "m", "--llm-url", srv.URL(),
		"--text-column", "body", "--title-column", "headline"}
	_, stderr, code := runKgrag(t, args...)
	if code != 1 || !strings.Contains(stderr, "rows.csv") {
		t.Fatalf("bad row without --skip-bad-input: exit %d, stderr %q; want 1 and the file named", code, stderr)
	}
	if n := srv.Count("/chat/completions"); n != 0 {
		t.Errorf("%d model calls before failing on the input", n)
	}
	_, stderr, code = runKgrag(t, append(args, "--skip-bad-input")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "skipped: ") || !strings.Contains(stderr, "indexed 2 documents") {
		t.Errorf("stderr does not list the skipped row and 2 documents:\n%s", stderr)
	}
	ds, err := graphrag.Open(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, d := range ds.Documents {
		titles = append(titles, d.Title)
	}
	if strings.Join(titles, ",") != "Partners,Nephew" {
		t.Errorf("document titles %v; want the headline column", titles)
	}
}

// TestIndexDedup runs --dedup through the command against the test
// server's embeddings: the run embeds each entity once and lists what it
// joined.
func TestIndexDedup(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{})
	indexertest.Script(srv)
	out := filepath.Join(t.TempDir(), "output")
	_, stderr, code := runKgrag(t, "index", "--input", indexertest.CarolInput(t, 2000), "--output", out,
		"--chat-model", "m", "--embed-model", "e", "--llm-url", srv.URL(), "--chunk-size", "300",
		"--dedup", "--dedup-threshold", "0.95", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "dedup: similarity >= 0.95: ") {
		t.Errorf("stderr lacks the dedup report:\n%s", stderr)
	}
	if srv.Count("/embeddings") == 0 {
		t.Error("no embedding request")
	}
}

// TestIndexShowsDropped: what the extraction could not read is counted and
// shown, with the reason, so a user sees what a weak model wrote.
func TestIndexShowsDropped(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{})
	srv.Respond(func(req llmtest.Request) (string, bool) {
		if indexertest.Kind(req) == indexertest.KindExtraction {
			return "(\"entity\"<|>SCROOGE<|>person<|>A miser.)\n##\n(\"entity\"<|><|>person<|>Nobody.)\n##\n" +
				"(\"relationship\"<|>SCROOGE<|>SCROOGE<|>Himself.<|>1)\n<|COMPLETE|>", true
		}
		return indexertest.Reply(req)
	})
	out := filepath.Join(t.TempDir(), "output")
	_, stderr, code := runKgrag(t, "index", "--input", indexertest.CarolInput(t, 200), "--output", out,
		"--chat-model", "m", "--llm-url", srv.URL(), "--max-gleanings", "0")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"read graph  3 records: 1 entities, 0 relationships; ", "2 dropped",
		`dropped (entity without a name): "(\"entity\"<|><|>person<|>Nobody.)"`, "dropped (relationship to itself)"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// TestIndexLoadStoreDown: with --load, a store that cannot be reached
// fails the command before any model call, with the store's exit status.
func TestIndexLoadStoreDown(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{})
	indexertest.Script(srv)
	_, stderr, code := runKgrag(t, "index", "--input", indexertest.CarolInput(t, 200), "--output", filepath.Join(t.TempDir(), "out"),
		"--chat-model", "m", "--llm-url", srv.URL(), "--load", "--store", "http://127.0.0.1:9/ds", "--graph", "http://example.org/g",
		"--store-type", "fuseki", "--timeout", "2s")
	if code != 10 || !strings.Contains(stderr, "127.0.0.1:9") {
		t.Errorf("exit %d, stderr %q; want 10 naming the store", code, stderr)
	}
	if n := srv.Count("/chat/completions"); n != 0 {
		t.Errorf("%d model calls before the store check", n)
	}
}

// TestIndexReasoningModel: a reasoning model's draft, which holds an
// extraction record, a summary and a report of its own, leaves no trace
// in the output: the graph equals the one a model without reasoning
// gives, and no description or report holds the draft or a tag.
func TestIndexReasoningModel(t *testing.T) {
	const draft = `Plan: ("entity"<|>DRAFT ENTITY<|>person<|>from the draft)` + "\n##\n" +
		`{"title": "DRAFT REPORT", "summary": "draft", "findings": [], "rating": 9, "rating_explanation": "draft"}`
	input := indexertest.CarolInput(t, 1200)
	var lastStderr string
	index := func(cfg llmtest.Config) *graphrag.Dataset {
		srv := llmtest.Start(t, cfg)
		indexertest.Script(srv)
		out := filepath.Join(t.TempDir(), "output")
		var errb bytes.Buffer
		err := runIndex(context.Background(), indexRunOptions{
			input: input, output: out, chatModel: "m", concurrency: 2, chunkSize: 300, overlap: 30, maxGleanings: 1,
			entityTypes: "person, geo, event",
			llm:         llmOptions{url: srv.URL()},
		}, terminal{out: &bytes.Buffer{}, err: &errb})
		if err != nil {
			t.Fatalf("%v\n%s", err, errb.String())
		}
		lastStderr = errb.String()
		ds, err := graphrag.Open(context.Background(), out)
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	summary := func(ds *graphrag.Dataset) []string {
		var out []string
		for _, e := range ds.Entities {
			out = append(out, e.Title+": "+e.Description)
		}
		for _, c := range ds.Communities {
			if c.Report != nil {
				out = append(out, "report "+c.Community+": "+c.Report.Title+" / "+c.Report.FullContent)
			}
		}
		return out
	}
	plain := summary(index(llmtest.Config{}))
	if len(plain) < 5 {
		t.Fatalf("the scripted model gave %d entities and reports; want a graph", len(plain))
	}
	for _, apart := range []bool{false, true} {
		got := summary(index(llmtest.Config{Reasoning: draft, ReasoningApart: apart}))
		if !strings.Contains(lastStderr, "replies held reasoning") {
			t.Errorf("apart %v: the run summary does not count the reasoning:\n%s", apart, lastStderr)
		}
		if d := cmp.Diff(plain, got); d != "" {
			t.Errorf("apart %v: output differs from a model's without reasoning (-want +got):\n%s", apart, d)
		}
		for _, line := range got {
			if strings.Contains(line, "DRAFT") || strings.Contains(line, "think>") {
				t.Errorf("apart %v: draft in the output: %.200s", apart, line)
			}
		}
	}
}

// TestIndexPlanAfterChange: --plan over an earlier output and its cache,
// after a document was removed, prints what will be asked again, and the
// run then asks exactly that (nothing new to extract: the plan knows the
// whole change).
func TestIndexPlanAfterChange(t *testing.T) {
	staves, err := indexertest.SplitStaves(test.ChristmasCarol(t))
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := indexertest.Model(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "input")
	opts := indexRunOptions{input: in, output: filepath.Join(dir, "output"), cache: filepath.Join(dir, "cache"), chatModel: "m",
		concurrency: 2, chunkSize: 1200, overlap: 100, maxGleanings: 1, entityTypes: "person,geo,event", quiet: true,
		llm: llmOptions{url: srv.URL()}}
	run := func(files map[string]string, plan bool) string {
		t.Helper()
		if err := indexertest.WriteFolder(in, files); err != nil {
			t.Fatal(err)
		}
		o := opts
		o.plan = plan
		var out, errb bytes.Buffer
		if err := runIndex(context.Background(), o, terminal{out: &out, err: &errb}); err != nil {
			t.Fatalf("%v\n%s", err, errb.String())
		}
		return out.String()
	}
	run(map[string]string{"stave-1.txt": staves[0], "stave-2.txt": staves[1]}, false)
	srv.Reset()
	plan := run(map[string]string{"stave-2.txt": staves[1]}, true)
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("--plan made %d model calls", n)
	}
	run(map[string]string{"stave-2.txt": staves[1]}, false)
	calls := map[string]int{}
	for _, r := range srv.Requests() {
		calls[indexertest.Kind(r)]++
	}
	want := fmt.Sprintf("asked again  0 extraction conversations (the new text units'), %d summaries and %d reports",
		calls[indexertest.KindSummary], calls[indexertest.KindReport])
	if !strings.Contains(plan, want) || !strings.Contains(plan, "removed") {
		t.Errorf("plan:\n%s\nwant %q (what the run then asked) and the removed document", plan, want)
	}
}

// TestIndexFitsWindow indexes with chunks larger than the window of the
// servers can hold beside the prompt: one that says
// its window (llama-server's /props) and one that only names it refusing
// a prompt (llama-cpp-python), which kgrag learns, indexes again, and
// remembers for the next run. No request the server answered was over its
// window, by its own count.
func TestIndexFitsWindow(t *testing.T) {
	const window = 1600 // the test server's tokens: words
	tests := []struct {
		name    string
		imitate string
		refused bool // the first run learns the window from a refusal
	}{
		{"llama-server says its window", llmtest.ImitateLlamaServer, false},
		{"llama-cpp-python names it refusing", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.Start(t, llmtest.Config{Imitate: tt.imitate, ChatWindow: window, Models: []string{"m"}})
			indexertest.Script(srv)
			input := indexertest.CarolInput(t, 3000)
			for run := 1; run <= 2; run++ {
				before := len(srv.Requests())
				out := filepath.Join(t.TempDir(), "output")
				_, stderr, code := runKgrag(t, "index", "--input", input, "--output", out, "--llm-url", srv.URL(), "--chat-model", "m", "--cache", "",
					"--chunk-size", "2000") // about 1,500 words beside the prompt's 650: over the window
				if code != 0 {
					t.Fatalf("run %d: kgrag index: exit %d: %s", run, code, stderr)
				}
				refused := strings.Contains(stderr, "indexing again with every prompt cut to fit")
				if refused != (tt.refused && run == 1) {
					t.Errorf("run %d: learned from a refusal: %v; want %v:\n%s", run, refused, tt.refused && run == 1, stderr)
				}
				if !strings.Contains(stderr, "degraded: chunks: ") {
					t.Errorf("run %d: stderr says nothing of the chunks cut to the window:\n%s", run, stderr)
				}
				over := 0
				for _, r := range srv.Requests()[before:] {
					n := 0
					for _, m := range r.Messages {
						n += len(strings.Fields(m.Content))
					}
					if n >= window {
						over++
					}
				}
				// A refused run sends at most one over-long prompt a call
				// in flight (--concurrency, 4) before the refusal stops it;
				// the rerun sends none, or it would have failed.
				if refused && (over < 1 || over > 4) || !refused && over != 0 {
					t.Errorf("run %d: %d requests over the window; want %s", run, over, map[bool]string{true: "1 to 4 (those in flight when refused)", false: "0"}[refused])
				}
				ds, err := graphrag.Open(t.Context(), out)
				if err != nil {
					t.Fatal(err)
				}
				reports := 0
				for _, c := range ds.Communities {
					if c.Report != nil {
						reports++
					}
				}
				if len(ds.Entities) == 0 || reports == 0 {
					t.Errorf("run %d: %d entities, %d reports; want some", run, len(ds.Entities), reports)
				}
			}
		})
	}
}
