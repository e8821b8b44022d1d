package reports

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/tokens"
)

// DefaultMaxInputTokens is GraphRAG's community_reports.max_input_length:
// the token budget of a report's context.
const DefaultMaxInputTokens = 8000

// node is an entity as a context row: GraphRAG's node_details
// (human_readable_id, title, description, degree).
type node struct {
	hrid   int64
	title  string
	degree int64
	row    string // its CSV line, newline included
}

// edge is a relationship as a context row: GraphRAG's edge_details
// (human_readable_id, source, target, description, combined_degree).
type edge struct {
	hrid           int64
	source, target string
	degree         int64
	row            string
}

// record is one entry of a community's all_context: a member entity and
// the one relationship GraphRAG attaches to it (nil when none).
type record struct {
	node *node
	edge *edge
}

// community is one community at its level with its local context.
type community struct {
	num      string
	level    int64
	children []string
	records  []record
	units    []unit // a text Builder's: its text units, in TextUnitIDs order
	local    string // context_string: the records sorted and cut to the budget (a text Builder's: all its units)
	tokens   int    // context_size
	exceeds  bool   // context_exceed_limit: local is over the budget all the same
	src      *graphrag.Community
}

// Builder holds the local context of every community of a graph and
// builds the context of a community's report prompt as GraphRAG 3.3.0
// does (index/operations/summarize_communities/graph_context). Build one
// with NewBuilder; it is safe for concurrent use (it is not changed after
// NewBuilder returns).
type Builder struct {
	enc    *tokens.Encoder
	max    int
	comms  []*community // by level, deepest first, then by community number
	byNum  map[string]*community
	levels []int64 // deepest first
	text   bool    // NewTextBuilder's: contexts of text units
}

// NewBuilder computes the local context of every community of ds that
// has members, within maxTokens (GraphRAG's max_input_length; <= 0 means
// DefaultMaxInputTokens), counting tokens with enc.
//
// It follows GraphRAG's create_community_reports: a community's members
// are the entities its EntityIDs name; at each level, every member gets
// the first relationship (in table order) that it is the source of and
// whose other end is a member of some community of that level, or else
// the first it is the target of. Entities without a degree are left out,
// as GraphRAG's grouping on degree drops them; a relationship without a
// combined degree counts as 0. Claims (ds.Covariates) are not read:
// GraphRAG 3.3.0 merges them in one row per claim, which its sort_context
// then ignores, so no claim reaches a report context. The error names a
// human_readable_id that is not an integer. The Builder keeps pointers to
// ds's communities (reports take their size and period): do not change
// them while it is in use.
func NewBuilder(ds *graphrag.Dataset, enc *tokens.Encoder, maxTokens int) (*Builder, error) {
	if maxTokens <= 0 {
		maxTokens = DefaultMaxInputTokens
	}
	b := &Builder{enc: enc, max: maxTokens, byNum: make(map[string]*community)}
	nodes, err := entityNodes(ds.Entities)
	if err != nil {
		return nil, err
	}
	edges, err := relationshipEdges(ds.Relationships)
	if err != nil {
		return nil, err
	}

	byLevel := make(map[int64][]*graphrag.Community)
	for i := range ds.Communities {
		c := &ds.Communities[i]
		byLevel[c.Level] = append(byLevel[c.Level], c)
	}
	for level := range byLevel {
		if level >= 0 { // GraphRAG's get_levels skips -1
			b.levels = append(b.levels, level)
		}
	}
	slices.Sort(b.levels)
	slices.Reverse(b.levels)
	for _, level := range b.levels {
		b.addLevel(level, byLevel[level], nodes, edges, ds.Relationships)
	}
	for _, c := range b.comms {
		b.byNum[c.num] = c
	}
	return b, nil
}

func entityNodes(ents []graphrag.Entity) (map[string]*node, error) {
	out := make(map[string]*node, len(ents))
	for i := range ents {
		e := &ents[i]
		if e.Placeholder || !e.HasDegree {
			continue
		}
		hrid, err := strconv.ParseInt(e.HumanReadableID, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("reports: entity %q: human_readable_id %q is not an integer", e.Title, e.HumanReadableID)
		}
		n := &node{hrid: hrid, title: e.Title, degree: e.Degree}
		n.row = csvRow(strconv.FormatInt(hrid, 10), e.Title, e.Description, strconv.FormatInt(e.Degree, 10))
		out[e.ID] = n
	}
	return out, nil
}

