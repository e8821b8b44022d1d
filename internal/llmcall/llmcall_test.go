package llmcall_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/llmcall"
	"github.com/kgrag/kgrag/internal/tokens"
)

func client(t *testing.T, srv *llmtest.Server) *llm.Client {
	t.Helper()
	c, err := llm.New(llm.Config{BaseURL: srv.URL(), ChatModel: "test-chat", HTTPClient: srv.Client(),
		Retries: 1, Backoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func encoder(t *testing.T) *tokens.Encoder {
	t.Helper()
	enc, err := tokens.NewEncoder(tokens.EncodingCL100K)
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

// TestFatal: the one rule, on the errors the client really returns from
// a test server failing as asked.
func TestFatal(t *testing.T) {
	tests := []struct {
		name   string
		status int
		models []string
		want   bool
	}{
		{"server error of this call", 500, nil, false},
		{"unavailable after the retries", 503, nil, true},
		{"rate limited after the retries", 429, nil, true},
		{"key refused", 401, nil, true},
		{"request refused", 400, nil, true},
		{"no such model", 0, []string{"other"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.Start(t, llmtest.Config{Models: tt.models})
			if tt.status != 0 {
				srv.FailN(5, llmtest.Failure{Path: "/chat/completions", Status: tt.status})
			}
			_, _, err := client(t, srv).Chat(context.Background(), []llm.Message{{Role: llm.RoleUser, Content: "hi"}}, llm.ChatOptions{})
			if err == nil {
				t.Fatal("the call did not fail")
			}
			if got := llmcall.Fatal(err); got != tt.want {
				t.Errorf("Fatal(%v) = %v; want %v", err, got, tt.want)
			}
		})
	}
	for _, err := range []error{context.Canceled, fmt.Errorf("map: %w", context.DeadlineExceeded), &net.OpError{Op: "dial", Err: errors.New("connection refused")}} {
		if !llmcall.Fatal(err) {
			t.Errorf("Fatal(%v) = false; want true", err)
		}
	}
}

// TestCallJSONFallback: a call with a schema asks for JSON in each
// response_format until the server refuses them all, is then made
// without, and later calls do not ask; the record counts the tokens and
// keeps the reply.
func TestCallJSONFallback(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{ResponseFormats: []string{"text"}})
	srv.Respond(func(r llmtest.Request) (string, bool) { return `{"points": []}`, true })
	enc := encoder(t)
	c := llmcall.NewCaller(client(t, srv), llm.ChatOptions{Model: "test-chat"}, true, enc)
	schema := json.RawMessage(`{"type":"object"}`)
	for i := range 2 {
		reply, rec, err := c.Call(context.Background(), "system prompt", "the question", schema)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if reply != `{"points": []}` || rec.Reply != reply {
			t.Errorf("call %d: reply %q, record %q", i, reply, rec.Reply)
		}
		if want := enc.Count("system prompt") + enc.Count("the question"); rec.PromptTokens != want {
			t.Errorf("call %d: prompt tokens %d; want %d", i, rec.PromptTokens, want)
		}
		if rec.CompletionTokens != enc.Count(reply) {
			t.Errorf("call %d: completion tokens %d; want %d", i, rec.CompletionTokens, enc.Count(reply))
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests; want 4 (json_schema and json_object refused, again without, the second call)", len(reqs))
	}
	for i, r := range reqs {
		_, asked := r.Extra["response_format"]
		if asked != (i < 2) {
			t.Errorf("request %d asks for JSON: %v; want only the first two", i, asked)
		}
	}
}

// TestAnswerStreamsThroughHooks: the answer call streams the answer and a
// reasoning model's thinking to the hooks, apart, and a search's
// serialized hooks take one piece at a time.
func TestAnswerStreamsThroughHooks(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{Reasoning: "let me think"})
	srv.Respond(func(r llmtest.Request) (string, bool) { return "the answer", true })
	c := llmcall.NewCaller(client(t, srv), llm.ChatOptions{Model: "test-chat"}, false, encoder(t))
	var mu sync.Mutex
	var answer, thinking strings.Builder
	h := llmcall.Hooks{
		Answer:    func(p string) error { answer.WriteString(p); return nil },
		Reasoning: func(p string) error { thinking.WriteString(p); return nil },
	}.Serialized(&mu)
	got, rec, err := c.Answer(context.Background(), "system", "question", h)
	if err != nil {
		t.Fatal(err)
	}
	if got != "the answer" || answer.String() != got {
		t.Errorf("answer %q, streamed %q; want %q", got, answer.String(), "the answer")
	}
	if !strings.Contains(thinking.String(), "let me think") || strings.Contains(got, "think") {
		t.Errorf("thinking %q, answer %q: want the thinking apart from the answer", thinking.String(), got)
	}
	if rec.ReasoningChars == 0 || rec.Reply != "" {
		t.Errorf("record: %d reasoning chars, reply %q; want the thinking counted and no reply kept", rec.ReasoningChars, rec.Reply)
	}
	if r := srv.Requests(); len(r) != 1 || !r[0].Stream {
		t.Errorf("%d requests (stream %v); want one streamed", len(r), len(r) == 1 && r[0].Stream)
	}
}

// TestEach: at most limit calls run at once, and the first error stops
// the phase and is returned.
func TestEach(t *testing.T) {
	var mu sync.Mutex
	running, peak := 0, 0
	err := llmcall.Each(context.Background(), 3, 20, func(ctx context.Context, i int) error {
		mu.Lock()
		running++
		peak = max(peak, running)
		mu.Unlock()
		time.Sleep(2 * time.Millisecond)
		mu.Lock()
		running--
		mu.Unlock()
		return nil
	})
	if err != nil || peak > 3 || peak < 2 {
		t.Errorf("err %v, peak %d; want nil and at most 3 at once", err, peak)
	}
	boom := errors.New("boom")
	var ran int
	err = llmcall.Each(context.Background(), 1, 10, func(ctx context.Context, i int) error {
		ran++
		if i == 2 {
			return boom
		}
		return nil
	})
	// The call waiting for the slot when boom came may still start.
	if !errors.Is(err, boom) || ran > 4 {
		t.Errorf("err %v after %d calls; want boom, and the phase stopped after it", err, ran)
	}
}
