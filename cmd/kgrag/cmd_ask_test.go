package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/embedindex/flat"
	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/driftsearch"
	"github.com/kgrag/kgrag/internal/embedtext"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/internal/tokens"
	"github.com/kgrag/kgrag/internal/walksearch"
	"github.com/kgrag/kgrag/prompts"
)

const (
	askEmbedModel = "nomic-embed-text"
	askDim        = 48
)

// askFixture is the v3 sample with a flat index built by kgrag embed
// against an llmtest server.
type askFixture struct {
	input string
	index string // the folder kgrag embed wrote
	srv   *llmtest.Server
	ds    *graphrag.Dataset
}

func newAskFixture(t *testing.T) askFixture {
	t.Helper()
	return newSampleFixture(t, "v3", llmtest.Start(t, llmtest.Config{Dim: askDim}))
}

// entity returns the sample's entity titled title.
func (f askFixture) entity(t *testing.T, title string) graphrag.Entity {
	t.Helper()
	for _, e := range f.ds.Entities {
		if e.Title == title && !e.Placeholder {
			return e
		}
	}
	t.Fatalf("no entity %q in %s", title, f.input)
	return graphrag.Entity{}
}

func (f askFixture) options(question string) askOptions {
	return askOptions{
		question:     question,
		mode:         modeLocal,
		input:        f.input,
		index:        indexOptions{path: f.index},
		params:       retrieval.DefaultParams(),
		templates:    retrieval.DefaultTemplatesParams(),
		subgraph:     retrieval.DefaultSubgraphParams(),
		basic:        retrieval.DefaultBasicParams(),
		drift:        driftsearch.DefaultOptions(),
		walk:         walksearch.DefaultParams(),
		chatModel:    "test-chat",
		responseType: prompts.DefaultResponseType,
		quiet:        true,
		llm:          llmOptions{url: f.srv.URL(), embedModel: askEmbedModel},
	}
}

// checkRows checks that the table name of a printed context holds a row
// starting with each prefix, in order.
func checkRows(t *testing.T, text, name string, prefixes []string) {
	t.Helper()
	_, rest, ok := strings.Cut(text, "-----"+name+"-----\n")
	if !ok {
		if len(prefixes) > 0 {
			t.Errorf("context has no %s table; want rows %q", name, prefixes)
		}
		return
	}
	for _, p := range prefixes {
		i := strings.Index(rest, "\n"+p)
		if i < 0 {
			t.Errorf("%s table has no row %q after the previous one", name, p)
			return
		}
		rest = rest[i+1:]
	}
}

// TestAskContextOnly prints the context of a question that is an entity's
// own embedded text: that entity comes first, the tables hold as many
// entities as asked for, and no chat model is called.
func TestAskContextOnly(t *testing.T) {
	f := newAskFixture(t)
	e := f.entity(t, "EBENEZER SCROOGE")
	tests := []struct {
		topK int
	}{{1}, {3}, {10}}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.topK), func(t *testing.T) {
			f.srv.Reset()
			opts := f.options(embedtext.Entity(e))
			opts.contextOnly = true
			opts.params.TopKEntities = tt.topK
			term, out, errb := testTerminal()
			if err := runAsk(t.Context(), opts, term); err != nil {
				t.Fatal(err)
			}
			text := out.String()
			if want := "-----Entities-----\nid|entity|description|number of relationships\n" + e.HumanReadableID + "|" + e.Title + "|"; !strings.Contains(text, want) {
				t.Errorf("context does not open the entities table with %s:\n%.300s", e.Title, text)
			}
			if n := f.srv.Count("/chat/completions"); n != 0 {
				t.Errorf("--context-only made %d chat requests; want 0", n)
			}
			if n := f.srv.Count("/embeddings"); n != 1 {
				t.Errorf("--context-only made %d embedding requests; want 1", n)
			}
			if errb.Len() != 0 {
				t.Errorf("stderr = %q; want nothing off a terminal", errb.String())
			}

			// The same run with --json lists the records of that text.
			opts.json = true
			term, jout, _ := testTerminal()
			if err := runAsk(t.Context(), opts, term); err != nil {
				t.Fatal(err)
			}
			r := decodeAsk(t, jout.Bytes())
			if r.Context.Text+"\n" != text {
				t.Errorf("--json context text differs from the printed context")
			}
			if n := len(r.Context.Records.Entities); n != tt.topK {
				t.Errorf("%d entity records; want --top-k-entities %d", n, tt.topK)
			}
		})
	}
}

