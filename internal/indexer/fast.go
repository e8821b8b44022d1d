package indexer

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kgrag/kgrag/internal/extraction"
	"github.com/kgrag/kgrag/internal/graphbuild"
	"github.com/kgrag/kgrag/internal/nounphrase"
)

// Indexing methods, GraphRAG's names for them.
const (
	// MethodStandard extracts entities and relationships with the model.
	MethodStandard = "standard"
	// MethodFast takes noun phrases for entities and co-occurrence in a
	// text unit for relationships (GraphRAG's fast method): no model
	// call until the reports.
	MethodFast = "fast"
)

// FastStats say what the fast method's noun graph held.
type FastStats struct {
	// Phrases counts the distinct noun phrases found, Pairs the pairs of
	// them that share a text unit, before pruning.
	Phrases, Pairs int
	// Pruned is what GraphRAG's prune_graph removed.
	Pruned graphbuild.PruneStats
}

// nounGraph is the fast method's graph stage: GraphRAG 3.3.0's
// extract_graph_nlp (noun phrases per text unit, co-occurrence, PMI
// weights) and prune_graph. Tagging is CPU-bound, so the units are
// shared among GOMAXPROCS goroutines.
func (r *run) nounGraph(ctx context.Context, units []extraction.Unit, sum *Summary) (*graphbuild.Graph, error) {
	start := time.Now()
	x, err := nounphrase.New(r.opts.NounPhrases)
	if err != nil {
		return nil, fmt.Errorf("indexer: noun phrases: %w", err)
	}
	found := make([]graphbuild.NounPhrases, len(units))
	workers := min(runtime.GOMAXPROCS(0), len(units))
	var next, done atomic.Int64
	var mu sync.Mutex // progress is told from one goroutine at a time
	var wg sync.WaitGroup
	r.progress(StageNounPhrases, 0, len(units))
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(units) || ctx.Err() != nil {
					return
				}
				found[i] = graphbuild.NounPhrases{TextUnitID: units[i].ID, Phrases: x.Extract(units[i].Text)}
				n := int(done.Add(1))
				mu.Lock()
				r.progress(StageNounPhrases, n, len(units))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("indexer: noun phrases: %w", err)
	}
	g := graphbuild.NounGraph(found, !r.opts.RawEdgeWeights)
	st := &FastStats{Phrases: len(g.Entities), Pairs: len(g.Relationships)}
	st.Pruned = graphbuild.Prune(g, r.opts.Prune)
	sum.Fast = st
	sum.Stages = append(sum.Stages, StageStats{Stage: StageNounPhrases, Elapsed: time.Since(start)})
	return g, nil
}
