package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kgrag/kgrag/internal/indexer"
	"github.com/kgrag/kgrag/internal/llm"
)

// indexRun is one indexer.Run and what the server saw of it.
type indexRun struct {
	sum  *indexer.Summary
	wall time.Duration
	served
	plans []stagePlan // when asked for
}

// setup is what one run indexes and how.
type setup struct {
	text                       string
	concurrency, size, overlap int
	// noCache runs without the cache of replies (kgrag index always has
	// one), to tell its cost.
	noCache bool
	// plan asks for the stages' call plans (stagePlan), which read the
	// output back.
	plan bool
}

// index writes s.text into a fresh input folder under dir and runs the
// indexer on it as `kgrag index` does (a cache of replies, in a fresh
// folder, unless s.noCache), then checks the run went the normal way: no call
// failed or came from the cache, every unit extracted, the server saw
// exactly the calls the run counts. dir is removed afterwards.
func index(ctx context.Context, m *model, client *llm.Client, s setup, dir string) (*indexRun, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "input")
	if err := os.MkdirAll(in, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(in, "carol.txt"), []byte(s.text), 0o644); err != nil {
		return nil, err
	}
	opts := indexer.DefaultOptions()
	opts.Input, opts.Output, opts.CacheDir = in, filepath.Join(dir, "output"), filepath.Join(dir, "cache")
	if s.noCache {
		opts.CacheDir = ""
	}
	opts.Model = benchModel
	opts.Concurrency = s.concurrency
	opts.Chunk.Size, opts.Chunk.Overlap = s.size, s.overlap
	m.take() // forget earlier requests
	t := time.Now()
	sum, err := indexer.Run(ctx, client, opts)
	wall := time.Since(t)
	if err != nil {
		return nil, err
	}
	r := &indexRun{sum: sum, wall: wall, served: m.take()}
	for _, st := range sum.Stages {
		if st.Failed > 0 || st.Cached > 0 {
			return nil, fmt.Errorf("stage %s: %d calls failed, %d cached; want none", st.Stage, st.Failed, st.Cached)
		}
	}
	switch {
	case sum.ExtractionFailed > 0:
		return nil, fmt.Errorf("%d text units failed extraction", sum.ExtractionFailed)
	case int64(len(r.requests)) != r.calls():
		return nil, fmt.Errorf("the server saw %d requests for %d model calls", len(r.requests), r.calls())
	case sum.Reports == 0 || sum.Entities == 0:
		return nil, fmt.Errorf("no report or no entity: %+v", *sum)
	}
	if s.plan {
		if r.plans, err = plans(ctx, r, opts.Output, opts.Encoding); err != nil {
			return nil, err
		}
	}
	r.requests = nil // prompts are large; the count is in sum
	return r, nil
}

// calls is the model calls of the run, all stages.
func (r *indexRun) calls() int64 {
	var n int64
	for _, s := range r.sum.Stages {
		n += s.Calls
	}
	return n
}

// stage returns the run's figures for stage (zero when it made no call).
func (r *indexRun) stage(name string) indexer.StageStats {
	for _, s := range r.sum.Stages {
		if s.Stage == name {
			return s
		}
	}
	return indexer.StageStats{Stage: name}
}

// benchModel is the chat model name sent to the test server.
const benchModel = "bench-chat"

// newClient is the client kgrag index makes: the default HTTP client and
// retry policy.
func newClient(m *model) (*llm.Client, error) {
	return llm.New(llm.Config{BaseURL: m.url(), ChatModel: benchModel})
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