// askKeys are the top-level fields of ask --json, the names scripts read.
var askKeys = []string{"question", "answer", "mode", "source", "embed_model", "chat_model", "neighbours",
	"context", "usage", "timings_ms", "sparql_requests", "global", "plan", "answer_partial", "finish_reason", "reasoning_chars", "reasoning", "drift", "graph_of_thoughts", "left_out", "ranking", "seeds"}

// decodeAsk decodes ask --json output, refusing fields other than askKeys.
func decodeAsk(t *testing.T, b []byte) askResult {
	t.Helper()
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		t.Fatalf("--json output does not decode: %v\n%s", err, b)
	}
	for k := range keys {
		if !slices.Contains(askKeys, k) {
			t.Errorf("--json output has an unknown field %q", k)
		}
	}
	checkRecordFields(t, b)
	var r askResult
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("--json output does not decode: %v\n%s", err, b)
	}
	return r
}

// checkRecordFields checks that every field of an ask --json record b is
// one internal/answer/testdata/result-fields.txt lists.
func checkRecordFields(t *testing.T, b []byte) {
	t.Helper()
	var raw any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatalf("--json output does not decode: %v\n%s", err, b)
	}
	fields := recordFields(t)
	for _, p := range jsonPaths(raw, "", fields) {
		if !fields[p] {
			t.Errorf("--json output has field %s, which internal/answer/testdata/result-fields.txt does not list", p)
		}
	}
}

// recordFields reads the field paths of the record, the contract
// TestResultShape keeps.
func recordFields(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(test.RepoRoot(t), "internal", "answer", "testdata", "result-fields.txt"))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			m[l] = true
		}
	}
	return m
}

// jsonPaths lists the paths of decoded JSON v in the notation of
// result-fields.txt: an object whose path+"{}" is listed is a map, and
// "plan" is checked as whichever of its two shapes lists the field.
func jsonPaths(v any, prefix string, fields map[string]bool) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		if fields[prefix+"{}"] {
			for _, e := range x {
				out = append(out, jsonPaths(e, prefix+"{}", fields)...)
			}
			break
		}
		for k, e := range x {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			if prefix == "plan" {
				p = "plan (global)." + k
				if !fields[p] {
					p = "plan (drift)." + k
				}
			}
			out = append(out, p)
			out = append(out, jsonPaths(e, p, fields)...)
		}
	case []any:
		for _, e := range x {
			out = append(out, jsonPaths(e, prefix+"[]", fields)...)
		}
	}
	return out
}

