package retrieval

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/kgrag/kgrag/sparqlq"
)

var _ Backend = (*SPARQLBackend)(nil)

// SPARQLBackend answers Backend lookups from a GraphRAG graph in the gr:
// ontology held by a SPARQL store (as `kgrag load` writes it). Each lookup
// is one query (the local_* templates of sparqlq), whatever the number of
// ids, so a question costs four round trips. It is safe for concurrent use.
//
// RDF keeps no list order, so where GraphRAG's order matters the backend
// restores it from data: an entity's text units are ordered by their
// human_readable_id, then id (GraphRAG writes them in text unit table
// order, which is human_readable_id order from release 1.0 on), and
// relationships by human_readable_id. MemoryBackend uses the same orders.
type SPARQLBackend struct {
	c     *sparqlq.Client
	graph string
}

// NewSPARQLBackend reads from the named graph graph (an IRI, as kgrag load
// writes one; lookups fail when it is empty) through c.
func NewSPARQLBackend(c *sparqlq.Client, graph string) *SPARQLBackend {
	return &SPARQLBackend{c: c, graph: graph}
}

// run executes the embedded template name with ids (and extra params) and
// hands each row to f.
func (b *SPARQLBackend) run(ctx context.Context, name string, ids []string, extra sparqlq.Params, f func(r *sparqlq.Row)) error {
	p := sparqlq.Params{"ids": sparqlq.StringsParam(ids)}
	for k, v := range extra {
		p[k] = v
	}
	err := sparqlq.SelectRows(ctx, b.c, name, b.graph, p, func(r *sparqlq.Row) error {
		f(r)
		return r.Err()
	})
	if err != nil {
		return fmt.Errorf("retrieval: %w", err)
	}
	return nil
}

// hrid reads a human_readable_id as GraphRAG prints it: an integer, or
// "" when the graph has none.
func hrid(r *sparqlq.Row, v string) string {
	if !r.Has(v) {
		return ""
	}
	return strconv.FormatInt(r.Int(v), 10)
}

// unitRef is a text unit id with the human_readable_id that orders it.
type unitRef struct{ id, hrid string }

func compareUnits(x, y unitRef) int {
	if c := compareIDs(x.hrid, y.hrid); c != 0 {
		return c
	}
	return cmp.Compare(x.id, y.id)
}

