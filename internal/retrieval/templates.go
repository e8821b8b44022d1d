package retrieval

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/kgrag/kgrag/internal/tokens"
)

// TemplateChunk is a text unit (gr:Chunk) chosen by sparql-templates mode: ID (GraphRAG's
// human_readable_id), TextUnitID, Text and NTokens are set.
// SelectedEntities is how many of the selected entities it holds, the key
// it is ranked by.
type TemplateChunk struct {
	TextUnitRecord
	SelectedEntities int64
}

// TemplateCommunity is a community and its report as sparql-templates mode ranks it. Of
// the ReportRecord, Members is not set: ID is the Leiden community number
// (what GraphRAG prints as a report's id), CommunityID the community's own
// id, Rank the report's rating (zero without one) and Weight the
// community's occurrence weight. SelectedEntities is how many of the
// selected entities it holds.
type TemplateCommunity struct {
	ReportRecord
	HumanReadableID  string
	SelectedEntities int64
}

// TemplatesBackend answers sparql-templates mode's retrievals. Each takes every selected
// entity id at once, so a remote store answers each in one round trip.
// Ids that name no entity are ignored, duplicates count once, and no ids
// means no records. A limit <= 0 means no limit. Lookups are read-only and
// idempotent; implementations are safe for concurrent use.
//
// The orders below are the sparqlq templates' orders; every implementation
// must return the same records in the same order for the same data.
//
// sparql-templates mode runs the five retrievals of the article on
// querying GraphRAG output in an RDF store (GraphDB, the gr: ontology),
// with its bugs fixed. For the entities selected by the
// vector index the RDF article fetches (1) the 3 chunks holding most of them,
// (2) the 3 communities holding them, by rank and weight, (3) the 10
// "outside" and (4) the 10 "inside" relationships, by rank and weight, and
// (5) the entities' descriptions, and hands all of it to the model.
//
// The RDF article's bugs, and what kgrag does instead (the queries are sparqlq's
// templates text_units, communities, relationships and entities):
//
//   - Entity ids were pasted between double quotes into the query text
//     (f-strings), so an id holding a quote or a backslash broke the query or
//     changed it. kgrag binds them in a VALUES block, each escaped as a
//     string literal by sparqlq.
//   - The queries named no graph and read the store's default graph. kgrag
//     reads the graph given (FROM), the one `kgrag load --graph` wrote.
//   - "Outside" relationships were filtered with ?to != id1 && ?to != id2
//     ...: every relationship of the whole graph whose target is not
//     selected, most of them touching no selected entity, so the top 10 were
//     the graph's top 10 whatever the question. "Inside" ones were filtered
//     with ?to = id1 || ...: the source could be anything. kgrag counts the
//     selected ends of each relationship: inside means both ends selected
//     (a self-loop on a selected entity included), outside exactly one, so
//     a relationship is counted once, in one of the two lists.
//   - The chunk query counted UNION matches (COUNT(?entity_uri)), so an id
//     given twice counted twice; kgrag counts distinct entities.
//   - The community query required gr:weight, which the RDF article's own loader
//     never wrote, so it returned nothing; and gr:summary, which drops
//     communities without a report silently. kgrag's loader writes the
//     occurrence weight and the query reads rank and weight as OPTIONAL.
//   - Communities of all levels were mixed, so the top 3 were often a
//     community and its own parent and grandparent (the same entities three
//     times). kgrag takes one level (TemplatesParams.CommunityLevel).
//   - ORDER BY DESC(?rank) DESC(?weight) (and DESC(?freq) for chunks) left
//     ties in store order, and the samples have many (report ranks 7.5 and
//     8.5, relationship weights 7.0 and 8.0 tens of times), so LIMIT cut at
//     a different place on each store. Every kgrag order ends with a unique
//     key (relationship id, community number, chunk id).
//   - Relationships without a description or weight were dropped (required
//     triple patterns); kgrag reads them as OPTIONAL.
//   - Texts had CR LF replaced by spaces and were pasted between double
//     quotes into a JSON-like string without escaping (convert_df_to_text),
//     so a quote in a description broke the structure. kgrag prints CSV
//     tables quoted as pandas quotes them (csvRow), in the local search
//     layout, so the same answer prompt serves both modes.
//
// Deliberate differences from the RDF article, beyond the fixes:
//   - Communities are ranked first by how many of the selected entities
//     they hold (as GraphRAG's local search ranks reports), then by rank and
//     weight: on one level each entity has one community, and the RDF article's
//     docstring asks for "the Communities that are most likely to contain
//     the Entities". A community without a summary or full content (no
//     report) is left out of the context text.
//   - The context is held to a token budget (the RDF article had none): see
//     TemplatesBuilder.TemplatesContext.
type TemplatesBackend interface {
	// TemplateEntities returns the selected entities ordered by entity id
	// (EntityRecord: ID, EntityID, Title, Description and Rank, the
	// degree, are set).
	TemplateEntities(ctx context.Context, ids []string) ([]EntityRecord, error)
	// TemplateRelationships returns the relationships with both ends selected
	// (inside) and with exactly one (outside), each ordered by rank
	// (combined degree) and weight, both descending, then relationship id;
	// at most limit of each. Inside is set; TextUnitIDs, HasWeight and Links
	// are not.
	TemplateRelationships(ctx context.Context, ids []string, limit int) (inside, outside []RelationshipRecord, err error)
	// TemplateChunks returns the text units that hold at least one selected
	// entity, ordered by how many they hold (descending), then id.
	TemplateChunks(ctx context.Context, ids []string, limit int) ([]TemplateChunk, error)
	// TemplateCommunities returns the communities of the given level that hold
	// at least one selected entity, ordered by how many they hold, report
	// rank and weight (all descending; a missing rank ranks last), then
	// community number.
	TemplateCommunities(ctx context.Context, ids []string, level int64, limit int) ([]TemplateCommunity, error)
}

