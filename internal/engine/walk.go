package engine

import (
	"context"
	"fmt"

	"github.com/kgrag/kgrag/internal/answer"
	"github.com/kgrag/kgrag/internal/llmcall"
	"github.com/kgrag/kgrag/internal/mode"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/internal/walksearch"
)

// walk is the walk mode: personalized PageRank over the graph from the
// question's entities and text units.
type walk struct {
	m    mode.Mode
	s    *walksearch.Searcher
	chat llmcall.Streamer
	opts walksearch.Options
	// embedModel embeds the question.
	embedModel string
}

func openWalk(m mode.Mode, d Deps, o Options) (Engine, error) {
	wo := o.Walk
	wo.Encoder, wo.Rerank = d.Encoder, d.Rerank
	if wo.Source == "" {
		wo.Source = d.Name
	}
	loader, ok := d.Source.(retrieval.WalkLoader)
	if !ok {
		return nil, fmt.Errorf("engine: --mode walk cannot read the whole graph from %s", d.Name)
	}
	s, err := walksearch.New(loader, d.Entities, d.TextUnits, d.Embedder, d.Chat, wo)
	if err != nil {
		return nil, err
	}
	return &walk{m: m, s: s, chat: d.Chat, opts: wo, embedModel: d.Embedder.Model()}, nil
}

func (e *walk) Mode() mode.Mode { return e.m }

func (e *walk) Plan(context.Context, Question, *answer.Result) error { return ErrNoPlan }

func (e *walk) context(ctx context.Context, q Question, res *answer.Result) (*walksearch.Result, error) {
	res.EmbedModel = e.embedModel
	r, err := e.s.Context(ctx, q.Text)
	if err != nil {
		return nil, err
	}
	res.AddWalk(r)
	return r, nil
}

func (e *walk) Context(ctx context.Context, q Question, res *answer.Result) error {
	_, err := e.context(ctx, q, res)
	return err
}

func (e *walk) Search(ctx context.Context, q Question, h Hooks, res *answer.Result) error {
	r, err := e.context(ctx, q, res)
	if err != nil {
		return err
	}
	if h.Retrieved != nil {
		if err := h.Retrieved(res); err != nil {
			return err
		}
	}
	system, err := e.s.System(r)
	if err != nil {
		return err
	}
	return answerOnce(ctx, e.chat, e.opts.Chat, system, q, h, res)
}
