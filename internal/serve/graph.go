package serve

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kgrag/kgrag/internal/globalsearch"
	"github.com/kgrag/kgrag/internal/localsearch"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/ontology"
	"github.com/kgrag/kgrag/sparqlq"
)

// Graph is what one load serves: the graph's source, the search engines
// over it, and what pages need. A Graph is never changed once served;
// Reload replaces it whole.
type Graph struct {
	// Name says where the graph was read from, for /readyz and logs.
	Name string
	// Source answers record lookups (entity, community and text unit
	// pages).
	Source retrieval.Source
	// Local, Seed, Subgraph and Thoughts answer the kgrag-local,
	// kgrag-sparql-templates, kgrag-subgraph and kgrag-graph-of-thoughts
	// models; nil when no vector index was given, which leaves global
	// search alone.
	Local, Seed, Subgraph, Thoughts *localsearch.Searcher
	// Global answers kgrag-global.
	Global *globalsearch.Searcher
	// GlobalLevel is the community level global search reads, for its
	// record.
	GlobalLevel int64
	// Base is the base IRI kgrag load mints instance IRIs under, for the
	// IRIs of entities read from memory (a store gives its own); "" leaves
	// them out.
	Base string
	// Store and StoreGraph are the store and named graph the graph is
	// read from, for read-only SPARQL (the sparql_select tool); nil for a
	// graph in memory.
	Store      *sparqlq.Client
	StoreGraph string
	// Reports are every community report, for community pages.
	Reports []retrieval.ReportRecord
	// Close, when set, releases what the graph holds (mapped snapshot and
	// index files). The server calls it once, after a reload replaced the
	// graph and the last request that used it ended.
	Close func() error

	loaded  time.Time
	version uint64
	refs    atomic.Int64 // 1 while served, and 1 per request using it
	closed  sync.Once
}

// Loader loads a graph: the data, the index and the engines over them.
// It is called once by New and again by every Reload.
type Loader func(ctx context.Context) (*Graph, error)

// searcher is the engine of a local-kind mode.
func (g *Graph) searcher(mode string) *localsearch.Searcher {
	switch mode {
	case modeSPARQL:
		return g.Seed
	case modeSubgraph:
		return g.Subgraph
	case modeThoughts:
		return g.Thoughts
	}
	return g.Local
}

// entityIRI is the IRI of the entity ref names in the store.
func (g *Graph) entityIRI(ref retrieval.EntityRef) string {
	if ref.IRI != "" || g.Base == "" {
		return ref.IRI
	}
	return ontology.EntityIRI(g.Base, ref.ID)
}

// entityID finds the id of the entity titled title ("" for none).
func (g *Graph) entityID(ctx context.Context, title string) (string, error) {
	refs, err := g.Source.EntityRefs(ctx, nil, []string{title})
	if err != nil || len(refs) == 0 {
		return "", err
	}
	return refs[0].ID, nil
}

// report is the report of the community numbered id.
func (g *Graph) report(id string) (retrieval.ReportRecord, bool) {
	for _, r := range g.Reports {
		if r.ID == id || r.CommunityID == id {
			return r, true
		}
	}
	return retrieval.ReportRecord{}, false
}
