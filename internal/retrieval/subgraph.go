package retrieval

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/kgrag/kgrag/internal/tokens"
)

// SubgraphEdge is a relationship as subgraph mode ranks it: the record
// (ID, RelationshipID, Source, Target, SourceID, TargetID, Description,
// Weight, HasWeight set) and the human_readable_ids of its two ends, which
// order its ties (see SubgraphRecords).
type SubgraphEdge struct {
	RelationshipRecord
	SourceHRID, TargetHRID string
}

// SubgraphBackend answers subgraph mode's lookups; each takes every
// selected entity id at once (one round trip to a store). Unknown ids
// are ignored; lookups are read-only, idempotent and safe for concurrent
// use. Source is one.
type SubgraphBackend interface {
	// TemplateEntities gives the entities' descriptions and TemplateChunks (limit
	// 0) every text unit that holds one of them: see TemplatesBackend.
	TemplateEntities(ctx context.Context, ids []string) ([]EntityRecord, error)
	TemplateChunks(ctx context.Context, ids []string, limit int) ([]TemplateChunk, error)
	// Reports gives the reported communities of the entities: see Backend.
	Reports(ctx context.Context, entityIDs []string, maxLevel int64) ([]ReportRecord, error)
	// SubgraphRelationships returns every relationship with at least one
	// end selected and both ends entities of the graph, in any order.
	SubgraphRelationships(ctx context.Context, ids []string) ([]SubgraphEdge, error)
}

// SubgraphParams are the knobs of subgraph mode. DefaultSubgraphParams
// returns the article's numbers; the zero value is not useful.
type SubgraphParams struct {
	// TopNodes is how many nodes the vector index gives (the article's
	// topk_nodes, 12); the caller asks the index for them.
	TopNodes int
	// TopInside and TopOutside cap the relationships between two selected
	// nodes and between one and another node (topk_internal_rel and
	// topk_external_rel, 12 each). Zero leaves them out.
	TopInside, TopOutside int
	// MaxContextTokens caps the context text (the article had no cap),
	// counted with Encoding; ColumnDelimiter separates table columns.
	MaxContextTokens int
	ColumnDelimiter  string
	Encoding         string
}

// DefaultSubgraphParams returns the article's limits (12 nodes, 12 inside
// and 12 outside relationships) and local search's budget and table
// format.
func DefaultSubgraphParams() SubgraphParams {
	lp := DefaultParams()
	return SubgraphParams{TopNodes: 12, TopInside: 12, TopOutside: 12,
		MaxContextTokens: lp.MaxContextTokens, ColumnDelimiter: lp.ColumnDelimiter, Encoding: lp.Encoding}
}

// Validate reports the first parameter that cannot work.
func (p SubgraphParams) Validate() error {
	switch {
	case p.TopNodes <= 0:
		return fmt.Errorf("retrieval: subgraph params: top_k_entities %d: must be > 0", p.TopNodes)
	case p.TopInside < 0 || p.TopOutside < 0:
		return fmt.Errorf("retrieval: subgraph params: top_k_relationships %d, %d: must be >= 0", p.TopInside, p.TopOutside)
	}
	return p.printer().Validate()
}

// printer are the parameters of the table printer shared with sparql-templates.
func (p SubgraphParams) printer() TemplatesParams {
	return TemplatesParams{MaxContextTokens: p.MaxContextTokens, ColumnDelimiter: p.ColumnDelimiter, Encoding: p.Encoding}
}

// NodeSummary is a selected node's community summary: the reports of its
// deepest communities (those of the highest level among its reported
// communities; one in a Leiden hierarchy). Reports is empty for a node in
// no reported community.
type NodeSummary struct {
	EntityID string
	Level    int64
	Reports  []ReportRecord
}

