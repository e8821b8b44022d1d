package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/embedtext"
	"github.com/kgrag/kgrag/internal/globalsearch"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/internal/serve"
	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/ontology"
	openai "github.com/sashabaranov/go-openai"
)

// serveFixture is kgrag serve's server on one sample, loaded by the
// command's own loader, behind an httptest server.
type serveFixture struct {
	askFixture
	opts serveOptions
	s    *serve.Server
	http *httptest.Server
	log  *bytes.Buffer
}

// newSampleFixture embeds sample's entities with the test model server
// into a fresh index (newAskFixture is the v3 sample's).
func newSampleFixture(t *testing.T, sample string, srv *llmtest.Server) askFixture {
	t.Helper()
	in := filepath.Join(test.GraphRAGSamples(t), sample)
	index := t.TempDir()
	term, _, _ := testTerminal()
	if err := runEmbed(t.Context(), embedTestOptions(in, index, srv.URL(), askEmbedModel), term); err != nil {
		t.Fatal(err)
	}
	ds, err := graphrag.Open(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	srv.Reset()
	return askFixture{input: in, index: index, srv: srv, ds: ds}
}

func (f askFixture) serveOptions() serveOptions {
	o := serveOptions{ask: f.options("(served)"), addr: defaultServeAddr, base: defaultBase, drain: 5 * time.Second, cfg: serve.DefaultConfig()}
	o.ask.global = globalOptions{params: retrieval.DefaultGlobalParams(), search: globalsearch.DefaultOptions()}
	return o
}

func newTestLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

// startServe validates o and serves it as runServe would, on an
// httptest server.
func startServe(t *testing.T, f askFixture, edit func(*serveOptions)) *serveFixture {
	t.Helper()
	o := f.serveOptions()
	if edit != nil {
		edit(&o)
	}
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	o.cfg.Log = newTestLogger(&log)
	s, err := serve.New(t.Context(), o.cfg, o.load)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	return &serveFixture{askFixture: f, opts: o, s: s, http: hs, log: &log}
}

// post sends a JSON body and decodes the JSON answer into out (when not
// nil), returning the status.
func (sf *serveFixture) post(t *testing.T, path, key string, body any, out any) (int, http.Header) {
	t.Helper()
	var b []byte
	switch v := body.(type) {
	case string:
		b = []byte(v)
	default:
		var err error
		if b, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, sf.http.URL+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("POST %s: status %d, body not JSON: %v: %.300s", path, resp.StatusCode, err, raw)
		}
	}
	return resp.StatusCode, resp.Header
}

// openaiClient is go-openai pointed at the server.
func (sf *serveFixture) openaiClient(key string) *openai.Client {
	cfg := openai.DefaultConfig(key)
	cfg.BaseURL = sf.http.URL + "/v1"
	return openai.NewClientWithConfig(cfg)
}

// serveReply is the part of /api/ask's answer the tests read.
type serveReply struct {
	askResult
	Citations []serve.Citation `json:"citations"`
}

