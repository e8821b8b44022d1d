package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/mode"
	"github.com/kgrag/kgrag/internal/test"
)

// askDraft is a reasoning model's thinking, worded so that it would show
// if it leaked into the answer.
const askDraft = "DRAFT: the user wants Scrooge; I will cite [Data: Entities (999)]."

// TestAskReasoningModel: a reasoning model's <think> block, or the
// reasoning_content a server sends apart, is not part of the answer on
// stdout or in --json; --show-reasoning prints it to stderr, or puts it in
// the JSON object; its size is counted either way.
func TestAskReasoningModel(t *testing.T) {
	f := newAskFixture(t)
	const reply = "Scrooge is a miser. [Data: Entities (1)]"
	for _, apart := range []bool{false, true} {
		for _, tt := range []struct {
			name      string
			json, raw bool
		}{
			{"text", false, false}, {"text --show-reasoning", false, true},
			{"json", true, false}, {"json --show-reasoning", true, true},
		} {
			name := map[bool]string{false: "inline ", true: "apart "}[apart] + tt.name
			t.Run(name, func(t *testing.T) {
				srv := llmtest.Start(t, llmtest.Config{Dim: askDim, Reasoning: askDraft, ReasoningApart: apart})
				srv.Respond(func(req llmtest.Request) (string, bool) { return reply, len(req.Messages) > 0 })
				opts := f.options("Who is Scrooge?")
				opts.llm.url = srv.URL()
				opts.json, opts.showReasoning = tt.json, tt.raw
				term, out, errb := testTerminal()
				if err := runAsk(t.Context(), opts, term); err != nil {
					t.Fatal(err)
				}
				if strings.Contains(out.String(), "DRAFT") != (tt.json && tt.raw) {
					t.Errorf("stdout = %q; want the draft in it only with --json --show-reasoning", out.String())
				}
				if strings.Contains(errb.String(), askDraft) != (!tt.json && tt.raw) {
					t.Errorf("stderr = %q; want the draft there only with --show-reasoning and no --json", errb.String())
				}
				if !tt.json {
					if out.String() != reply+"\n" {
						t.Errorf("stdout = %q; want the answer alone, %q", out.String(), reply)
					}
					return
				}
				r := decodeAsk(t, out.Bytes())
				if r.Answer == nil || *r.Answer != reply {
					t.Errorf("answer = %v; want %q", r.Answer, reply)
				}
				if r.ReasoningChars < len(askDraft) {
					t.Errorf("reasoning_chars = %d; want at least %d", r.ReasoningChars, len(askDraft))
				}
				if tt.raw != (r.Reasoning != nil) || r.Reasoning != nil && *r.Reasoning != askDraft {
					t.Errorf("reasoning = %v; want %q only with --show-reasoning", r.Reasoning, askDraft)
				}
			})
		}
	}
}