func relationshipEdges(rels []graphrag.Relationship) ([]*edge, error) {
	out := make([]*edge, len(rels))
	for i := range rels {
		r := &rels[i]
		hrid, err := strconv.ParseInt(r.HumanReadableID, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("reports: relationship %s -> %s: human_readable_id %q is not an integer", r.Source, r.Target, r.HumanReadableID)
		}
		e := &edge{hrid: hrid, source: r.Source, target: r.Target, degree: r.Rank}
		e.row = csvRow(strconv.FormatInt(hrid, 10), r.Source, r.Target, r.Description, strconv.FormatInt(r.Rank, 10))
		out[i] = e
	}
	return out, nil
}

// addLevel builds the local contexts of the communities at one level
// (GraphRAG's _prepare_reports_at_level).
func (b *Builder) addLevel(level int64, comms []*graphrag.Community, nodes map[string]*node, edges []*edge, rels []graphrag.Relationship) {
	// The members of every community at the level, by title.
	members := make(map[string]bool)
	for _, c := range comms {
		for _, id := range c.EntityIDs {
			if n := nodes[id]; n != nil {
				members[n.title] = true
			}
		}
	}
	// Each member's first relationship as source, else as target, among
	// those with both ends at the level (groupby(...).agg("first") and
	// combine_first).
	asSource := make(map[string]*edge)
	asTarget := make(map[string]*edge)
	for i := range rels {
		e := edges[i]
		if !members[e.source] || !members[e.target] {
			continue
		}
		if asSource[e.source] == nil {
			asSource[e.source] = e
		}
		if asTarget[e.target] == nil {
			asTarget[e.target] = e
		}
	}
	var out []*community
	for _, c := range comms {
		seen := make(map[string]bool)
		var recs []record
		for _, id := range c.EntityIDs {
			n := nodes[id]
			if n == nil || seen[n.title] {
				continue
			}
			seen[n.title] = true
			e := asSource[n.title]
			if e == nil {
				e = asTarget[n.title]
			}
			recs = append(recs, record{node: n, edge: e})
		}
		if len(recs) == 0 {
			continue // no member in the entities table: GraphRAG has no row for it
		}
		// GraphRAG groups the rows by title: keep its order, which decides
		// ties among sub-communities when their contexts are mixed.
		slices.SortFunc(recs, func(x, y record) int { return strings.Compare(x.node.title, y.node.title) })
		cm := &community{num: c.Community, level: level, children: c.Children, records: recs, src: c}
		cm.local = b.sortContext(recs, nil, b.max)
		cm.tokens = b.enc.Count(cm.local)
		cm.exceeds = cm.tokens > b.max
		out = append(out, cm)
	}
	slices.SortStableFunc(out, func(x, y *community) int { return compareNum(x.num, y.num) })
	b.comms = append(b.comms, out...)
}

// compareNum orders community numbers as numbers when both are.
func compareNum(a, b string) int {
	x, errA := strconv.ParseInt(a, 10, 64)
	y, errB := strconv.ParseInt(b, 10, 64)
	if errA == nil && errB == nil {
		return cmp.Compare(x, y)
	}
	return strings.Compare(a, b)
}

// subReport is a sub-community report standing in for its local context.
type subReport struct{ community, content string }

// sortContext is GraphRAG's sort_context: the relationships of recs by
// combined degree (descending) then id, each added with its two entities,
// as long as the text stays within max tokens (max <= 0: no limit). When
// even the first relationship is over, the text with it is returned
// anyway; with no relationship, the text holds the reports alone (or is
// empty).
//
// GraphRAG counts the whole text again after each relationship; here the
// count is kept up to date part by part (partCounter), and the texts the
// result rests on are counted whole to check it.
func (b *Builder) sortContext(recs []record, reports []subReport, max int) string {
	if text, ok := b.sortContextBy(recs, reports, max, false); ok {
		return text
	}
	text, _ := b.sortContextBy(recs, reports, max, true)
	return text
}