// TestServeSameContextAsAsk asks kgrag ask --context-only --json and
// kgrag serve's /api/ask the same questions on the four samples, in
// local and sparql-templates mode: the context, its records and the neighbours are
// the same. Through /v1/chat/completions the model gets the same system
// prompt as from kgrag ask.
func TestServeSameContextAsAsk(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{Dim: askDim})
	for _, sample := range []string{"v0.3.4", "v1.0.1", "v2.5.0", "v3"} {
		t.Run(sample, func(t *testing.T) {
			f := newSampleFixture(t, sample, srv)
			sf := startServe(t, f, nil)
			var qs []string
			for _, e := range f.ds.Entities[:3] {
				qs = append(qs, embedtext.Entity(e))
			}
			qs = append(qs, "Who is the main character?")
			for _, mode := range []string{modeLocal, modeSeed, modeSubgraph} {
				for _, q := range qs {
					opts := f.options(q)
					opts.mode = mode
					want := askContext(t, opts)
					var got serveReply
					if code, _ := sf.post(t, "/api/ask", "", map[string]any{"question": q, "mode": mode, "context_only": true}, &got); code != http.StatusOK {
						t.Fatalf("%s %.30q: /api/ask status %d", mode, q, code)
					}
					if got.Context == nil || len(got.Context.Records.Entities) == 0 {
						t.Fatalf("%s %.30q: /api/ask gave no context", mode, q)
					}
					if d := cmp.Diff(want.Context, got.Context); d != "" {
						t.Errorf("%s %.30q: serve's context differs from ask's (-ask +serve):\n%s", mode, q, d)
					}
					if d := cmp.Diff(want.Neighbours, got.Neighbours); d != "" {
						t.Errorf("%s %.30q: neighbours differ (-ask +serve):\n%s", mode, q, d)
					}
				}
			}
			// The chat path: the system prompt the model gets.
			q := qs[0]
			srv.Reset()
			opts := f.options(q)
			opts.json = true
			term, _, _ := testTerminal()
			if err := runAsk(t.Context(), opts, term); err != nil {
				t.Fatal(err)
			}
			askPrompt := lastChat(t, srv).Messages
			srv.Reset()
			resp, err := sf.openaiClient("").CreateChatCompletion(t.Context(), openai.ChatCompletionRequest{Model: "kgrag-local",
				Messages: []openai.ChatCompletionMessage{{Role: "user", Content: q}}})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(askPrompt, lastChat(t, srv).Messages); d != "" {
				t.Errorf("the model got other messages from serve than from ask (-ask +serve):\n%s", d)
			}
			if got, want := resp.Choices[0].Message.Content, "echo: "+q; got != want {
				t.Errorf("answer %.60q; want the model's %.60q", got, want)
			}
		})
	}
}

// lastChat is the last chat request the model server got.
func lastChat(t *testing.T, srv *llmtest.Server) llmtest.Request {
	t.Helper()
	reqs := srv.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if strings.HasSuffix(reqs[i].Path, "/chat/completions") {
			return reqs[i]
		}
	}
	t.Fatal("the model server got no chat request")
	return llmtest.Request{}
}

// TestServeStoreSameContextAsAsk loads the v3 sample into Oxigraph and
// checks that serve --store gives ask --store's contexts, and that an
// entity's IRI in the JSON API is the one the store holds.
func TestServeStoreSameContextAsAsk(t *testing.T) {
	f := newAskFixture(t)
	st := loadOxigraph(t, f)
	graph := st.graph
	sf := startServe(t, f, func(o *serveOptions) { o.ask.input, o.ask.store = "", st })
	for _, mode := range []string{modeLocal, modeSeed, modeSubgraph} {
		for _, q := range askQuestions(t, f) {
			opts := f.options(q)
			opts.mode, opts.input, opts.store = mode, "", st
			want := askContext(t, opts)
			var got serveReply
			if code, _ := sf.post(t, "/api/ask", "", map[string]any{"question": q, "mode": mode, "context_only": true}, &got); code != http.StatusOK {
				t.Fatalf("/api/ask status %d", code)
			}
			if d := cmp.Diff(want.Context, got.Context); d != "" {
				t.Errorf("%s %.30q: serve --store context differs from ask --store (-ask +serve):\n%s", mode, q, d)
			}
		}
	}
	e := f.entity(t, "EBENEZER SCROOGE")
	var ent struct {
		ID, IRI, Title string
		Relationships  []json.RawMessage
	}
	getJSON(t, sf.http.URL+"/api/entities/"+e.ID, &ent)
	c, _, err := storeClient(st)
	if err != nil {
		t.Fatal(err)
	}
	ok, err := c.Ask(t.Context(), fmt.Sprintf(`PREFIX gr: <http://ormynet.com/ns/msft-graphrag#> ASK { GRAPH <%s> { <%s> a gr:Entity ; gr:id %q } }`, graph, ent.IRI, e.ID))
	if err != nil || !ok {
		t.Errorf("the store has no entity <%s> with gr:id %q (ask: %v, %v)", ent.IRI, e.ID, ok, err)
	}
	if ent.Title != e.Title || len(ent.Relationships) == 0 {
		t.Errorf("entity page: title %q with %d relationships; want %q with some", ent.Title, len(ent.Relationships), e.Title)
	}
	// The number an answer cites the entity by finds it in the store too.
	var byNumber struct{ ID, IRI string }
	if code := getJSON(t, sf.http.URL+"/api/entities/"+e.HumanReadableID, &byNumber); code != 200 || byNumber.ID != e.ID || byNumber.IRI != ent.IRI {
		t.Errorf("GET /api/entities/%s: %d, %+v; want %s <%s>", e.HumanReadableID, code, byNumber, e.ID, ent.IRI)
	}
}