// TemplatesParams are the knobs of sparql-templates mode. DefaultTemplatesParams returns the
// RDF article's numbers; the zero value is not useful.
type TemplatesParams struct {
	// TopChunks, TopCommunities, TopInside and TopOutside cap the four
	// ranked retrievals (the RDF article: 3, 3, 10, 10). Zero leaves the section
	// out without asking the backend.
	TopChunks      int
	TopCommunities int
	TopInside      int
	TopOutside     int
	// CommunityLevel is the one community level whose communities are
	// ranked. Level 0, the default, is the root level: every clustered
	// entity has a community there; deeper levels are smaller and some
	// entities have none.
	CommunityLevel int64
	// MaxContextTokens caps the context text, counted with Encoding.
	MaxContextTokens int
	ColumnDelimiter  string
	Encoding         string
}

// DefaultTemplatesParams returns the RDF article's limits, community level 0 and local
// search's budget and table format.
func DefaultTemplatesParams() TemplatesParams {
	lp := DefaultParams()
	return TemplatesParams{
		TopChunks:        3,
		TopCommunities:   3,
		TopInside:        10,
		TopOutside:       10,
		CommunityLevel:   0,
		MaxContextTokens: lp.MaxContextTokens,
		ColumnDelimiter:  lp.ColumnDelimiter,
		Encoding:         lp.Encoding,
	}
}

// Validate reports the first parameter that cannot work.
func (p TemplatesParams) Validate() error {
	switch {
	case p.TopChunks < 0 || p.TopCommunities < 0 || p.TopInside < 0 || p.TopOutside < 0:
		return fmt.Errorf("retrieval: sparql-templates params: top chunks %d, communities %d, inside %d, outside %d: each must be >= 0",
			p.TopChunks, p.TopCommunities, p.TopInside, p.TopOutside)
	case p.CommunityLevel < 0:
		return fmt.Errorf("retrieval: sparql-templates params: community level %d: must be >= 0", p.CommunityLevel)
	case p.MaxContextTokens <= 0:
		return fmt.Errorf("retrieval: sparql-templates params: max_context_tokens %d: must be > 0", p.MaxContextTokens)
	case p.ColumnDelimiter == "":
		return fmt.Errorf("retrieval: sparql-templates params: column delimiter is empty")
	}
	return nil
}

// TemplatesResult is the sparql-templates mode context of one question: the records that
// made it into Text, per section, in printed order, and Text itself.
type TemplatesResult struct {
	// Communities are printed as the Reports table (id = community number).
	Communities []TemplateCommunity
	// Entities are in the order of the selection (nearest first).
	Entities []EntityRecord
	// Relationships are the inside ones (Inside set), then the outside ones.
	Relationships []RelationshipRecord
	// Chunks are printed as the Sources table.
	Chunks []TemplateChunk
	// Text holds the Reports, Entities, Relationships and Sources tables,
	// non-empty ones only, joined by a blank line, as local search prints
	// them; Tokens counts it.
	Text   string
	Tokens int
	// Retrieved counts the records the backend returned before the budget
	// trimmed them (communities without text excluded).
	Retrieved int
	// Matched counts the selected entities the graph holds, before the
	// budget: none means the index is not of this graph, while an empty
	// Entities with some matched means only that the budget is small.
	Matched int
}

