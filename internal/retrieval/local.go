package retrieval

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/kgrag/kgrag/internal/tokens"
)

// Section names, as GraphRAG heads them ("-----Entities-----").
const (
	SectionReports       = "Reports"
	SectionEntities      = "Entities"
	SectionRelationships = "Relationships"
	SectionSources       = "Sources"
)

// Context is the local search context of one question: the records chosen
// per section, in the order they are printed, and the printed text.
type Context struct {
	Reports       []ReportRecord
	Entities      []EntityRecord
	Relationships []RelationshipRecord
	TextUnits     []TextUnitRecord
	// HistoryTurns is the number of earlier questions printed in the
	// Conversation History table, which comes first in Text.
	HistoryTurns int
	// RelationshipEntities is the length of the prefix of the selected
	// entities whose relationships Relationships holds: Inside and Links
	// are relative to that prefix.
	RelationshipEntities int
	// Text is the context handed to the model: the Conversation History,
	// Reports, Entities, Relationships and Sources sections, non-empty ones
	// only, joined by a blank line.
	Text string
	// Tokens counts Text. HistoryTokens, ReportTokens, LocalTokens
	// (entities and relationships) and TextUnitTokens count its parts.
	Tokens         int
	HistoryTokens  int
	ReportTokens   int
	LocalTokens    int
	TextUnitTokens int
	// Matched counts the selected entities the graph holds (at most
	// TopKEntities), before the budget: none means the index is not of
	// this graph, while an empty Entities with some matched means only
	// that the budget is small.
	Matched int
}

// Builder builds local search contexts from one Backend with one set of
// Params and one tokens.Encoder. It is safe for concurrent use if its Backend is.
type Builder struct {
	backend Backend
	params  Params
	enc     *tokens.Encoder
}

// NewBuilder validates p and builds its token encoder.
func NewBuilder(backend Backend, p Params) (*Builder, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	enc, err := tokens.NewEncoder(p.Encoding)
	if err != nil {
		return nil, err
	}
	return NewBuilderWithEncoder(backend, p, enc)
}

// NewBuilderWithEncoder is NewBuilder with an encoder built beforehand, so
// that several builders share one. The encoder must match p.Encoding.
func NewBuilderWithEncoder(backend Backend, p Params, enc *tokens.Encoder) (*Builder, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if enc == nil || enc.Name() != p.Encoding {
		return nil, fmt.Errorf("retrieval: builder: encoder does not match encoding %q", p.Encoding)
	}
	return &Builder{backend: backend, params: p, enc: enc}, nil
}