func getJSON(t *testing.T, url string, out any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("GET %s: status %d: %v", url, resp.StatusCode, err)
	}
	return resp.StatusCode
}

// TestServeOpenAIClient talks to the server with go-openai, streamed and
// not: the models, the answer, usage, and the records cited.
func TestServeOpenAIClient(t *testing.T) {
	f := newAskFixture(t)
	sf := startServe(t, f, nil)
	c := sf.openaiClient("")
	ms, err := c.ListModels(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range ms.Models {
		names = append(names, m.ID)
	}
	if want := []string{"kgrag-local", "kgrag-global", "kgrag-sparql-templates", "kgrag-subgraph", "kgrag-graph-of-thoughts"}; !cmp.Equal(names, want) {
		t.Errorf("models %q; want %q", names, want)
	}

	// The model cites an entity and a source that the context holds, and
	// one that it does not.
	e := f.entity(t, "EBENEZER SCROOGE")
	q := embedtext.Entity(e)
	opts := f.options(q)
	ctxWant := askContext(t, opts).Context
	ent, src := ctxWant.Records.Entities[0], ctxWant.Records.Sources[0]
	reply := fmt.Sprintf("Scrooge is a miser [Data: Entities (%s, 99999, +more); Sources (%s)].", ent.ID, src.ID)
	f.srv.Reply("", reply)

	msgs := []openai.ChatCompletionMessage{{Role: "user", Content: q}}
	resp, err := c.CreateChatCompletion(t.Context(), openai.ChatCompletionRequest{Model: "kgrag-local", Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message.Content; got != reply {
		t.Errorf("answer %q; want %q", got, reply)
	}
	if resp.Usage.TotalTokens == 0 || resp.Choices[0].FinishReason != openai.FinishReasonStop {
		t.Errorf("usage %+v, finish %q; want the upstream's counts and stop", resp.Usage, resp.Choices[0].FinishReason)
	}

	stream, err := c.CreateChatCompletionStream(t.Context(), openai.ChatCompletionRequest{Model: "kgrag-local", Messages: msgs,
		Stream: true, StreamOptions: &openai.StreamOptions{IncludeUsage: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	var text strings.Builder
	var usage *openai.Usage
	chunks := 0
	for {
		r, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		chunks++
		if len(r.Choices) > 0 {
			text.WriteString(r.Choices[0].Delta.Content)
		}
		if r.Usage != nil {
			usage = r.Usage
		}
	}
	if text.String() != reply || chunks < 5 {
		t.Errorf("streamed %q in %d chunks; want %q in many", text.String(), chunks, reply)
	}
	if usage == nil || usage.TotalTokens == 0 {
		t.Errorf("stream usage %+v; want the counts", usage)
	}

	// The citations, machine-readably: the record, not the made-up id.
	var raw struct {
		Citations []string `json:"citations"`
		KGRAG     struct {
			Answer    string           `json:"answer"`
			Citations []serve.Citation `json:"citations"`
		} `json:"kgrag"`
		Choices []struct {
			Message struct {
				Annotations []annotation `json:"annotations"`
			} `json:"message"`
		} `json:"choices"`
	}
	sf.post(t, "/v1/chat/completions", "", map[string]any{"model": "kgrag-local", "messages": []map[string]string{{"role": "user", "content": q}}}, &raw)
	want := []serve.Citation{
		{Kind: "entity", ID: ent.ID, RecordID: ent.EntityID, Title: ent.Title, URL: "/api/entities/" + ent.EntityID,
			IRI: ontology.EntityIRI(defaultBase, ent.EntityID)},
		{Kind: "source", ID: src.ID, RecordID: src.TextUnitID, URL: "/api/text-units/" + src.TextUnitID},
	}
	if d := cmp.Diff(want, raw.KGRAG.Citations); d != "" {
		t.Errorf("citations (-want +got):\n%s", d)
	}
	if len(raw.Citations) != 2 || raw.Citations[0] != sf.http.URL+want[0].URL {
		t.Errorf("citation URLs %q; want absolute URLs of %s and %s", raw.Citations, want[0].URL, want[1].URL)
	}
	// And as OpenAI's url_citation annotations, each spanning the
	// "[Data: ...]" that cites it (indices in characters).
	if len(raw.Choices) != 1 || len(raw.Choices[0].Message.Annotations) != len(want) {
		t.Fatalf("choices %+v; want one message with %d annotations", raw.Choices, len(want))
	}
	answer := []rune(raw.KGRAG.Answer)
	for i, a := range raw.Choices[0].Message.Annotations {
		u := a.URLCitation
		if a.Type != "url_citation" || u.URL != raw.Citations[i] || u.Title == "" || u.StartIndex < 0 || u.EndIndex > len(answer) ||
			!strings.HasPrefix(string(answer[u.StartIndex:u.EndIndex]), "[Data:") || !strings.HasSuffix(string(answer[u.StartIndex:u.EndIndex]), "]") {
			t.Errorf("annotation %d: %+v; want url_citation of %s spanning a [Data: ...] of %q", i, a, raw.Citations[i], raw.KGRAG.Answer)
		}
	}
	var page struct{ ID, Title string }
	if code := getJSON(t, raw.Citations[0], &page); code != http.StatusOK || page.ID != ent.EntityID {
		t.Errorf("GET %s: %d %+v; want entity %s", raw.Citations[0], code, page, ent.EntityID)
	}
}

// TestServeConversation sends earlier turns: the question embedded holds
// the earlier user turns, and the context has the Conversation History
// table.
func TestServeConversation(t *testing.T) {
	f := newAskFixture(t)
	sf := startServe(t, f, nil)
	var got struct {
		KGRAG serveReply `json:"kgrag"`
	}
	msgs := []map[string]string{
		{"role": "system", "content": "You are helpful."},
		{"role": "user", "content": "Who is Scrooge?"},
		{"role": "assistant", "content": "A miser."},
		{"role": "user", "content": "And his clerk?"},
	}
	if code, _ := sf.post(t, "/v1/chat/completions", "", map[string]any{"model": "kgrag-local", "messages": msgs}, &got); code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	var embedded []string
	for _, r := range f.srv.Requests() {
		embedded = append(embedded, r.Inputs...)
	}
	if want := "And his clerk?\nWho is Scrooge?"; len(embedded) != 1 || embedded[0] != want {
		t.Errorf("embedded %q; want [%q]", embedded, want)
	}
	c := got.KGRAG.Context
	if c == nil || c.HistoryTurns != 1 || !strings.HasPrefix(c.Text, "-----Conversation History-----\nturn|content\nuser|Who is Scrooge?\n\n") {
		t.Errorf("context does not start with the one earlier question: %+v", c)
	}
	if sys := lastChat(t, f.srv).Messages; len(sys) != 2 || sys[1].Content != "And his clerk?" {
		t.Errorf("the model got %d messages, last %q; want the system prompt and the question", len(sys), sys[len(sys)-1].Content)
	}
}

func httptestServer(t *testing.T, s *serve.Server) *httptest.Server {
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	return hs
}

// loadOxigraph loads f's sample into a new graph of the test Oxigraph with
// kgrag load, dropped when the test ends, and returns the store options
// that read it.
func loadOxigraph(t *testing.T, f askFixture) storeOptions {
	t.Helper()
	url := test.Service(t, "OXIGRAPH")
	graph := fmt.Sprintf("http://example.org/kgrag-serve-test/%d", rand.Uint32())
	if _, stderr, code := runKgrag(t, "load", "-q", "--input", f.input, "--store", url, "--store-type", "oxigraph", "--graph", graph, "--in-place"); code != 0 {
		t.Fatalf("kgrag load: exit %d: %s", code, stderr)
	}
	t.Cleanup(func() {
		if c, _, err := storeClient(storeOptions{url: url, storeType: "oxigraph"}); err == nil {
			_ = c.Update(context.Background(), "DROP SILENT GRAPH <"+graph+">")
		}
	})
	return storeOptions{url: url, graph: graph, storeType: "oxigraph", authScheme: "basic"}
}
