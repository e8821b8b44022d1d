package extraction

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/prompts"
)

// GraphRAG 3.3.0's defaults (graphrag/config/defaults.py,
// ExtractGraphDefaults and ExtractClaimsDefaults).
const (
	// DefaultMaxGleanings is the number of gleaning rounds after the first
	// extraction, for graphs and claims alike.
	DefaultMaxGleanings = 1
	// DefaultClaimDescription is what claims to look for.
	DefaultClaimDescription = "Any claims or facts that could be relevant to information discovery."
)

// DefaultEntityTypes returns GraphRAG's default entity types, which its
// claim extraction also takes as the entity specification.
func DefaultEntityTypes() []string {
	return []string{"organization", "person", "geo", "event"}
}

// Options are the extraction settings of GraphRAG's extract_graph and
// extract_claims config sections. The zero value is not valid (it has no
// entity types); start from DefaultOptions.
type Options struct {
	// EntityTypes are the kinds of entity the prompt asks for, written
	// into it one per line as given.
	EntityTypes []string
	// MaxGleanings is the most gleaning rounds after the first extraction;
	// 0 makes one call per text unit.
	MaxGleanings int
	// Chat is passed with every call: model, temperature, max tokens.
	Chat llm.ChatOptions
	// MaxPromptTokens bounds the conversation a call sends, in the
	// Extractor's encoding: a gleaning round or loop question that would
	// pass it is not asked (the chat model's window would cut it; see
	// Stats.GleaningsSkipped). 0 is no bound, as without an encoder.
	MaxPromptTokens int
	// Claims configures claim (covariate) extraction, off by default.
	Claims ClaimOptions
	// Prompts holds the templates of the conversations; nil is kgrag's
	// own (a folder of kgrag prompt-tune replaces some of them).
	Prompts *prompts.Set
}

// ClaimOptions are GraphRAG's extract_claims settings.
type ClaimOptions struct {
	Enabled bool
	// Description says what claims to look for (GraphRAG's claim
	// description).
	Description string
	// EntitySpecs are the entity types, or entity names, whose claims are
	// wanted. GraphRAG always passes its default entity types here, not
	// the graph's.
	EntitySpecs []string
	// MaxGleanings is as Options.MaxGleanings, for the claim conversation.
	MaxGleanings int
}

// DefaultOptions returns GraphRAG 3.3.0's defaults: its four entity types,
// one gleaning round, claims off (with GraphRAG's claim settings ready
// for when they are turned on).
func DefaultOptions() Options {
	return Options{
		EntityTypes:  DefaultEntityTypes(),
		MaxGleanings: DefaultMaxGleanings,
		Claims: ClaimOptions{
			Description:  DefaultClaimDescription,
			EntitySpecs:  DefaultEntityTypes(),
			MaxGleanings: DefaultMaxGleanings,
		},
	}
}

// Validate reports settings that would make a prompt with nothing to
// extract or an unbounded conversation. Claim settings are checked only
// when claims are enabled.
func (o Options) Validate() error {
	if err := checkList("entity type", o.EntityTypes); err != nil {
		return err
	}
	if o.MaxGleanings < 0 {
		return fmt.Errorf("extraction: max gleanings %d: want 0 or more", o.MaxGleanings)
	}
	if !o.Claims.Enabled {
		return nil
	}
	if err := checkList("claim entity specification", o.Claims.EntitySpecs); err != nil {
		return err
	}
	if strings.TrimSpace(o.Claims.Description) == "" {
		return errors.New("extraction: claims enabled without a claim description")
	}
	if o.Claims.MaxGleanings < 0 {
		return fmt.Errorf("extraction: claim max gleanings %d: want 0 or more", o.Claims.MaxGleanings)
	}
	return nil
}

// checkList wants at least one item and no blank ones or ones on several
// lines, which would break the prompt's list.
func checkList(what string, items []string) error {
	if len(items) == 0 {
		return fmt.Errorf("extraction: no %s given", what)
	}
	for i, s := range items {
		if strings.TrimSpace(s) == "" || strings.ContainsAny(s, "\r\n") {
			return fmt.Errorf("extraction: %s %d %q: want one non-blank line", what, i+1, s)
		}
	}
	return nil
}