// TemplatesBuilder builds sparql-templates mode contexts from one TemplatesBackend with one set
// of TemplatesParams and one tokens.Encoder. It is safe for concurrent use if its
// backend is.
type TemplatesBuilder struct {
	backend TemplatesBackend
	params  TemplatesParams
	enc     *tokens.Encoder
}

// NewTemplatesBuilder validates p and returns a builder counting tokens with
// enc, which must match p.Encoding; a nil enc builds one (a few hundred
// milliseconds: keep the builder, or share one encoder between builders).
func NewTemplatesBuilder(b TemplatesBackend, p TemplatesParams, enc *tokens.Encoder) (*TemplatesBuilder, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	enc, err := encoderFor(enc, p.Encoding)
	if err != nil {
		return nil, err
	}
	return &TemplatesBuilder{backend: b, params: p, enc: enc}, nil
}

// templatesRetrieved is what the four lookups return.
type templatesRetrieved struct {
	ents            []EntityRecord
	inside, outside []RelationshipRecord
	chunks          []TemplateChunk
	comms           []TemplateCommunity
}

// TemplatesContext runs the RDF article's retrievals for the selected entity ids (kNN
// order, nearest first; duplicates and unknown ids are ignored) and prints
// them as tables. The four lookups run concurrently (four round trips to a
// store).
//
// The budget is filled table by table in this priority: Entities (in
// selection order), Relationships (inside, then outside), Reports (the
// communities' summaries) and Sources (the chunks' text), each row by row
// with fill into what the tables before it left, so that when the
// budget is short the bulky chunk texts go first and the nearest entities
// stay. If joining the tables still exceeds MaxContextTokens, rows are
// dropped from the end of the lowest-priority table until it fits.
//
// A record whose human_readable_id is empty is printed (and returned) with
// its own id instead, so that every row can be cited.
//
// Errors come from the backend, wrapped with the lookup that failed.
func (b *TemplatesBuilder) TemplatesContext(ctx context.Context, selected []string) (*TemplatesResult, error) {
	ids := uniqueIDs(selected)
	r, err := b.retrieve(ctx, ids)
	if err != nil {
		return nil, err
	}
	pos := make(map[string]int, len(ids))
	for i, id := range ids {
		pos[id] = i
	}
	slices.SortStableFunc(r.ents, func(x, y EntityRecord) int { return cmp.Compare(pos[x.EntityID], pos[y.EntityID]) })
	for i := range r.ents {
		r.ents[i].ID = cmp.Or(r.ents[i].ID, r.ents[i].EntityID)
	}
	rels := slices.Concat(r.inside, r.outside)
	for i := range rels {
		rels[i].ID = cmp.Or(rels[i].ID, rels[i].RelationshipID)
	}
	for i := range r.chunks {
		r.chunks[i].ID = cmp.Or(r.chunks[i].ID, r.chunks[i].TextUnitID)
	}
	var comms []TemplateCommunity
	for _, c := range r.comms {
		if communityText(c) != "" {
			comms = append(comms, c)
		}
	}
	res := b.render(r.ents, rels, comms, r.chunks)
	res.Matched = len(r.ents)
	return res, nil
}

// retrieve runs the four lookups concurrently.
func (b *TemplatesBuilder) retrieve(ctx context.Context, ids []string) (*templatesRetrieved, error) {
	p := b.params
	var r templatesRetrieved
	if len(ids) == 0 {
		return &r, nil
	}
	var errs [4]error
	var wg sync.WaitGroup
	wg.Go(func() {
		r.ents, errs[0] = b.backend.TemplateEntities(ctx, ids)
	})
	if p.TopInside > 0 || p.TopOutside > 0 {
		wg.Go(func() {
			r.inside, r.outside, errs[1] = b.backend.TemplateRelationships(ctx, ids, max(p.TopInside, p.TopOutside))
			r.inside = r.inside[:min(len(r.inside), p.TopInside)]
			r.outside = r.outside[:min(len(r.outside), p.TopOutside)]
		})
	}
	if p.TopChunks > 0 {
		wg.Go(func() { r.chunks, errs[2] = b.backend.TemplateChunks(ctx, ids, p.TopChunks) })
	}
	if p.TopCommunities > 0 {
		wg.Go(func() {
			r.comms, errs[3] = b.backend.TemplateCommunities(ctx, ids, p.CommunityLevel, p.TopCommunities)
		})
	}
	wg.Wait()
	for i, what := range [...]string{"entities", "relationships", "chunks", "communities"} {
		if errs[i] != nil {
			return nil, fmt.Errorf("retrieval: sparql-templates context: %s: %w", what, errs[i])
		}
	}
	return &r, nil
}