func TestAskJSON(t *testing.T) {
	f := newAskFixture(t)
	e := f.entity(t, "EBENEZER SCROOGE")
	const reply = "Scrooge is a miser who keeps Cratchit cold. [Data: Entities (1)]"
	f.srv.Reply("EBENEZER SCROOGE", reply)
	enc, err := tokens.NewEncoder(tokens.EncodingCL100K)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		contextOnly bool
		phases      []string
	}{
		{"answer", false, []string{"open", "embed", "knn", "retrieval", "llm", "total"}},
		{"context only", true, []string{"open", "embed", "knn", "retrieval", "total"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.srv.Reset()
			opts := f.options(embedtext.Entity(e))
			opts.json, opts.contextOnly = true, tt.contextOnly
			// Room for every table: at the default 12,000 tokens this
			// entity's neighbours leave none for relationships.
			opts.params.MaxContextTokens = 30000
			term, out, _ := testTerminal()
			if err := runAsk(t.Context(), opts, term); err != nil {
				t.Fatal(err)
			}
			r := decodeAsk(t, out.Bytes())
			if r.Question != opts.question || r.Mode != modeLocal || r.EmbedModel != askEmbedModel {
				t.Errorf("question, mode, embed model = %q, %q, %q; want %q, local, %s", r.Question, r.Mode, r.EmbedModel, opts.question, askEmbedModel)
			}
			if tt.contextOnly != (r.Answer == nil) {
				t.Errorf("answer = %v with --context-only %v", r.Answer, tt.contextOnly)
			}
			if !tt.contextOnly && *r.Answer != reply {
				t.Errorf("answer = %q; want %q", *r.Answer, reply)
			}
			for _, p := range tt.phases {
				if v, ok := r.Timings[p]; !ok || v < 0 {
					t.Errorf("timings_ms[%q] = %v, %v; want a duration", p, v, ok)
				}
			}
			if len(r.Timings) != len(tt.phases) {
				t.Errorf("timings_ms = %v; want the phases %v", r.Timings, tt.phases)
			}
			if r.SPARQLRequests != nil {
				t.Errorf("sparql_requests = %d with --input; want it absent", *r.SPARQLRequests)
			}
			k := opts.params.TopKEntities * opts.params.OversampleScaler
			if len(r.Neighbours) != k || r.Neighbours[0].ID != e.ID || r.Neighbours[0].Score < 0.999 {
				t.Errorf("neighbours = %d, first %+v; want %d, first %s with score 1", len(r.Neighbours), r.Neighbours[0], k, e.ID)
			}

			c := r.Context
			if c == nil {
				t.Fatal("no context in the JSON")
			}
			if got := enc.Count(c.Text); c.Tokens != got || c.Tokens > opts.params.MaxContextTokens {
				t.Errorf("context tokens = %d; tiktoken counts %d, budget %d", c.Tokens, got, opts.params.MaxContextTokens)
			}
			// Every record listed is a row of the printed table, in order.
			var rows []string
			for _, x := range c.Records.Reports {
				rows = append(rows, x.ID+"|")
			}
			checkRows(t, c.Text, retrieval.SectionReports, rows)
			rows = nil
			for _, x := range c.Records.Entities {
				rows = append(rows, x.ID+"|"+x.Title+"|")
			}
			checkRows(t, c.Text, retrieval.SectionEntities, rows)
			rows = nil
			for _, x := range c.Records.Relationships {
				rows = append(rows, x.ID+"|"+x.Source+"|"+x.Target+"|")
			}
			checkRows(t, c.Text, retrieval.SectionRelationships, rows)
			rows = nil
			for _, x := range c.Records.Sources {
				rows = append(rows, x.ID+"|")
			}
			checkRows(t, c.Text, retrieval.SectionSources, rows)
			if len(c.Records.Entities) != opts.params.TopKEntities || len(c.Records.Relationships) == 0 ||
				len(c.Records.Sources) == 0 || len(c.Records.Reports) == 0 {
				t.Errorf("records: %d entities, %d relationships, %d sources, %d reports; want %d entities and some of each",
					len(c.Records.Entities), len(c.Records.Relationships), len(c.Records.Sources), len(c.Records.Reports), opts.params.TopKEntities)
			}
			if got := c.Records.Entities[0]; got.ID != e.HumanReadableID || got.EntityID != e.ID || got.Title != e.Title {
				t.Errorf("first entity record = %+v; want %s %s %s", got, e.HumanReadableID, e.ID, e.Title)
			}
			if tt.contextOnly {
				return
			}
			reqs := f.srv.Requests()
			last := reqs[len(reqs)-1]
			if len(last.Messages) != 2 || !strings.Contains(last.Messages[0].Content, c.Text) || last.Messages[1].Content != opts.question {
				t.Errorf("chat messages = %+v; want the context in the system prompt and the question as the user message", last.Messages)
			}
			if r.ChatModel != "test-chat" || last.Model != "test-chat" || r.Usage == nil || r.Usage.Completion == 0 {
				t.Errorf("chat model %q (sent %q), usage %+v; want test-chat and the server's usage", r.ChatModel, last.Model, r.Usage)
			}
		})
	}
}

