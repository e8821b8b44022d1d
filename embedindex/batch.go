package embedindex

import (
	"context"
	"fmt"
	"sync"
)

// Default batching for NewBatcher: Ollama and llama.cpp take batches of
// this size comfortably, and two requests in flight keep a local model
// busy without queueing many behind it.
const (
	DefaultBatchSize   = 64
	DefaultConcurrency = 2
)

// BatchOptions tune a Batcher. The zero value uses the defaults.
type BatchOptions struct {
	// Size is the most texts per request; 0 means DefaultBatchSize.
	Size int
	// Concurrency is the most requests in flight; 0 means
	// DefaultConcurrency.
	Concurrency int
	// Counter, when not nil, gets the number of texts of each batch done.
	Counter Counter
}

// Batcher splits a call into batches of Size texts and runs up to
// Concurrency of them at once on the Embedder below it, which does one
// request per call (like *llm.Client). It is safe for concurrent use.
type Batcher struct {
	e    Embedder
	opts BatchOptions
}

var _ Embedder = (*Batcher)(nil)

// NewBatcher returns a Batcher over e.
func NewBatcher(e Embedder, opts BatchOptions) *Batcher {
	if opts.Size <= 0 {
		opts.Size = DefaultBatchSize
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	return &Batcher{e: e, opts: opts}
}

// Model is the model of the Embedder below.
func (b *Batcher) Model() string { return b.e.Model() }

// Embed embeds texts in batches. The first failing batch cancels the
// others and its error is returned, wrapped with the range of texts it
// held. All vectors must have one dimension, else the error matches
// ErrDimMismatch.
func (b *Batcher) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	out := make([][]float32, len(texts))
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sem := make(chan struct{}, b.opts.Concurrency)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	fail := func(err error) {
		once.Do(func() { first = err; cancel(err) })
	}
	for lo := 0; lo < len(texts); lo += b.opts.Size {
		hi := min(lo+b.opts.Size, len(texts))
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			vecs, err := b.e.Embed(ctx, texts[lo:hi])
			if err == nil && len(vecs) != hi-lo {
				err = fmt.Errorf("got %d vectors for %d texts", len(vecs), hi-lo)
			}
			if err != nil {
				fail(fmt.Errorf("embedindex: embed texts %d..%d of %d with %q: %w", lo+1, hi, len(texts), b.e.Model(), err))
				return
			}
			copy(out[lo:hi], vecs)
			if b.opts.Counter != nil {
				b.opts.Counter.Add(int64(hi - lo))
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("embedindex: embed: %w", context.Cause(ctx))
	}
	dim := len(out[0])
	for i, v := range out {
		if len(v) != dim {
			return nil, fmt.Errorf("embedindex: model %q gave text 1 %d dimensions and text %d %d: %w",
				b.e.Model(), dim, i+1, len(v), ErrDimMismatch)
		}
	}
	return out, nil
}