// LocalContext builds the context for the entities selected (entity ids in
// kNN order, nearest first), as GraphRAG's LocalSearchMixedContext.build_context
// does (graphrag/query/structured_search/local_search/mixed_context.py):
//
//  1. Keep the first TopKEntities selected ids the backend knows.
//  2. Reports (CommunityProp of the budget): the reports of the selected
//     entities' communities, by number of selected members, then report
//     rank; kgrag breaks remaining ties by occurrence weight, then community
//     number (GraphRAG keeps first-seen order there).
//  3. Entities and relationships (the rest of the budget): the entities
//     table in kNN order, then the relationships of the longest prefix of
//     the selected entities whose relationships still fit beside the
//     entities table. For a prefix, inside relationships (both ends in the
//     prefix) come first by combined degree, then outside ones by the number
//     of selected entities their outside end links to, then combined degree,
//     at most TopKRelationships per entity of the prefix. Ties keep
//     human_readable_id order, which is GraphRAG's row order.
//  4. Text units (TextUnitProp of the budget): the units of each selected
//     entity in turn (its text_unit_ids order), each unit once, by entity
//     order, then by how many of that entity's relationships it supports.
//
// Each table is filled row by row and stops at the first row that does not
// fit. Deliberate differences from GraphRAG:
//   - Rows are counted as printed. GraphRAG counts a report row before
//     pandas quotes it; kgrag quotes first, so the report section never
//     exceeds its share.
//   - The reports section keeps its "-----Reports-----" header line, which
//     GraphRAG counts but (in 1.x-2.x) drops when it prints the table.
//   - Relationships and text units are matched to entities by id, not title.
//   - The relationships table never grows a "links" column (GraphRAG's does
//     when its first row happens to be an outside relationship, because the
//     ranking leaves the attribute on the record).
//   - Claims (covariates) are not included.
//   - If joining the sections makes the text longer than MaxContextTokens
//     (GraphRAG does not count the blank lines between sections), trailing
//     text units are dropped until it fits.
//
// History is the conversation before the question, oldest first: its
// first HistoryTurns questions are printed in a Conversation History
// table before the others, within the budget, and the other sections
// share what the table leaves of MaxContextTokens, as in GraphRAG. The
// caller embeds SearchText to select the entities.
//
// Errors come from the Backend, wrapped with the lookup that failed.
func (b *Builder) LocalContext(ctx context.Context, selected []string, history ...Turn) (*Context, error) {
	p := b.params
	ents, err := b.backend.Entities(ctx, selected)
	if err != nil {
		return nil, fmt.Errorf("retrieval: local context: entities: %w", err)
	}
	if len(ents) > p.TopKEntities {
		ents = ents[:p.TopKEntities]
	}
	out := &Context{Matched: len(ents)}
	if len(ents) == 0 {
		return out, nil
	}
	ids := make([]string, len(ents))
	for i, e := range ents {
		ids[i] = e.EntityID
	}
	var unitIDs []string
	for _, e := range ents {
		unitIDs = append(unitIDs, e.TextUnitIDs...)
	}
	// The other three lookups need only the entities: run them at once
	// (three round trips in parallel on a store).
	var rels []RelationshipRecord
	var reports []ReportRecord
	var units []TextUnitRecord
	var errs [3]error
	var wg sync.WaitGroup
	wg.Go(func() { rels, errs[0] = b.backend.Relationships(ctx, ids) })
	wg.Go(func() { reports, errs[1] = b.backend.Reports(ctx, ids, p.CommunityLevel) })
	wg.Go(func() { units, errs[2] = b.backend.TextUnits(ctx, unitIDs) })
	wg.Wait()
	for i, what := range [...]string{"relationships", "reports", "text units"} {
		if errs[i] != nil {
			return nil, fmt.Errorf("retrieval: local context: %s: %w", what, errs[i])
		}
	}

	histT, turns := b.historyTable(history, p.MaxContextTokens)
	out.HistoryTurns = turns
	// Same arithmetic as GraphRAG: max(int(max_context_tokens * prop), 0),
	// of what the history left.
	total := float64(p.MaxContextTokens - histT.tokens)
	communityTokens := int(total * p.CommunityProp)
	localTokens := int(total * (1 - p.CommunityProp - p.TextUnitProp))
	unitTokens := int(total * p.TextUnitProp)

	var reportT, localT, unitT table
	out.Reports, reportT = b.reportSection(reports, communityTokens)
	out.Entities, out.Relationships, out.RelationshipEntities, localT = b.localSection(ents, rels, localTokens)
	ranked := rankTextUnits(ents, rels, units)
	out.TextUnits, unitT = b.unitSection(ranked, unitTokens)
	all := joinTables(b.enc, histT, reportT, localT, unitT)
	out.Text, out.Tokens = all.text, all.count(b.enc)
	for out.Tokens > p.MaxContextTokens && len(out.TextUnits) > 0 {
		out.TextUnits = out.TextUnits[:len(out.TextUnits)-1]
		unitT = table{text: b.renderUnits(out.TextUnits)}
		if len(out.TextUnits) == 0 {
			unitT = table{exact: true}
		}
		all = joinTables(b.enc, histT, reportT, localT, unitT)
		out.Text, out.Tokens = all.text, all.count(b.enc)
	}
	out.HistoryTokens = histT.count(b.enc)
	out.ReportTokens = reportT.count(b.enc)
	out.LocalTokens = localT.count(b.enc)
	out.TextUnitTokens = unitT.count(b.enc)
	return out, nil
}