// TestAskSPARQLTemplates runs sparql-templates mode through ask: the k nearest entities as they
// come (no oversampling), the RDF article's caps, and the flags it shares with
// local search.
func TestAskSPARQLTemplates(t *testing.T) {
	f := newAskFixture(t)
	e := f.entity(t, "EBENEZER SCROOGE")
	tests := []struct {
		name      string
		level     int64
		levelSet  bool
		relations int
	}{
		{"defaults", 0, false, 10},
		{"level 1", 1, true, 10},
		{"three relationships", 0, false, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := f.options(embedtext.Entity(e))
			opts.mode, opts.contextOnly, opts.json = modeSeed, true, true
			opts.params.CommunityLevel = tt.level
			opts.params.TopKRelationships = tt.relations
			opts.templates = templatesParams(opts.params, tt.levelSet)
			term, out, _ := testTerminal()
			if err := runAsk(t.Context(), opts, term); err != nil {
				t.Fatal(err)
			}
			r := decodeAsk(t, out.Bytes())
			if r.Mode != modeSPARQL || len(r.Neighbours) != opts.params.TopKEntities {
				t.Errorf("mode %q, %d neighbours; want sparql-templates and %d (no oversampling)", r.Mode, len(r.Neighbours), opts.params.TopKEntities)
			}
			rec := r.Context.Records
			if len(rec.Entities) != opts.params.TopKEntities || rec.Entities[0].EntityID != e.ID {
				t.Errorf("%d entities, first %+v; want %d, first %s", len(rec.Entities), rec.Entities[0], opts.params.TopKEntities, e.Title)
			}
			for i, x := range rec.Entities {
				if x.EntityID != r.Neighbours[i].ID {
					t.Errorf("entity %d is %s; want the kNN order (%s)", i, x.EntityID, r.Neighbours[i].ID)
				}
			}
			if len(rec.Reports) == 0 || len(rec.Reports) > 3 || len(rec.Sources) == 0 || len(rec.Sources) > 3 {
				t.Errorf("%d reports, %d sources; want 1 to 3 of each (the RDF article's top 3)", len(rec.Reports), len(rec.Sources))
			}
			for _, x := range rec.Reports {
				if x.Level != tt.level {
					t.Errorf("report %s is of level %d; want %d", x.ID, x.Level, tt.level)
				}
			}
			inside, outside := 0, 0
			for _, x := range rec.Relationships {
				if x.Inside {
					if outside > 0 {
						t.Errorf("inside relationship %s after an outside one", x.ID)
					}
					inside++
				} else {
					outside++
				}
			}
			if inside > tt.relations || outside != tt.relations {
				t.Errorf("%d inside, %d outside relationships; want at most %d and %d", inside, outside, tt.relations, tt.relations)
			}
			if r.Context.ReportTokens != nil {
				t.Errorf("sparql-templates mode reports a token split (%d report tokens); it has none", *r.Context.ReportTokens)
			}
			var rows []string
			for _, x := range rec.Entities {
				rows = append(rows, x.ID+"|"+x.Title+"|")
			}
			checkRows(t, r.Context.Text, retrieval.SectionEntities, rows)
		})
	}
}

// chunkWriter records each write, to see that the answer arrives in
// pieces, not at the end.
type chunkWriter struct {
	buf    bytes.Buffer
	writes int
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.buf.Write(p)
}

func (w *chunkWriter) String() string { return w.buf.String() }

