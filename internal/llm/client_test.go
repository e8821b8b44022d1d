package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
)

const secret = "sk-test-DO-NOT-LEAK-0123456789"

func newClient(t *testing.T, srv *llmtest.Server, mod func(*llm.Config)) *llm.Client {
	t.Helper()
	cfg := llm.Config{
		BaseURL:    srv.URL(),
		APIKey:     secret,
		ChatModel:  "chat-m",
		EmbedModel: "embed-m",
		Timeout:    2 * time.Second,
		Retries:    3,
		Backoff:    time.Millisecond,
		MaxBackoff: 5 * time.Second,
		HTTPClient: srv.Client(),
	}
	if mod != nil {
		mod(&cfg)
	}
	c, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestEmbed(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{Dim: 16})
	c := newClient(t, srv, nil)
	texts := []string{"ALICE: a cryptographer", "BOB: a courier", ""}
	got, err := c.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(texts) {
		t.Fatalf("Embed returned %d vectors; want %d", len(got), len(texts))
	}
	for i, text := range texts {
		want := llmtest.Embed("embed-m", text, 16)
		for j := range want {
			if got[i][j] != want[j] {
				t.Fatalf("vector %d differs from the server's embedding of %q at %d", i, text, j)
			}
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests; want 1", len(reqs))
	}
	if reqs[0].Auth != "Bearer "+secret || reqs[0].Model != "embed-m" {
		t.Errorf("request auth %q model %q; want the key as bearer token and embed-m", reqs[0].Auth, reqs[0].Model)
	}
	if v, err := c.Embed(context.Background(), nil); v != nil || err != nil || srv.Count("") != 1 {
		t.Errorf("Embed(nil) = %v, %v with %d requests; want nil, nil and no request", v, err, srv.Count(""))
	}
}

func TestRetries(t *testing.T) {
	tests := []struct {
		name     string
		fail     []llmtest.Failure
		retries  int
		wantErr  error // nil: success
		attempts int
		hint     string
	}{
		{"ok", nil, 3, nil, 1, ""},
		{"429 twice", rep(2, llmtest.Failure{Status: 429, RetryAfter: "0"}), 3, nil, 3, ""},
		{"500 once", rep(1, llmtest.Failure{Status: 500}), 3, nil, 2, ""},
		{"503 once", rep(1, llmtest.Failure{Status: 503}), 3, nil, 2, ""},
		{"dropped connection", rep(2, llmtest.Failure{Drop: true}), 3, nil, 3, ""},
		{"slow reply", rep(1, llmtest.Failure{Delay: 500 * time.Millisecond}), 3, nil, 2, ""},
		{"400 not retried", rep(3, llmtest.Failure{Status: 400, Message: "input too long for context"}), 3, llm.ErrRequest, 1, "longer than the embedding model's context"},
		{"401 not retried", rep(3, llmtest.Failure{Status: 401}), 3, llm.ErrAuth, 1, "KGRAG_LLM_KEY"},
		{"model not found", rep(1, llmtest.Failure{Status: 404, Message: `model "embed-m" not found, try pulling it first`}), 3, llm.ErrModelNotFound, 1, "ollama pull embed-m"},
		{"bad path", rep(1, llmtest.Failure{Status: 404, Message: "404 page not found"}), 3, llm.ErrRequest, 1, "--llm-url"},
		{"429 beyond retries", rep(5, llmtest.Failure{Status: 429}), 2, llm.ErrRateLimited, 3, "rate limiting"},
		{"500 beyond retries", rep(5, llmtest.Failure{Status: 500}), 1, llm.ErrServer, 2, ""},
		{"no retries", rep(1, llmtest.Failure{Status: 500}), -1, llm.ErrServer, 1, ""},
		{"drops beyond retries", rep(5, llmtest.Failure{Drop: true}), 2, llm.ErrUnreachable, 3, "--llm-url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.Start(t, llmtest.Config{Dim: 8})
			srv.Fail(tt.fail...)
			c := newClient(t, srv, func(c *llm.Config) {
				c.Retries = tt.retries
				c.Timeout = 200 * time.Millisecond
			})
			_, err := c.Embed(context.Background(), []string{"a b"})
			if got := srv.Count("/embeddings"); got != tt.attempts {
				t.Errorf("server saw %d attempts; want %d", got, tt.attempts)
			}
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("Embed: %v", err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Embed error = %v; want kind %v", err, tt.wantErr)
			}
			var e *llm.Error
			if !errors.As(err, &e) {
				t.Fatalf("Embed error %T is no *llm.Error", err)
			}
			if e.Attempts != tt.attempts || e.Model != "embed-m" || !strings.HasSuffix(e.Endpoint, "/v1/embeddings") {
				t.Errorf("error attempts %d model %q endpoint %q; want %d, embed-m, .../v1/embeddings", e.Attempts, e.Model, e.Endpoint, tt.attempts)
			}
			if !strings.Contains(err.Error(), tt.hint) {
				t.Errorf("error %q does not contain hint %q", err, tt.hint)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error %q contains the API key", err)
			}
		})
	}
}