// seedTable is one printed table: render prints its first n rows, those
// that fit into budget, and says how many it printed.
type seedTable struct {
	n      int
	render func(budget int) (int, table)
}

// seedTableOf makes a table of rows, all of them kept to begin with.
func seedTableOf[T any](enc *tokens.Encoder, header string, rows []T, line func(T) string) *seedTable {
	t := &seedTable{n: len(rows)}
	t.render = func(budget int) (int, table) {
		chosen, tab := fill(enc, header, rows[:t.n], budget, line)
		return len(chosen), tab
	}
	return t
}

// render fills the four tables into the budget (see TemplatesContext).
func (b *TemplatesBuilder) render(ents []EntityRecord, rels []RelationshipRecord, comms []TemplateCommunity, chunks []TemplateChunk) *TemplatesResult {
	p := b.params
	row := func(fields ...string) string { return CSVRow(fields, p.ColumnDelimiter) }
	header := func(section string, cols ...string) string { return "-----" + section + "-----\n" + row(cols...) }
	// In fill priority.
	tables := []*seedTable{
		seedTableOf(b.enc, header(SectionEntities, "id", "entity", "description", "number of relationships"), ents,
			func(e EntityRecord) string { return row(e.ID, e.Title, e.Description, strconv.FormatInt(e.Rank, 10)) }),
		seedTableOf(b.enc, header(SectionRelationships, "id", "source", "target", "description", "weight"), rels,
			func(r RelationshipRecord) string {
				w := ""
				if r.Weight != 0 { // as local search prints it
					w = pyFloat(r.Weight)
				}
				return row(r.ID, r.Source, r.Target, r.Description, w)
			}),
		seedTableOf(b.enc, header(SectionReports, "id", "title", "summary"), comms,
			func(c TemplateCommunity) string { return row(c.ID, c.Title, communityText(c)) }),
		seedTableOf(b.enc, header(SectionSources, "id", "text"), chunks,
			func(c TemplateChunk) string { return row(c.ID, c.Text) }),
	}
	// Printed as local search prints: Reports, Entities, Relationships, Sources.
	printed := [...]int{2, 0, 1, 3}
	tabs := make([]table, len(tables))
	join := func() table {
		var parts []table
		for _, i := range printed {
			parts = append(parts, tabs[i])
		}
		return joinTables(b.enc, parts...)
	}

	sep := b.enc.Count("\n\n")
	left := p.MaxContextTokens
	for i, t := range tables {
		n, tab := t.render(left)
		if t.n = n; n > 0 {
			tabs[i] = tab
			left -= tab.count(b.enc) + sep
		}
	}
	// Token counts do not add up exactly across the joins: trim from the
	// end of the lowest-priority table until the whole fits.
	all := join()
	tokens := all.count(b.enc)
	for i := len(tables) - 1; tokens > p.MaxContextTokens && i >= 0; {
		t := tables[i]
		if t.n == 0 {
			i--
			continue
		}
		t.n--
		tabs[i] = table{}
		if t.n > 0 {
			_, tabs[i] = t.render(math.MaxInt)
		}
		all = join()
		tokens = all.count(b.enc)
	}
	text := all.text
	return &TemplatesResult{
		Entities:      ents[:tables[0].n],
		Relationships: rels[:tables[1].n],
		Communities:   comms[:tables[2].n],
		Chunks:        chunks[:tables[3].n],
		Text:          text,
		Tokens:        tokens,
		Retrieved:     len(ents) + len(rels) + len(comms) + len(chunks),
	}
}

// communityText is what the Reports table prints for a community: the
// report's summary (what the RDF article printed), else its full content.
func communityText(c TemplateCommunity) string { return cmp.Or(c.Summary, c.FullContent) }

// checkLevel refuses a community level no community can have.
func checkLevel(level int64) error {
	if level < 0 {
		return fmt.Errorf("retrieval: sparql-templates communities: level %d: must be >= 0", level)
	}
	return nil
}

// uniqueIDs returns ids without repeats, in first-seen order.
func uniqueIDs(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