// sortContextBy does the work of sortContext, counting whole texts when
// exact is set, and part by part otherwise; ok false means a part count
// did not match the whole count of the same text.
func (b *Builder) sortContextBy(recs []record, reports []subReport, max int, exact bool) (text string, ok bool) {
	var edges []*edge
	byTitle := make(map[string]*node, len(recs))
	for _, r := range recs {
		if r.edge != nil {
			edges = append(edges, r.edge)
		}
		byTitle[r.node.title] = r.node
	}
	slices.SortStableFunc(edges, func(x, y *edge) int {
		if c := cmp.Compare(y.degree, x.degree); c != 0 {
			return c
		}
		return cmp.Compare(x.hrid, y.hrid)
	})
	t := contextText{reports: reports}
	seenNode := make(map[int64]bool)
	seenEdge := make(map[int64]bool)
	pc := partCounter{enc: b.enc}
	// fitNodes and fitEdges are the rows of the longest text within the
	// budget; over says the loop stopped at a text over it.
	fitNodes, fitEdges, over := 0, 0, false
	for _, e := range edges {
		if seenEdge[e.hrid] {
			continue // a duplicate adds nothing: same ends, same text
		}
		seenEdge[e.hrid] = true
		for _, title := range [2]string{e.source, e.target} {
			if n := byTitle[title]; n != nil && !seenNode[n.hrid] {
				seenNode[n.hrid] = true
				t.nodes = append(t.nodes, n)
			}
		}
		t.edges = append(t.edges, e)
		if max <= 0 {
			continue
		}
		var n int
		if exact {
			n = b.enc.Count(t.String())
		} else {
			n = pc.count(&t)
		}
		if n > max {
			over = true
			break
		}
		fitNodes, fitEdges = len(t.nodes), len(t.edges)
	}
	if max <= 0 || fitEdges == 0 {
		// No limit, no relationship at all, or even the first is over.
		full := t.String()
		return full, exact || !over || b.enc.Count(full) > max
	}
	if over && !exact && b.enc.Count(t.String()) <= max {
		return "", false
	}
	t.nodes, t.edges = t.nodes[:fitNodes], t.edges[:fitEdges]
	text = t.String()
	return text, exact || b.enc.Count(text) <= max
}

// partCounter counts the tokens of a contextText as it grows, without
// counting it whole. A tiktoken piece (cl100k_base or o200k_base) that
// holds a newline is blank or ends in newlines, so the text can be cut
// after any newline that a row follows (rows start with a number): the
// count of the text is the sum of the counts of the parts. The parts are
// the head (reports and the entities' heading), each entity row, the
// last one together with the relationships' heading, and each
// relationship row.
type partCounter struct {
	enc     *tokens.Encoder
	started bool
	head    int
	nodes   int // entity rows counted in rows (all but the last)
	rows    int // tokens of those rows and of the relationship rows
	last    int // tokens of the last entity row and the heading after it
	lastOf  *node
	edges   int
}

func (pc *partCounter) count(t *contextText) int {
	if len(t.nodes) == 0 {
		return pc.enc.Count(t.String()) // no entity table: nothing to cut at
	}
	if !pc.started {
		var s strings.Builder
		if len(t.reports) > 0 {
			s.WriteString("----Reports-----\n")
			writeReports(&s, t.reports)
			s.WriteString("\n\n")
		}
		s.WriteString(entitiesHeading)
		pc.head, pc.started = pc.enc.Count(s.String()), true
	}
	for ; pc.nodes < len(t.nodes)-1; pc.nodes++ {
		pc.rows += pc.enc.Count(t.nodes[pc.nodes].row)
	}
	if last := t.nodes[len(t.nodes)-1]; last != pc.lastOf {
		pc.last, pc.lastOf = pc.enc.Count(last.row+"\n\n"+relationshipsHeading), last
	}
	for ; pc.edges < len(t.edges); pc.edges++ {
		pc.rows += pc.enc.Count(t.edges[pc.edges].row)
	}
	return pc.head + pc.rows + pc.last
}

// Headings of the context tables.
const (
	entitiesHeading      = "-----Entities-----\nhuman_readable_id,title,description,degree\n"
	relationshipsHeading = "-----Relationships-----\nhuman_readable_id,source,target,description,combined_degree\n"
)

// contextText is the text of a context (GraphRAG's _get_context_string):
// a CSV table per non-empty part, each under its heading, joined by blank
// lines.
type contextText struct {
	reports []subReport
	nodes   []*node
	edges   []*edge
}

