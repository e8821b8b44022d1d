package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/test"
)

// ollamaRoot is the Ollama of the test run without its /v1.
func ollamaRoot(m test.ModelServer) string { return strings.TrimSuffix(m.URL, "/v1") }

// postJSON posts body to url and decodes the answer into out, returning
// the status.
func postJSON(t *testing.T, url string, body, out any) int {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("POST %s: status %d, unreadable answer: %v", url, resp.StatusCode, err)
	}
	return resp.StatusCode
}

// filler is a text of about n tokens of prose for any tokenizer: words
// of the book, repeated.
func filler(t *testing.T, n int) string {
	words := strings.Fields(test.ChristmasCarol(t))[2000:]
	var b strings.Builder
	for i := 0; b.Len() < n*4; i++ {
		b.WriteString(words[i%len(words)])
		b.WriteByte(' ')
	}
	return b.String()
}

// TestOllamaRealModels runs kgrag against a real Ollama, its default
// backend (scripts/ollama.sh: v0.17.4 built here, Gemma 3 270M and
// all-MiniLM-L6-v2 imported from the PyPI GGUF files). It establishes
// what Ollama does with a prompt over its context on each endpoint (kgrag
// must not depend on it), and checks that kgrag finds the windows, asks
// num_ctx for a prompt over the default context so that the model reads
// it whole, gets JSON in JSON mode, and embeds long texts in windows.
func TestOllamaRealModels(t *testing.T) {
	o := test.Ollama(t)
	root := ollamaRoot(o)
	server := []string{"--llm-url", o.URL, "--chat-model", o.ChatModel, "--embed-model", o.EmbedModel}

	t.Run("an oversized prompt", func(t *testing.T) {
		// About 6,000 tokens against the default context of 4,096.
		long := filler(t, 6000)
		msgs := []map[string]string{{"role": "system", "content": long}, {"role": "user", "content": "Who is Scrooge's clerk?"}}
		var oa struct {
			Usage struct {
				PromptTokens int `json:"prompt_tokens"`
			} `json:"usage"`
		}
		postJSON(t, o.URL+"/chat/completions", map[string]any{"model": o.ChatModel, "messages": msgs, "max_tokens": 4}, &oa)
		t.Logf("OpenAI endpoint: a ~6,000-token prompt was read as %d tokens", oa.Usage.PromptTokens)
		if oa.Usage.PromptTokens == 0 || oa.Usage.PromptTokens > llm.OllamaDefaultContext {
			t.Errorf("Ollama's OpenAI endpoint read %d prompt tokens of about 6,000; want it cut silently to its context, %d, as kgrag assumes it may be",
				oa.Usage.PromptTokens, llm.OllamaDefaultContext)
		}
		var native struct {
			Error string `json:"error"`
		}
		status := postJSON(t, root+"/api/chat", map[string]any{"model": o.ChatModel, "messages": msgs, "stream": false, "truncate": false,
			"options": map[string]any{"num_predict": 4}}, &native)
		t.Logf("/api/chat with truncate false: status %d, %q", status, native.Error)
		if status != http.StatusBadRequest || !strings.Contains(native.Error, "exceeds the context length") {
			t.Errorf("/api/chat with truncate false: status %d, %q; want 400, the input length exceeds the context length", status, native.Error)
		}
	})

	t.Run("windows", func(t *testing.T) {
		stdout, stderr, code := runKgrag(t, append([]string{"doctor", "--json"}, server...)...)
		if code != 0 && code != 1 {
			t.Fatalf("kgrag doctor: exit %d: %s", code, stderr)
		}
		var rep struct {
			Checks []struct{ Name, Status, Detail string } `json:"checks"`
		}
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatalf("%v: %s", err, stdout)
		}
		want := map[string]string{"chat window": "32768 tokens (Ollama /api/show", "embedding window": "512 tokens"}
		for _, c := range rep.Checks {
			if w, ok := want[c.Name]; ok {
				t.Logf("%s: %s %s", c.Name, c.Status, c.Detail)
				if c.Status != "ok" || !strings.Contains(c.Detail, w) {
					t.Errorf("doctor: %s %s %q; want ok, naming %q", c.Name, c.Status, c.Detail, w)
				}
				delete(want, c.Name)
			}
		}
		for name := range want {
			t.Errorf("doctor printed no %q check", name)
		}
	})

	input := filepath.Join(test.GraphRAGSamples(t), "v3")
	index := t.TempDir()
	t.Run("embeddings in windows", func(t *testing.T) {
		_, stderr, code := runKgrag(t, "embed", "--input", input, "--index", index, "--tables", "entities,text_units",
			"--llm-url", o.URL, "--embed-model", o.EmbedModel)
		if code != 0 {
			t.Fatalf("kgrag embed: exit %d: %s", code, stderr)
		}
		t.Logf("kgrag embed: %s", stderr)
		if !strings.Contains(stderr, "42 of the 42 text units are longer than the window") {
			t.Errorf("kgrag embed with MiniLM under Ollama (512 tokens): %s; want every 1,200-token text unit split", stderr)
		}
	})

	t.Run("num_ctx for a prompt over the default context", func(t *testing.T) {
		stdout, stderr, code := runKgrag(t, append([]string{"ask", "--mode", "basic", "--json", "--input", input, "--index", index,
			"--max-context-tokens", "4500", "--max-tokens", "64", "Who is Scrooge's clerk?"}, server...)...)
		if code != 0 {
			t.Fatalf("kgrag ask: exit %d: %s", code, stderr)
		}
		var res struct {
			Answer  string               `json:"answer"`
			Context struct{ Tokens int } `json:"context"`
			Usage   struct {
				Prompt int `json:"prompt_tokens"`
			} `json:"usage"`
			Degraded []string `json:"degraded"`
		}
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatalf("%v: %s", err, stdout)
		}
		t.Logf("context %d tokens (cl100k_base), Ollama read %d prompt tokens; answer %q", res.Context.Tokens, res.Usage.Prompt, res.Answer)
		if res.Answer == "" || len(res.Degraded) > 0 {
			t.Errorf("answer %q, degraded %q; want an answer from a context that fits", res.Answer, res.Degraded)
		}
		// Read whole: more than the default context, and about the
		// context's size.
		if res.Usage.Prompt <= llm.OllamaDefaultContext || float64(res.Usage.Prompt) < 0.9*float64(res.Context.Tokens) {
			t.Errorf("Ollama read %d prompt tokens of a %d-token context; want it whole, past the default %d", res.Usage.Prompt, res.Context.Tokens, llm.OllamaDefaultContext)
		}
		var ps struct {
			Models []struct {
				Name          string `json:"name"`
				ContextLength int    `json:"context_length"`
			} `json:"models"`
		}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, root+"/api/ps", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(&ps); err != nil {
			t.Fatal(err)
		}
		for _, m := range ps.Models {
			if strings.HasPrefix(m.Name, o.ChatModel) && m.ContextLength < 8192 {
				t.Errorf("%s is loaded with context %d; want the 8192 kgrag asked for", m.Name, m.ContextLength)
			}
		}
	})

	t.Run("JSON mode", func(t *testing.T) {
		c, err := llm.New(llm.Config{BaseURL: o.URL, ChatModel: o.ChatModel, Timeout: 5 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if w, err := c.Window(t.Context(), llm.WindowChat, ""); err != nil || w.Server != llm.ServerOllama {
			t.Fatalf("Window = %v, %v; want Ollama's", w, err)
		}
		schema := json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},"required":["name","age"]}`)
		zero := float32(0)
		reply, _, err := c.Chat(t.Context(), []llm.Message{{Role: llm.RoleUser, Content: "Scrooge is 60. Give his name and age as JSON."}},
			llm.ChatOptions{JSON: true, JSONSchema: schema, MaxTokens: 48, Temperature: &zero})
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Name *string `json:"name"`
			Age  *int    `json:"age"`
		}
		if err := json.Unmarshal([]byte(reply), &v); err != nil || v.Name == nil || v.Age == nil {
			t.Errorf("reply %q in JSON mode with a schema: %v; want an object with name and age", reply, err)
		}
	})
}