func rep(n int, f llmtest.Failure) []llmtest.Failure {
	out := make([]llmtest.Failure, n)
	for i := range out {
		out[i] = f
	}
	return out
}

func TestRetryAfterHonoured(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{})
	srv.Fail(llmtest.Failure{Status: 429, RetryAfter: "1"})
	c := newClient(t, srv, nil)
	start := time.Now()
	if _, err := c.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests; want 2", len(reqs))
	}
	if gap := reqs[1].At.Sub(reqs[0].At); gap < time.Second {
		t.Errorf("retried after %s; the server asked for 1s", gap)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("took %s; want about 1s", el)
	}
}

func TestRetryAfterTooLong(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{})
	srv.Fail(llmtest.Failure{Status: 429, RetryAfter: "3600"})
	c := newClient(t, srv, nil)
	start := time.Now()
	_, err := c.Embed(context.Background(), []string{"x"})
	if !errors.Is(err, llm.ErrRateLimited) || !strings.Contains(err.Error(), "asked to wait 1h0m0s") {
		t.Fatalf("Embed error = %v; want rate limited, naming the wait", err)
	}
	if el := time.Since(start); el > time.Second || srv.Count("") != 1 {
		t.Errorf("took %s and %d requests; want an immediate failure after 1", el, srv.Count(""))
	}
}

func TestSecretScrubbed(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{})
	srv.Fail(llmtest.Failure{Status: 400, Message: "bad header Authorization: Bearer " + secret})
	c := newClient(t, srv, nil)
	_, err := c.Embed(context.Background(), []string{"x"})
	if err == nil || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "[redacted]") {
		t.Errorf("Embed error = %v; want the key redacted", err)
	}
	if _, err := llm.New(llm.Config{BaseURL: "ftp://user:" + secret + "@host/v1"}); err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("New with a bad URL: %v; want an error without the password", err)
	}
}

func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c, err := llm.New(llm.Config{BaseURL: "http://" + addr + "/v1", EmbedModel: "m", ChatModel: "m",
		Retries: 1, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Embed(context.Background(), []string{"x"})
	if !llm.Unreachable(err) || !errors.Is(err, llm.ErrUnreachable) {
		t.Errorf("Embed against a closed port: %v; want Unreachable", err)
	}
	if !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "ollama serve") {
		t.Errorf("error %q should name %s and say how to start the server", err, addr)
	}
	_, _, err = c.Chat(context.Background(), []llm.Message{{Role: llm.RoleUser, Content: "hi"}}, llm.ChatOptions{})
	if !llm.Unreachable(err) {
		t.Errorf("Chat against a closed port: %v; want Unreachable", err)
	}

	srv := llmtest.Start(t, llmtest.Config{Models: []string{"other"}})
	c2 := newClient(t, srv, nil)
	_, err = c2.Embed(context.Background(), []string{"x"})
	if llm.Unreachable(err) || !errors.Is(err, llm.ErrModelNotFound) {
		t.Errorf("Embed with an unknown model: %v; want ErrModelNotFound, not Unreachable", err)
	}
	for _, e := range []error{nil, errors.New("x"), context.Canceled} {
		if llm.Unreachable(e) {
			t.Errorf("Unreachable(%v) = true; want false", e)
		}
	}
}

func TestCancelStopsRetrying(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{})
	srv.FailN(10, llmtest.Failure{Status: 503})
	c := newClient(t, srv, func(c *llm.Config) { c.Retries = 10; c.Backoff = 50 * time.Millisecond })
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Millisecond)
	defer cancel()
	_, err := c.Embed(ctx, []string{"x"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Embed with a cancelled context: %v; want context.DeadlineExceeded", err)
	}
	if n := srv.Count(""); n > 4 {
		t.Errorf("%d attempts after cancel; want few", n)
	}
}

