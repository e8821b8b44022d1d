package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
)

// TestWindowDiscovery: each server the test server imitates is told
// apart by its own endpoints, and its window read where its
// documentation puts it; a flag wins over every server.
func TestWindowDiscovery(t *testing.T) {
	tests := []struct {
		name        string
		cfg         llmtest.Config
		flag        int
		wantServer  string
		wantTokens  int
		wantTrained int
		wantSource  string
	}{
		{"llama-server", llmtest.Config{Imitate: llmtest.ImitateLlamaServer, ChatWindow: 4096, Models: []string{"chat-m"}},
			0, llm.ServerLlamaServer, 4096, 32768, "/props"},
		{"LM Studio, loaded", llmtest.Config{Imitate: llmtest.ImitateLMStudio, ChatWindow: 8192, Models: []string{"chat-m"}},
			0, llm.ServerLMStudio, 8192, 32768, "loaded instance"},
		{"LM Studio, not loaded", llmtest.Config{Imitate: llmtest.ImitateLMStudio, Models: []string{"chat-m"}},
			0, llm.ServerLMStudio, llm.LMStudioDefaultContext, 32768, "not loaded"},
		{"vLLM", llmtest.Config{Imitate: llmtest.ImitateVLLM, ChatWindow: 16384, Models: []string{"chat-m"}},
			0, llm.ServerVLLM, 16384, 16384, "max_model_len"},
		{"a server that does not say", llmtest.Config{}, 0, llm.ServerOther, 0, 0, "does not say"},
		{"the flag wins", llmtest.Config{Imitate: llmtest.ImitateVLLM, ChatWindow: 16384, Models: []string{"chat-m"}},
			2048, llm.ServerVLLM, 2048, 0, "--chat-context-tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.Start(t, tt.cfg)
			c := newClient(t, srv, nil)
			c.SetWindow(llm.WindowChat, tt.flag, "--chat-context-tokens")
			if got := c.Server(context.Background()); got != tt.wantServer {
				t.Errorf("Server = %q; want %q", got, tt.wantServer)
			}
			w, err := c.Window(context.Background(), llm.WindowChat, "")
			if err != nil {
				t.Fatal(err)
			}
			if w.Tokens != tt.wantTokens || w.Trained != tt.wantTrained || !strings.Contains(w.Source, tt.wantSource) {
				t.Errorf("Window = %d (trained %d) from %q; want %d (trained %d) from a source naming %q",
					w.Tokens, w.Trained, w.Source, tt.wantTokens, tt.wantTrained, tt.wantSource)
			}
			if w.Model != "chat-m" || w.Kind != llm.WindowChat {
				t.Errorf("Window is of %s model %q; want chat model chat-m", w.Kind, w.Model)
			}
		})
	}
}

// TestWindowRefusals: every server's refusal of a prompt over the window
// is an error naming the window, with the prompt's size where the server
// gave it, which errors.As finds as a *WindowError and which is not
// retried.
func TestWindowRefusals(t *testing.T) {
	for _, imitate := range []string{"", llmtest.ImitateLlamaServer, llmtest.ImitateLMStudio, llmtest.ImitateVLLM} {
		t.Run("imitate="+imitate, func(t *testing.T) {
			srv := llmtest.Start(t, llmtest.Config{Imitate: imitate, ChatWindow: 50})
			c := newClient(t, srv, nil)
			prompt := strings.Repeat("word ", 80)
			_, _, err := c.Chat(context.Background(), []llm.Message{{Role: llm.RoleUser, Content: prompt}}, llm.ChatOptions{MaxTokens: 10})
			var we *llm.WindowError
			if !errors.As(err, &we) {
				t.Fatalf("Chat with an 80-word prompt in a 50-word window: %v; want a *WindowError", err)
			}
			if we.Window != 50 || (we.Prompt != 80 && we.Prompt != 90) {
				t.Errorf("WindowError{Window: %d, Prompt: %d}; want the window 50 and the prompt 80 (90 with the answer)", we.Window, we.Prompt)
			}
			if !errors.Is(err, llm.ErrRequest) || !strings.Contains(err.Error(), "window of 50 tokens") {
				t.Errorf("error %q: want a refused request naming the window of 50 tokens", err)
			}
			if n := srv.Count("/chat/completions"); n != 1 {
				t.Errorf("the server saw %d chat requests; want 1 (a refusal for length is not retried)", n)
			}
		})
	}
}

