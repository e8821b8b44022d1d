package walksearch

import (
	"fmt"

	"github.com/kgrag/kgrag/internal/tokens"
)

// Params are the walk's knobs. DefaultParams gives the values measured on
// HotpotQA's dev questions (docs/eval.md): HippoRAG's damping of 0.5 and
// its node specificity, and passages seeded beside the entities as
// HippoRAG 2 seeds them.
type Params struct {
	// MaxContextTokens is the budget of the context: the entities that
	// carried the walk, then the text units it ranks highest.
	MaxContextTokens int
	// TextUnits is how many text units the context holds at most.
	TextUnits int
	// SeedEntities is how many entities the vector index and the lexical
	// index each give as seeds, beside those the question names.
	SeedEntities int
	// SeedTextUnits is how many text units the vector index and the
	// lexical index each give as seeds.
	SeedTextUnits int
	// SeedSharpness is the power each seed's score, scaled to the best
	// seed's of its index, is raised to: 1 keeps the scores as they are,
	// which for cosine similarities (0.62 against 0.55) makes every seed
	// nearly as heavy as the best; 10 makes the walk start mostly from
	// the best few, as a softmax would.
	SeedSharpness float64
	// UnitSeedShare is the share of the walk's restarts that go to the
	// seeded text units; the rest go to the seeded entities.
	UnitSeedShare float64
	// Damping is the probability that the walk takes one more step
	// rather than start again from a seed.
	Damping float64
	// RelationshipShare is the part of an entity's step that follows its
	// relationships rather than the text units it comes from.
	RelationshipShare float64
	// EntityShare is the most of the budget the entities' table takes.
	EntityShare float64
	// Encoding names the tiktoken encoding that counts tokens.
	Encoding string
}

// DefaultParams returns the walk's defaults.
func DefaultParams() Params {
	return Params{
		MaxContextTokens:  12000,
		TextUnits:         20,
		SeedEntities:      10,
		SeedTextUnits:     10,
		SeedSharpness:     10,
		UnitSeedShare:     0.5,
		Damping:           0.5,
		RelationshipShare: 0.2,
		EntityShare:       0.1,
		Encoding:          tokens.EncodingCL100K,
	}
}

// Validate reports the first parameter that cannot work.
func (p Params) Validate() error {
	bad := func(name string, v any, want string) error {
		return fmt.Errorf("walksearch: %s %v: %s", name, v, want)
	}
	switch {
	case p.MaxContextTokens <= 0:
		return bad("max context tokens", p.MaxContextTokens, "must be > 0")
	case p.TextUnits <= 0:
		return bad("text units", p.TextUnits, "must be > 0")
	case p.SeedEntities < 0:
		return bad("seed entities", p.SeedEntities, "must be >= 0")
	case p.SeedTextUnits < 0:
		return bad("seed text units", p.SeedTextUnits, "must be >= 0")
	case p.SeedSharpness <= 0:
		return bad("seed sharpness", p.SeedSharpness, "must be > 0")
	case p.UnitSeedShare < 0 || p.UnitSeedShare > 1:
		return bad("text unit seed share", p.UnitSeedShare, "must be in [0, 1]")
	case p.Damping <= 0 || p.Damping >= 1:
		return bad("damping", p.Damping, "must be in (0, 1)")
	case p.RelationshipShare < 0 || p.RelationshipShare > 1:
		return bad("relationship share", p.RelationshipShare, "must be in [0, 1]")
	case p.EntityShare < 0 || p.EntityShare >= 1:
		return bad("entity share", p.EntityShare, "must be in [0, 1)")
	}
	return nil
}
