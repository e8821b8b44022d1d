package driftsearch

import (
	"fmt"

	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/prompts"
)

// Options are DRIFT's knobs. DefaultOptions returns GraphRAG 3.x's
// defaults (graphrag/config/defaults.py DriftSearchDefaults) except
// Concurrency.
type Options struct {
	// KFollowUps is how many reports the primer reads and how many open
	// follow-up questions each round answers (drift_k_followups).
	KFollowUps int
	// PrimerFolds is how many primer calls share those reports
	// (primer_folds).
	PrimerFolds int
	// Depth is how many rounds of follow-ups are answered (n_depth).
	Depth int
	// CommunityLevel is the deepest level whose reports are read.
	CommunityLevel int64
	// Local are the follow-ups' local search parameters: DRIFT's own
	// shares of the budget (text units 0.9, reports 0.1) with local
	// search's other defaults.
	Local retrieval.Params
	// Concurrency bounds the model calls in flight (GraphRAG: 32).
	Concurrency int
	// MaxLLMCalls caps the calls of one question (0: no cap): the
	// expansion, the primer and the answer must fit, and the follow-ups
	// stop when the cap is reached.
	MaxLLMCalls int
	// ResponseType is the shape of the final answer, in words; the
	// follow-ups are answered in "multiple paragraphs", as GraphRAG does.
	ResponseType string
	// Chat is passed to every call: model, temperature, max tokens.
	Chat llm.ChatOptions
	// JSONMode asks the server for JSON on primer and follow-up calls
	// (dropped by itself when the server refuses it).
	JSONMode bool
	// Source names the graph in errors.
	Source string
}

// DefaultOptions returns GraphRAG's DRIFT defaults; Concurrency is 4, not
// GraphRAG's 32, for a local server that runs a few requests at once.
func DefaultOptions() Options {
	local := retrieval.DefaultParams()
	local.TextUnitProp, local.CommunityProp = 0.9, 0.1
	return Options{
		KFollowUps:     20,
		PrimerFolds:    5,
		Depth:          3,
		CommunityLevel: 2,
		Local:          local,
		Concurrency:    4,
		ResponseType:   prompts.DefaultResponseType,
		JSONMode:       true,
	}
}

// Validate reports the first option that cannot work.
func (o Options) Validate() error {
	switch {
	case o.KFollowUps <= 0:
		return fmt.Errorf("driftsearch: k follow-ups %d: must be > 0", o.KFollowUps)
	case o.PrimerFolds <= 0:
		return fmt.Errorf("driftsearch: primer folds %d: must be > 0", o.PrimerFolds)
	case o.Depth < 0:
		return fmt.Errorf("driftsearch: depth %d: must be >= 0", o.Depth)
	case o.Concurrency <= 0:
		return fmt.Errorf("driftsearch: concurrency %d: must be > 0", o.Concurrency)
	case o.MaxLLMCalls < 0:
		return fmt.Errorf("driftsearch: max LLM calls %d: must be >= 0", o.MaxLLMCalls)
	case o.ResponseType == "":
		return fmt.Errorf("driftsearch: response type is empty")
	}
	return o.Local.Validate()
}

// followUpResponseType is the shape GraphRAG asks the follow-ups'
// answers in, whatever the final answer's.
const followUpResponseType = "multiple paragraphs"
