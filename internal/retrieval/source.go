package retrieval

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/snapshot"
	"github.com/kgrag/kgrag/sparqlq"
)

// Source is one graph as every mode reads it: local search (Backend),
// global search (ReportSource), the RDF article's templated SPARQL
// (TemplatesBackend) and the NetworkX article's subgraph (SubgraphBackend). A caller decides once where the graph is, memory or a
// store, and hands the same Source to each mode.
type Source interface {
	Backend
	ReportSource
	TemplatesBackend
	SubgraphRelationships(ctx context.Context, ids []string) ([]SubgraphEdge, error)
	// EntityRefs finds the entities with the given ids and those with the
	// given titles: ids first, in the order asked, then titles, each
	// entity once. Unknown ids and titles are left out.
	EntityRefs(ctx context.Context, ids, titles []string) ([]EntityRef, error)
	// EntityByNumber finds the entity whose human-readable id is n: the
	// number an answer cites ("Entities (3)"), which readers of an answer
	// have where they lack the GraphRAG id.
	EntityByNumber(ctx context.Context, n int64) (EntityRef, bool, error)
}

// EntityRef names an entity: its GraphRAG id, its title and, from a store,
// its IRI there (from memory IRI is "": it depends on the base IRI of a
// load).
type EntityRef struct {
	ID, Title, IRI string
}

var (
	_ Source          = (*MemorySource)(nil)
	_ Source          = (*SPARQLSource)(nil)
	_ SubgraphBackend = Source(nil)
)

// MemorySource answers every lookup from a graph snapshot: built in
// memory from a dataset (NewMemorySource) or mapped from the file kgrag
// embed wrote (NewGraphSource). It is safe for concurrent use.
type MemorySource struct {
	*MemoryBackend
	templates *templatesMemoryBackend
}

// NewMemorySource indexes ds. ds must not be nil, and is not read again.
func NewMemorySource(ds *graphrag.Dataset) *MemorySource {
	return NewGraphSource(snapshot.Build(ds))
}

// Close releases the snapshot (a mapped one is unmapped); lookups after it
// fail.
func (s *MemorySource) Close() error { return s.g.Close() }

// NewGraphSource reads from g, which must stay open while the source is
// used.
func NewGraphSource(g *snapshot.Graph) *MemorySource {
	m := &MemoryBackend{g: g}
	return &MemorySource{MemoryBackend: m, templates: &templatesMemoryBackend{m}}
}