func TestModels(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{Models: []string{"a", "b"}})
	got, err := newClient(t, srv, nil).Models(context.Background())
	if err != nil || strings.Join(got, ",") != "a,b" {
		t.Errorf("Models() = %v, %v; want [a b]", got, err)
	}
}

func TestChat(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{})
	srv.Reply("capital", "Paris is the capital.")
	c := newClient(t, srv, nil)
	zero := float32(0)
	tests := []struct {
		enqueue []string
		q, want string
	}{
		{nil, "what is the capital of France?", "Paris is the capital."},
		{nil, "hello there", "echo: hello there"},
		{[]string{"queued one"}, "what is the capital?", "queued one"},
	}
	for _, tt := range tests {
		srv.Enqueue(tt.enqueue...)
		got, usage, err := c.Chat(context.Background(), []llm.Message{
			{Role: llm.RoleSystem, Content: "be brief"}, {Role: llm.RoleUser, Content: tt.q}},
			llm.ChatOptions{Temperature: &zero})
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("Chat(%q) = %q; want %q", tt.q, got, tt.want)
		}
		if usage.CompletionTokens == 0 || usage.TotalTokens != usage.PromptTokens+usage.CompletionTokens {
			t.Errorf("Chat(%q) usage = %+v; want counts", tt.q, usage)
		}
	}
	req := srv.Requests()[0]
	// Exactly 0: llama.cpp divides by the temperature, so a tiny non-zero
	// stand-in makes it sample noise.
	if temp, ok := req.Extra["temperature"].(float64); req.Model != "chat-m" || len(req.Messages) != 2 || !ok || temp != 0 {
		t.Errorf("request model %q, %d messages, temperature %v; want chat-m, 2, temperature 0 sent",
			req.Model, len(req.Messages), req.Extra["temperature"])
	}

	// A schema goes in a json_schema response_format, as OpenAI's API
	// defines it, beside the zero temperature.
	srv.Reset()
	schema := json.RawMessage(`{"type":"object","properties":{"rating":{"type":"integer"}},"required":["rating"]}`)
	if _, _, err := c.Chat(context.Background(), []llm.Message{{Role: llm.RoleUser, Content: "rate"}},
		llm.ChatOptions{Temperature: &zero, JSON: true, JSONSchema: schema}); err != nil {
		t.Fatal(err)
	}
	req = srv.Requests()[0]
	rf, _ := req.Extra["response_format"].(map[string]any)
	var want any
	if err := json.Unmarshal(schema, &want); err != nil {
		t.Fatal(err)
	}
	js, _ := rf["json_schema"].(map[string]any)
	if rf["type"] != "json_schema" || !reflect.DeepEqual(js["schema"], want) || req.Extra["temperature"] != 0.0 {
		t.Errorf("response_format %v, temperature %v; want json_schema with the schema %s, and 0", rf, req.Extra["temperature"], schema)
	}
}

// TestJSONFormat: a JSON call asks in json_schema, then json_object (with
// the schema beside it, as the llama.cpp servers read it), then in the
// prompt alone, as far as the server refuses; the client keeps the format
// the server took, so later calls ask in it at once. The refusals are
// those of real servers: LM Studio's 400, llama-cpp-python's 500.
func TestJSONFormat(t *testing.T) {
	const llamaCppPython = "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), " +
		"'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}"
	tests := []struct {
		name     string
		accepts  []string         // llmtest.Config.ResponseFormats
		refusal  *llmtest.Failure // instead: the first request fails so
		want     llm.JSONFormat
		wantAsks []string // response_format types of the first call's requests
	}{
		{"OpenAI, vLLM, Ollama, llama-server", nil, nil, llm.FormatJSONSchema, []string{"json_schema"}},
		{"LM Studio", []string{"json_schema", "text"}, nil, llm.FormatJSONSchema, []string{"json_schema"}},
		{"json_object only", []string{"json_object", "text"}, nil, llm.FormatJSONObject, []string{"json_schema", "json_object"}},
		{"llama-cpp-python's 500", nil, &llmtest.Failure{Status: 500, Message: llamaCppPython}, llm.FormatJSONObject, []string{"json_schema", "json_object"}},
		{"neither", []string{"text"}, nil, llm.FormatPrompt, []string{"json_schema", "json_object", ""}},
	}
	schema := json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.Start(t, llmtest.Config{ResponseFormats: tt.accepts})
			if tt.refusal != nil {
				srv.Fail(*tt.refusal)
			}
			c, err := llm.New(llm.Config{BaseURL: srv.URL(), ChatModel: "m", Retries: 2, Backoff: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.ProbeJSONFormat(context.Background(), "")
			if err != nil || got != tt.want {
				t.Fatalf("ProbeJSONFormat = %v, %v; want %v", got, err, tt.want)
			}
			var asks []string
			for _, r := range srv.Requests() {
				rf, _ := r.Extra["response_format"].(map[string]any)
				typ, _ := rf["type"].(string)
				asks = append(asks, typ)
				if typ == "json_object" && rf["schema"] == nil {
					t.Errorf("json_object without the schema: %v", rf)
				}
			}
			if !reflect.DeepEqual(asks, tt.wantAsks) {
				t.Errorf("response_format types asked: %q; want %q", asks, tt.wantAsks)
			}
			// A later call asks in the format found, once.
			srv.Reset()
			if _, _, err := c.ChatStream(context.Background(), []llm.Message{{Role: llm.RoleUser, Content: "again"}},
				llm.ChatOptions{JSON: true, JSONSchema: schema}, func(string) error { return nil }); err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			rf, _ := reqs[0].Extra["response_format"].(map[string]any)
			if typ, _ := rf["type"].(string); len(reqs) != 1 || typ != tt.wantAsks[len(tt.wantAsks)-1] {
				t.Errorf("later call: %d requests, response_format %v; want 1 in the format found", len(reqs), rf)
			}
		})
	}
}

