package retrieval

import (
	"context"
	"sync"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/sparqlq"
)

// Source is one graph as every mode reads it: local search (Backend),
// global search (ReportSource) and the seed article's retrieval
// (SeedBackend). A caller decides once where the graph is, memory or a
// store, and hands the same Source to each mode.
type Source interface {
	Backend
	ReportSource
	SeedBackend
}

var (
	_ Source = (*MemorySource)(nil)
	_ Source = (*SPARQLSource)(nil)
)

// MemorySource answers every lookup from a dataset in memory. The seed
// mode's extra indexes are built on its first lookup, so a source used
// for local and global search alone does not pay for them. It is safe for
// concurrent use as long as the dataset is not written to.
type MemorySource struct {
	*MemoryBackend
	seed func() *SeedMemoryBackend
}

// NewMemorySource indexes ds. ds must not be nil.
func NewMemorySource(ds *graphrag.Dataset) *MemorySource {
	m := NewMemoryBackend(ds)
	return &MemorySource{MemoryBackend: m, seed: sync.OnceValue(func() *SeedMemoryBackend { return newSeedMemoryBackend(ds, m) })}
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
