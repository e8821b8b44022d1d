package driftsearch

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/prompts"
)

// Plan is what a question can cost, worked out without any model or
// embedding call. Which reports the primer reads, and how many
// follow-ups the answers ask for, are only known as the search goes, so
// the figures are bounds: the primer's prompts as if it read the longest
// reports, every round answering KFollowUps follow-ups with a full
// context. The expansion's prompt is exact.
type Plan struct {
	Level   int64 `json:"community_level"`
	Reports int   `json:"reports"`
	// Template is the report the expansion imitates.
	Template           string `json:"template_report"`
	ExpandPromptTokens int    `json:"expand_prompt_tokens"`
	PrimerCalls        int    `json:"primer_calls"`
	// PrimerPromptTokensMax bounds the primer prompts' tokens together.
	PrimerPromptTokensMax int `json:"primer_prompt_tokens_max"`
	// FollowUpCallsMax is Depth rounds of KFollowUps, or what MaxLLMCalls
	// leaves; FollowUpPromptTokensMax bounds one follow-up's prompt.
	FollowUpCallsMax        int `json:"follow_up_calls_max"`
	FollowUpPromptTokensMax int `json:"follow_up_prompt_tokens_max"`
	// CallsMin are the calls every search makes (expansion, primer,
	// answer); CallsMax adds every follow-up.
	CallsMin    int `json:"llm_calls_min"`
	CallsMax    int `json:"llm_calls_max"`
	MaxLLMCalls int `json:"max_llm_calls,omitempty"`
	// PromptTokensMax bounds the prompts of every call but the answer's,
	// whose context is the answers of the steps.
	PromptTokensMax int `json:"prompt_tokens_max"`
}

// Plan works out the bounds of Search for question. It fails like Search
// when the reports cannot be read or the call limit is too low.
func (s *Searcher) Plan(ctx context.Context, question string) (*Plan, error) {
	reports, err := s.readReports(ctx)
	if err != nil {
		return nil, err
	}
	pl := &Plan{Level: s.opts.CommunityLevel, Reports: len(reports), MaxLLMCalls: s.opts.MaxLLMCalls}
	tmpl := template(reports)
	pl.Template = tmpl.ID
	expand, err := prompts.Render("drift_expand", prompts.DriftExpand{Question: question, Template: tmpl.FullContent})
	if err != nil {
		return nil, err
	}
	pl.ExpandPromptTokens = s.enc.Count(expand)

	longest := slices.Clone(reports)
	slices.SortStableFunc(longest, func(x, y retrieval.ReportRecord) int { return cmp.Compare(len(y.FullContent), len(x.FullContent)) })
	longest = longest[:min(len(longest), s.opts.KFollowUps)]
	fs := folds(longest, s.opts.PrimerFolds)
	pl.PrimerCalls = len(fs)
	for _, f := range fs {
		texts := make([]string, len(f))
		for i, r := range f {
			texts[i] = r.FullContent
		}
		p, err := prompts.Render("drift_primer", prompts.DriftPrimer{Question: question, Reports: strings.Join(texts, "\n\n")})
		if err != nil {
			return nil, err
		}
		pl.PrimerPromptTokensMax += s.enc.Count(p)
	}
	pl.CallsMin = pl.PrimerCalls + 2
	if limit := s.opts.MaxLLMCalls; limit > 0 && limit < pl.CallsMin {
		return nil, &LimitError{Max: limit, Need: pl.CallsMin, Folds: pl.PrimerCalls}
	}
	pl.FollowUpCallsMax = s.opts.Depth * s.opts.KFollowUps
	if limit := s.opts.MaxLLMCalls; limit > 0 {
		pl.FollowUpCallsMax = min(pl.FollowUpCallsMax, limit-pl.CallsMin)
	}
	system, err := prompts.Render("drift_local", prompts.DriftLocal{GlobalQuestion: question, FollowUps: s.opts.KFollowUps,
		ResponseType: followUpResponseType})
	if err != nil {
		return nil, err
	}
	// A follow-up question is about as long as the question; its context
	// is at most the budget, plus the tokens where it meets the template.
	pl.FollowUpPromptTokensMax = s.enc.Count(system) + s.opts.Local.MaxContextTokens + 2*s.enc.Count(question) + 2
	pl.CallsMax = pl.CallsMin + pl.FollowUpCallsMax
	pl.PromptTokensMax = pl.ExpandPromptTokens + pl.PrimerPromptTokensMax + pl.FollowUpCallsMax*pl.FollowUpPromptTokensMax
	return pl, nil
}