// TestLearnKeepsWindows: a window learned from a refusal is what Window
// says next, in this client and, through the cache file, in the next.
func TestLearnKeepsWindows(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{})
	path := filepath.Join(t.TempDir(), "windows.json")
	cache, err := llm.OpenWindowCache(path)
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, srv, func(cfg *llm.Config) { cfg.WindowCache = cache })
	ctx := context.Background()
	if w, _ := c.Window(ctx, llm.WindowChat, ""); w.Known() {
		t.Fatalf("Window before learning = %v; want unknown", w)
	}
	c.Learn(llm.WindowChat, "chat-m", 2048, "refused a prompt")
	if w, _ := c.Window(ctx, llm.WindowChat, ""); w.Tokens != 2048 {
		t.Errorf("Window after Learn = %v; want 2048", w)
	}
	next := newClient(t, srv, func(cfg *llm.Config) { cfg.WindowCache = cache })
	w, err := next.Window(ctx, llm.WindowChat, "")
	if err != nil {
		t.Fatal(err)
	}
	if w.Tokens != 2048 || !strings.Contains(w.Source, path) {
		t.Errorf("a new client's Window = %v; want 2048, kept in %s", w, path)
	}
	if w, _ := next.Window(ctx, llm.WindowChat, "other-model"); w.Known() {
		t.Errorf("Window of another model = %v; want unknown", w)
	}
	// A measured embedding window is kept apart from one a server named.
	if err := next.Remember(llm.Window{Model: "embed-m", Kind: llm.WindowEmbed, Tokens: 480, Encoding: "cl100k_base", Source: "measured"}); err != nil {
		t.Fatal(err)
	}
	if m, ok := c.Measured(llm.WindowEmbed, "embed-m"); !ok || m.Tokens != 480 {
		t.Errorf("Measured = %v, %v; want 480", m, ok)
	}
	if w, _ := c.Window(ctx, llm.WindowEmbed, ""); w.Known() {
		t.Errorf("Window(embedding) = %v; want unknown: the measured window is not the server's", w)
	}
}

// fakeOllama answers Ollama's own API as its documentation and
// server/routes.go in v0.17.4 do: /api/version, /api/show with model_info
// and parameters, /api/ps, and /api/chat (NDJSON when streaming, one
// object when not), refusing a prompt over num_ctx as Ollama does with
// truncate false. It records the /api/chat requests.
type fakeOllama struct {
	mu       sync.Mutex
	chats    []map[string]any
	trained  int
	numCtx   int // from the Modelfile; 0: none
	loaded   int // context of the model as loaded (/api/ps); 0: not loaded
	promptOf func(map[string]any) int
}