func TestAskStreamsAnswer(t *testing.T) {
	f := newAskFixture(t)
	const reply = "Bob Cratchit is Scrooge's clerk [Data: Entities (3); Relationships (7)]."
	f.srv.Reply("clerk", reply)
	var out chunkWriter
	var errb bytes.Buffer
	term := terminal{in: strings.NewReader(""), out: &out, err: &errb}
	opts := f.options("Who is Scrooge's clerk?")
	opts.temperature = 0.3
	opts.maxTokens = 64
	if err := runAsk(t.Context(), opts, term); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != reply+"\n" {
		t.Errorf("stdout = %q; want the scripted reply %q and a newline", got, reply)
	}
	if want := len(llmtest.Chunks(reply)); out.writes < want {
		t.Errorf("the answer came in %d writes; want one per streamed piece (%d)", out.writes, want)
	}
	reqs := f.srv.Requests()
	last := reqs[len(reqs)-1]
	if !last.Stream {
		t.Error("the chat request was not streamed")
	}
	if temp, _ := last.Extra["temperature"].(float64); temp < 0.29 || temp > 0.31 {
		t.Errorf("temperature sent = %v; want 0.3", last.Extra["temperature"])
	}
	if n, _ := last.Extra["max_tokens"].(float64); n != 64 {
		t.Errorf("max_tokens sent = %v; want 64", last.Extra["max_tokens"])
	}
	sys := last.Messages[0].Content
	for _, want := range []string{"-----Entities-----", "[Data: Entities (5, 7)", prompts.DefaultResponseType} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q", want)
		}
	}
	if errb.Len() != 0 {
		t.Errorf("stderr = %q; want nothing off a terminal", errb.String())
	}
}

// TestAskNoContext is the baseline: the question alone, no index, no
// graph, no embedding.
func TestAskNoContext(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{})
	srv.Reply("Scrooge", "I do not know who Scrooge is.")
	opts := askOptions{question: "Who is Scrooge?", mode: modeLocal, noContext: true, chatModel: "test-chat",
		responseType: "a single sentence", params: retrieval.DefaultParams(), llm: llmOptions{url: srv.URL()}}
	term, out, _ := testTerminal()
	if err := runAsk(t.Context(), opts, term); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "I do not know who Scrooge is.\n" {
		t.Errorf("stdout = %q; want the scripted reply", got)
	}
	if n := srv.Count("/embeddings"); n != 0 {
		t.Errorf("--no-context made %d embedding requests; want 0", n)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || len(reqs[0].Messages) != 2 {
		t.Fatalf("requests = %+v; want one chat request with a system and a user message", reqs)
	}
	sys, user := reqs[0].Messages[0].Content, reqs[0].Messages[1].Content
	if user != opts.question {
		t.Errorf("user message = %q; want the question", user)
	}
	for _, banned := range []string{"-----", "Evidence", "[Data:"} {
		if strings.Contains(sys, banned) {
			t.Errorf("--no-context system prompt holds %q:\n%s", banned, sys)
		}
	}
	if !strings.Contains(sys, "a single sentence") {
		t.Errorf("system prompt lacks the response type:\n%s", sys)
	}
}

// TestAskTerminalLines checks the summary lines: on stderr, and only on a
// terminal.
func TestAskTerminalLines(t *testing.T) {
	f := newAskFixture(t)
	opts := f.options("Who is Scrooge?")
	opts.quiet = false
	term, out, errb := testTerminal()
	term.tty = true
	if err := runAsk(t.Context(), opts, term); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"context: 10 entities", "knn", "retrieval", "answer: test-chat in"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr %q lacks %q", errb, want)
		}
	}
	if strings.Contains(out.String(), "context:") {
		t.Errorf("summary went to stdout: %q", out)
	}
}

