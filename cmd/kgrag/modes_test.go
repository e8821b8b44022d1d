package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	answerjson "github.com/kgrag/kgrag/internal/answer"

	"github.com/kgrag/kgrag/internal/driftsearch"
	"github.com/kgrag/kgrag/internal/engine"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/mode"
	"github.com/kgrag/kgrag/internal/test"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// newAllTablesFixture is newAskFixture with every table embedded
// (kgrag embed --tables all), so that every mode can be served.
func newAllTablesFixture(t *testing.T) askFixture {
	t.Helper()
	f := newAskFixture(t)
	o := embedTestOptions(f.input, f.index, f.srv.URL(), askEmbedModel)
	o.tables = []string{tableEntities, tableTextUnits, tableReports}
	term, _, _ := testTerminal()
	if err := runEmbed(t.Context(), o, term); err != nil {
		t.Fatal(err)
	}
	f.srv.Reset()
	return f
}

// TestModesEverywhere: every mode of the registry (internal/mode) has an
// engine, is described in kgrag ask --help and taken by --mode, is listed
// by kgrag serve's /v1/models (through go-openai) and offered by the MCP
// ask tool (through the MCP SDK's client); nothing is offered that the
// registry lacks.
func TestModesEverywhere(t *testing.T) {
	help, _, code := runKgrag(t, "ask", "--help")
	if code != 0 {
		t.Fatalf("ask --help: exit %d", code)
	}
	f := newAllTablesFixture(t)
	sf := startServe(t, f, nil)
	list, err := sf.openaiClient("").ListModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var served []string
	for _, m := range list.Models {
		served = append(served, m.ID)
	}
	tools := mcpAskModes(t, sf)
	var engines []string
	for _, m := range engine.Modes() {
		engines = append(engines, m.Name)
	}
	for _, m := range mode.All() {
		if !slices.Contains(engines, m.Name) {
			t.Errorf("mode %s has no engine", m.Name)
		}
		if !regexp.MustCompile(`(?m)^ {3,8}` + regexp.QuoteMeta(m.Name) + `\s`).MatchString(help) {
			t.Errorf("ask --help does not describe mode %s", m.Name)
		}
		opts := f.options("Who is Scrooge?")
		opts.mode = m.Name
		if err := opts.validate(); err != nil && strings.Contains(err.Error(), "--mode must be one of") {
			t.Errorf("ask --mode %s: %v", m.Name, err)
		}
		if !slices.Contains(served, m.Model()) {
			t.Errorf("serve does not list %s", m.Model())
		}
		if !slices.Contains(tools, m.Name) {
			t.Errorf("the MCP ask tool does not offer mode %s", m.Name)
		}
	}
	for _, id := range served {
		if _, ok := mode.Lookup(id); !ok {
			t.Errorf("serve lists %s, which the registry lacks", id)
		}
	}
	for _, name := range tools {
		if _, ok := mode.Lookup(name); !ok {
			t.Errorf("the MCP ask tool offers mode %s, which the registry lacks", name)
		}
	}
}