func (f *fakeOllama) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if r.Body != nil {
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &body)
	}
	write := func(v any) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
	switch r.URL.Path {
	case "/api/version":
		write(map[string]any{"version": "0.17.4"})
	case "/api/show":
		params := "temperature 0.7"
		if f.numCtx > 0 {
			params += "\nnum_ctx                        " + itoa(f.numCtx)
		}
		write(map[string]any{"parameters": params, "model_info": map[string]any{
			"general.architecture": "gemma3", "gemma3.context_length": f.trained, "gemma3.embedding_length": 640}})
	case "/api/ps":
		var models []any
		if f.loaded > 0 {
			models = append(models, map[string]any{"name": "chat-m:latest", "model": "chat-m:latest", "context_length": f.loaded})
		}
		write(map[string]any{"models": models})
	case "/api/chat":
		f.mu.Lock()
		f.chats = append(f.chats, body)
		f.mu.Unlock()
		opts, _ := body["options"].(map[string]any)
		ctxLen := 4096
		if n, ok := opts["num_ctx"].(float64); ok {
			ctxLen = int(n)
		}
		if trunc, _ := body["truncate"].(bool); !trunc && f.promptOf(body) > ctxLen {
			w.WriteHeader(http.StatusBadRequest)
			write(map[string]any{"error": "the input length exceeds the context length"})
			return
		}
		msg := map[string]any{"role": "assistant", "content": "Bob Cratchit."}
		if stream, _ := body["stream"].(bool); stream {
			w.Header().Set("Content-Type", "application/x-ndjson")
			for _, piece := range []string{"Bob", " Cratchit."} {
				json.NewEncoder(w).Encode(map[string]any{"message": map[string]any{"role": "assistant", "content": piece}, "done": false})
			}
			json.NewEncoder(w).Encode(map[string]any{"message": map[string]any{"role": "assistant", "content": ""}, "done": true,
				"done_reason": "stop", "prompt_eval_count": 12, "eval_count": 3})
			return
		}
		write(map[string]any{"message": msg, "done": true, "done_reason": "stop", "prompt_eval_count": 12, "eval_count": 3})
	default:
		http.NotFound(w, r)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestOllamaWindow: with Ollama, a chat goes to /api/chat with truncate
// off, asking num_ctx for what the call needs when the model's context
// is smaller, never beyond the trained length; the window is the trained
// length, and an embedding's is the server's default within it.
func TestOllamaWindow(t *testing.T) {
	f := &fakeOllama{trained: 32768, promptOf: func(body map[string]any) int {
		n := 0
		for _, m := range body["messages"].([]any) {
			n += len(strings.Fields(m.(map[string]any)["content"].(string)))
		}
		return n
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	c, err := llm.New(llm.Config{BaseURL: srv.URL + "/v1", ChatModel: "chat-m", EmbedModel: "embed-m", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	w, err := c.Window(ctx, llm.WindowChat, "")
	if err != nil {
		t.Fatal(err)
	}
	if w.Server != llm.ServerOllama || w.Tokens != 32768 || !w.PerRequest || w.Default != llm.OllamaDefaultContext {
		t.Fatalf("Window = %+v; want Ollama's trained 32768, per request, default %d", w, llm.OllamaDefaultContext)
	}
	ew, _ := c.Window(ctx, llm.WindowEmbed, "")
	if ew.Tokens != llm.OllamaDefaultContext {
		t.Errorf("embedding Window = %v; want the server's default %d", ew, llm.OllamaDefaultContext)
	}
	tests := []struct {
		name        string
		need        int
		stream      bool
		wantNumCtx  int
		wantRefused bool
	}{
		{"fits the default", 3000, false, 4096, false}, // asked all the same: a model loaded larger stays as a request without num_ctx would find it
		{"needs more", 9000, true, 16384, false},
		{"needs more than trained", 40000, false, 40000, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.mu.Lock()
			f.chats = nil
			f.mu.Unlock()
			msgs := []llm.Message{{Role: llm.RoleSystem, Content: "data"}, {Role: llm.RoleUser, Content: "Who is the clerk?"}}
			opts := llm.ChatOptions{MaxTokens: 100, ContextTokens: tt.need}
			var got string
			if tt.stream {
				var sb strings.Builder
				got, _, err = c.ChatStream(ctx, msgs, opts, func(p string) error { sb.WriteString(p); return nil })
				if sb.String() != got {
					t.Errorf("pieces %q; answer %q", sb.String(), got)
				}
			} else {
				got, _, err = c.Chat(ctx, msgs, opts)
			}
			if err != nil || got != "Bob Cratchit." {
				t.Fatalf("answer %q, %v", got, err)
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if len(f.chats) != 1 {
				t.Fatalf("%d /api/chat requests; want 1", len(f.chats))
			}
			req := f.chats[0]
			if trunc, ok := req["truncate"].(bool); !ok || trunc {
				t.Errorf("truncate = %v; want false, so that a long prompt is refused, not cut", req["truncate"])
			}
			opts2, _ := req["options"].(map[string]any)
			n, _ := opts2["num_ctx"].(float64)
			if int(n) != tt.wantNumCtx {
				t.Errorf("num_ctx = %v; want %d", opts2["num_ctx"], tt.wantNumCtx)
			}
			if p, _ := opts2["num_predict"].(float64); p != 100 {
				t.Errorf("num_predict = %v; want 100 (max_tokens)", opts2["num_predict"])
			}
		})
	}
	// A model loaded with a larger context keeps it: asking for it
	// spares a reload.
	f.loaded = 8192
	c2, err := llm.New(llm.Config{BaseURL: srv.URL + "/v1", ChatModel: "chat-m", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	if w, _ := c2.Window(ctx, llm.WindowChat, ""); w.Loaded != 8192 || w.Default != llm.OllamaDefaultContext {
		t.Errorf("Window = %+v; want loaded 8192, default %d", w, llm.OllamaDefaultContext)
	}
	f.mu.Lock()
	f.chats = nil
	f.mu.Unlock()
	if _, _, err := c2.Chat(ctx, []llm.Message{{Role: llm.RoleUser, Content: "Who?"}}, llm.ChatOptions{ContextTokens: 6000}); err != nil {
		t.Fatal(err)
	}
	if n := f.chats[0]["options"].(map[string]any)["num_ctx"]; n != float64(8192) {
		t.Errorf("num_ctx = %v with the model loaded at 8192 and 6000 needed; want 8192", n)
	}
	// A prompt over the context Ollama has: refused, an ErrRequest
	// naming the window, not retried.
	long := strings.Repeat("word ", 5000)
	_, _, err = c.Chat(ctx, []llm.Message{{Role: llm.RoleUser, Content: long}}, llm.ChatOptions{})
	var we *llm.WindowError
	if !errors.As(err, &we) || !errors.Is(err, llm.ErrRequest) {
		t.Errorf("a 5000-word prompt in Ollama's 4096: %v; want a refused request (*WindowError)", err)
	}
}

// TestWindowSourceHidesCredentials: a discovery request that fails says
// so in the window's source, without the credentials --llm-url carries.
func TestWindowSourceHidesCredentials(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/version":
			json.NewEncoder(w).Encode(map[string]string{"version": "0.17.4"})
		case "/api/show":
			// The connection closes without an answer: net/http's error
			// names the URL.
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	base := strings.Replace(srv.URL, "http://", "http://kgrag:"+secret+"@", 1) + "/v1"
	c, err := llm.New(llm.Config{BaseURL: base, ChatModel: "chat-m", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.Window(context.Background(), llm.WindowChat, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("source: %s", w.Source)
	if !strings.Contains(w.Source, "/api/show") || strings.Contains(w.Source, secret) {
		t.Errorf("Source = %q; want the failed /api/show said, without the password", w.Source)
	}
}
