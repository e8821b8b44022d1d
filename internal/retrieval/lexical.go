package retrieval

import (
	"context"
	"sync"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/internal/lexical"
)

// Lexical ranks a graph's text units and entities by Okapi BM25 (the
// lexical retrievers of basic search and of the entity modes' start
// entities). The graph is read whole at the first search, and kept; a
// search whose context ends while it reads leaves it for the next. It is
// safe for concurrent use.
type Lexical struct {
	loader WalkLoader

	mu                 sync.Mutex
	units, entities    *lexical.Index
	unitIDs, entityIDs []string
}

// NewLexical returns a Lexical over the graph loader reads.
func NewLexical(loader WalkLoader) *Lexical { return &Lexical{loader: loader} }

func (l *Lexical) load(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.units != nil {
		return nil
	}
	g, err := l.loader.WalkGraph(ctx)
	if err != nil {
		return err
	}
	units, entities := lexical.New(), lexical.New()
	l.unitIDs, l.entityIDs = make([]string, len(g.Units)), make([]string, len(g.Entities))
	for i, u := range g.Units {
		units.Add(u.Text)
		l.unitIDs[i] = u.TextUnitID
	}
	for i, e := range g.Entities {
		entities.Add(e.Title + " " + e.Description)
		l.entityIDs[i] = e.ID
	}
	l.units, l.entities = units, entities
	return nil
}

// TextUnits returns the k text units of highest score for query, best
// first, by GraphRAG id, scored by BM25.
func (l *Lexical) TextUnits(ctx context.Context, query string, k int) ([]embedindex.Hit, error) {
	if err := l.load(ctx); err != nil {
		return nil, err
	}
	return hitsOf(l.units.Search(query, k), l.unitIDs), nil
}

// Entities returns the k entities of highest score for query over their
// titles and descriptions, best first, by GraphRAG id.
func (l *Lexical) Entities(ctx context.Context, query string, k int) ([]embedindex.Hit, error) {
	if err := l.load(ctx); err != nil {
		return nil, err
	}
	return hitsOf(l.entities.Search(query, k), l.entityIDs), nil
}

func hitsOf(hs []lexical.Hit, ids []string) []embedindex.Hit {
	out := make([]embedindex.Hit, len(hs))
	for i, h := range hs {
		out[i] = embedindex.Hit{ID: ids[h.Doc], Score: float32(h.Score)}
	}
	return out
}
