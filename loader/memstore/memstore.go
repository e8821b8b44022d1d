// Package memstore is an in-memory loader.Store for tests of code that
// loads graphs. It keeps set semantics (a triple is stored once per graph),
// replaces graphs atomically, and can be told to fail.
//
// Usage:
//
//	s := memstore.New()
//	n, err := s.ReplaceGraph(ctx, "http://example.org/g", func(w rdf.Writer) error {
//		return w.WriteTriple(rdf.Triple{S: rdf.IRI("urn:a"), P: rdf.IRI("urn:b"), O: rdf.String("c")})
//	})
//	triples := s.Triples("http://example.org/g")
package memstore

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/kgrag/kgrag/loader"
	"github.com/kgrag/kgrag/rdf"
)

// ErrInjected is the cause of failures that FailAfter provokes.
var ErrInjected = errors.New("memstore: injected failure")

// Store is an in-memory loader.Store. It is safe for concurrent use. The
// zero Store is not usable: call New.
type Store struct {
	mu     sync.Mutex
	graphs map[string]map[rdf.Triple]struct{}

	// FailAfter, when positive, makes ReplaceGraph fail with ErrInjected
	// (wrapped in *loader.Error) when the FailAfter-th triple is written,
	// as a store that breaks mid-upload would. Set it before use.
	FailAfter int64
	// Counter, when set, receives progress as SPARQLStore would report it.
	Counter loader.Counter
}

var _ loader.Store = (*Store)(nil)

// New returns an empty store.
func New() *Store { return &Store{graphs: map[string]map[rdf.Triple]struct{}{}} }

type collector struct {
	ctx   context.Context
	set   map[rdf.Triple]struct{}
	n     int64
	fail  int64
	count loader.Counter
}

func (c *collector) WriteTriple(t rdf.Triple) error {
	if err := c.ctx.Err(); err != nil {
		return err
	}
	if t.S.Kind == 0 || t.P.Kind == 0 || t.O.Kind == 0 {
		return fmt.Errorf("memstore: invalid triple %v", t)
	}
	c.n++
	if c.fail > 0 && c.n >= c.fail {
		return ErrInjected
	}
	c.set[t] = struct{}{}
	if c.count != nil {
		c.count.Add(1)
	}
	return nil
}

// ReplaceGraph collects the triples fill writes and swaps them in for graph.
// On any error the old graph is kept.
func (s *Store) ReplaceGraph(ctx context.Context, graph string, fill func(w rdf.Writer) error) (int64, error) {
	if graph == "" {
		return 0, &loader.Error{Op: "replace graph", Err: errors.New("empty graph IRI")}
	}
	c := &collector{ctx: ctx, set: map[rdf.Triple]struct{}{}, fail: s.FailAfter, count: s.Counter}
	if err := fill(c); err != nil {
		return 0, &loader.Error{Op: "replace graph", URL: "memstore:", Graph: graph, Err: err,
			Hint: "the previous graph is unchanged"}
	}
	if err := ctx.Err(); err != nil {
		return 0, &loader.Error{Op: "replace graph", URL: "memstore:", Graph: graph, Err: err,
			Hint: "the previous graph is unchanged"}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(c.set) == 0 {
		delete(s.graphs, graph)
	} else {
		s.graphs[graph] = c.set
	}
	return c.n, nil
}

// Count returns the number of distinct triples in graph.
func (s *Store) Count(ctx context.Context, graph string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return int64(len(s.graphs[graph])), nil
}

// Drop removes graph.
func (s *Store) Drop(ctx context.Context, graph string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.graphs, graph)
	return nil
}

// Graphs lists the non-empty graphs, sorted.
func (s *Store) Graphs(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.graphs))
	for g := range s.graphs {
		out = append(out, g)
	}
	sort.Strings(out)
	return out, nil
}

// Triples returns a copy of graph's triples in no particular order.
func (s *Store) Triples(graph string) []rdf.Triple {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]rdf.Triple, 0, len(s.graphs[graph]))
	for t := range s.graphs[graph] {
		out = append(out, t)
	}
	return out
}
