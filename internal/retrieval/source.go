package retrieval

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/sparqlq"
)

// Source is one graph as every mode reads it: local search (Backend),
// global search (ReportSource), the RDF article's templated SPARQL
// (SeedBackend) and the NetworkX article's subgraph (SubgraphBackend). A caller decides once where the graph is, memory or a
// store, and hands the same Source to each mode.
type Source interface {
	Backend
	ReportSource
	SeedBackend
	SubgraphRelationships(ctx context.Context, ids []string) ([]SubgraphEdge, error)
	// EntityRefs finds the entities with the given ids and those with the
	// given titles: ids first, in the order asked, then titles, each
	// entity once. Unknown ids and titles are left out.
	EntityRefs(ctx context.Context, ids, titles []string) ([]EntityRef, error)
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

// MemorySource answers every lookup from a dataset in memory. The seed
// mode's extra indexes are built on its first lookup, so a source used
// for local and global search alone does not pay for them. It is safe for
// concurrent use as long as the dataset is not written to.
type MemorySource struct {
	*MemoryBackend
	seed   func() *seedMemoryBackend
	titles func() map[string]int // title -> first index in ds.Entities
}

// NewMemorySource indexes ds. ds must not be nil.
func NewMemorySource(ds *graphrag.Dataset) *MemorySource {
	m := NewMemoryBackend(ds)
	return &MemorySource{MemoryBackend: m,
		seed: sync.OnceValue(func() *seedMemoryBackend { return newSeedMemoryBackend(ds, m) }),
		titles: sync.OnceValue(func() map[string]int {
			t := make(map[string]int, len(ds.Entities))
			for i, e := range ds.Entities {
				if _, dup := t[e.Title]; !dup && !e.Placeholder {
					t[e.Title] = i
				}
			}
			return t
		}),
	}
}

func (s *MemorySource) EntityRefs(ctx context.Context, ids, titles []string) ([]EntityRef, error) {
	var out []EntityRef
	seen := map[int]bool{}
	add := func(i int, ok bool) {
		if ok && !seen[i] {
			seen[i] = true
			e := &s.ds.Entities[i]
			out = append(out, EntityRef{ID: e.ID, Title: e.Title})
		}
	}
	for _, id := range ids {
		i, ok := s.entities[id]
		add(i, ok)
	}
	for _, t := range titles {
		i, ok := s.titles()[t]
		add(i, ok)
	}
	return out, nil
}

func (s *MemorySource) SeedEntities(ctx context.Context, ids []string) ([]EntityRecord, error) {
	return s.seed().SeedEntities(ctx, ids)
}

func (s *MemorySource) SeedRelationships(ctx context.Context, ids []string, limit int) (inside, outside []RelationshipRecord, err error) {
	return s.seed().SeedRelationships(ctx, ids, limit)
}

func (s *MemorySource) SeedChunks(ctx context.Context, ids []string, limit int) ([]SeedChunk, error) {
	return s.seed().SeedChunks(ctx, ids, limit)
}

func (s *MemorySource) SubgraphRelationships(ctx context.Context, ids []string) ([]SubgraphEdge, error) {
	return s.seed().SubgraphRelationships(ctx, ids)
}

func (s *MemorySource) SeedCommunities(ctx context.Context, ids []string, level int64, limit int) ([]SeedCommunity, error) {
	return s.seed().SeedCommunities(ctx, ids, level, limit)
}

// SPARQLSource answers every lookup with sparqlq's templates over a named
// graph in a store, as kgrag load writes it. It is safe for concurrent
// use.
type SPARQLSource struct {
	*SPARQLBackend
	*SeedSPARQLBackend
}

// NewSPARQLSource reads from the named graph graph through c.
func NewSPARQLSource(c *sparqlq.Client, graph string) *SPARQLSource {
	return &SPARQLSource{NewSPARQLBackend(c, graph), NewSeedSPARQLBackend(c, graph)}
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