func TestChatStream(t *testing.T) {
	const answer = "Alice  met Bob in Paris, and they talked."
	tests := []struct {
		name     string
		fail     []llmtest.Failure
		attempts int
		wantErr  bool
	}{
		{"clean", nil, 1, false},
		{"drop before first piece", rep(1, llmtest.Failure{Drop: true}), 2, false},
		{"503 then ok", rep(2, llmtest.Failure{Status: 503}), 3, false},
		{"cut mid-stream", rep(1, llmtest.Failure{DropAfterChunks: 3}), 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.Start(t, llmtest.Config{})
			srv.Reply("who", answer)
			srv.Fail(tt.fail...)
			c := newClient(t, srv, nil)
			var pieces []string
			got, usage, err := c.ChatStream(context.Background(), []llm.Message{{Role: llm.RoleUser, Content: "who met?"}},
				llm.ChatOptions{}, func(s string) error { pieces = append(pieces, s); return nil })
			if n := srv.Count("/chat/completions"); n != tt.attempts {
				t.Errorf("server saw %d attempts; want %d", n, tt.attempts)
			}
			if strings.Join(pieces, "") != got {
				t.Errorf("pieces %q do not join to the returned answer %q", pieces, got)
			}
			if tt.wantErr {
				if !llm.Unreachable(err) || got != strings.Join(llmtest.Chunks(answer)[:3], "") {
					t.Errorf("ChatStream = %q, %v; want the first 3 pieces and an Unreachable error", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != answer || len(pieces) != len(llmtest.Chunks(answer)) {
				t.Errorf("ChatStream = %q in %d pieces; want %q in %d", got, len(pieces), answer, len(llmtest.Chunks(answer)))
			}
			if usage.CompletionTokens == 0 {
				t.Errorf("usage %+v; want the server's counts", usage)
			}
		})
	}
}

// TestChatContextHint: a chat the server refuses as longer than the
// model's context (llama.cpp's and vLLM's wording) names the flags that
// shorten the prompt; another 400 gets no such hint.
func TestChatContextHint(t *testing.T) {
	for _, tt := range []struct {
		msg  string
		hint bool
	}{
		{"This model's maximum context length is 2048 tokens. However, you requested 2173 tokens", true},
		{"the request exceeds the available context size", true},
		{"unknown field: foo", false},
	} {
		srv := llmtest.Start(t, llmtest.Config{})
		srv.Fail(llmtest.Failure{Status: 400, Message: tt.msg})
		c := newClient(t, srv, nil)
		_, _, err := c.Chat(context.Background(), []llm.Message{{Role: llm.RoleUser, Content: "hi"}}, llm.ChatOptions{})
		if !errors.Is(err, llm.ErrRequest) || strings.Contains(err.Error(), "--max-context-tokens") != tt.hint {
			t.Errorf("%q: error %v; want a refused request, hinting at --max-context-tokens: %v", tt.msg, err, tt.hint)
		}
	}
}

func TestChatStreamCallbackError(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{})
	c := newClient(t, srv, nil)
	stop := errors.New("reader went away")
	n := 0
	got, _, err := c.ChatStream(context.Background(), []llm.Message{{Role: llm.RoleUser, Content: "one two three four"}},
		llm.ChatOptions{}, func(string) error {
			n++
			if n == 2 {
				return stop
			}
			return nil
		})
	if !errors.Is(err, stop) || n != 2 || got != "echo: one" || srv.Count("") != 1 {
		t.Errorf("ChatStream = %q, %v after %d pieces, %d requests; want the callback's error after 2, 1 request", got, err, n, srv.Count(""))
	}
}

func TestChatStreamIdleTimeout(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{ChunkDelay: 300 * time.Millisecond})
	c := newClient(t, srv, func(c *llm.Config) { c.Timeout = 100 * time.Millisecond; c.Retries = 1 })
	_, _, err := c.ChatStream(context.Background(), []llm.Message{{Role: llm.RoleUser, Content: "a b"}},
		llm.ChatOptions{}, func(string) error { return nil })
	if !llm.Unreachable(err) || !strings.Contains(err.Error(), "--llm-timeout") || srv.Count("") != 2 {
		t.Errorf("ChatStream with a stalled server: %v, %d requests; want a timeout naming --llm-timeout after 2", err, srv.Count(""))
	}

	// Slow but steady: pieces every 60ms under a 100ms idle bound, longer
	// than the bound in total.
	srv2 := llmtest.Start(t, llmtest.Config{ChunkDelay: 60 * time.Millisecond})
	c2 := newClient(t, srv2, func(c *llm.Config) { c.Timeout = 150 * time.Millisecond })
	got, _, err := c2.ChatStream(context.Background(), []llm.Message{{Role: llm.RoleUser, Content: "a b c d e"}},
		llm.ChatOptions{}, func(string) error { return nil })
	if err != nil || got != "echo: a b c d e" {
		t.Errorf("ChatStream with a slow steady server = %q, %v; want the whole echo", got, err)
	}
}

