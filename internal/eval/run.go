package eval

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/kgrag/kgrag/internal/answer"
	"github.com/kgrag/kgrag/internal/engine"
)

// Result is one question asked of one mode.
type Result struct {
	ID     string `json:"id"`
	Kind   string `json:"kind,omitempty"`
	Recall Recall `json:"context_recall"`
	// RecallAt2 and RecallAt5 are the shares of the gold passages among
	// the first 2 and 5 text units the mode ranked (see RecallAt); nil
	// for a mode that ranks none or a question without such gold.
	RecallAt2 *float64 `json:"recall_at_2,omitempty"`
	RecallAt5 *float64 `json:"recall_at_5,omitempty"`
	// Tokens is the size of the context the model was given (global
	// search: its map batches together).
	Tokens int `json:"context_tokens"`
	// LLMCalls counts the chat model calls made (0 for a context alone).
	LLMCalls int `json:"llm_calls"`
	// Millis is kgrag's own time for the question.
	Millis float64 `json:"ms"`
	Answer string  `json:"answer,omitempty"`
	// Context is the context's text, kept with Options.KeepContext (for
	// the HTML report).
	Context string `json:"-"`
	// Overlap is the string check of the answer against the reference
	// answer (see Overlap); nil without one.
	Overlap *float64 `json:"answer_overlap,omitempty"`
	// Verdict is the judge's grade; JudgeErr why there is none.
	Verdict  *Verdict `json:"judge,omitempty"`
	JudgeErr string   `json:"judge_error,omitempty"`
	// Err is why the question could not be asked; it counts as nothing
	// found.
	Err string `json:"error,omitempty"`
}

// ModeReport is one mode over the question set.
type ModeReport struct {
	Mode    string   `json:"mode"`
	Results []Result `json:"questions"`
	Summary Summary  `json:"summary"`
}

// Summary sums a mode's results.
type Summary struct {
	Questions int `json:"questions"`
	Failed    int `json:"failed"`
	// Recall is the mean of the questions' context recall, over the
	// questions with evidence (a failed question counts 0).
	Recall float64 `json:"context_recall"`
	// QuoteRecall, EntityRecall, TextUnitRecall and DocumentRecall are
	// the means over the questions with evidence of that kind; RecallAt2
	// and RecallAt5 the means of the questions' recall@k. Each is nil
	// where no question has it.
	QuoteRecall    *float64 `json:"quote_recall,omitempty"`
	EntityRecall   *float64 `json:"entity_recall,omitempty"`
	TextUnitRecall *float64 `json:"text_unit_recall,omitempty"`
	DocumentRecall *float64 `json:"document_recall,omitempty"`
	RecallAt2      *float64 `json:"recall_at_2,omitempty"`
	RecallAt5      *float64 `json:"recall_at_5,omitempty"`
	MeanTokens     float64  `json:"mean_context_tokens"`
	LLMCalls       int      `json:"llm_calls"`
	// Judged counts the answers the judge graded; Score is their mean
	// (0-5), Overlap the mean string check where a reference was given.
	Judged       int      `json:"judged,omitempty"`
	Score        *float64 `json:"judge_score,omitempty"`
	Overlap      *float64 `json:"answer_overlap,omitempty"`
	P50Millis    float64  `json:"p50_ms"`
	PerSecond    float64  `json:"questions_per_second"`
	TotalSeconds float64  `json:"seconds"`
}

// Options say how questions are asked.
type Options struct {
	// Answer asks the chat model too (Search); else only the context is
	// built (Context), for the modes that can (not DRIFT).
	Answer bool
	// Judge, with Answer, grades each answer.
	Judge *Judge
	// KeepContext keeps each context's text in its Result.
	KeepContext bool
	// Progress, when set, is called after each question.
	Progress func(mode string, done, total int)
	// Documents resolve document evidence to text units.
	Documents Documents
}

// Run asks every question of qs of e. A question that fails is recorded
// with its error and the run goes on; when ctx ends, Run returns what was
// done, with ctx's error.
func Run(ctx context.Context, e engine.Engine, qs []Question, o Options) (ModeReport, error) {
	name := e.Mode().Name
	rep := ModeReport{Mode: name, Results: []Result{}}
	start := time.Now()
	var err error
	for i, q := range qs {
		if err = ctx.Err(); err != nil {
			break
		}
		rep.Results = append(rep.Results, ask(ctx, e, q, o))
		if o.Progress != nil {
			o.Progress(name, i+1, len(qs))
		}
	}
	rep.Summary = summarize(rep.Results, time.Since(start))
	return rep, err
}

