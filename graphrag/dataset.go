package graphrag

import (
	"maps"
	"slices"
)

// Logical table names, the same for every release. The file holding a table
// is "<name>.parquet" from 2.0 on and "create_final_<name>.parquet" before.
const (
	TableDocuments        = "documents"
	TableTextUnits        = "text_units"
	TableEntities         = "entities"
	TableRelationships    = "relationships"
	TableCommunities      = "communities"
	TableCommunityReports = "community_reports"
	TableCovariates       = "covariates"
	// TableNodes is create_final_nodes, read only for releases <= 0.4, where
	// it is the only record of community membership.
	TableNodes = "nodes"
)

// tableNames lists the logical tables every release may hold, in the order
// Dataset.Tables and Dataset.Absent report them.
func tableNames() []string {
	return []string{TableDocuments, TableTextUnits, TableEntities, TableRelationships,
		TableCommunities, TableCommunityReports, TableCovariates}
}

// Table describes one parquet file that Open read.
type Table struct {
	Name string // logical name (TableEntities, ...)
	Path string // file path
	Rows int64  // rows in the file
}

// Dataset is one GraphRAG output, normalised. Slices keep the row order of
// their parquet files; Entities ends with the placeholders Open created.
// A Dataset is a plain value: safe for concurrent reads, not for writes.
type Dataset struct {
	// Dir is the directory the tables were read from (after resolving the
	// 0.2 output/<timestamp>/artifacts layout).
	Dir     string
	Release Release
	Tables  []Table
	// Absent lists the logical tables that were looked for and not found.
	Absent []string
	// Notes explain choices Open made, e.g. which timestamped run it read.
	Notes []string
	// Run is the record kgrag index left beside the tables (RunFile); nil
	// for an output of Microsoft GraphRAG.
	Run *Run

	Documents     []Document
	TextUnits     []TextUnit
	Entities      []Entity
	Relationships []Relationship
	Communities   []Community
	Covariates    []Covariate

	// Placeholders counts the distinct entities created for relationship
	// ends and claim subjects or objects missing from the entities table;
	// PlaceholderRelationships and PlaceholderCovariates count the
	// relationships and claims that name at least one of them.
	Placeholders             int
	PlaceholderRelationships int
	PlaceholderCovariates    int
	// DanglingMembers counts the community memberships naming an entity id
	// that the entities table lacks, which were left out.
	DanglingMembers int
	// Duplicates, per table read, counts the rows left out for repeating
	// an earlier row's id; set by the walk (Open has it complete).
	Duplicates map[string]Duplicates
	// LeftOut lists the malformed rows left out of each table, the rows
	// that depended on them and the references to them dropped, by table,
	// column and cause: complete for rows once NewWalker has returned,
	// for references once the walk has (Open has it complete).
	LeftOut []LeftOut
}

// Summary is what `kgrag inspect` prints about a Dataset.
type Summary struct {
	Dir                      string
	Release                  Release
	Tables                   []Table
	Absent                   []string
	Notes                    []string
	Placeholders             int
	PlaceholderRelationships int
	PlaceholderCovariates    int
	DanglingMembers          int
	Duplicates               map[string]Duplicates
	LeftOut                  []LeftOut
	// Rows counts the model records per logical table after fix-ups
	// (entities include placeholders; communities include report-only ones).
	Rows map[string]int
}

// Summary returns the release, tables, absent tables and fix-up counts.
func (d *Dataset) Summary() Summary {
	reports := 0
	for _, c := range d.Communities {
		if c.Report != nil {
			reports++
		}
	}
	return Summary{
		Dir:                      d.Dir,
		Release:                  d.Release,
		Tables:                   append([]Table(nil), d.Tables...),
		Absent:                   append([]string(nil), d.Absent...),
		Notes:                    append([]string(nil), d.Notes...),
		Placeholders:             d.Placeholders,
		PlaceholderRelationships: d.PlaceholderRelationships,
		PlaceholderCovariates:    d.PlaceholderCovariates,
		DanglingMembers:          d.DanglingMembers,
		Duplicates:               maps.Clone(d.Duplicates),
		LeftOut:                  slices.Clone(d.LeftOut),
		Rows: map[string]int{
			TableDocuments:        len(d.Documents),
			TableTextUnits:        len(d.TextUnits),
			TableEntities:         len(d.Entities),
			TableRelationships:    len(d.Relationships),
			TableCommunities:      len(d.Communities),
			TableCommunityReports: reports,
			TableCovariates:       len(d.Covariates),
		},
	}
}
