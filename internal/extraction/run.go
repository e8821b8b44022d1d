package extraction

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kgrag/kgrag/internal/llm"
	"golang.org/x/sync/errgroup"
)

// RunOptions tune Run.
type RunOptions struct {
	// Concurrency bounds the text units in extraction at once (each makes
	// its calls one after the other); below 1 means 1.
	Concurrency int
	// Progress, when set, is called with the units done (failed ones
	// included) and the total: once with 0 first, then after each unit,
	// one call at a time, in order.
	Progress func(done, total int)
}

// Batch is what Run did.
type Batch struct {
	// Results holds one Result per unit, in the units' order; nil for a
	// unit that was not started because the run stopped.
	Results []*Result
	// Failed lists the units that failed, in the units' order.
	Failed []*UnitError
	// Graph and Claims add up the units' Stats.
	Graph, Claims Stats
	// Elapsed is the run's wall time.
	Elapsed time.Duration
}

// Run extracts from units, Concurrency at a time. A unit whose call fails
// is reported in Batch.Failed (and its Result's Err) and the others go on,
// as GraphRAG goes on without a text unit whose extraction failed. Run
// stops, returning the Batch so far and the unit's *UnitError, when the
// failure would fail every other call too (the server cannot be reached,
// refuses the key or the model, or rate-limits past the client's
// retries) and when ctx ends; it also fails when every unit failed.
func (x *Extractor) Run(ctx context.Context, units []Unit, ro RunOptions) (*Batch, error) {
	start := time.Now()
	b := &Batch{Results: make([]*Result, len(units))}
	var mu sync.Mutex // guards done and orders Progress
	done := 0
	if ro.Progress != nil {
		ro.Progress(0, len(units))
	}
	eg, egctx := errgroup.WithContext(ctx)
	eg.SetLimit(max(ro.Concurrency, 1))
	for i, u := range units {
		if egctx.Err() != nil {
			break
		}
		eg.Go(func() error {
			if egctx.Err() != nil { // another unit stopped the run while this one waited
				return nil
			}
			res, err := x.Extract(egctx, u)
			b.Results[i] = res
			if ro.Progress != nil {
				mu.Lock()
				done++
				ro.Progress(done, len(units))
				mu.Unlock()
			}
			if err != nil && (stopsRun(err) || egctx.Err() != nil) {
				return err
			}
			return nil
		})
	}
	err := eg.Wait()
	for _, r := range b.Results {
		if r == nil {
			continue
		}
		b.Graph.Add(r.Graph)
		b.Claims.Add(r.ClaimStats)
		if r.Err != nil {
			b.Failed = append(b.Failed, r.Err)
		}
	}
	b.Elapsed = time.Since(start)
	switch {
	case err != nil:
		return b, err
	case ctx.Err() != nil:
		return b, fmt.Errorf("extraction: %w", context.Cause(ctx))
	case len(units) > 0 && len(b.Failed) == len(units):
		return b, fmt.Errorf("extraction: all %d text units failed, the first: %w", len(units), b.Failed[0])
	}
	return b, nil
}

// stopsRun says err would fail the other units' calls as well. A prompt
// over the model's window does: the chunks are alike, and the caller can
// cut them to the window the error names (indexer.Options.Window).
func stopsRun(err error) bool {
	var we *llm.WindowError
	return llm.Unreachable(err) || errors.Is(err, llm.ErrModelNotFound) || errors.Is(err, llm.ErrAuth) ||
		errors.Is(err, llm.ErrRateLimited) || errors.As(err, &we)
}