// addUnique appends s to list unless it is there already.
func addUnique[T comparable](list []T, s T) []T {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// Entities implements Backend.
func (b *SPARQLBackend) Entities(ctx context.Context, ids []string) ([]EntityRecord, error) {
	if len(ids) == 0 {
		return nil, ctx.Err()
	}
	byID := make(map[string]*EntityRecord)
	units := make(map[string][]unitRef)
	err := b.run(ctx, "local_entities", ids, nil, func(r *sparqlq.Row) {
		id := r.Str("id")
		if r.Has("unit") {
			units[id] = addUnique(units[id], unitRef{r.Str("unit"), hrid(r, "unit_hrid")})
			return
		}
		byID[id] = &EntityRecord{
			ID: hrid(r, "human_readable_id"), EntityID: id, Title: r.Str("title"),
			Description: r.Str("description"), Rank: r.Int("degree"),
		}
	})
	if err != nil {
		return nil, err
	}
	var out []EntityRecord
	for _, id := range ids {
		e := byID[id]
		if e == nil {
			continue
		}
		delete(byID, id) // a repeated id comes once
		us := units[id]
		slices.SortFunc(us, compareUnits)
		for _, u := range us {
			e.TextUnitIDs = append(e.TextUnitIDs, u.id)
		}
		out = append(out, *e)
	}
	return out, nil
}

// Relationships implements Backend.
func (b *SPARQLBackend) Relationships(ctx context.Context, entityIDs []string) ([]RelationshipRecord, error) {
	if len(entityIDs) == 0 {
		return nil, ctx.Err()
	}
	// A relationship with both ends selected comes twice; keep one.
	byID := make(map[string]RelationshipRecord)
	err := b.run(ctx, "local_relationships", entityIDs, nil, func(r *sparqlq.Row) {
		id := r.Str("id")
		byID[id] = RelationshipRecord{
			ID: hrid(r, "human_readable_id"), RelationshipID: id,
			Source: r.Str("source_title"), Target: r.Str("target_title"),
			SourceID: r.Str("source_id"), TargetID: r.Str("target_id"),
			Description: r.Str("description"), Weight: r.Float("weight"), HasWeight: r.Has("weight"),
			Rank: r.Int("rank"),
		}
	})
	if err != nil {
		return nil, err
	}
	out := slices.Collect(maps.Values(byID))
	slices.SortFunc(out, func(x, y RelationshipRecord) int {
		if c := compareIDs(x.ID, y.ID); c != 0 {
			return c
		}
		return cmp.Compare(x.RelationshipID, y.RelationshipID)
	})
	return out, nil
}

// TextUnits implements Backend.
func (b *SPARQLBackend) TextUnits(ctx context.Context, ids []string) ([]TextUnitRecord, error) {
	if len(ids) == 0 {
		return nil, ctx.Err()
	}
	byID := make(map[string]*TextUnitRecord)
	rels := make(map[string][]string)
	err := b.run(ctx, "local_text_units", ids, nil, func(r *sparqlq.Row) {
		id := r.Str("id")
		if r.Has("relationship") {
			rels[id] = addUnique(rels[id], r.Str("relationship"))
			return
		}
		byID[id] = &TextUnitRecord{ID: hrid(r, "human_readable_id"), TextUnitID: id, Text: r.Str("text"), NTokens: r.Int("n_tokens")}
	})
	if err != nil {
		return nil, err
	}
	for id, u := range byID {
		u.RelationshipIDs = rels[id]
	}
	var out []TextUnitRecord
	for _, id := range ids {
		if u := byID[id]; u != nil {
			delete(byID, id)
			out = append(out, *u)
		}
	}
	return out, nil
}

// Reports implements Backend.
func (b *SPARQLBackend) Reports(ctx context.Context, entityIDs []string, maxLevel int64) ([]ReportRecord, error) {
	if len(entityIDs) == 0 {
		return nil, ctx.Err()
	}
	byID := make(map[string]*ReportRecord)
	members := make(map[string]map[string]bool)
	parents := make(map[string]bool)
	commsOf := make(map[string][]string) // every community up to the level, report or not
	err := b.run(ctx, "local_reports", entityIDs, sparqlq.Params{"level": sparqlq.IntParam(maxLevel)}, func(r *sparqlq.Row) {
		id := strconv.FormatInt(r.Int("community"), 10)
		if m := r.Str("member"); !slices.Contains(commsOf[m], id) {
			commsOf[m] = append(commsOf[m], id)
		}
		if r.Has("parent") {
			parents[strconv.FormatInt(r.Int("parent"), 10)] = true
		}
		if !r.Has("report_id") && !r.Has("summary") && !r.Has("full_content") && !r.Has("rank") {
			return // no report: only its parent matters
		}
		rep := byID[id]
		if rep == nil {
			rep = &ReportRecord{
				ID: id, CommunityID: r.Str("community_id"), Level: r.Int("level"),
				Title: r.Str("title"), Summary: r.Str("summary"), FullContent: r.Str("full_content"),
				Rank: r.Float("rank"), Weight: r.Float("weight"),
			}
			byID[id] = rep
			members[id] = make(map[string]bool)
		}
		members[id][r.Str("member")] = true
	})
	if err != nil {
		return nil, err
	}
	order := firstSeen(entityIDs, func(id string) []string { return commsOf[id] })
	out := make([]ReportRecord, 0, len(byID))
	for id, rep := range byID {
		rep.FirstSeen = order[id]
		// The sub-communities of a community hold all its members, so one
		// up to maxLevel would be among the rows (see local_reports.rq).
		rep.Deepest = !parents[id]
		seen := make(map[string]bool)
		for _, e := range entityIDs { // members in the order asked for
			if members[id][e] && !seen[e] {
				seen[e] = true
				rep.Members = append(rep.Members, e)
			}
		}
		out = append(out, *rep)
	}
	slices.SortFunc(out, func(x, y ReportRecord) int { return compareIDs(x.ID, y.ID) })
	return out, nil
}

var _ ReportSource = (*SPARQLBackend)(nil)

// CommunityReports implements ReportSource with one query
// (global_reports), whatever the number of communities.
func (b *SPARQLBackend) CommunityReports(ctx context.Context, maxLevel int64) ([]ReportRecord, error) {
	hasSub := make(map[string]bool)
	seen := make(map[string]bool)
	var out []ReportRecord
	err := sparqlq.SelectRows(ctx, b.c, "global_reports", b.graph, sparqlq.Params{"level": sparqlq.IntParam(maxLevel)},
		func(r *sparqlq.Row) error {
			id := strconv.FormatInt(r.Int("community"), 10)
			parent := ""
			if r.Has("parent") {
				parent = strconv.FormatInt(r.Int("parent"), 10)
				hasSub[parent] = true
			}
			if seen[id] || (!r.Has("report_id") && !r.Has("summary") && !r.Has("full_content") && !r.Has("rank")) {
				return r.Err()
			}
			seen[id] = true
			out = append(out, ReportRecord{
				ID: id, CommunityID: r.Str("community_id"), Level: r.Int("level"),
				Title: r.Str("title"), Summary: r.Str("summary"), FullContent: r.Str("full_content"),
				Rank: r.Float("rank"), Weight: r.Float("weight"), Parent: parent,
			})
			return r.Err()
		})
	if err != nil {
		return nil, fmt.Errorf("retrieval: %w", err)
	}
	return finishReports(out, hasSub), nil
}