// TestAskErrors runs kgrag ask as a process for each failure and checks
// the exit code and that the message names what to fix.
func TestAskErrors(t *testing.T) {
	f := newAskFixture(t)
	// A server that gives the same model 32 dimensions instead of 48.
	other := llmtest.Start(t, llmtest.Config{Dim: 32})
	empty := filepath.Join(t.TempDir(), "empty.vec")
	b, err := flat.Create(empty, askEmbedModel, askDim)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(t.TempDir(), "foreign.vec")
	if err := flat.Write(t.Context(), foreign, askEmbedModel, []string{"not-an-entity", "nor-this"},
		[][]float32{llmtest.Embed(askEmbedModel, "a", askDim), llmtest.Embed(askEmbedModel, "b", askDim)}); err != nil {
		t.Fatal(err)
	}
	// A store whose graph holds nothing: every ASK says false.
	noGraph := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/sparql-results+json")
		fmt.Fprint(w, `{"head":{},"boolean":false}`)
	}))
	defer noGraph.Close()

	base := []string{"ask", "-q", "--input", f.input, "--index", f.index, "--llm-url", f.srv.URL(), "--llm-retries", "0"}
	storeArgs := func(url string) []string {
		return []string{"ask", "-q", "--store", url, "--store-type", "oxigraph", "--graph", "http://example.org/g",
			"--index", f.index, "--llm-url", f.srv.URL(), "--llm-retries", "0"}
	}
	q := "Who is Scrooge?"
	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"no question", base, exitUsage, []string{"ask needs a question", "Try: kgrag ask"}},
		{"blank question", append(base, "  "), exitUsage, []string{"ask needs a question"}},
		{"no graph", []string{"ask", q}, exitUsage, []string{"--input DIR", "--store URL --graph IRI"}},
		{"both sources", append(storeArgs("http://127.0.0.1:1"), "--input", f.input, q), exitUsage, []string{"either --input or --store"}},
		{"store without graph", []string{"ask", "--store", "http://127.0.0.1:1", "--store-type", "oxigraph", "--index", f.index, q}, exitUsage, []string{"--store needs --graph"}},
		{"store without index", []string{"ask", "--store", "http://127.0.0.1:1", "--store-type", "oxigraph", "--graph", "http://example.org/g", q}, exitUsage, []string{"--index PATH", "--index-url"}},
		{"seed budget", append(base, "--mode", "seed", "--max-context-tokens", "0", q), exitUsage, []string{"--max-context-tokens"}},
		{"seed level", append(base, "--mode", "seed", "--community-level", "-1", q), exitUsage, []string{"--community-level -1"}},
		{"bad mode", append(base, "--mode", "hybrid", q), exitUsage, []string{"--mode must be one of local, global, drift, basic, sparql-templates, subgraph, graph-of-thoughts"}},
		{"sub-question outside graph of thoughts", append(base, "--sub-question", "Whom?", q), exitUsage, []string{"--sub-question is for --mode graph-of-thoughts"}},
		{"subgraph relationships", append(base, "--mode", "subgraph", "--top-k-relationships", "-1", q), exitUsage, []string{"--top-k-relationships -1"}},
		{"plan outside global", append(base, "--plan", q), exitUsage, []string{"--plan is for --mode global and --mode drift"}},
		{"dynamic selection outside global", append(base, "--mode", "drift", "--dynamic-community-selection", q), exitUsage, []string{"--dynamic-community-selection is for --mode global"}},
		{"drift without report embeddings", append(base, "--mode", "drift", q), 1, []string{"no embeddings of the community reports", "kgrag embed --input DIR --tables community_reports"}},
		{"basic without text unit embeddings", append(base, "--mode", "basic", q), 1, []string{"no embeddings of the text units", "kgrag embed --input DIR --tables text_units"}},
		{"drift context-only", append(base, "--mode", "drift", "--context-only", q), exitUsage, []string{"use --plan"}},
		{"drift depth", append(base, "--mode", "drift", "--drift-depth", "-1", q), exitUsage, []string{"--drift-depth -1"}},
		{"drift folds", append(base, "--mode", "drift", "--drift-primer-folds", "0", q), exitUsage, []string{"--drift-primer-folds 0"}},
		{"basic top k", append(base, "--mode", "basic", "--top-k-text-units", "0", q), exitUsage, []string{"--top-k-text-units 0"}},
		{"global context-only with dynamic selection", append(base, "--mode", "global", "--context-only", "--dynamic-community-selection", q), exitUsage, []string{"use --plan"}},
		{"global zero concurrency", append(base, "--mode", "global", "--concurrency", "0", q), exitUsage, []string{"--concurrency 0"}},
		{"global threshold out of range", append(base, "--mode", "global", "--dynamic-threshold", "6", q), exitUsage, []string{"--dynamic-threshold 6"}},
		{"zero top k", append(base, "--top-k-entities", "0", q), exitUsage, []string{"--top-k-entities 0"}},
		{"both context flags", append(base, "--context-only", "--no-context", q), exitUsage, []string{"exclude each other"}},
		{"embedder down", []string{"ask", "-q", "--input", f.input, "--index", f.index, "--llm-url", "http://127.0.0.1:1/v1", "--llm-retries", "0", q},
			exitModelDown, []string{"http://127.0.0.1:1/v1", "--llm-url"}},
		{"chat model down", []string{"ask", "-q", "--no-context", "--llm-url", "http://127.0.0.1:1/v1", "--llm-retries", "0", q},
			exitModelDown, []string{"http://127.0.0.1:1/v1/chat/completions", "--llm-url"}},
		{"index missing", append(base[:4:4], "--index", filepath.Join(t.TempDir(), "none"), "--llm-url", f.srv.URL(), q),
			exitFailure, []string{"no vector index at", "kgrag embed"}},
		{"default index missing", []string{"ask", "--input", f.input, "--llm-url", f.srv.URL(), q},
			exitFailure, []string{"no vector index at " + filepath.Join(f.input, "kgrag-index", "entities.vec")}},
		{"index empty", []string{"ask", "--input", f.input, "--index", empty, "--llm-url", f.srv.URL(), q}, exitFailure, []string{empty, "is empty", "kgrag embed"}},
		{"index of other data", []string{"ask", "--input", f.input, "--index", foreign, "--llm-url", f.srv.URL(), q},
			exitFailure, []string{"none of the 2 entities", "kgrag embed"}},
		{"model mismatch", append(base, "--embed-model", "mxbai-embed-large", q), exitFailure,
			[]string{`"nomic-embed-text"`, `"mxbai-embed-large"`, "--embed-model nomic-embed-text"}},
		{"dimension mismatch", []string{"ask", "--input", f.input, "--index", f.index, "--llm-url", other.URL(), q}, exitFailure,
			[]string{"48-dimensional", "32 dimensions", "--embed-model"}},
		{"store down", append(storeArgs("http://127.0.0.1:1"), q), exitStoreDown, []string{"127.0.0.1:1", "--store"}},
		{"graph empty", append(storeArgs(noGraph.URL), q), exitFailure, []string{"<http://example.org/g>", "holds no gr:Entity", "--graph"}},
		{"elasticsearch down", []string{"ask", "--input", f.input, "--index-url", "http://127.0.0.1:1", "--llm-url", f.srv.URL(), q},
			exitStoreDown, []string{"127.0.0.1:1", "--index-url"}},
		{"index and index-url", append(base, "--index-url", "http://127.0.0.1:1", q), exitUsage, []string{"either --index"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runKgrag(t, tt.args...)
			if code != tt.code {
				t.Errorf("kgrag %s: exit %d; want %d (stderr %q)", strings.Join(tt.args, " "), code, tt.code, stderr)
			}
			for _, want := range tt.want {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr %q lacks %q", stderr, want)
				}
			}
		})
	}
}