// SubgraphRecords are the records the query step of the article on
// GraphRAG with NetworkX (its section 9) selects for the nodes nearest a
// question, before any budget:
//
//   - Chunks: every text unit of every selected node, each once. The
//     article took list(set(chunks)), in no defined order; kgrag orders by
//     how many selected nodes a unit holds, then id (TemplateChunks' order).
//   - Inside, Outside: the relationships with both ends selected, and
//     with exactly one, each sorted by score (GraphRAG's weight: the
//     strength the model gave, summed over mentions) descending and cut at
//     TopInside and TopOutside. The article sorted G.edges() with Python's
//     stable sort, so ties kept the graph's edge order; kgrag uses the
//     order a NetworkX multigraph lists when built from GraphRAG's tables
//     in human_readable_id order (entities as nodes, then relationships as
//     edges): by the earlier end's position, then by the first
//     relationship between the same two entities, then by the
//     relationship's own id. A missing weight sorts last.
//   - Entities: the nodes those relationships touch (selected or not),
//     with their descriptions, in order of first appearance (inside
//     before outside, source before target). As in the article, a selected
//     node that no kept relationship touches is not among them.
//   - Summaries: one per selected node found in the graph, in selection
//     order: the node's deepest community summary (the article's
//     community_summaries[0], its levels sorted deepest first).
//
// The article held the graph in a networkx.Graph, which merges a
// relationship A->B with a later B->A (the later one's data stands);
// GraphRAG keeps both, and so does kgrag: each is an edge of its own.
type SubgraphRecords struct {
	Chunks          []TemplateChunk
	Inside, Outside []RelationshipRecord
	Entities        []EntityRecord
	Summaries       []NodeSummary
	// Found are the selected ids that name an entity, in selection order.
	Found []string
}

// SubgraphResult is subgraph mode's context of one question: the records
// selected, and the part of them printed within the budget as tables
// (Context: Reports, Entities, Relationships, Sources, as sparql-templates mode and
// local search print them).
type SubgraphResult struct {
	Records *SubgraphRecords
	Context *TemplatesResult
}

// SubgraphBuilder builds subgraph mode contexts from one SubgraphBackend.
// It is safe for concurrent use if its backend is.
type SubgraphBuilder struct {
	backend SubgraphBackend
	params  SubgraphParams
	printer *TemplatesBuilder
}

// NewSubgraphBuilder validates p and returns a builder counting tokens
// with enc (nil builds one; it must match p.Encoding).
func NewSubgraphBuilder(b SubgraphBackend, p SubgraphParams, enc *tokens.Encoder) (*SubgraphBuilder, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	printer, err := NewTemplatesBuilder(nil, p.printer(), enc)
	if err != nil {
		return nil, err
	}
	return &SubgraphBuilder{backend: b, params: p, printer: printer}, nil
}

// Params are the builder's parameters.
func (b *SubgraphBuilder) Params() SubgraphParams { return b.params }

// Records selects the records of the nodes selected (kNN order, nearest
// first; duplicates and unknown ids are ignored): four lookups at once,
// then one for the descriptions of the nodes the relationships touch.
// Errors come from the backend, wrapped with the lookup that failed.
func (b *SubgraphBuilder) Records(ctx context.Context, selected []string) (*SubgraphRecords, error) {
	ids := uniqueIDs(selected)
	out := &SubgraphRecords{}
	if len(ids) == 0 {
		return out, nil
	}
	var (
		ents    []EntityRecord
		edges   []SubgraphEdge
		reports []ReportRecord
		errs    [4]error
		wg      sync.WaitGroup
	)
	wg.Go(func() { ents, errs[0] = b.backend.TemplateEntities(ctx, ids) })
	wg.Go(func() { out.Chunks, errs[1] = b.backend.TemplateChunks(ctx, ids, 0) })
	wg.Go(func() { reports, errs[2] = b.backend.Reports(ctx, ids, math.MaxInt32) })
	if b.params.TopInside > 0 || b.params.TopOutside > 0 {
		wg.Go(func() { edges, errs[3] = b.backend.SubgraphRelationships(ctx, ids) })
	}
	wg.Wait()
	for i, what := range [...]string{"entities", "chunks", "communities", "relationships"} {
		if errs[i] != nil {
			return nil, fmt.Errorf("retrieval: subgraph: %s: %w", what, errs[i])
		}
	}
	found := make(map[string]EntityRecord, len(ents))
	for _, e := range ents {
		found[e.EntityID] = e
	}
	for _, id := range ids {
		if _, ok := found[id]; ok {
			out.Found = append(out.Found, id)
		}
	}
	for i := range out.Chunks {
		out.Chunks[i].ID = cmp.Or(out.Chunks[i].ID, out.Chunks[i].TextUnitID)
	}
	out.Inside, out.Outside = rankEdges(edges, found, b.params.TopInside, b.params.TopOutside)
	out.Summaries = nodeSummaries(out.Found, reports)

	var touched, missing []string
	for _, r := range slices.Concat(out.Inside, out.Outside) {
		for _, id := range []string{r.SourceID, r.TargetID} {
			if !slices.Contains(touched, id) {
				touched = append(touched, id)
				if _, ok := found[id]; !ok {
					missing = append(missing, id)
				}
			}
		}
	}
	if len(missing) > 0 {
		more, err := b.backend.TemplateEntities(ctx, missing)
		if err != nil {
			return nil, fmt.Errorf("retrieval: subgraph: entities touched: %w", err)
		}
		for _, e := range more {
			found[e.EntityID] = e
		}
	}
	for _, id := range touched {
		if e, ok := found[id]; ok {
			e.ID = cmp.Or(e.ID, e.EntityID)
			out.Entities = append(out.Entities, e)
		}
	}
	return out, nil
}

