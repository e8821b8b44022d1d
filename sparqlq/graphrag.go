package sparqlq

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The retrieval queries over the gr: ontology (a GraphRAG graph loaded by
// kgrag). Each runs one embedded template in one round trip, whatever the
// number of ids: the ids go into a VALUES block. graph names the graph to
// read (bound as FROM); empty reads the store's default graph. Entity ids
// are gr:id values, matched exactly as strings. No ids means no rows and
// no request. Rows come in the template's order, which has tie-breakers on
// ids so that every store returns the same order.

// AllLevels, as a level, selects communities of every level.
const AllLevels = -1

// EntityRow is an entity returned by Entities. Fields the graph lacks are
// left zero.
type EntityRow struct {
	ID, HumanReadableID, Title, Type, Description string
	Degree                                        int64
}

// RelationshipRow is a relationship returned by Relationships. Rank is its
// combined degree.
type RelationshipRow struct {
	ID, HumanReadableID   string
	SourceID, SourceTitle string
	TargetID, TargetTitle string
	Description           string
	Weight                float64
	Rank                  int64
	Inside                bool // both ends selected
}

// TextUnitRow is a text unit (gr:Chunk) returned by TextUnits.
// SelectedEntities is how many of the selected entities it holds.
type TextUnitRow struct {
	ID, HumanReadableID, Text string
	NTokens                   int64
	SelectedEntities          int64
}

// CommunityRow is a community and its report, returned by Communities and
// CommunityReports. SelectedEntities is how many of the selected entities
// it holds (zero from CommunityReports). Rank is the report's rating and
// Weight the community's occurrence weight.
type CommunityRow struct {
	ID, HumanReadableID         string
	Community, Level            int64
	Title, Summary, FullContent string
	Rank, Weight                float64
	SelectedEntities            int64
}

// SelectRows runs the embedded template name with p, binding graph when
// it is not empty, and hands each result row to f in order. An error from
// f stops it and comes back naming the template and row.
func SelectRows(ctx context.Context, c *Client, name, graph string, p Params, f func(r *Row) error) error {
	t, err := LoadTemplate(name)
	if err != nil {
		return err
	}
	if graph != "" {
		p["graph"] = IRIParam(graph)
	}
	res, err := c.SelectTemplate(ctx, t, p)
	if err != nil {
		return err
	}
	for i, b := range res.Bindings {
		if err := f(&Row{Terms: b}); err != nil {
			return fmt.Errorf("sparqlq: template %s: row %d: %w", name, i, err)
		}
	}
	return nil
}

// Row reads typed values from one result row. A value that does not parse
// leaves zero and is kept as the row's Err (the first one only); an unbound
// variable reads as zero.
type Row struct {
	Terms map[string]Term
	err   error
}

// Err returns the first parse error of the row.
func (r *Row) Err() error { return r.err }

// Has reports whether v is bound.
func (r *Row) Has(v string) bool { _, ok := r.Terms[v]; return ok }

// Str returns the lexical value of v.
func (r *Row) Str(v string) string { return r.Terms[v].Value }

// Int returns v as an integer.
func (r *Row) Int(v string) int64 {
	t, ok := r.Terms[v]
	if !ok || r.err != nil {
		return 0
	}
	n, err := t.Int()
	if err != nil {
		r.err = fmt.Errorf("?%s: %w", v, err)
	}
	return n
}

// Float returns v as a number.
func (r *Row) Float(v string) float64 {
	t, ok := r.Terms[v]
	if !ok || r.err != nil {
		return 0
	}
	f, err := t.Float()
	if err != nil {
		r.err = fmt.Errorf("?%s: %w", v, err)
	}
	return f
}

// parseInt reads an integer written as an integer or as an integral
// decimal or double ("3", "3.0", "3.0E0").
func parseInt(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, fmt.Errorf("literal %q is not an integer", s)
	}
	return int64(f), nil
}

func limitParam(p Params, limit int) {
	if limit > 0 {
		p["limit"] = IntParam(int64(limit))
	}
}

func levelParam(p Params, level int) {
	if level != AllLevels {
		p["level"] = IntParam(int64(level))
	}
}