func ask(ctx context.Context, e engine.Engine, q Question, o Options) Result {
	r := Result{ID: q.ID, Kind: q.Kind, Recall: Recall{Total: q.Evidence.Items()}}
	res := &answer.Result{Question: q.Question, Mode: e.Mode().Name, Timings: map[string]float64{}}
	eq := engine.Question{Text: q.Question}
	t := time.Now()
	var err error
	if o.Answer {
		err = e.Search(ctx, eq, engine.Hooks{}, res)
	} else {
		err = e.Context(ctx, eq, res)
	}
	r.Millis = float64(time.Since(t).Microseconds()) / 1000
	if err != nil {
		r.Err = err.Error()
		if errors.Is(err, engine.ErrNoContext) {
			r.Err = "no context without the chat model: run with a chat model to score this mode"
		}
		return r
	}
	r.Recall = ContextRecall(q.Evidence, res, o.Documents)
	if v, ok := RecallAt(q.Evidence, res, o.Documents, 2); ok {
		r.RecallAt2 = &v
	}
	if v, ok := RecallAt(q.Evidence, res, o.Documents, 5); ok {
		r.RecallAt5 = &v
	}
	if o.KeepContext {
		r.Context, _ = contextOf(res)
	}
	r.Tokens, r.LLMCalls = contextTokens(res), calls(res)
	if res.Answer == nil {
		return r
	}
	r.Answer = *res.Answer
	if q.Answer != "" {
		ov := Overlap(q.Answer, r.Answer)
		r.Overlap = &ov
	}
	if o.Judge != nil {
		v, _, err := o.Judge.Grade(ctx, q, r.Answer)
		if err != nil {
			r.JudgeErr = err.Error()
		} else {
			r.Verdict = &v
		}
	}
	return r
}

func contextTokens(res *answer.Result) int {
	if res.Context != nil {
		return res.Context.Tokens
	}
	n := 0
	if g := res.Global; g != nil {
		for _, b := range g.Batches {
			n += b.ContextTokens
		}
	}
	return n
}

func calls(res *answer.Result) int {
	switch {
	case res.Global != nil && res.Answer != nil:
		return res.Global.LLMCalls
	case res.Drift != nil:
		return res.Drift.LLMCalls
	case res.GraphOfThoughts != nil:
		return 2
	case res.Answer != nil:
		return 1
	}
	return 0
}

func summarize(rs []Result, took time.Duration) Summary {
	s := Summary{Questions: len(rs), TotalSeconds: took.Seconds()}
	var recall float64
	scored, tokens := 0, 0
	ms := make([]float64, 0, len(rs))
	for _, r := range rs {
		if r.Err != "" {
			s.Failed++
		}
		if r.Recall.Total > 0 {
			scored++
			recall += r.Recall.Share()
		}
		tokens += r.Tokens
		s.LLMCalls += r.LLMCalls
		ms = append(ms, r.Millis)
	}
	if scored > 0 {
		s.Recall = recall / float64(scored)
	}
	s.QuoteRecall = mean(rs, func(r Result) (float64, bool) { return partShare(r.Recall.Quotes) })
	s.EntityRecall = mean(rs, func(r Result) (float64, bool) { return partShare(r.Recall.Entities) })
	s.TextUnitRecall = mean(rs, func(r Result) (float64, bool) { return partShare(r.Recall.TextUnits) })
	s.DocumentRecall = mean(rs, func(r Result) (float64, bool) { return partShare(r.Recall.Documents) })
	s.RecallAt2 = mean(rs, func(r Result) (float64, bool) { return deref(r.RecallAt2) })
	s.RecallAt5 = mean(rs, func(r Result) (float64, bool) { return deref(r.RecallAt5) })
	var score, overlap float64
	overlaps := 0
	for _, r := range rs {
		if r.Verdict != nil {
			s.Judged++
			score += float64(r.Verdict.Score)
		}
		if r.Overlap != nil {
			overlaps++
			overlap += *r.Overlap
		}
	}
	if s.Judged > 0 {
		m := score / float64(s.Judged)
		s.Score = &m
	}
	if overlaps > 0 {
		m := overlap / float64(overlaps)
		s.Overlap = &m
	}
	if len(rs) > 0 {
		s.MeanTokens = float64(tokens) / float64(len(rs))
		slices.Sort(ms)
		s.P50Millis = ms[(len(ms)-1)/2]
	}
	if took > 0 {
		s.PerSecond = float64(len(rs)) / took.Seconds()
	}
	return s
}

// mean is the mean of f over the results it has a value for; nil when
// none has.
func mean(rs []Result, f func(Result) (float64, bool)) *float64 {
	sum, n := 0.0, 0
	for _, r := range rs {
		if v, ok := f(r); ok {
			sum += v
			n++
		}
	}
	if n == 0 {
		return nil
	}
	m := sum / float64(n)
	return &m
}

func partShare(p *Part) (float64, bool) {
	if p == nil {
		return 0, false
	}
	return p.Share(), true
}

func deref(v *float64) (float64, bool) {
	if v == nil {
		return 0, false
	}
	return *v, true
}