// TestAskBrokenReplies: an answer stream the server ends early, and a web
// page where the API should be, fail with exit 11 and say what happened;
// the part of a cut answer that came is printed, and marked partial in
// --json.
func TestAskBrokenReplies(t *testing.T) {
	f := newAskFixture(t)
	const reply = "Scrooge is a miser who keeps Cratchit cold."
	tests := []struct {
		name     string
		fail     llmtest.Failure
		json     bool
		stdout   string // for --json, the answer
		partial  bool
		errWants []string
	}{
		{"cut", llmtest.Failure{Path: "/chat/completions", EndAfterChunks: 3}, false, "Scrooge is a\n", false,
			[]string{"no finish_reason", "the answer printed is incomplete"}},
		{"cut --json", llmtest.Failure{Path: "/chat/completions", EndAfterChunks: 3}, true, "Scrooge is a", true,
			[]string{"no finish_reason"}},
		{"dropped", llmtest.Failure{Path: "/chat/completions", DropAfterChunks: 3}, false, "Scrooge is a\n", false,
			[]string{"chat stream"}},
		{"web page", llmtest.Failure{Path: "/chat/completions", Page: "<html><title>Open WebUI</title></html>"}, false, "", false,
			[]string{"web page", "Open WebUI", "--llm-url"}},
		{"web page --json", llmtest.Failure{Path: "/chat/completions", Page: "<html><title>Open WebUI</title></html>"}, true, "", false,
			[]string{"web page"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.srv.Reset()
			f.srv.Respond(func(req llmtest.Request) (string, bool) { return reply, len(req.Messages) > 0 })
			f.srv.Fail(tt.fail)
			opts := f.options("Who is Scrooge?")
			opts.json = tt.json
			term, out, _ := testTerminal()
			err := runAsk(t.Context(), opts, term)
			if code := exitCode(t.Context(), err); code != exitModelDown {
				t.Errorf("exit %d (%v); want %d", code, err, exitModelDown)
			}
			for _, w := range tt.errWants {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("error %v; want it to say %q", err, w)
				}
			}
			if !tt.json {
				if out.String() != tt.stdout {
					t.Errorf("stdout = %q; want %q", out.String(), tt.stdout)
				}
				return
			}
			if !tt.partial {
				if out.Len() != 0 {
					t.Errorf("stdout = %q; want nothing", out.String())
				}
				return
			}
			r := decodeAsk(t, out.Bytes())
			if r.Answer == nil || *r.Answer != tt.stdout || !r.AnswerPartial {
				t.Errorf("answer %v, partial %v; want %q marked partial", r.Answer, r.AnswerPartial, tt.stdout)
			}
		})
	}
}

// TestShowReasoningEveryMode: in every mode that calls a model, a
// reasoning model's thinking in the call that writes the answer is kept
// out of the answer, and --show-reasoning shows it: in the --json record,
// or on stderr. The model reasons in every call (the map, primer and
// follow-up calls too); only the answer call's thinking is shown.
func TestShowReasoningEveryMode(t *testing.T) {
	in := filepath.Join(test.GraphRAGSamples(t), "v3")
	index := t.TempDir()
	plain := llmtest.Start(t, llmtest.Config{Dim: askDim})
	if _, stderr, code := runKgrag(t, "embed", "-q", "--input", in, "--index", index, "--tables", "all", "--llm-url", plain.URL(), "--embed-model", askEmbedModel); code != 0 {
		t.Fatalf("kgrag embed: exit %d: %s", code, stderr)
	}
	for _, m := range mode.All() {
		for _, asJSON := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s json=%v", m.Name, asJSON), func(t *testing.T) {
				srv := llmtest.Start(t, llmtest.Config{Dim: askDim, Reasoning: askDraft})
				switch m.Name {
				case mode.Global:
					globalScript(srv)
				case mode.Drift:
					driftScript(srv, nil)
				case mode.GraphOfThoughts:
					srv.Respond(func(r llmtest.Request) (string, bool) {
						if strings.Contains(r.Messages[0].Content, `"nodes"`) {
							return `{"nodes": [{"name": "SCROOGE", "type": "person", "description": "a miser"}], "edges": []}`, true
						}
						return "", false
					})
				}
				args := []string{"ask", "-q", "--mode", m.Name, "--input", in, "--index", index, "--llm-url", srv.URL(),
					"--embed-model", askEmbedModel, "--chat-model", "test-chat", "--llm-retries", "0", "--show-reasoning"}
				if m.Name == mode.Global {
					args = append(args, "--community-level", "1", "--max-context-tokens", "4000")
				}
				if asJSON {
					args = append(args, "--json")
				}
				stdout, stderr, code := runKgrag(t, append(args, "Who is Scrooge's clerk?")...)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				if !asJSON {
					if strings.Contains(stdout, "DRAFT") {
						t.Errorf("the thinking is in the answer: %q", stdout)
					}
					if !strings.Contains(stderr, askDraft) {
						t.Errorf("stderr lacks the thinking:\n%s", stderr)
					}
					return
				}
				r := decodeAsk(t, []byte(stdout))
				if r.Answer == nil || strings.Contains(*r.Answer, "DRAFT") {
					t.Errorf("answer = %v; want one without the thinking", r.Answer)
				}
				if r.Reasoning == nil || *r.Reasoning != askDraft {
					t.Errorf("reasoning = %v; want %q", deref(r.Reasoning), askDraft)
				}
			})
		}
	}
}
