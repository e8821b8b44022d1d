package serve

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/internal/engine"
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
	// Engines answer the modes served, by mode name (engine.Modes); a
	// mode whose vector index was not built is left out, and Missing
	// says what to build for it.
	Engines map[string]engine.Engine
	Missing map[string]error
	// Nearest finds the entities nearest a text in the vector index (the
	// search_entities tool, /api/entities?q=); nil without an index.
	Nearest func(ctx context.Context, text string, k int) ([]embedindex.Hit, error)
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
	// Stamp, when set, reads which load of the graph the store holds
	// now (loader.Stamp), and StampAtLoad is what it read before the
	// graph was read: a question whose context was read while Stamp
	// still gave StampAtLoad read one load of the graph.
	Stamp       func(ctx context.Context) (string, error)
	StampAtLoad string
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

// engine is the engine of a mode, or why it is not served.
func (g *Graph) engine(name string) (engine.Engine, error) {
	if e, ok := g.Engines[name]; ok {
		return e, nil
	}
	if err := g.Missing[name]; err != nil {
		return nil, fmt.Errorf("%w: %w", errNoIndex, err)
	}
	return nil, errNoIndex
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

// servedNames are the modes g answers, in the registry's order.
func servedNames(g *Graph) []string {
	names := []string{}
	for _, m := range engine.Modes() {
		if _, ok := g.Engines[m.Name]; ok {
			names = append(names, m.Name)
		}
	}
	return names
}
