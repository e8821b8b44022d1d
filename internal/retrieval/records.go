package retrieval

// EntityRecord is an entity as local search sees it. ID is GraphRAG's
// human_readable_id (the "id" column of the Entities table, GraphRAG's
// short_id); EntityID is the entity's own id.
type EntityRecord struct {
	ID          string
	EntityID    string
	Title       string
	Description string
	// Rank is the entity's degree (GraphRAG's entity.rank, printed as
	// "number of relationships").
	Rank        int64
	TextUnitIDs []string
}

// RelationshipRecord is a relationship as local search sees it. ID is
// GraphRAG's human_readable_id; Source and Target are entity titles,
// SourceID and TargetID entity ids.
type RelationshipRecord struct {
	ID             string
	RelationshipID string
	Source         string
	Target         string
	SourceID       string
	TargetID       string
	Description    string
	Weight         float64
	HasWeight      bool
	// Rank is GraphRAG's combined degree of the two ends.
	Rank        int64
	TextUnitIDs []string
	// Inside is set by Builder.LocalContext when both ends are selected
	// entities; Links is, for an outside relationship, the number of
	// selected entities its outside end is linked to.
	Inside bool
	Links  int
}

// TextUnitRecord is a text unit (chunk) as local search sees it. ID is
// GraphRAG's human_readable_id.
type TextUnitRecord struct {
	ID              string
	TextUnitID      string
	Text            string
	NTokens         int64
	RelationshipIDs []string
	// EntityOrder and Relationships are set by Builder.LocalContext: the kNN
	// position of the first selected entity that brought the unit in, and
	// how many of that entity's relationships the unit supports.
	EntityOrder   int
	Relationships int
}

// ReportRecord is a community report as local search sees it. ID is the
// Leiden community number, which GraphRAG prints as the report's id
// (read_indexer_reports uses the community as short id; from 2.0 on it is
// also the report's human_readable_id).
type ReportRecord struct {
	ID          string
	CommunityID string // the community's own id (row id, or the number)
	Level       int64
	Title       string
	Summary     string
	FullContent string
	Rank        float64
	// Weight is the community's occurrence weight (graphrag.Community.Weight).
	Weight float64
	// Members are the member entity ids among the ids asked for, in the
	// order they were asked for. Builder.LocalContext ranks by len(Members).
	Members []string
	// FirstSeen is the position at which GraphRAG's local search first
	// meets the community walking the entities asked for (see
	// firstSeen), which orders reports that tie in members and rank.
	FirstSeen int
	// Deepest says the community is, for at least one of its members, the
	// deepest community up to the level asked for: what GraphRAG 1.x's
	// community roll-up keeps (Params.RollUpReports).
	Deepest bool
	// Parent is the parent community's number ("" for a root) and
	// Children the numbers of the sub-communities that have a report, up
	// to the level asked for; only ReportSource fills them.
	Parent   string
	Children []string
}
