package main

import (
	"fmt"
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
