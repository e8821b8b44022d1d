package graphrag

// Release names the GraphRAG output format era a directory was written by.
// Releases that share a file layout and column set share a value.
type Release string

// The output layouts kgrag recognises. The zero value means "not detected".
const (
	ReleaseUnknown Release = ""
	Release03      Release = "0.2-0.3" // create_final_*, entities with name and description_embedding vectors (0.2 and 0.3 write the same columns)
	Release04      Release = "0.4"     // like 0.3 without vectors in parquet (the columns may be there, empty)
	Release05      Release = "0.5-0.9" // create_final_*, entities with title, communities with entity_ids
	Release1       Release = "1.x"     // create_final_*, communities with parent
	Release2       Release = "2.x"     // short names (entities.parquet ...), communities with children
	Release3       Release = "3.x"     // like 2.x, text_units with document_id
)

// Document is a source document.
type Document struct {
	ID              string
	HumanReadableID string // "" when the release has none
	Title           string
	Text            string
	TextUnitIDs     []string
	CreationDate    string // as written by GraphRAG (ISO 8601), "" when absent
	Metadata        string // JSON text of attributes/metadata/raw_data, "" when absent
}

// TextUnit is a chunk of a document.
type TextUnit struct {
	ID              string
	HumanReadableID string
	Text            string
	NTokens         int64
	HasNTokens      bool
	DocumentIDs     []string // document_ids (< 3.0) or the one document_id (3.x)
	EntityIDs       []string // filled from entities.text_unit_ids when the table lacks it
	RelationshipIDs []string
	CovariateIDs    []string
}

// Entity is a node of the knowledge graph.
type Entity struct {
	ID              string
	HumanReadableID string
	Title           string // `name` in releases <= 0.4
	Type            string
	Description     string
	TextUnitIDs     []string
	Frequency       int64
	HasFrequency    bool
	Degree          int64
	HasDegree       bool
	// DescriptionEmbedding is only present in releases <= 0.3.
	DescriptionEmbedding []float64
	// Placeholder marks an entity that the entities table does not hold: it
	// was created for a relationship end so that no relationship is dropped.
	Placeholder bool
	// Communities are the Leiden numbers (Community.Community) of the
	// communities whose members include the entity, in community order.
	// GraphRAG records membership only on the communities (or in
	// create_final_nodes); Open and Walk turn it round so that an entity can
	// be mapped without the communities table at hand.
	Communities []string
}

// Relationship is an edge between two entities. Source and Target are entity
// titles, as GraphRAG writes them; SourceID and TargetID are the entity ids
// they resolve to.
type Relationship struct {
	ID              string
	HumanReadableID string
	Source          string
	Target          string
	SourceID        string
	TargetID        string
	Description     string
	Weight          float64
	HasWeight       bool
	// Rank is GraphRAG's combined degree (`rank` before 1.0, `combined_degree` after).
	Rank        int64
	HasRank     bool
	TextUnitIDs []string
}

// Community is one Leiden community at one level, merged with its report.
// A report without a community row still yields a Community (ID and
// Community are then the report's community number).
type Community struct {
	// ID is GraphRAG's row id where it has one, else the Leiden community number.
	ID              string
	HumanReadableID string
	// Community is the Leiden community number (as text: <=0.4 write strings).
	Community string
	Level     int64
	// Parent is the parent's Leiden community number, "" for a root.
	Parent string
	// Children are the children's Leiden community numbers: GraphRAG's
	// children (>= 2.0), else derived from parent (1.x) or from
	// create_final_nodes levels (<= 0.4).
	Children        []string
	Title           string
	EntityIDs       []string
	RelationshipIDs []string
	TextUnitIDs     []string
	Period          string
	Size            int64
	HasSize         bool
	// Weight is kgrag's occurrence weight in [0, 1], as computed by
	// Dataset.ComputeWeights (GraphRAG's local search "occurrence" weight,
	// normalised over the whole dataset).
	Weight float64

	Report *CommunityReport // nil when the community has no report
}

// CommunityReport is the LLM-written report of a community.
type CommunityReport struct {
	ID              string
	HumanReadableID string
	Community       string
	Level           int64
	Title           string
	Summary         string
	FullContent     string
	FullContentJSON string
	Rank            float64
	HasRank         bool
	RankExplanation string // rank_explanation or rating_explanation
	Findings        []Finding
	Period          string
	Size            int64
	HasSize         bool
}

// Finding is one insight of a community report.
type Finding struct {
	Summary     string
	Explanation string
}

// Covariate is an extracted claim.
type Covariate struct {
	ID              string
	HumanReadableID string
	CovariateType   string
	Type            string
	Description     string
	SubjectID       string // entity title, as GraphRAG writes it
	ObjectID        string // entity title or "NONE"
	// SubjectEntityID and ObjectEntityID are the entity ids the titles
	// resolve to (placeholders where the entities table lacks them); ""
	// where GraphRAG wrote NONE.
	SubjectEntityID string
	ObjectEntityID  string
	Status          string
	StartDate       string
	EndDate         string
	SourceText      string
	TextUnitID      string
}