func (t *contextText) String() string {
	var s strings.Builder
	sep := func() {
		if s.Len() > 0 {
			s.WriteString("\n\n")
		}
	}
	if len(t.reports) > 0 {
		s.WriteString("----Reports-----\n")
		writeReports(&s, t.reports)
	}
	if len(t.nodes) > 0 {
		sep()
		s.WriteString(entitiesHeading)
		for _, n := range t.nodes {
			s.WriteString(n.row)
		}
	}
	if len(t.edges) > 0 {
		sep()
		s.WriteString(relationshipsHeading)
		for _, e := range t.edges {
			s.WriteString(e.row)
		}
	}
	return s.String()
}

// writeReports writes reports as GraphRAG's pandas to_csv does.
func writeReports(s *strings.Builder, reports []subReport) {
	s.WriteString("community,full_content\n")
	for _, r := range reports {
		s.WriteString(csvRow(r.community, r.content))
	}
}

// csvRow is one line of pandas' to_csv (Python's csv module, minimal
// quoting, "\n" line ends): a field holding a comma, a double quote or a
// newline is quoted, with quotes doubled; a lone empty field is quoted.
// Python 3.11's writer does not quote a bare "\r", so neither does this.
func csvRow(fields ...string) string {
	var s strings.Builder
	for i, f := range fields {
		if i > 0 {
			s.WriteByte(',')
		}
		switch {
		case strings.ContainsAny(f, ",\"\n"):
			s.WriteByte('"')
			s.WriteString(strings.ReplaceAll(f, `"`, `""`))
			s.WriteByte('"')
		case f == "" && len(fields) == 1:
			s.WriteString(`""`)
		default:
			s.WriteString(f)
		}
	}
	s.WriteByte('\n')
	return s.String()
}

// Context is the context of one community's report prompt.
type Context struct {
	Community string
	Level     int64
	Text      string
	Tokens    int
	// Exceeds says the community's local context is over the budget even
	// cut to its first relationship, so sub-community reports were tried.
	Exceeds bool
	// Reports are the sub-communities whose reports the text holds in
	// place of their local context, in the order printed.
	Reports []string
}

// Levels returns the community levels that have communities, deepest
// first: the order in which reports are written.
func (b *Builder) Levels() []int64 { return slices.Clone(b.levels) }

// Communities returns the numbers of the communities at level, in
// community number order.
func (b *Builder) Communities(level int64) []string {
	var out []string
	for _, c := range b.comms {
		if c.level == level {
			out = append(out, c.num)
		}
	}
	return out
}

// Len is the number of communities that get a context.
func (b *Builder) Len() int { return len(b.comms) }

// MaxTokens is the budget contexts are built to.
func (b *Builder) MaxTokens() int { return b.max }

// Encoder is the token counter of the budget.
func (b *Builder) Encoder() *tokens.Encoder { return b.enc }

// Local returns community num's local context (the one of NewBuilder):
// its entities and relationships, cut to the budget; with NewTextBuilder,
// all its text units, however long.
func (b *Builder) Local(num string) (Context, bool) {
	c := b.byNum[num]
	if c == nil {
		return Context{}, false
	}
	return Context{Community: c.num, Level: c.level, Text: c.local, Tokens: c.tokens, Exceeds: c.exceeds}, true
}