// Entities returns the entities whose gr:id is one of ids, ordered by id
// (template entities).
func Entities(ctx context.Context, c *Client, graph string, ids []string) ([]EntityRow, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var out []EntityRow
	err := SelectRows(ctx, c, "entities", graph, Params{"ids": StringsParam(ids)}, func(r *Row) error {
		out = append(out, EntityRow{
			ID: r.Str("id"), HumanReadableID: r.Str("human_readable_id"), Title: r.Str("title"),
			Type: r.Str("type"), Description: r.Str("description"), Degree: r.Int("degree"),
		})
		return r.Err()
	})
	return out, err
}

// Relationships returns the relationships between two of the entities
// (inside) and those between one of them and another entity (outside),
// each ordered by rank and weight, descending, then id (template
// relationships, one query for both).
func Relationships(ctx context.Context, c *Client, graph string, ids []string) (inside, outside []RelationshipRow, err error) {
	if len(ids) == 0 {
		return nil, nil, nil
	}
	err = SelectRows(ctx, c, "relationships", graph, Params{"ids": StringsParam(ids)}, func(r *Row) error {
		rel := RelationshipRow{
			ID: r.Str("id"), HumanReadableID: r.Str("human_readable_id"),
			SourceID: r.Str("source_id"), SourceTitle: r.Str("source_title"),
			TargetID: r.Str("target_id"), TargetTitle: r.Str("target_title"),
			Description: r.Str("description"), Weight: r.Float("weight"), Rank: r.Int("rank"),
			Inside: r.Int("ends") == 2,
		}
		if rel.Inside {
			inside = append(inside, rel)
		} else {
			outside = append(outside, rel)
		}
		return r.Err()
	})
	if err != nil {
		return nil, nil, err
	}
	return inside, outside, nil
}

// TextUnits returns the text units that hold at least one of the
// entities, ordered by how many they hold (descending), then id; at most
// limit rows when limit > 0 (template text_units).
func TextUnits(ctx context.Context, c *Client, graph string, ids []string, limit int) ([]TextUnitRow, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	p := Params{"ids": StringsParam(ids)}
	limitParam(p, limit)
	var out []TextUnitRow
	err := SelectRows(ctx, c, "text_units", graph, p, func(r *Row) error {
		out = append(out, TextUnitRow{
			ID: r.Str("id"), HumanReadableID: r.Str("human_readable_id"), Text: r.Str("text"),
			NTokens: r.Int("n_tokens"), SelectedEntities: r.Int("selected_entities"),
		})
		return r.Err()
	})
	return out, err
}

// Communities returns the communities of the given level (AllLevels for
// every level) that hold at least one of the entities, with their
// reports, ordered by how many of the entities they hold, rank and weight
// (all descending), then community number; at most limit rows when
// limit > 0 (template communities).
func Communities(ctx context.Context, c *Client, graph string, ids []string, level, limit int) ([]CommunityRow, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	p := Params{"ids": StringsParam(ids)}
	levelParam(p, level)
	limitParam(p, limit)
	var out []CommunityRow
	err := SelectRows(ctx, c, "communities", graph, p, func(r *Row) error {
		cr := communityRow(r)
		cr.SelectedEntities = r.Int("selected_entities")
		out = append(out, cr)
		return r.Err()
	})
	return out, err
}

// CommunityReports returns the communities of the given level (AllLevels
// for every level) that have a report, ordered by rank and weight
// (descending), then community number; at most limit rows when limit > 0
// (template community_reports).
func CommunityReports(ctx context.Context, c *Client, graph string, level, limit int) ([]CommunityRow, error) {
	p := Params{}
	levelParam(p, level)
	limitParam(p, limit)
	var out []CommunityRow
	err := SelectRows(ctx, c, "community_reports", graph, p, func(r *Row) error {
		out = append(out, communityRow(r))
		return r.Err()
	})
	return out, err
}

func communityRow(r *Row) CommunityRow {
	return CommunityRow{
		ID: r.Str("id"), HumanReadableID: r.Str("human_readable_id"),
		Community: r.Int("community"), Level: r.Int("level"),
		Title: r.Str("title"), Summary: r.Str("summary"), FullContent: r.Str("full_content"),
		Rank: r.Float("rank"), Weight: r.Float("weight"),
	}
}