// rankEdges splits edges into inside and outside ones (by the selected
// ends among sel) and keeps the top of each (see SubgraphRecords).
func rankEdges(edges []SubgraphEdge, sel map[string]EntityRecord, topIn, topOut int) (inside, outside []RelationshipRecord) {
	// The first relationship between each two entities, either way round:
	// where a NetworkX multigraph files the pair in its adjacency.
	type pair struct{ a, b string }
	pairOf := func(e SubgraphEdge) pair {
		if e.SourceID < e.TargetID {
			return pair{e.SourceID, e.TargetID}
		}
		return pair{e.TargetID, e.SourceID}
	}
	first := make(map[pair]string)
	for _, e := range edges {
		p := pairOf(e)
		if f, ok := first[p]; !ok || compareIDs(e.ID, f) < 0 {
			first[p] = e.ID
		}
	}
	earlier := func(e SubgraphEdge) nodePos {
		s, t := nodePos{e.SourceHRID, e.SourceID}, nodePos{e.TargetHRID, e.TargetID}
		if t.compare(s) < 0 {
			return t
		}
		return s
	}
	edges = slices.Clone(edges)
	slices.SortStableFunc(edges, func(x, y SubgraphEdge) int {
		return cmp.Or(
			compareOptional(y.HasWeight, y.Weight, x.HasWeight, x.Weight),
			earlier(x).compare(earlier(y)),
			compareIDs(first[pairOf(x)], first[pairOf(y)]),
			compareIDs(x.ID, y.ID),
			cmp.Compare(x.RelationshipID, y.RelationshipID))
	})
	for _, e := range edges {
		_, s := sel[e.SourceID]
		_, t := sel[e.TargetID]
		r := e.RelationshipRecord
		r.ID = cmp.Or(r.ID, r.RelationshipID)
		switch {
		case s && t:
			if len(inside) < topIn {
				r.Inside = true
				inside = append(inside, r)
			}
		case s || t:
			if len(outside) < topOut {
				outside = append(outside, r)
			}
		}
	}
	return inside, outside
}

// nodePos is an entity's position among a NetworkX graph's nodes:
// human_readable_id, then id (a placeholder entity has no
// human_readable_id and comes after the others).
type nodePos struct{ hrid, id string }

func (x nodePos) compare(y nodePos) int {
	return cmp.Or(compareIDs(x.hrid, y.hrid), cmp.Compare(x.id, y.id))
}

// nodeSummaries is each found node's deepest reported communities.
func nodeSummaries(found []string, reports []ReportRecord) []NodeSummary {
	out := make([]NodeSummary, 0, len(found))
	for _, id := range found {
		s := NodeSummary{EntityID: id, Level: -1}
		for _, r := range reports {
			if !slices.Contains(r.Members, id) {
				continue
			}
			switch {
			case r.Level > s.Level:
				s.Level, s.Reports = r.Level, []ReportRecord{r}
			case r.Level == s.Level:
				s.Reports = append(s.Reports, r)
			}
		}
		slices.SortFunc(s.Reports, func(x, y ReportRecord) int { return compareIDs(x.ID, y.ID) })
		out = append(out, s)
	}
	return out
}

// SubgraphContext selects the records (Records) and prints them as tables
// within MaxContextTokens: Entities (the nodes touched), Relationships
// (inside, then outside), Reports (the nodes' community summaries, each
// community once, in selection order) and Sources (the chunks), filled in
// that priority as TemplatesBuilder.TemplatesContext fills them.
func (b *SubgraphBuilder) SubgraphContext(ctx context.Context, selected []string) (*SubgraphResult, error) {
	recs, err := b.Records(ctx, selected)
	if err != nil {
		return nil, err
	}
	var comms []TemplateCommunity
	seen := map[string]bool{}
	for _, s := range recs.Summaries {
		for _, r := range s.Reports {
			c := TemplateCommunity{ReportRecord: r}
			if !seen[r.ID] && communityText(c) != "" {
				seen[r.ID] = true
				comms = append(comms, c)
			}
		}
	}
	rels := slices.Concat(recs.Inside, recs.Outside)
	res := b.printer.render(slices.Clone(recs.Entities), rels, comms, slices.Clone(recs.Chunks))
	return &SubgraphResult{Records: recs, Context: res}, nil
}
