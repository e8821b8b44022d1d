package eval

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/kgrag/kgrag/internal/jsonrepair"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llmcall"
	"github.com/kgrag/kgrag/internal/tokens"
	"github.com/kgrag/kgrag/prompts"
)

// Verdict is the judge's grade of an answer.
type Verdict struct {
	// Score is 0 (wrong) to 5 (says all the reference says).
	Score  int    `json:"score"`
	Reason string `json:"reason,omitempty"`
	// AnswerCut, when not 0, is how many tokens of the answer the judge
	// read: the rest did not fit its window.
	AnswerCut int `json:"answer_cut_to,omitempty"`
}

// noAnswer is the reference of a question the text does not answer.
const noAnswer = "The text does not answer this question; a good answer says so."

// Judge grades answers against the reference answers of a question set
// with a chat model (prompts' eval_judge).
type Judge struct {
	chat   llmcall.Streamer
	opts   llm.ChatOptions
	json   bool
	enc    *tokens.Encoder
	budget llm.Budget
}

// judgeSchema is the reply's shape, for servers that constrain decoding.
const judgeSchema = `{"type":"object","properties":{"reason":{"type":"string"},` +
	`"score":{"type":"integer","minimum":0,"maximum":5}},"required":["reason","score"]}`

// minJudged is the fewest tokens of an answer worth grading.
const minJudged = 64

// NewJudge returns a judge asking chat with opts (its Model the judge
// model); with jsonMode it asks for JSON. Each prompt is fitted to the
// judge model's window b (unknown: as it is): an answer too long for it
// is graded by its head, and the Verdict says so.
func NewJudge(chat llmcall.Streamer, opts llm.ChatOptions, jsonMode bool, enc *tokens.Encoder, b llm.Budget) *Judge {
	return &Judge{chat: chat, opts: opts, json: jsonMode, enc: enc, budget: b}
}

// Grade asks the judge for q's answer. A reply without a score 0-5 is an
// error that quotes it: the caller records it for the question and goes
// on.
func (j *Judge) Grade(ctx context.Context, q Question, answer string) (Verdict, llmcall.Call, error) {
	ref := q.Answer
	if q.Kind == KindAbsent || ref == "" {
		ref = noAnswer
	}
	data := prompts.EvalJudge{Question: q.Question, Reference: ref, Answer: answer}
	prompt, err := prompts.Render("eval_judge", data)
	if err != nil {
		return Verdict{}, llmcall.Call{}, err
	}
	n, cutTo := j.enc.Count(prompt), 0
	if room := j.budget.Room(); room >= 0 && n > room {
		keep := j.enc.Count(answer) - (n - room)
		if keep < minJudged {
			return Verdict{}, llmcall.Call{}, fmt.Errorf("judge: the judge model's window, %s, cannot hold the prompt with the question and its reference (%d tokens) and %d of the answer: "+
				"serve it with a longer context or set --chat-context-tokens", j.budget.Window, n-j.enc.Count(answer), minJudged)
		}
		data.Answer, _ = j.enc.Head(answer, keep)
		if prompt, err = prompts.Render("eval_judge", data); err != nil {
			return Verdict{}, llmcall.Call{}, err
		}
		n, cutTo = j.enc.Count(prompt), keep
	}
	// The window the call needs is named only when it is known (Ollama
	// is then asked for it); the answer's reserve goes either way.
	opts := j.budget.Chat(j.opts, 0)
	if j.budget.Window.Known() {
		opts = j.budget.Chat(j.opts, n)
	}
	c := llmcall.NewCaller(j.chat, opts, j.json, j.enc)
	reply, call, err := c.Call(ctx, "", prompt, []byte(judgeSchema))
	if err != nil {
		return Verdict{}, call, fmt.Errorf("judge: %w", err)
	}
	var v struct {
		Score  any    `json:"score"`
		Reason string `json:"reason"`
	}
	if _, err := jsonrepair.Unmarshal(reply, &v); err == nil {
		if n, ok := score(v.Score); ok {
			return Verdict{Score: n, Reason: strings.TrimSpace(v.Reason), AnswerCut: cutTo}, call, nil
		}
	}
	return Verdict{}, call, fmt.Errorf("judge: the reply held no score 0-5: %.200q", reply)
}

// score reads a whole number 0-5, given as a number or a string.
func score(v any) (int, bool) {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case string:
		if _, err := fmt.Sscan(strings.TrimSpace(x), &f); err != nil {
			return 0, false
		}
	default:
		return 0, false
	}
	if f < 0 || f > 5 || f != math.Trunc(f) {
		return 0, false
	}
	return int(f), true
}

// Overlap is the string check of an answer against the reference: the
// share of the reference's words of four letters or more (case aside)
// that the answer holds. 0 without a reference.
func Overlap(reference, answer string) float64 {
	have := map[string]bool{}
	for _, w := range strings.Fields(normalize(answer)) {
		have[w] = true
	}
	n, found := 0, 0
	seen := map[string]bool{}
	for _, w := range strings.Fields(normalize(reference)) {
		if len([]rune(w)) < 4 || seen[w] {
			continue
		}
		seen[w] = true
		n++
		if have[w] {
			found++
		}
	}
	if n == 0 {
		return 0
	}
	return float64(found) / float64(n)
}
