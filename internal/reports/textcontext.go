package reports

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/tokens"
)

// unit is a text unit as a row of a community's text context: GraphRAG's
// all_context entry of text_unit_context (id, text, entity_degree), the
// degree being that of the community: the sum of the degrees of its
// entities that name the text unit.
type unit struct {
	hrid   string
	degree int64
	row    string // its CSV line, newline included
}

// Prompt templates of the two kinds of context.
const (
	promptGraph = "index_report"
	promptText  = "index_report_text"
)

// NewTextBuilder is NewBuilder for GraphRAG 3.3.0's fast method
// (index/workflows/create_community_reports_text): a community's context
// is the text of the text units its entities come from, not its
// entities and relationships, and its reports are asked for with the
// index_report_text prompt.
//
// It follows text_unit_context's build_local_context and prep_text_units:
//
//   - a text unit's degree in a community is the sum of the degrees of the
//     community's entities whose text_unit_ids name it (an entity listed
//     twice counts twice, as the table joins do);
//   - a community's text units are its TextUnitIDs, in that order, each
//     with that degree; sort_context ranks them by degree, highest first,
//     ties in that order;
//   - the context is a CSV table, "-----SOURCES-----" over
//     "id,text,entity_degree", one row per distinct (id, degree), with
//     every text unit: untrimmed, so that a community over the budget is
//     known (Context trims it, or puts sub-community reports in its place);
//   - a text unit whose human_readable_id is "0" or empty is left out of
//     the table, as GraphRAG's filter on a true id drops it (GraphRAG
//     numbers text units from 0, so its first text unit never reaches a
//     report);
//   - degrees are written as integers, or as floats ("12.0") when some
//     text unit of ds is named by no entity of any community, or some
//     entity has no degree: pandas' join then makes the column a float one.
//
// Where GraphRAG fails (a community text unit that none of its entities
// names, or that the text_units table lacks, or a community without text
// units), NewTextBuilder leaves the text unit, or the community, out.
func NewTextBuilder(ds *graphrag.Dataset, enc *tokens.Encoder, maxTokens int) (*Builder, error) {
	if maxTokens <= 0 {
		maxTokens = DefaultMaxInputTokens
	}
	b := &Builder{enc: enc, max: maxTokens, byNum: make(map[string]*community), text: true}
	units := make(map[string]*graphrag.TextUnit, len(ds.TextUnits))
	for i := range ds.TextUnits {
		units[ds.TextUnits[i].ID] = &ds.TextUnits[i]
	}
	ents := make(map[string]*graphrag.Entity, len(ds.Entities))
	floats := false // pandas' entity_degree column is a float one
	for i := range ds.Entities {
		e := &ds.Entities[i]
		if e.Placeholder {
			continue
		}
		ents[e.ID] = e
		floats = floats || !e.HasDegree
	}
	// degree[community][text unit]: prep_text_units' groupby sum.
	degree := make(map[string]map[string]int64, len(ds.Communities))
	named := make(map[string]bool) // text units some community entity names
	levels := make(map[int64]bool)
	for i := range ds.Communities {
		c := &ds.Communities[i]
		d := make(map[string]int64)
		for _, id := range c.EntityIDs {
			e := ents[id]
			if e == nil {
				continue
			}
			levels[c.Level] = true
			for _, tu := range e.TextUnitIDs {
				d[tu] += e.Degree
				named[tu] = true
			}
		}
		degree[c.Community] = d
	}
	for i := range ds.TextUnits {
		floats = floats || !named[ds.TextUnits[i].ID]
	}
	for level := range levels {
		if level >= 0 { // get_levels skips -1
			b.levels = append(b.levels, level)
		}
	}
	slices.Sort(b.levels)
	slices.Reverse(b.levels)

	for i := range ds.Communities {
		c := &ds.Communities[i]
		if !levels[c.Level] || c.Level < 0 {
			continue
		}
		d := degree[c.Community]
		var us []unit
		for _, id := range c.TextUnitIDs {
			tu, deg, ok := units[id], d[id], false
			if tu != nil {
				_, ok = d[id]
			}
			if !ok {
				continue
			}
			us = append(us, unit{hrid: tu.HumanReadableID, degree: deg,
				row: csvRow(tu.HumanReadableID, tu.Text, formatDegree(deg, floats))})
		}
		if len(us) == 0 {
			continue
		}
		cm := &community{num: c.Community, level: c.Level, children: c.Children, units: us, src: c}
		cm.local = b.sortUnits(us, nil, 0)
		cm.tokens = b.enc.Count(cm.local)
		cm.exceeds = cm.tokens > b.max
		b.comms = append(b.comms, cm)
	}
	slices.SortStableFunc(b.comms, func(x, y *community) int {
		if c := cmp.Compare(y.level, x.level); c != 0 {
			return c
		}
		return compareNum(x.num, y.num)
	})
	for _, c := range b.comms {
		b.byNum[c.num] = c
	}
	return b, nil
}