func TestMissingModel(t *testing.T) {
	c, err := llm.New(llm.Config{HTTPClient: http.DefaultClient})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Embed(context.Background(), []string{"x"}); !errors.Is(err, llm.ErrRequest) || !strings.Contains(err.Error(), "--embed-model") {
		t.Errorf("Embed without a model: %v; want a request error naming --embed-model", err)
	}
	if _, _, err := c.Chat(context.Background(), nil, llm.ChatOptions{}); !strings.Contains(fmtErr(err), "--chat-model") {
		t.Errorf("Chat without a model: %v; want an error naming --chat-model", err)
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// A slow server gets Timeout plus PromptTokenTime a prompt token to start
// answering; a long prompt that still timed out is not sent again, a
// short one is.
func TestPromptSizedWait(t *testing.T) {
	tests := []struct {
		name     string
		tokens   int
		delay    time.Duration
		wantErr  bool
		attempts int
	}{
		{"short prompt stalls: retried", 100, 2 * time.Second, true, 3},
		{"long prompt stalls: sent once", 3000, 2 * time.Second, true, 1},
		{"long prompt read slowly: waited for", 3000, 250 * time.Millisecond, false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.Start(t, llmtest.Config{})
			srv.FailN(3, llmtest.Failure{Path: "/chat/completions", Delay: tt.delay})
			c := newClient(t, srv, func(c *llm.Config) {
				c.Timeout = 100 * time.Millisecond
				c.PromptTokenTime = 100 * time.Microsecond // 3000 tokens: 300ms more
				c.Retries = 2
			})
			for _, stream := range []bool{false, true} {
				before := srv.Count("")
				opts := llm.ChatOptions{ContextTokens: tt.tokens}
				msgs := []llm.Message{{Role: llm.RoleUser, Content: "a b"}}
				var err error
				if stream {
					_, _, err = c.ChatStream(context.Background(), msgs, opts, func(string) error { return nil })
				} else {
					_, _, err = c.Chat(context.Background(), msgs, opts)
				}
				n := srv.Count("") - before
				if (err != nil) != tt.wantErr || n != tt.attempts {
					t.Errorf("stream %v: err %v after %d requests; want error %v after %d", stream, err, n, tt.wantErr, tt.attempts)
				}
				if tt.wantErr && tt.tokens >= 2048 && (err == nil || !strings.Contains(err.Error(), "3000 tokens")) {
					t.Errorf("stream %v: %v; want the error to name the prompt's 3000 tokens", stream, err)
				}
				srv.FailN(3, llmtest.Failure{Path: "/chat/completions", Delay: tt.delay})
			}
		})
	}
}