// Context returns the context of community num's report prompt, given the
// full_content of the reports written so far (report returns false, or
// "", for a community that has none). It is GraphRAG's build_level_context
// for one community:
//
//   - a local context within the budget is used as it is;
//   - one over it (even its first relationship does not fit) is rebuilt
//     from its sub-communities, largest local context first: each in turn
//     gives its report in place of its local context, until the reports
//     and the remaining sub-communities' relationships fit untrimmed;
//   - when none of that fits, the reports alone, as many as fit (possibly
//     none: the text is then empty);
//   - a community without sub-communities, or whose sub-communities have
//     no report yet, keeps its local context, over the budget; with
//     NewTextBuilder, its text units are cut to the budget instead
//     (sort_context with max_input_length), which is what GraphRAG 3.3.0
//     does with every over-budget community, having no report yet.
//
// With NewTextBuilder, the mixed contexts put the reports ahead of the
// remaining sub-communities' text units (text_unit_context's
// sort_context): GraphRAG's own build_mixed_context would call the graph
// context's sort_context on them, which cannot work on text units.
//
// A sub-community without a report keeps its local context all along;
// GraphRAG would print an empty report for it instead. Context reports
// false for a community NewBuilder found no members for.
func (b *Builder) Context(num string, report func(num string) (string, bool)) (Context, bool) {
	c := b.byNum[num]
	if c == nil {
		return Context{}, false
	}
	ctx := Context{Community: c.num, Level: c.level, Text: c.local, Tokens: c.tokens, Exceeds: c.exceeds}
	if !c.exceeds {
		return ctx, true
	}
	type sub struct {
		c       *community
		content string
	}
	var subs []sub
	anyReport := false
	for _, num := range c.children {
		sc := b.byNum[num]
		if sc == nil || sc.level != c.level+1 {
			continue
		}
		s := sub{c: sc}
		if report != nil {
			if content, ok := report(num); ok {
				s.content = content
			}
		}
		anyReport = anyReport || s.content != ""
		subs = append(subs, s)
	}
	if !anyReport {
		if b.text {
			// A text local context holds every unit: trim it, as GraphRAG's
			// build_level_context does when it has no report.
			ctx.Text = b.sortUnits(c.units, nil, b.max)
			ctx.Tokens = b.enc.Count(ctx.Text)
		}
		return ctx, true
	}
	slices.SortStableFunc(subs, func(x, y sub) int { return cmp.Compare(y.c.tokens, x.c.tokens) })

	// build_mixed_context
	var reports []subReport
	var kept []*community // sub-communities without a report: their local contexts
	for i, s := range subs {
		if s.content == "" {
			kept = append(kept, s.c)
			continue
		}
		reports = append(reports, subReport{s.c.num, s.content})
		var rest []*community
		for _, r := range subs[i+1:] {
			rest = append(rest, r.c)
		}
		text := b.mixed(append(rest, kept...), reports)
		if n := b.enc.Count(text); n <= b.max {
			ctx.Text, ctx.Tokens, ctx.Reports = text, n, reportNums(reports)
			return ctx, true
		}
	}
	// Over the budget with every report: the reports alone, while they fit.
	reports = reports[:0]
	ctx.Text, ctx.Tokens, ctx.Reports = "", 0, nil
	for _, s := range subs {
		if s.content == "" {
			continue
		}
		reports = append(reports, subReport{s.c.num, s.content})
		var t strings.Builder
		writeReports(&t, reports)
		n := b.enc.Count(t.String())
		if n > b.max {
			break
		}
		ctx.Text, ctx.Tokens, ctx.Reports = t.String(), n, reportNums(reports)
	}
	return ctx, true
}

// mixed is the untrimmed context of reports ahead of the local contexts
// of comms (build_mixed_context's sort_context call).
func (b *Builder) mixed(comms []*community, reports []subReport) string {
	if b.text {
		var us []unit
		for _, c := range comms {
			us = append(us, c.units...)
		}
		return b.sortUnits(us, reports, 0)
	}
	var recs []record
	for _, c := range comms {
		recs = append(recs, c.records...)
	}
	return b.sortContext(recs, reports, 0)
}

func reportNums(rs []subReport) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.community
	}
	return out
}

// Plan is what writing the reports will ask of the model, known before it
// starts, from the local contexts.
type Plan struct {
	// Communities is how many communities have a context.
	Communities int
	// Calls is one per community whose local context is not empty: an
	// upper bound before retries, since a context rebuilt from
	// sub-community reports may come out empty.
	Calls int
	// Waiting is how many are over the budget with sub-communities: they
	// wait for those reports.
	Waiting int
	// ContextTokens adds up the contexts' tokens, those over the budget
	// taken at the budget.
	ContextTokens int
}

// Plan returns the plan of writing every community's report.
func (b *Builder) Plan() Plan {
	p := Plan{Communities: len(b.comms)}
	for _, c := range b.comms {
		if strings.TrimSpace(c.local) != "" {
			p.Calls++
		}
		if c.exceeds && len(c.children) > 0 {
			p.Waiting++
		}
		p.ContextTokens += min(c.tokens, b.max)
	}
	return p
}