// formatDegree writes a degree as pandas writes an int64 or a float64.
func formatDegree(d int64, float bool) string {
	if float {
		return strconv.FormatInt(d, 10) + ".0"
	}
	return strconv.FormatInt(d, 10)
}

// sourcesHeading heads the text units' table.
const sourcesHeading = "-----SOURCES-----\nid,text,entity_degree\n"

// sortUnits is text_unit_context's sort_context: the units by degree,
// highest first (a stable sort), added one at a time while the text
// stays within max tokens (max <= 0: all of them). When not even the
// first fits, every unit is returned, over the budget, as GraphRAG does.
// The sub-community reports, when there are any, come first.
func (b *Builder) sortUnits(us []unit, reports []subReport, max int) string {
	sorted := slices.Clone(us)
	slices.SortStableFunc(sorted, func(x, y unit) int { return cmp.Compare(y.degree, x.degree) })
	if max <= 0 {
		return unitsText(sorted, reports)
	}
	// GraphRAG counts the whole text after each unit. A unit adds at
	// least one token, so the longest prefix within the budget is found
	// counting each candidate whole, from the shortest.
	best := ""
	for i := range sorted {
		text := unitsText(sorted[:i+1], reports)
		if b.enc.Count(text) > max {
			break
		}
		best = text
	}
	if best == "" {
		return unitsText(sorted, reports)
	}
	return best
}

// unitsText is GraphRAG's text get_context_string: the reports' table
// ("----REPORTS-----", community,full_content), then the text units'
// ("-----SOURCES-----"), each left out when it has no row, joined by a
// blank line. Rows repeated whole are written once (drop_duplicates);
// units with id "0" or "" and reports of community "0" or "" are left
// out, as GraphRAG's test of a true id leaves them.
func unitsText(us []unit, reports []subReport) string {
	var s strings.Builder
	var reps []subReport
	for _, r := range reports {
		if r.community != "" && r.community != "0" && !slices.Contains(reps, r) {
			reps = append(reps, r)
		}
	}
	if len(reps) > 0 {
		s.WriteString("----REPORTS-----\n")
		writeReports(&s, reps)
	}
	type key struct {
		hrid   string
		degree int64
	}
	seen := make(map[key]bool, len(us))
	wrote := false
	for _, u := range us {
		k := key{u.hrid, u.degree}
		if strings.TrimSpace(u.hrid) == "" || u.hrid == "0" || seen[k] {
			continue
		}
		seen[k] = true
		if !wrote {
			if s.Len() > 0 {
				s.WriteString("\n\n")
			}
			s.WriteString(sourcesHeading)
			wrote = true
		}
		s.WriteString(u.row)
	}
	return s.String()
}

// Units returns the human_readable_ids of community num's text units, in
// the order of its context (highest degree first), as the table lists
// them; nil for a Builder of NewBuilder or a community without a context.
func (b *Builder) Units(num string) []string {
	c := b.byNum[num]
	if c == nil || !b.text {
		return nil
	}
	sorted := slices.Clone(c.units)
	slices.SortStableFunc(sorted, func(x, y unit) int { return cmp.Compare(y.degree, x.degree) })
	var out []string
	seen := make(map[unit]bool)
	for _, u := range sorted {
		if u.hrid == "" || u.hrid == "0" || seen[u] {
			continue
		}
		seen[u] = true
		out = append(out, u.hrid)
	}
	return out
}
