package engine

import (
	"context"
	"time"

	"github.com/kgrag/kgrag/internal/answer"
	"github.com/kgrag/kgrag/internal/driftsearch"
	"github.com/kgrag/kgrag/internal/mode"
)

// drift is GraphRAG's DRIFT search: a primer over the nearest community
// reports, then local searches for the follow-up questions.
type drift struct {
	m          mode.Mode
	s          *driftsearch.Searcher
	chatModel  string
	embedModel string
}

func openDrift(m mode.Mode, d Deps, o Options) (Engine, error) {
	do := o.Drift
	if do.Source == "" {
		do.Source = d.Name
	}
	s, err := driftsearch.New(d.Source, d.Entities, d.Reports, d.Embedder, d.Chat, d.Encoder, do)
	if err != nil {
		return nil, err
	}
	return &drift{m: m, s: s, chatModel: do.Chat.Model, embedModel: d.Embedder.Model()}, nil
}

func (e *drift) Mode() mode.Mode { return e.m }

func (e *drift) Plan(ctx context.Context, q Question, res *answer.Result) error {
	res.EmbedModel = e.embedModel
	pl, err := e.s.Plan(ctx, q.Text)
	if err != nil {
		return err
	}
	res.Plan = pl
	return nil
}

func (e *drift) Context(context.Context, Question, *answer.Result) error { return ErrNoContext }

func (e *drift) Search(ctx context.Context, q Question, h Hooks, res *answer.Result) error {
	res.EmbedModel, res.ChatModel = e.embedModel, e.chatModel
	dh := driftsearch.Hooks{Answer: h.Answer, Reasoning: h.Reasoning}
	if h.Progress != nil {
		dh.Progress = func(p driftsearch.Progress) {
			h.Progress(Progress{Mode: e.m.Name, Phase: p.Phase, Round: p.Round, Done: p.Done, Total: p.Total})
		}
	}
	r, err := e.s.Search(ctx, q.Text, dh)
	if err != nil {
		return err
	}
	res.Drift = r
	res.Degrade(r.Degraded...)
	merge(res, r.Timings)
	res.Answer = &r.Answer
	if r.Reduce != nil && r.Reduce.Call.ReasoningChars > 0 {
		res.ReasoningChars = r.Reduce.Call.ReasoningChars
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