// TestAskHelp checks that --help teaches with examples and shows no
// secret from the environment.
func TestAskHelp(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte("es-key-from-file"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KGRAG_INDEX_API_KEY_FILE", keyFile)
	t.Setenv("KGRAG_INDEX_PASSWORD", "es-password-from-env")
	t.Setenv("KGRAG_LLM_KEY", "sk-from-env")
	var out bytes.Buffer
	if err := newApp(strings.NewReader(""), &out, &out).Run(t.Context(), []string{"kgrag", "ask", "--help"}); err != nil {
		t.Fatal(err)
	}
	help := out.String()
	for _, want := range []string{"kgrag ask --input ./ragtest/output", "--context-only", "--no-context", "--json",
		"LM Studio", "ollama pull", "--store", "--index-url", "--chat-model", "EXIT STATUS", "11   the model server"} {
		if !strings.Contains(help, want) {
			t.Errorf("ask --help lacks %q", want)
		}
	}
	for _, secret := range []string{"es-key-from-file", "es-password-from-env", "sk-from-env"} {
		if strings.Contains(help, secret) {
			t.Errorf("ask --help shows a secret %q", secret)
		}
	}
}

// TestAskEncoding: --encoding o200k_base counts the budget with o200k, as
// GraphRAG 3.x does; an unknown encoding is a usage error.
func TestAskEncoding(t *testing.T) {
	f := newAskFixture(t)
	o200k, err := tokens.NewEncoder(tokens.EncodingO200K)
	if err != nil {
		t.Fatal(err)
	}
	opts := f.options(embedtext.Entity(f.entity(t, "EBENEZER SCROOGE")))
	opts.params.Encoding = tokens.EncodingO200K
	opts.params.MaxContextTokens = 3000
	got := askContext(t, opts)
	if n := o200k.Count(got.Context.Text); got.Context.Tokens != n || n > 3000 || n == 0 {
		t.Errorf("o200k context: tokens %d, o200k counts %d; want equal, non-zero and <= 3000", got.Context.Tokens, n)
	}
	opts.params.Encoding = "p50k_base"
	term, _, _ := testTerminal()
	var ue *usageError
	if err := runAsk(t.Context(), opts, term); !errors.As(err, &ue) || !strings.Contains(err.Error(), "--encoding") {
		t.Errorf("--encoding p50k_base: %v; want a usage error naming --encoding", err)
	}
}

// TestAskSmallBudget tells a budget too small for one entity's row from an
// index of another graph: the first is a (thin) context, the second the
// "was the index built from this graph?" error. A 270M model's 1k-token
// contexts had been reported as the second.
func TestAskSmallBudget(t *testing.T) {
	f := newAskFixture(t)
	other := newSampleFixture(t, "v2.5.0", f.srv)
	tests := []struct {
		name, mode string
		index      string
		budget     int
		wantErr    string
	}{
		{"local, 20 tokens", modeLocal, f.index, 20, ""},
		{"sparql-templates, 20 tokens", modeSPARQL, f.index, 20, ""},
		{"local, index of another graph", modeLocal, other.index, 12000, "was the index built from this graph?"},
		{"sparql-templates, index of another graph", modeSPARQL, other.index, 12000, "was the index built from this graph?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := f.options("Who is Scrooge?")
			opts.mode, opts.contextOnly, opts.json = tt.mode, true, true
			opts.index = indexOptions{path: tt.index}
			opts.params.MaxContextTokens = tt.budget
			opts.templates.MaxContextTokens = tt.budget
			term, out, _ := testTerminal()
			err := runAsk(t.Context(), opts, term)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v; want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("a %d-token budget: %v; want a thin context", tt.budget, err)
			}
			r := decodeAsk(t, out.Bytes())
			if r.Context.Tokens > tt.budget {
				t.Errorf("context of %d tokens; want at most %d", r.Context.Tokens, tt.budget)
			}
		})
	}
}
