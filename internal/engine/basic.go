package engine

import (
	"context"
	"time"

	"github.com/kgrag/kgrag/internal/answer"
	"github.com/kgrag/kgrag/internal/basicsearch"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llmcall"
	"github.com/kgrag/kgrag/internal/localsearch"
	"github.com/kgrag/kgrag/internal/mode"
)

// basic is GraphRAG's basic search: the text units nearest the question.
type basic struct {
	m    mode.Mode
	s    *basicsearch.Searcher
	chat llmcall.Streamer
	opts basicsearch.Options
	// embedModel embeds the question.
	embedModel string
}

func openBasic(m mode.Mode, d Deps, o Options) (Engine, error) {
	bo := o.Basic
	bo.Encoder = d.Encoder
	if bo.Params.ByRank() {
		// GraphRAG's retriever prints the units in table order: a rerank
		// would change nothing (kgrag ask refuses the pair).
		bo.Rerank = d.Rerank
	}
	if bo.Source == "" {
		bo.Source = d.Name
	}
	s, err := basicsearch.New(d.Source, d.TextUnits, d.Embedder, d.Chat, bo)
	if err != nil {
		return nil, err
	}
	return &basic{m: m, s: s, chat: d.Chat, opts: bo, embedModel: d.Embedder.Model()}, nil
}

func (e *basic) Mode() mode.Mode { return e.m }

func (e *basic) Plan(context.Context, Question, *answer.Result) error { return ErrNoPlan }

func (e *basic) context(ctx context.Context, q Question, res *answer.Result) (*basicsearch.Result, error) {
	res.EmbedModel = e.embedModel
	r, err := e.s.Context(ctx, q.Text)
	if err != nil {
		return nil, err
	}
	res.AddBasic(r)
	return r, nil
}

func (e *basic) Context(ctx context.Context, q Question, res *answer.Result) error {
	_, err := e.context(ctx, q, res)
	return err
}

func (e *basic) Search(ctx context.Context, q Question, h Hooks, res *answer.Result) error {
	r, err := e.context(ctx, q, res)
	if err != nil {
		return err
	}
	if h.Retrieved != nil {
		if err := h.Retrieved(res); err != nil {
			return err
		}
	}
	system, err := e.s.System(r.Context)
	if err != nil {
		return err
	}
	return answerOnce(ctx, e.chat, e.opts.Chat, system, q, h, res)
}

// answerOnce has the chat model answer q from system (the prompt with the
// context) in one call, and records the reply in res.
func answerOnce(ctx context.Context, chat llmcall.Streamer, o llm.ChatOptions, system string, q Question, h Hooks, res *answer.Result) error {
	res.ChatModel = o.Model
	t := time.Now()
	reply, err := localsearch.Answer(ctx, chat, o, system, q.Text, localsearch.Hooks{Answer: h.Answer, Reasoning: h.Reasoning})
	res.Timings["llm"] = ms(time.Since(t))
	res.RecordReply(reply, err)
	return err
}