// reportSection ranks the reports of the selected entities' communities
// (GraphRAG _build_community_context) and fills them into budget
// (build_community_context with single_batch and no shuffling).
func (b *Builder) reportSection(reports []ReportRecord, budget int) ([]ReportRecord, table) {
	p := b.params
	var cands []ReportRecord
	for _, r := range reports {
		if len(r.Members) > 0 && r.Rank >= p.MinCommunityRank && (r.Deepest || !p.RollUpReports) {
			cands = append(cands, r)
		}
	}
	slices.SortStableFunc(cands, func(x, y ReportRecord) int {
		if c := cmp.Compare(len(y.Members), len(x.Members)); c != 0 {
			return c
		}
		if c := cmp.Compare(y.Rank, x.Rank); c != 0 {
			return c
		}
		// Ties keep the order GraphRAG met the communities in.
		if c := cmp.Compare(x.FirstSeen, y.FirstSeen); c != 0 {
			return c
		}
		return compareIDs(x.ID, y.ID)
	})
	header := []string{"id", "title"}
	if p.UseCommunitySummary {
		header = append(header, "summary")
	} else {
		header = append(header, "content")
	}
	if p.IncludeCommunityRank {
		header = append(header, "rank")
	}
	chosen, t := fill(b.enc, "-----"+SectionReports+"-----\n"+CSVRow(header, p.ColumnDelimiter), cands, budget,
		func(r ReportRecord) string {
			body := r.FullContent
			if p.UseCommunitySummary {
				body = r.Summary
			}
			row := []string{r.ID, r.Title, body}
			if p.IncludeCommunityRank {
				row = append(row, pyFloat(r.Rank))
			}
			return CSVRow(row, p.ColumnDelimiter)
		})
	if len(chosen) == 0 {
		return nil, table{exact: true}
	}
	return chosen, t
}

// localSection builds the entities table and the relationships table of
// the longest entity prefix that fits (GraphRAG _build_local_context).
func (b *Builder) localSection(ents []EntityRecord, rels []RelationshipRecord, budget int) ([]EntityRecord, []RelationshipRecord, int, table) {
	p := b.params
	d := p.ColumnDelimiter
	header := []string{"id", "entity", "description"}
	if p.IncludeEntityRank {
		header = append(header, p.RankDescription)
	}
	chosenEnts, entTable := fill(b.enc, "-----"+SectionEntities+"-----\n"+strings.Join(header, d)+"\n", ents, budget,
		func(e EntityRecord) string {
			row := []string{e.ID, e.Title, e.Description}
			if p.IncludeEntityRank {
				row = append(row, strconv.FormatInt(e.Rank, 10))
			}
			return strings.Join(row, d) + "\n"
		})
	entTokens := entTable.count(b.enc)

	var chosenRels []RelationshipRecord
	var relTable table
	prefix := 0
	for i := range ents {
		sel := filterRelationships(ents[:i+1], rels, p.TopKRelationships)
		recs, t := b.relationshipTable(sel, budget)
		if entTokens+t.count(b.enc) > budget {
			break
		}
		chosenRels, relTable, prefix = recs, t, i+1
	}
	if relTable.text == "" {
		return chosenEnts, nil, 0, entTable
	}
	return chosenEnts, chosenRels, prefix, joinTables(b.enc, entTable, relTable)
}

// relationshipTable fills rels into budget (build_relationship_context).
func (b *Builder) relationshipTable(rels []RelationshipRecord, budget int) ([]RelationshipRecord, table) {
	if len(rels) == 0 {
		return nil, table{exact: true}
	}
	p := b.params
	d := p.ColumnDelimiter
	header := []string{"id", "source", "target", "description"}
	if p.IncludeRelationshipWeight {
		header = append(header, "weight")
	}
	return fill(b.enc, "-----"+SectionRelationships+"-----\n"+strings.Join(header, d)+"\n", rels, budget,
		func(r RelationshipRecord) string {
			row := []string{r.ID, r.Source, r.Target, r.Description}
			if p.IncludeRelationshipWeight {
				w := ""
				if r.Weight != 0 { // GraphRAG: str(rel.weight if rel.weight else "")
					w = pyFloat(r.Weight)
				}
				row = append(row, w)
			}
			return strings.Join(row, d) + "\n"
		})
}

