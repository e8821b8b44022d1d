package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kgrag/kgrag/internal/embedtext"
)

// The tables whose texts kgrag embed can embed (package embedtext).
const (
	tableEntities  = embedtext.Entities
	tableTextUnits = embedtext.TextUnits
	tableReports   = embedtext.Reports
)

// embedTables are the tables in the order kgrag embed embeds them.
var embedTables = embedtext.Tables()

// tableNoun names a table's rows in messages.
func tableNoun(table string) string {
	switch table {
	case tableTextUnits:
		return "text units"
	case tableReports:
		return "community reports"
	}
	return "entities"
}

// tableFile is the flat index file of a table inside the index folder.
func tableFile(table string) string { return table + ".vec" }

// tableFlag is how --tables names a table, for messages that say which
// kgrag embed to run.
func tableFlag(table string) string { return "--tables " + table }

// parseTables reads --tables: a comma-separated list of table names
// (hyphens for underscores are fine) or "all", in embedTables' order.
func parseTables(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(f)), "-", "_")
		switch {
		case f == "":
			continue
		case f == "all":
			return slices.Clone(embedTables), nil
		case f == "reports":
			f = tableReports
		case !slices.Contains(embedTables, f):
			return nil, fmt.Errorf("--tables: unknown table %q: want entities, text_units, community_reports or all", f)
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--tables is empty: name entities, text_units, community_reports or all")
	}
	slices.SortFunc(out, func(a, b string) int { return slices.Index(embedTables, a) - slices.Index(embedTables, b) })
	return out, nil
}

// tableAlias is the Elasticsearch alias of a table. The entities' alias
// is --index-name; the others are named after it, so that one
// --index-name keeps a dataset's three indexes together: kgrag-entities
// gives kgrag-text_units and kgrag-community_reports, any other name
// gets the table appended (myset: myset-text_units).
func tableAlias(entities, table string) string {
	if table == tableEntities {
		return entities
	}
	if base, ok := strings.CutSuffix(entities, "-"+tableEntities); ok {
		return base + "-" + table
	}
	return entities + "-" + table
}

// tableIndexPath is the flat index file of table beside the entities'
// file that --index names (or kgrag embed wrote by default).
func tableIndexPath(entitiesPath, table string) string {
	if table == tableEntities {
		return entitiesPath
	}
	return filepath.Join(filepath.Dir(entitiesPath), tableFile(table))
}
