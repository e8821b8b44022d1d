package engine

import (
	"context"

	"github.com/kgrag/kgrag/internal/answer"
	"github.com/kgrag/kgrag/internal/localsearch"
	"github.com/kgrag/kgrag/internal/mode"
)

// local is the engine of the modes that start from the entities nearest
// the question: local search and the articles' modes.
type local struct {
	m mode.Mode
	s *localsearch.Searcher
}

func openLocal(m mode.Mode, d Deps, o Options) (Engine, error) {
	lo := o.Local
	lo.Mode, lo.Encoder = m.Name, d.Encoder
	if lo.Source == "" {
		lo.Source = d.Name
	}
	s, err := localsearch.New(d.Source, d.Entities, d.Embedder, d.Chat, lo)
	if err != nil {
		return nil, err
	}
	return &local{m: m, s: s}, nil
}

func (e *local) Mode() mode.Mode { return e.m }

func (e *local) Plan(context.Context, Question, *answer.Result) error { return ErrNoPlan }

func question(q Question) localsearch.Question {
	return localsearch.Question{Text: q.Text, History: q.History, SubQuestions: q.SubQuestions}
}

func (e *local) Context(ctx context.Context, q Question, res *answer.Result) error {
	res.EmbedModel = e.s.EmbedModel()
	r, err := e.s.Context(ctx, question(q))
	if err != nil {
		return err
	}
	res.AddSearch(r)
	return nil
}

func (e *local) Search(ctx context.Context, q Question, h Hooks, res *answer.Result) error {
	res.EmbedModel = e.s.EmbedModel()
	res.ChatModel = e.s.ChatModel()
	lh := localsearch.Hooks{Answer: h.Answer, Reasoning: h.Reasoning}
	lh.Retrieved = func(r *localsearch.Result) error {
		res.AddSearch(r)
		if h.Retrieved != nil {
			return h.Retrieved(res)
		}
		return nil
	}
	lh.Built = func(r *localsearch.Result) error {
		res.AddThoughts(r.Thoughts)
		merge(res, r.Timings)
		if h.Progress != nil {
			h.Progress(Progress{Mode: e.m.Name, Phase: PhaseThoughts, Done: 1, Total: 1})
		}
		return nil
	}
	r, err := e.s.Search(ctx, question(q), lh)
	if r == nil {
		return err
	}
	res.AddSearch(r)
	res.RecordReply(r.Reply, err)
	return err
}