// filterRelationships is GraphRAG's _filter_relationships over entity ids:
// rels must be in human_readable_id order.
func filterRelationships(ents []EntityRecord, rels []RelationshipRecord, topK int) []RelationshipRecord {
	in := make(map[string]bool, len(ents))
	for _, e := range ents {
		in[e.EntityID] = true
	}
	var inside, fromSel, toSel []RelationshipRecord
	for _, r := range rels {
		switch s, t := in[r.SourceID], in[r.TargetID]; {
		case s && t:
			r.Inside, r.Links = true, 0
			inside = append(inside, r)
		case s:
			fromSel = append(fromSel, r)
		case t:
			toSel = append(toSel, r)
		}
	}
	byRank := func(x, y RelationshipRecord) int { return cmp.Compare(y.Rank, x.Rank) }
	slices.SortStableFunc(inside, byRank)
	outside := append(fromSel, toSel...)
	slices.SortStableFunc(outside, byRank)
	if len(outside) <= 1 {
		for i := range outside {
			outside[i].Inside = false
		}
		return append(inside, outside...)
	}
	// links: how many distinct selected entities each outside entity is
	// linked to by an outside relationship.
	linked := make(map[string]map[string]bool)
	for _, r := range outside {
		o, s := r.TargetID, r.SourceID
		if in[o] {
			o, s = s, o
		}
		if linked[o] == nil {
			linked[o] = make(map[string]bool)
		}
		linked[o][s] = true
	}
	for i := range outside {
		o := outside[i].TargetID
		if in[o] {
			o = outside[i].SourceID
		}
		outside[i].Inside = false
		outside[i].Links = len(linked[o])
	}
	slices.SortStableFunc(outside, func(x, y RelationshipRecord) int {
		if c := cmp.Compare(y.Links, x.Links); c != 0 {
			return c
		}
		return cmp.Compare(y.Rank, x.Rank)
	})
	if n := topK * len(ents); len(outside) > n {
		outside = outside[:n]
	}
	return append(inside, outside...)
}

// rankTextUnits orders the text units of the selected entities as
// GraphRAG's _build_text_unit_context does: by the kNN position of the first
// entity that names the unit, then by how many of that entity's
// relationships the unit supports (more first), else in text_unit_ids order.
func rankTextUnits(ents []EntityRecord, rels []RelationshipRecord, units []TextUnitRecord) []TextUnitRecord {
	byID := make(map[string]TextUnitRecord, len(units))
	for _, u := range units {
		byID[u.TextUnitID] = u
	}
	seen := make(map[string]bool)
	var ranked []TextUnitRecord
	for order, e := range ents {
		var own []RelationshipRecord
		ownIDs := make(map[string]bool)
		for _, r := range rels {
			if r.SourceID == e.EntityID || r.TargetID == e.EntityID {
				own = append(own, r)
				ownIDs[r.RelationshipID] = true
			}
		}
		for _, id := range e.TextUnitIDs {
			u, ok := byID[id]
			if !ok || seen[id] {
				continue
			}
			seen[id] = true
			u.EntityOrder = order
			u.Relationships = countRelationships(own, ownIDs, u)
			ranked = append(ranked, u)
		}
	}
	slices.SortStableFunc(ranked, func(x, y TextUnitRecord) int {
		if c := cmp.Compare(x.EntityOrder, y.EntityOrder); c != 0 {
			return c
		}
		return cmp.Compare(y.Relationships, x.Relationships)
	})
	return ranked
}

// countRelationships is GraphRAG's count_relationships: the unit's own
// relationship ids when it has them, else the relationships naming the unit.
func countRelationships(own []RelationshipRecord, ownIDs map[string]bool, u TextUnitRecord) int {
	n := 0
	if len(u.RelationshipIDs) == 0 {
		for _, r := range own {
			if slices.Contains(r.TextUnitIDs, u.TextUnitID) {
				n++
			}
		}
		return n
	}
	for _, id := range u.RelationshipIDs {
		if ownIDs[id] {
			n++
		}
	}
	return n
}

// unitSection fills ranked units into budget (build_text_unit_context).
func (b *Builder) unitSection(units []TextUnitRecord, budget int) ([]TextUnitRecord, table) {
	if len(units) == 0 {
		return nil, table{exact: true}
	}
	d := b.params.ColumnDelimiter
	return fill(b.enc, b.unitHeader(), units, budget,
		func(u TextUnitRecord) string { return u.ID + d + u.Text + "\n" })
}