// mcpAskModes are the modes the MCP ask tool's input schema offers, as
// the MCP SDK's client lists them from the server's /mcp.
func mcpAskModes(t *testing.T, sf *serveFixture) []string {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "kgrag-test"}, nil)
	s, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: sf.http.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		if tl.Name != "ask" {
			continue
		}
		raw, err := json.Marshal(tl.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var schema struct {
			Properties struct {
				Mode struct {
					Enum []string `json:"enum"`
				} `json:"mode"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(raw, &schema); err != nil {
			t.Fatal(err)
		}
		return schema.Properties.Mode.Enum
	}
	t.Fatal("no MCP tool named ask")
	return nil
}

// TestServeDriftAndBasic asks kgrag serve in DRIFT and basic mode through
// PyPI openai and gets what kgrag ask --mode drift|basic --json gets from
// the same scripted model: the same context, follow-ups and answer; serve's
// --max-llm-calls caps each request's DRIFT calls as it caps ask's.
func TestServeDriftAndBasic(t *testing.T) {
	f := newAllTablesFixture(t)
	driftScript(f.srv, nil) // also answers basic search's call
	const q = "Who is Scrooge's clerk?"
	askJSON := func(m string) askResult {
		t.Helper()
		f.srv.Reset()
		stdout, stderr, code := runKgrag(t, "ask", "-q", "--input", f.input, "--index", f.index, "--llm-url", f.srv.URL(),
			"--embed-model", askEmbedModel, "--chat-model", "test-chat", "--mode", m, "--max-llm-calls", "12", "--concurrency", "1", "--json", q)
		if code != 0 {
			t.Fatalf("ask --mode %s: exit %d: %s", m, code, stderr)
		}
		checkRecordFields(t, []byte(stdout))
		var res askResult
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatal(err)
		}
		return res
	}
	// One call at a time: the script numbers follow-ups in the order it
	// gets them, and the cap decides which are asked.
	sf := startServe(t, f, func(o *serveOptions) {
		o.ask.global.search.MaxLLMCalls, o.ask.global.search.Concurrency = 12, 1
	})
	type answerOut struct {
		Answer, Stream string
		KGRAG          *serveReply `json:"kgrag"`
		Error          *struct{ Type, Message string }
	}
	var out struct{ Answers []answerOut }

	want := askJSON(mode.Basic)
	f.srv.Reset()
	runPy(t, "openai_client.py", &out, "--base-url", sf.http.URL+"/v1", "--model", "kgrag-basic", q)
	a := out.Answers[0]
	switch {
	case a.Error != nil:
		t.Fatalf("basic: openai raised %+v", a.Error)
	case a.Answer != *want.Answer || a.Stream != *want.Answer:
		t.Errorf("basic: answer %q, streamed %q; ask answered %q", a.Answer, a.Stream, *want.Answer)
	case a.KGRAG == nil || a.KGRAG.Context == nil || a.KGRAG.Context.Text != want.Context.Text:
		t.Errorf("basic: serve's context differs from ask's")
	case !slices.Equal(hitIDs(a.KGRAG.Neighbours), hitIDs(want.Neighbours)):
		t.Errorf("basic: neighbours %v; ask's %v", hitIDs(a.KGRAG.Neighbours), hitIDs(want.Neighbours))
	}

	// The script numbers the follow-ups it writes: start it again for
	// each, so that serve's first (plain) request is numbered as ask's.
	driftScript(f.srv, nil)
	want = askJSON(mode.Drift)
	f.srv.Reset()
	driftScript(f.srv, nil)
	runPy(t, "openai_client.py", &out, "--base-url", sf.http.URL+"/v1", "--model", "kgrag-drift", q)
	a = out.Answers[0]
	if a.Error != nil {
		t.Fatalf("drift: openai raised %+v", a.Error)
	}
	if a.Answer != *want.Answer || a.Stream != *want.Answer {
		t.Errorf("drift: answer %q, streamed %q; ask answered %q", a.Answer, a.Stream, *want.Answer)
	}
	got := a.KGRAG.Drift
	if got == nil || want.Drift == nil {
		t.Fatalf("drift: no drift record (serve %v, ask %v)", got != nil, want.Drift != nil)
	}
	if got.LLMCalls != 12 || !got.Capped || got.LLMCalls != want.Drift.LLMCalls {
		t.Errorf("drift: %d calls (capped %v); ask made %d: want both capped at --max-llm-calls 12", got.LLMCalls, got.Capped, want.Drift.LLMCalls)
	}
	if n := len(chatRequests(f.srv)); n != 2*12 {
		t.Errorf("drift: the model server got %d chat calls for a plain and a streamed question; want 2 × 12", n)
	}
	if !slices.Equal(actionQueries(got), actionQueries(want.Drift)) {
		t.Errorf("drift: serve's follow-ups %q; ask's %q", actionQueries(got), actionQueries(want.Drift))
	}
	if got.Reduce == nil || want.Drift.Reduce == nil || got.Reduce.Context != want.Drift.Reduce.Context {
		t.Errorf("drift: serve's answer context differs from ask's")
	}
}

func hitIDs(hs []answerjson.Hit) []string {
	ids := make([]string, len(hs))
	for i, h := range hs {
		ids[i] = h.ID
	}
	return ids
}

// actionQueries are a DRIFT search's questions, sorted: the follow-ups of
// one round are answered concurrently.
func actionQueries(r *driftsearch.Result) []string {
	var qs []string
	for _, a := range r.Actions {
		qs = append(qs, a.Query)
	}
	slices.Sort(qs)
	return qs
}

// TestEveryModeProse asks in every mode a model that answers in prose
// only, never the JSON asked for (what a model of a few hundred million
// parameters often does), through kgrag ask and through kgrag serve with
// the PyPI openai client. Each mode answers: the modes that parse replies
// (global's map calls, DRIFT's primer, graph of thoughts' graph) fall
// back and say so in the record's degraded notes and on stderr; the
// others have nothing to fall back from. No request fails, none with 500.
func TestEveryModeProse(t *testing.T) {
	f := newAllTablesFixture(t)
	const prose = "Scrooge's clerk is Bob Cratchit, a poor and patient man."
	f.srv.Respond(func(llmtest.Request) (string, bool) { return prose, true })
	sf := startServe(t, f, func(o *serveOptions) { o.ask.global.search.Concurrency = 1 })
	const q = "Who is Scrooge's clerk?"
	degrades := map[string]string{
		mode.Global:          "global: ",
		mode.Drift:           "drift: ",
		mode.GraphOfThoughts: "held no graph",
	}
	for _, m := range engine.Modes() {
		t.Run(m.Name, func(t *testing.T) {
			note, degrade := degrades[m.Name]
			stdout, stderr, code := runKgrag(t, "ask", "-q", "--input", f.input, "--index", f.index, "--llm-url", f.srv.URL(),
				"--embed-model", askEmbedModel, "--chat-model", "test-chat", "--mode", m.Name, "--concurrency", "1", "--json", q)
			if code != 0 {
				t.Fatalf("ask: exit %d: %s", code, stderr)
			}
			var res askResult
			if err := json.Unmarshal([]byte(stdout), &res); err != nil {
				t.Fatal(err)
			}
			if res.Answer == nil || strings.TrimSpace(*res.Answer) == "" {
				t.Errorf("ask: no answer")
			}
			if got := strings.Join(res.Degraded, "\n"); degrade != (len(res.Degraded) > 0) || !strings.Contains(got, note) {
				t.Errorf("ask: degraded %q; want a note with %q: %v", res.Degraded, note, degrade)
			}
			if degrade != strings.Contains(stderr, "kgrag: degraded: ") {
				t.Errorf("ask: stderr %q; want the degraded note there: %v", stderr, degrade)
			}

			var out struct {
				Answers []struct {
					Answer, Stream string
					KGRAG          *serveReply `json:"kgrag"`
					Error          *struct {
						Type    string
						Status  int
						Message string
					}
				}
			}
			runPy(t, "openai_client.py", &out, "--base-url", sf.http.URL+"/v1", "--model", m.Model(), q)
			a := out.Answers[0]
			switch {
			case a.Error != nil:
				t.Fatalf("serve: openai raised %+v", a.Error)
			case strings.TrimSpace(a.Answer) == "" || a.Stream != a.Answer:
				t.Errorf("serve: answer %q, streamed %q; want one answer", a.Answer, a.Stream)
			case a.KGRAG == nil || degrade != (len(a.KGRAG.Degraded) > 0):
				t.Errorf("serve: the kgrag record's degraded notes: %+v; want some: %v", a.KGRAG, degrade)
			}
		})
	}
}

// TestProfileSmall: --profile small (or KGRAG_PROFILE) has global search
// map report summaries in batches of 4000 tokens where the default maps
// whole reports in 12000, flags given still win, and an unknown profile
// names the one there is.
func TestProfileSmall(t *testing.T) {
	in := filepath.Join(test.GraphRAGSamples(t), "v3")
	// batches returns global's map batches on v3 at level 1: how many,
	// the largest and all of them in tokens.
	batches := func(t *testing.T, env []string, args ...string) (n, largest, total int) {
		t.Helper()
		args = append([]string{"ask", "--mode", "global", "--input", in, "--community-level", "1", "--context-only", "--json"}, args...)
		stdout, stderr, code := runKgragEnv(t, env, append(args, "What are the main themes?")...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		var res askResult
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatal(err)
		}
		for _, b := range res.Global.Batches {
			largest = max(largest, b.ContextTokens)
			total += b.ContextTokens
		}
		return len(res.Global.Batches), largest, total
	}
	nDefault, _, totalDefault := batches(t, nil)
	// The profile maps report summaries: fewer tokens in all than whole
	// reports, in batches of at most 4000.
	nSmall, largest, totalSmall := batches(t, nil, "--profile", "small")
	if largest > 4000 || totalSmall >= totalDefault {
		t.Errorf("--profile small: %d batches of %d tokens, the largest %d; default %d of %d: want batches of at most 4000 tokens, fewer tokens in all (summaries)",
			nSmall, totalSmall, largest, nDefault, totalDefault)
	}
	if n, l, tot := batches(t, []string{"KGRAG_PROFILE=small"}); n != nSmall || l != largest || tot != totalSmall {
		t.Errorf("KGRAG_PROFILE=small: %d batches of %d tokens; want %d of %d as with the flag", n, tot, nSmall, totalSmall)
	}
	// Whole reports in 4000-token batches: more batches than the default's.
	if n, l, _ := batches(t, nil, "--profile", "small", "--report-summaries=false"); l > 4000 || n <= nDefault {
		t.Errorf("--profile small --report-summaries=false: %d batches, the largest %d tokens; default %d: want more batches of at most 4000", n, l, nDefault)
	}
	if n, _, tot := batches(t, nil, "--profile", "small", "--report-summaries=false", "--max-context-tokens", "12000"); n != nDefault || tot != totalDefault {
		t.Errorf("--profile small with both flags given: %d batches of %d tokens; want the default's %d of %d", n, tot, nDefault, totalDefault)
	}
	_, stderr, code := runKgrag(t, "ask", "--profile", "huge", "--input", in, "--context-only", "q")
	if code != exitUsage || !strings.Contains(stderr, `"small"`) {
		t.Errorf("--profile huge: exit %d, %q; want exit 2 naming small", code, stderr)
	}
}
