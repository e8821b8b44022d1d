package ontology

import (
	_ "embed"
)

// NS is the namespace of the gr: vocabulary.
const NS = "http://ormynet.com/ns/msft-graphrag#"

// OntologyIRI names the ontology itself and is the default named graph kgrag
// loads it into.
const OntologyIRI = "http://ormynet.com/ns/msft-graphrag"

// Turtle is the vocabulary with its SHACL shapes, as shipped in gr.ttl.
//
//go:embed gr.ttl
var Turtle []byte

// Classes.
const (
	Document     = NS + "Document"
	Chunk        = NS + "Chunk"
	Entity       = NS + "Entity"
	Relationship = NS + "related_to" // the RDF article's class name for relationships
	Community    = NS + "Community"
	Finding      = NS + "Finding"
	Covariate    = NS + "Covariate"
)

// Properties.
const (
	ID              = NS + "id"
	HumanReadableID = NS + "human_readable_id"
	Title           = NS + "title"
	Text            = NS + "text"
	Description     = NS + "description"
	Type            = NS + "type"

	CreationDate = NS + "creation_date"
	Metadata     = NS + "metadata"

	NTokens         = NS + "n_tokens"
	PartOf          = NS + "part_of"
	HasEntity       = NS + "has_entity"
	HasRelationship = NS + "has_relationship"

	Name        = NS + "name"
	Degree      = NS + "degree"
	Frequency   = NS + "frequency"
	InCommunity = NS + "in_community"
	Unresolved  = NS + "unresolved"

	Source = NS + "source"
	Target = NS + "target"
	Weight = NS + "weight"
	Rank   = NS + "rank"

	CommunityNumber = NS + "community"
	Level           = NS + "level"
	Parent          = NS + "parent"
	Size            = NS + "size"
	Period          = NS + "period"
	Summary         = NS + "summary"
	FullContent     = NS + "full_content"
	RankExplanation = NS + "rank_explanation"
	ReportID        = NS + "report_id"
	HasFinding      = NS + "has_finding"
	Explanation     = NS + "explanation"
	Index           = NS + "index"

	CovariateType = NS + "covariate_type"
	Status        = NS + "status"
	Subject       = NS + "subject"
	Object        = NS + "object"
	StartDate     = NS + "start_date"
	EndDate       = NS + "end_date"
	SourceText    = NS + "source_text"
	TextUnit      = NS + "text_unit"
)

// RDFSLabel is rdfs:label, written beside gr:title so that workbenches such
// as GraphDB and Fuseki show names instead of IRIs.
const RDFSLabel = "http://www.w3.org/2000/01/rdf-schema#label"