// table is a filled table and its token count: the sum of its lines'
// counts, which is the count of the whole text when exact is set.
type table struct {
	text   string
	tokens int
	exact  bool
	last   string // the last line written (the header when no row fits)
}

// count returns the table's token count, counting the text only when the
// sum of its lines is not known to be it.
func (t table) count(enc *tokens.Encoder) int {
	if t.exact {
		return t.tokens
	}
	return enc.Count(t.text)
}

// fill is how GraphRAG fills every context table: the header, then one
// line per row in rank order, stopping at the first row whose line would
// take the table past budget tokens.
func fill[T any](enc *tokens.Encoder, header string, rows []T, budget int, line func(T) string) ([]T, table) {
	var text strings.Builder
	text.WriteString(header)
	t := table{tokens: enc.Count(header), exact: splitsAfter(header), last: header}
	var chosen []T
	for _, r := range rows {
		l := line(r)
		n := enc.Count(l)
		if t.tokens+n > budget {
			break
		}
		text.WriteString(l)
		t.tokens += n
		t.exact = t.exact && splitsAfter(l)
		t.last = l
		chosen = append(chosen, r)
	}
	t.text = text.String()
	return chosen, t
}

// joinTables joins the non-empty tables with blank lines, as GraphRAG
// joins context sections, and counts the result without tokenising it
// whole where it can: each table's count, plus what the blank line adds to
// the last line before it (the pre-tokeniser merges the newlines, then cuts
// before the next table's first line, which starts with "-----").
func joinTables(enc *tokens.Encoder, ts ...table) table {
	out := table{exact: true}
	for _, t := range ts {
		if strings.TrimSpace(t.text) == "" {
			continue
		}
		if out.text == "" {
			out = t
			continue
		}
		joint := out.last + "\n\n"
		out.tokens += enc.Count(joint) - enc.Count(out.last) + t.tokens
		out.exact = out.exact && t.exact && splitsAfter(out.last) && splitsAfter(t.text[:strings.IndexByte(t.text, '\n')+1])
		out.text += "\n\n" + t.text
		out.last = t.last
	}
	return out
}

// splitsAfter reports whether line can be counted on its own inside a
// table: it ends in a newline and starts with no whitespace. tiktoken's
// pre-tokeniser always cuts between a newline and a following character
// that is not whitespace, so the tokens of a table of such lines are the
// sum of its lines' tokens. Table rows start with an id or a delimiter; a
// row that does not makes its table count its whole text.
func splitsAfter(line string) bool {
	if line == "" || line[len(line)-1] != '\n' {
		return false
	}
	switch line[0] {
	case ' ', '\t', '\n', '\r', '\v', '\f':
		return false
	}
	return true
}

func (b *Builder) unitHeader() string {
	return "-----" + SectionSources + "-----\n" + "id" + b.params.ColumnDelimiter + "text\n"
}

// renderUnits prints units as unitSection does, without a budget.
func (b *Builder) renderUnits(units []TextUnitRecord) string {
	var sb strings.Builder
	sb.WriteString(b.unitHeader())
	for _, u := range units {
		sb.WriteString(u.ID + b.params.ColumnDelimiter + u.Text + "\n")
	}
	return sb.String()
}

// CSVRow prints fields as pandas DataFrame.to_csv does with the default
// QUOTE_MINIMAL: a field holding the delimiter, a double quote or a line
// break is quoted, its quotes doubled.
func CSVRow(fields []string, delim string) string {
	var sb strings.Builder
	for i, f := range fields {
		if i > 0 {
			sb.WriteString(delim)
		}
		if strings.Contains(f, delim) || strings.ContainsAny(f, "\"\r\n") {
			sb.WriteString(`"` + strings.ReplaceAll(f, `"`, `""`) + `"`)
		} else {
			sb.WriteString(f)
		}
	}
	sb.WriteString("\n")
	return sb.String()
}

// pyFloat prints f as Python's str(float) does for ordinary magnitudes
// ("1.0", "2.5", "1e-05", "1e+16").
func pyFloat(f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	if a := math.Abs(f); a != 0 && (a < 1e-4 || a >= 1e16) {
		s := strconv.FormatFloat(f, 'e', -1, 64)
		// Go writes e-05 / e+16 like Python; only the mantissa may differ.
		return s
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}
