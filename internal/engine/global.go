package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/kgrag/kgrag/internal/answer"
	"github.com/kgrag/kgrag/internal/globalsearch"
	"github.com/kgrag/kgrag/internal/mode"
	"github.com/kgrag/kgrag/internal/retrieval"
)

// global is GraphRAG's global search: map-reduce over the community
// reports.
type global struct {
	m     mode.Mode
	s     *globalsearch.Searcher
	b     *retrieval.GlobalBuilder
	src   retrieval.ReportSource
	level int64
	model string
}

func openGlobal(m mode.Mode, d Deps, o Options) (Engine, error) {
	b, err := retrieval.NewGlobalBuilder(o.GlobalParams, d.Encoder)
	if err != nil {
		return nil, err
	}
	s, err := globalsearch.New(d.Source, b, d.Chat, o.Global)
	if err != nil {
		return nil, err
	}
	return &global{m: m, s: s, b: b, src: d.Source, level: o.GlobalParams.CommunityLevel, model: o.Global.Chat.Model}, nil
}

func (e *global) Mode() mode.Mode { return e.m }

func (e *global) Plan(ctx context.Context, q Question, res *answer.Result) error {
	pl, err := e.s.Plan(ctx, q.Text)
	if err != nil {
		return err
	}
	res.Plan = pl
	return nil
}

// Context is the map batches that would be sent, their text included.
func (e *global) Context(ctx context.Context, q Question, res *answer.Result) error {
	t := time.Now()
	all, err := e.src.CommunityReports(ctx, e.level)
	if err != nil {
		return fmt.Errorf("read the community reports: %w", err)
	}
	batches := e.b.Batches(e.b.Select(all))
	merge(res, map[string]float64{"retrieval": ms(time.Since(t))})
	g := &answer.Global{CommunityLevel: e.level, Reports: len(all)}
	for i, bt := range batches {
		bj := answer.Batch{Index: i, ContextTokens: bt.Tokens, Truncated: bt.Truncated, Text: bt.Text}
		for _, r := range bt.Reports {
			bj.ReportIDs = append(bj.ReportIDs, r.ID)
		}
		g.SelectedReports += len(bt.Reports)
		g.Batches = append(g.Batches, bj)
	}
	res.Global = g
	return nil
}

func (e *global) Search(ctx context.Context, q Question, h Hooks, res *answer.Result) error {
	res.ChatModel = e.model
	gh := globalsearch.Hooks{Answer: h.Answer, Reasoning: h.Reasoning}
	if h.Progress != nil {
		gh.Progress = func(p globalsearch.Progress) {
			h.Progress(Progress{Mode: e.m.Name, Phase: p.Phase, Level: p.Level, Done: p.Done, Total: p.Total})
		}
	}
	r, err := e.s.Search(ctx, q.Text, gh)
	if err != nil {
		return err
	}
	merge(res, r.Timings)
	res.Answer = &r.Answer
	res.Global = answer.GlobalResult(r, e.level)
	res.Degrade(r.Degraded...)
	if r.Reduce != nil && r.Reduce.Call.ReasoningChars > 0 {
		res.ReasoningChars = r.Reduce.Call.ReasoningChars
	}
	return nil
}
