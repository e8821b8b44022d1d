package llm_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
)

func TestSplitReasoning(t *testing.T) {
	tests := []struct {
		name, in, reasoning, answer string
	}{
		{"none", "Paris.", "", "Paris."},
		{"think", "<think>The capital is Paris.</think>\n\nParis.", "The capital is Paris.", "Paris."},
		{"leading space", "\n  <think>\nhmm\n</think>Paris.", "hmm", "Paris."},
		{"thinking", "<thinking>hmm</thinking> Paris.", "hmm", "Paris."},
		{"reasoning", "<reasoning>hmm</reasoning>\nParis.", "hmm", "Paris."},
		{"opened by the template", "The user asks for a capital.\n</think>\n\nParis.", "The user asks for a capital.", "Paris."},
		{"never closed", "<think>The user asks for a capital, so", "The user asks for a capital, so", ""},
		{"not at the start", "Paris. <think>aside</think>", "", "Paris. <think>aside</think>"},
		{"tag mentioned later", "Use <think> tags like <think>this</think>.", "", "Use <think> tags like <think>this</think>."},
		{"empty block", "<think></think>\n\nParis.", "", "Paris."},
		{"json after", "<think>{\"points\": []}</think>{\"points\": [{\"description\": \"x\", \"score\": 50}]}",
			`{"points": []}`, `{"points": [{"description": "x", "score": 50}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, a := llm.SplitReasoning(tt.in)
			if r != tt.reasoning || a != tt.answer {
				t.Errorf("SplitReasoning(%q) = %q, %q; want %q, %q", tt.in, r, a, tt.reasoning, tt.answer)
			}
		})
	}
}

// TestChatReasoning: a reasoning model's draft, inline as a <think> block
// or apart in reasoning_content, never reaches the answer of Chat or
// ChatStream, in whatever pieces the stream splits the tags; OnReasoning
// gets it whole and Usage counts it. The draft holds what a parser would
// take for the answer (JSON, a record).
func TestChatReasoning(t *testing.T) {
	const draft = `Let me think. {"points": [{"description": "DRAFT POINT", "score": 100}]} ("entity"<|>DRAFT ENTITY<|>person<|>from the draft)`
	const answer = `{"points": [{"description": "real point", "score": 40}]}`
	for _, apart := range []bool{false, true} {
		for _, stream := range []bool{false, true} {
			name := map[bool]string{false: "inline", true: "apart"}[apart] + "/" + map[bool]string{false: "chat", true: "stream"}[stream]
			t.Run(name, func(t *testing.T) {
				srv := llmtest.Start(t, llmtest.Config{Reasoning: draft, ReasoningApart: apart})
				srv.Enqueue(answer)
				c := newClient(t, srv, nil)
				var got strings.Builder
				opts := llm.ChatOptions{OnReasoning: func(s string) error { got.WriteString(s); return nil }}
				msgs := []llm.Message{{Role: llm.RoleUser, Content: "q"}}
				var text string
				var usage llm.Usage
				var err error
				var pieces strings.Builder
				if stream {
					text, usage, err = c.ChatStream(t.Context(), msgs, opts, func(p string) error { pieces.WriteString(p); return nil })
				} else {
					text, usage, err = c.Chat(t.Context(), msgs, opts)
				}
				if err != nil {
					t.Fatal(err)
				}
				if text != answer {
					t.Errorf("answer = %q; want %q", text, answer)
				}
				if stream && pieces.String() != answer {
					t.Errorf("streamed pieces = %q; want %q", pieces.String(), answer)
				}
				if strings.TrimSpace(got.String()) != draft {
					t.Errorf("OnReasoning got %q; want the draft %q", got.String(), draft)
				}
				if usage.ReasoningChars < utf8.RuneCountInString(draft) {
					t.Errorf("Usage.ReasoningChars = %d; want at least %d", usage.ReasoningChars, utf8.RuneCountInString(draft))
				}
				if usage.FinishReason != "stop" {
					t.Errorf("Usage.FinishReason = %q; want stop", usage.FinishReason)
				}
			})
		}
	}
}

// TestChatStreamCut: a stream that ends cleanly before the answer did (no
// finish_reason, no [DONE]) is an ErrResponse, with the partial answer
// returned beside it; a 200 answer that is a web page is an ErrResponse
// whose hint names --llm-url, and is not retried.
func TestChatStreamCut(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{})
	srv.Enqueue("one two three four five")
	srv.Fail(llmtest.Failure{Path: "/chat/completions", EndAfterChunks: 3})
	c := newClient(t, srv, nil)
	text, _, err := c.ChatStream(t.Context(), []llm.Message{{Role: llm.RoleUser, Content: "q"}}, llm.ChatOptions{},
		func(string) error { return nil })
	if !errors.Is(err, llm.ErrResponse) || !strings.Contains(err.Error(), "no finish_reason") {
		t.Errorf("ChatStream of a cut stream: err = %v; want ErrResponse saying no finish_reason", err)
	}
	if text != "one two three" {
		t.Errorf("partial answer = %q; want %q", text, "one two three")
	}
}

func TestChatHTMLPage(t *testing.T) {
	const page = "<!DOCTYPE html><html><head><title>Sign in</title></head><body>Please sign in</body></html>"
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "chat", true: "stream"}[stream], func(t *testing.T) {
			srv := llmtest.Start(t, llmtest.Config{})
			srv.Fail(llmtest.Failure{Page: page})
			c := newClient(t, srv, nil)
			msgs := []llm.Message{{Role: llm.RoleUser, Content: "q"}}
			var err error
			if stream {
				_, _, err = c.ChatStream(t.Context(), msgs, llm.ChatOptions{}, func(string) error { return nil })
			} else {
				_, _, err = c.Chat(t.Context(), msgs, llm.ChatOptions{})
			}
			if !errors.Is(err, llm.ErrResponse) || !strings.Contains(err.Error(), "web page") ||
				!strings.Contains(err.Error(), "Sign in") || !strings.Contains(err.Error(), "--llm-url") {
				t.Errorf("err = %v; want ErrResponse naming the web page and --llm-url", err)
			}
			if n := srv.Count("/chat/completions"); n != 1 {
				t.Errorf("%d requests; want 1 (a web page is not retried)", n)
			}
		})
	}
}
