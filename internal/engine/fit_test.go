package engine_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/embedindex/flat"
	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/answer"
	"github.com/kgrag/kgrag/internal/embedtext"
	"github.com/kgrag/kgrag/internal/engine"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/internal/test"
)

// indexed returns the v3 sample and flat indexes of its entities and
// text units embedded by srv, in a temporary folder.
func indexed(t *testing.T, srv *llmtest.Server) (*graphrag.Dataset, engine.Deps) {
	t.Helper()
	ctx := context.Background()
	ds, err := graphrag.Open(ctx, filepath.Join(test.GraphRAGSamples(t), "v3"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := llm.New(llm.Config{BaseURL: srv.URL(), EmbedModel: "embed-m", ChatModel: "chat-m", HTTPClient: srv.Client(), Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	d := engine.Deps{Source: retrieval.NewMemorySource(ds), Name: "v3", Embedder: c.Embedder(), Chat: c}
	dir := t.TempDir()
	for _, table := range []string{embedtext.Entities, embedtext.TextUnits} {
		ids, texts, _ := embedtext.Of(ds, table)
		vecs := make([][]float32, len(texts))
		for i, text := range texts {
			vecs[i] = llmtest.Embed("embed-m", text, srv.Dim("embed-m"))
		}
		path := filepath.Join(dir, table+".vec")
		if err := flat.Write(ctx, path, "embed-m", ids, vecs); err != nil {
			t.Fatal(err)
		}
		idx, err := flat.Open(ctx, path, flat.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { idx.Close() })
		d.SetIndex(table, idx)
	}
	d.Window = &engine.Window{}
	return ds, d
}

// TestFitWindow: a model served with a window far smaller than the
// default budgets (12000 tokens) gets prompts that fit it, in every mode
// that builds one context, whether the server says its window (an
// imitated llama-server) or only names it refusing the first prompt (as
// llama-cpp-python's server and OpenAI word it): then the engine learns it
// and answers again. The cut is said in the record, and the answer's
// tokens are bounded (max_tokens).
func TestFitWindow(t *testing.T) {
	const window = 1600 // words, the test server's tokens
	for _, imitate := range []string{llmtest.ImitateLlamaServer, llmtest.ImitateLMStudio, llmtest.ImitateVLLM, ""} {
		for _, m := range []string{"local", "basic", "sparql-templates", "subgraph"} {
			t.Run(imitate+"/"+m, func(t *testing.T) {
				srv := llmtest.Start(t, llmtest.Config{Imitate: imitate, ChatWindow: window, Models: []string{"chat-m", "embed-m"}})
				_, d := indexed(t, srv)
				c := d.Chat.(*llm.Client)
				w, err := c.Window(context.Background(), llm.WindowChat, "chat-m")
				if err != nil {
					t.Fatal(err)
				}
				learned := 0
				d.Window = &engine.Window{Window: w, Learn: func(tokens, prompt int) llm.Window {
					learned = tokens
					return c.Learn(llm.WindowChat, "chat-m", tokens, "refused")
				}}
				o := options()
				o.Local.Chat.Model, o.Basic.Chat.Model = "chat-m", "chat-m"
				e, err := engine.Open(m, d, o)
				if err != nil {
					t.Fatal(err)
				}
				res := &answer.Result{Timings: map[string]float64{}}
				if err := e.Search(context.Background(), engine.Question{Text: "Who is Scrooge's clerk?"}, engine.Hooks{}, res); err != nil {
					t.Fatalf("Search: %v", err)
				}
				if res.Answer == nil || *res.Answer == "" {
					t.Fatal("no answer")
				}
				var chats []llmtest.Request
				for _, r := range srv.Requests() {
					if strings.HasSuffix(r.Path, "/chat/completions") {
						chats = append(chats, r)
					}
				}
				wantChats := 1
				if imitate == "" {
					wantChats = 2 // refused, then fitted
					if learned != window {
						t.Errorf("learned a window of %d; want %d", learned, window)
					}
				}
				for _, c := range chats {
					n := 0
					for _, m := range c.Messages {
						n += len(strings.Fields(m.Content))
					}
					t.Logf("chat: %d words, max_tokens %v", n, c.Extra["max_tokens"])
				}
				if len(chats) != wantChats {
					t.Fatalf("%d chat requests; want %d", len(chats), wantChats)
				}
				last := chats[len(chats)-1]
				words := 0
				for _, msg := range last.Messages {
					words += len(strings.Fields(msg.Content))
				}
				mt, _ := last.Extra["max_tokens"].(float64)
				if words+int(mt) > window {
					t.Errorf("the answered prompt has %d words and max_tokens %v: over the %d-word window", words, mt, window)
				}
				if mt <= 0 {
					t.Errorf("max_tokens %v; want the window's answer reserve", last.Extra["max_tokens"])
				}
				if len(res.Degraded) == 0 || !strings.Contains(res.Degraded[0], "cut from 12000") {
					t.Errorf("degraded %q; want the cut of the 12000-token budget said", res.Degraded)
				}
			})
		}
	}
}

// TestFitWindowTooSmall: a window that leaves no room for a mode's data
// is an error that names it, not an answer from nothing.
func TestFitWindowTooSmall(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{})
	_, d := indexed(t, srv)
	d.Window = &engine.Window{Window: llm.Window{Tokens: 700, Source: "--chat-context-tokens"}}
	e, err := engine.Open("local", d, options())
	if err != nil {
		t.Fatal(err)
	}
	err = e.Search(context.Background(), engine.Question{Text: "Who is Scrooge's clerk?"}, engine.Hooks{}, &answer.Result{Timings: map[string]float64{}})
	var small *engine.WindowTooSmallError
	if err == nil || !strings.Contains(err.Error(), "700 tokens") || !errors.As(err, &small) {
		t.Errorf("Search in a 700-token window: %v; want a WindowTooSmallError naming it", err)
	}
}