func (s *MemorySource) EntityRefs(ctx context.Context, ids, titles []string) ([]EntityRef, error) {
	var out []EntityRef
	seen := map[int]bool{}
	add := func(i int, ok bool, err error) error {
		if err != nil || !ok || seen[i] {
			return err
		}
		seen[i] = true
		e, err := s.g.EntityName(i)
		if err != nil {
			return err
		}
		out = append(out, EntityRef{ID: e.ID, Title: e.Title})
		return nil
	}
	for _, id := range ids {
		if err := add(s.g.EntityIndex(id)); err != nil {
			return nil, err
		}
	}
	for _, t := range titles {
		if err := add(s.g.EntityByTitle(t)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// EntityByNumber looks at row n and n-1 first, where GraphRAG puts the
// entity numbered n (0- or 1-based), and reads every row only when
// neither holds it.
func (s *MemorySource) EntityByNumber(ctx context.Context, n int64) (EntityRef, bool, error) {
	want := strconv.FormatInt(n, 10)
	rows := s.g.Entities()
	check := func(i int) (EntityRef, bool, error) {
		e, err := s.g.EntityName(i)
		if err != nil || e.HumanReadableID != want {
			return EntityRef{}, false, err
		}
		return EntityRef{ID: e.ID, Title: e.Title}, true, nil
	}
	for _, i := range []int64{n, n - 1} {
		if i >= 0 && i < int64(rows) {
			if ref, ok, err := check(int(i)); ok || err != nil {
				return ref, ok, err
			}
		}
	}
	for i := range rows {
		if i%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return EntityRef{}, false, err
			}
		}
		if ref, ok, err := check(i); ok || err != nil {
			return ref, ok, err
		}
	}
	return EntityRef{}, false, nil
}

func (s *MemorySource) TemplateEntities(ctx context.Context, ids []string) ([]EntityRecord, error) {
	return s.templates.TemplateEntities(ctx, ids)
}

func (s *MemorySource) TemplateRelationships(ctx context.Context, ids []string, limit int) (inside, outside []RelationshipRecord, err error) {
	return s.templates.TemplateRelationships(ctx, ids, limit)
}

func (s *MemorySource) TemplateChunks(ctx context.Context, ids []string, limit int) ([]TemplateChunk, error) {
	return s.templates.TemplateChunks(ctx, ids, limit)
}

func (s *MemorySource) SubgraphRelationships(ctx context.Context, ids []string) ([]SubgraphEdge, error) {
	return s.templates.SubgraphRelationships(ctx, ids)
}

func (s *MemorySource) TemplateCommunities(ctx context.Context, ids []string, level int64, limit int) ([]TemplateCommunity, error) {
	return s.templates.TemplateCommunities(ctx, ids, level, limit)
}

// SPARQLSource answers every lookup with sparqlq's templates over a named
// graph in a store, as kgrag load writes it. It is safe for concurrent
// use.
type SPARQLSource struct {
	*SPARQLBackend
	*TemplatesSPARQLBackend
}

// NewSPARQLSource reads from the named graph graph through c.
func NewSPARQLSource(c *sparqlq.Client, graph string) *SPARQLSource {
	return &SPARQLSource{NewSPARQLBackend(c, graph), NewTemplatesSPARQLBackend(c, graph)}
}

// EntityRefs runs the entity_lookup template: one query.
func (s *SPARQLSource) EntityRefs(ctx context.Context, ids, titles []string) ([]EntityRef, error) {
	var out []EntityRef
	seen := map[string]bool{}
	err := sparqlq.SelectRows(ctx, s.SPARQLBackend.c, "entity_lookup", s.SPARQLBackend.graph,
		sparqlq.Params{"ids": sparqlq.StringsParam(ids), "titles": sparqlq.StringsParam(titles)}, func(r *sparqlq.Row) error {
			if id := r.Str("id"); !seen[id] {
				seen[id] = true
				out = append(out, EntityRef{ID: id, Title: r.Str("title"), IRI: r.Str("entity")})
			}
			return r.Err()
		})
	if err != nil {
		return nil, fmt.Errorf("retrieval: entity lookup: %w", err)
	}
	// The store returns rows in any order: ids first, as asked, then titles.
	order := func(e EntityRef) int {
		if i := slices.Index(ids, e.ID); i >= 0 {
			return i
		}
		return len(ids) + slices.Index(titles, e.Title)
	}
	slices.SortStableFunc(out, func(a, b EntityRef) int { return order(a) - order(b) })
	return out, nil
}

// EntityByNumber runs the entity_by_number template: one query.
func (s *SPARQLSource) EntityByNumber(ctx context.Context, n int64) (EntityRef, bool, error) {
	var ref EntityRef
	found := false
	err := sparqlq.SelectRows(ctx, s.SPARQLBackend.c, "entity_by_number", s.SPARQLBackend.graph,
		sparqlq.Params{"number": sparqlq.IntParam(n)}, func(r *sparqlq.Row) error {
			if !found {
				ref, found = EntityRef{ID: r.Str("id"), Title: r.Str("title"), IRI: r.Str("entity")}, true
			}
			return r.Err()
		})
	if err != nil {
		return EntityRef{}, false, fmt.Errorf("retrieval: entity numbered %d: %w", n, err)
	}
	return ref, found, nil
}
