package globalsearch

import (
	"context"
	"fmt"

	"github.com/kgrag/kgrag/prompts"
)

// Plan is what a question will cost, worked out without calling the
// model: the reports, the batches and the calls, with their prompt
// tokens (counted with the budget's encoding). With dynamic selection the
// ratings decide how many reports are read, so the figures are upper
// bounds: every report up to the level rated, and every one mapped.
type Plan struct {
	Level    int64 `json:"community_level"`
	Reports  int   `json:"reports"`
	Selected int   `json:"selected_reports"`
	Dynamic  bool  `json:"dynamic"`
	// RateCalls and RatePromptTokens are the rating calls (dynamic only).
	RateCalls        int `json:"rate_calls"`
	RatePromptTokens int `json:"rate_prompt_tokens"`
	// Batches are the map calls, each with its reports and prompt tokens.
	Batches          []PlanBatch `json:"batches"`
	MapPromptTokens  int         `json:"map_prompt_tokens"`
	ReducePromptMax  int         `json:"reduce_prompt_tokens_max"`
	Calls            int         `json:"llm_calls"`
	PromptTokens     int         `json:"prompt_tokens"`
	MaxLLMCalls      int         `json:"max_llm_calls,omitempty"`
	TruncatedReports int         `json:"truncated_reports,omitempty"`
}

// PlanBatch is one planned map call.
type PlanBatch struct {
	Reports       int `json:"reports"`
	ContextTokens int `json:"context_tokens"`
	PromptTokens  int `json:"prompt_tokens"`
}

// Plan works out what Search would send for question, without any model
// call.
func (s *Searcher) Plan(ctx context.Context, question string) (*Plan, error) {
	p := s.b.Params()
	all, err := s.src.CommunityReports(ctx, p.CommunityLevel)
	if err != nil {
		return nil, fmt.Errorf("globalsearch: read the community reports: %w", err)
	}
	enc := s.b.Encoder()
	q := enc.Count(question)
	pl := &Plan{Level: p.CommunityLevel, Reports: len(all), Dynamic: s.opts.Dynamic, MaxLLMCalls: s.opts.MaxLLMCalls}
	reports := s.b.Select(all)
	if s.opts.Dynamic {
		reports = all
		for _, r := range all {
			text := r.FullContent
			if p.UseCommunitySummary {
				text = r.Summary
			}
			system, err := prompts.Render("global_rate", prompts.GlobalRate{Question: question, Report: text})
			if err != nil {
				return nil, err
			}
			pl.RateCalls++
			pl.RatePromptTokens += enc.Count(system) + q
		}
	}
	pl.Selected = len(reports)
	for _, b := range s.b.Batches(reports) {
		system, err := prompts.Render("global_map", prompts.GlobalMap{Context: b.Text, MaxLength: s.opts.MapMaxLength})
		if err != nil {
			return nil, err
		}
		n := enc.Count(system) + q
		pl.Batches = append(pl.Batches, PlanBatch{Reports: len(b.Reports), ContextTokens: b.Tokens, PromptTokens: n})
		pl.MapPromptTokens += n
		pl.TruncatedReports += b.Truncated
	}
	system, err := prompts.Render("global_reduce", prompts.GlobalReduce{ResponseType: s.opts.ResponseType,
		MaxLength: s.opts.ReduceMaxLength, GeneralKnowledge: s.opts.GeneralKnowledge})
	if err != nil {
		return nil, err
	}
	// The points are joined into the prompt: at most the budget, plus the
	// tokens where the budget's text meets the template's.
	pl.ReducePromptMax = enc.Count(system) + p.ReduceContextTokens + q + 2
	pl.Calls = pl.RateCalls + len(pl.Batches) + 1
	pl.PromptTokens = pl.RatePromptTokens + pl.MapPromptTokens + pl.ReducePromptMax
	return pl, nil
}
