package retrieval

import (
	"fmt"

	"github.com/kgrag/kgrag/internal/tokens"
)

// Params are the knobs of local search. DefaultParams returns GraphRAG's
// defaults (graphrag/config/defaults.py LocalSearchDefaults and the local
// context parameters of graphrag/query/factory.py). The zero value is not
// useful; start from DefaultParams.
type Params struct {
	// TopKEntities is how many selected entities Builder.LocalContext keeps
	// (GraphRAG top_k_entities). Callers should ask the vector index for
	// TopKEntities*OversampleScaler neighbours, drop excluded ones and pass
	// the rest in kNN order, as map_query_to_entities does.
	TopKEntities     int
	OversampleScaler int
	// TopKRelationships caps outside relationships at TopKRelationships per
	// selected entity (GraphRAG top_k_relationships).
	TopKRelationships int
	// MaxContextTokens is the whole budget; CommunityProp and TextUnitProp
	// are the shares of reports and text units, the rest (1 - both) goes to
	// the entities and relationships tables.
	MaxContextTokens int
	CommunityProp    float64
	TextUnitProp     float64
	// CommunityLevel is the deepest community level whose reports are used
	// (GraphRAG's --community-level, default 2).
	CommunityLevel int64
	// MinCommunityRank drops reports ranked below it.
	MinCommunityRank float64
	// RollUpReports keeps, of the communities up to CommunityLevel, only
	// each entity's deepest one, as GraphRAG 1.x did. GraphRAG 2.x and
	// 3.x (and the default) offer every report up to the level: their
	// read_indexer_reports groups by the community's title where 1.x
	// grouped by the entity's.
	RollUpReports bool
	// UseCommunitySummary prints report summaries instead of full content
	// (GraphRAG local search prints full content).
	UseCommunitySummary  bool
	IncludeCommunityRank bool
	IncludeEntityRank    bool
	// RankDescription heads the entity rank column.
	RankDescription           string
	IncludeRelationshipWeight bool
	ColumnDelimiter           string
	// Encoding names the tiktoken encoding that counts tokens.
	Encoding string
	// HistoryTurns is how many earlier questions of a conversation are
	// used: appended to the question that is embedded, and printed in the
	// context's Conversation History table (GraphRAG
	// conversation_history_max_turns). HistoryAnswers adds the answers to
	// that table (GraphRAG conversation_history_user_turns_only=False).
	HistoryTurns   int
	HistoryAnswers bool
}

// DefaultParams returns GraphRAG's local search defaults.
func DefaultParams() Params {
	return Params{
		TopKEntities:              10,
		OversampleScaler:          2,
		TopKRelationships:         10,
		MaxContextTokens:          12000,
		CommunityProp:             0.15,
		TextUnitProp:              0.5,
		CommunityLevel:            2,
		MinCommunityRank:          0,
		UseCommunitySummary:       false,
		IncludeCommunityRank:      false,
		IncludeEntityRank:         true,
		RankDescription:           "number of relationships",
		IncludeRelationshipWeight: true,
		ColumnDelimiter:           "|",
		Encoding:                  tokens.EncodingCL100K,
		HistoryTurns:              5,
	}
}

// Validate reports the first parameter that cannot work.
func (p Params) Validate() error {
	switch {
	case p.TopKEntities <= 0:
		return fmt.Errorf("retrieval: params: top_k_entities %d: must be > 0", p.TopKEntities)
	case p.TopKRelationships < 0:
		return fmt.Errorf("retrieval: params: top_k_relationships %d: must be >= 0", p.TopKRelationships)
	case p.MaxContextTokens <= 0:
		return fmt.Errorf("retrieval: params: max_context_tokens %d: must be > 0", p.MaxContextTokens)
	case p.CommunityProp < 0 || p.TextUnitProp < 0 || p.CommunityProp+p.TextUnitProp > 1:
		return fmt.Errorf("retrieval: params: community_prop %g and text_unit_prop %g: each must be >= 0 and their sum <= 1",
			p.CommunityProp, p.TextUnitProp)
	case p.ColumnDelimiter == "":
		return fmt.Errorf("retrieval: params: column delimiter is empty")
	case p.HistoryTurns < 0:
		return fmt.Errorf("retrieval: params: history turns %d: must be >= 0", p.HistoryTurns)
	}
	return nil
}
