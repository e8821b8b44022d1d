package eval_test

import (
	"strings"
	"testing"

	"github.com/kgrag/kgrag/internal/eval"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/tokens"
)

// TestJudgeFitsWindow grades a long answer under windows of several
// sizes, served by the test server imitating llama-server, which says its
// window and refuses a longer prompt: the judge's prompt fits, the
// answer's head is graded and the verdict says how much of it, and a
// window too small for the prompt is an error before any call.
func TestJudgeFitsWindow(t *testing.T) {
	enc, err := tokens.NewEncoder(tokens.EncodingCL100K)
	if err != nil {
		t.Fatal(err)
	}
	answer := strings.Repeat("Bob Cratchit is Scrooge's clerk and works in the cold counting-house. ", 150) // about 1,800 tokens
	q := eval.Question{ID: "clerk", Kind: eval.KindRelation, Question: "Who is Scrooge's clerk?", Answer: "Bob Cratchit."}
	tests := []struct {
		name    string
		window  int // the server's, in words; 0: it says none
		cut     bool
		tooMany bool
	}{
		{"unknown window: the whole answer", 0, false, false},
		{"window of 4096: the whole answer", 4096, false, false},
		{"window of 1024: the answer's head", 1024, true, false},
		{"window of 400: too small", 400, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := llmtest.Config{ChatWindow: tt.window, Models: []string{"judge"}}
			if tt.window > 0 {
				cfg.Imitate = llmtest.ImitateLlamaServer
			}
			srv := llmtest.Start(t, cfg)
			srv.Reply("You grade an answer", `{"reason": "names the clerk", "score": 5}`)
			client, err := llm.New(llm.Config{BaseURL: srv.URL(), ChatModel: "judge"})
			if err != nil {
				t.Fatal(err)
			}
			w, err := client.Window(t.Context(), llm.WindowChat, "judge")
			if err != nil {
				t.Fatal(err)
			}
			if w.Known() != (tt.window > 0) {
				t.Fatalf("window %s; want the server's %d", w, tt.window)
			}
			j := eval.NewJudge(client, llm.ChatOptions{Model: "judge"}, false, enc, llm.NewBudget(w, 0, 0))
			v, _, err := j.Grade(t.Context(), q, answer)
			var reqs []llmtest.Request
			for _, r := range srv.Requests() {
				if strings.HasSuffix(r.Path, "/chat/completions") {
					reqs = append(reqs, r)
				}
			}
			if tt.tooMany {
				if err == nil || !strings.Contains(err.Error(), "window") || len(reqs) != 0 {
					t.Fatalf("Grade: %v after %d calls; want an error naming the window, before any call", err, len(reqs))
				}
				return
			}
			if err != nil {
				t.Fatalf("Grade: %v", err)
			}
			if v.Score != 5 || len(reqs) != 1 {
				t.Fatalf("verdict %+v after %d calls; want 5 after 1", v, len(reqs))
			}
			sent := reqs[0].Messages[len(reqs[0].Messages)-1].Content
			whole := strings.Contains(sent, strings.TrimSpace(answer))
			if whole == tt.cut || (v.AnswerCut > 0) != tt.cut {
				t.Errorf("whole answer sent: %v, verdict's cut %d; want cut %v", whole, v.AnswerCut, tt.cut)
			}
			if tt.cut {
				head, _ := enc.Head(answer, v.AnswerCut)
				if !strings.Contains(sent, head) {
					t.Errorf("the prompt does not hold the answer's first %d tokens", v.AnswerCut)
				}
			}
			mt, _ := reqs[0].Extra["max_tokens"].(float64)
			if want := llm.AnswerReserve(w, 0); int(mt) != want {
				t.Errorf("max_tokens %v; want the answer's reserve %d", reqs[0].Extra["max_tokens"], want)
			}
		})
	}
}
