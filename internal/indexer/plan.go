package indexer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"sync"

	"github.com/kgrag/kgrag/graphrag"

	"github.com/kgrag/kgrag/internal/extraction"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llmcache"
	"github.com/kgrag/kgrag/internal/reports"
)

// Rates per 1,000 tokens of text, measured on GraphRAG 3.3.0's own index
// of A Christmas Carol (the v3 sample the tests read: 42 text units of
// 1,200 tokens, 50,288 tokens in all, extracted by gpt-4o-mini): 91
// entities and 68 relationships were found in more than one text unit,
// which is about how many descriptions need a summary, and it made 122
// communities, each one report. A smaller model finds fewer entities, and
// another text more or fewer, so Plan calls these figures estimates.
const (
	summariesPer1000 = (91.0 + 68.0) / 50.288
	reportsPer1000   = 122.0 / 50.288
)

// Plan is what a run will cost, worked out without calling the model.
// The extraction figures are exact bounds; the later stages depend on
// what extraction finds, so theirs are estimates.
type Plan struct {
	Documents, TextUnits int
	// Tokens counts the text units' tokens.
	Tokens int
	// MinCalls and MaxCalls bound the extraction calls (the model's
	// answers to the gleaning loop question decide where in between);
	// they are equal with GraphRAG's default of one gleaning round.
	MinCalls, MaxCalls int
	// FirstTokens counts the prompts of the extraction conversations'
	// first calls; later calls resend them with the replies.
	FirstTokens int
	// Conversations counts the extraction conversations (one per text
	// unit, two with claims), Cached those whose first call is in the
	// cache already: a resumed run pays for the others.
	Conversations, Cached int
	// Changes are the documents added, changed and removed since the
	// output the run would replace; nil when there is none.
	Changes *Changes
	// EstSummaries and EstReports estimate the summary and report calls;
	// EstReportTokens bounds the report prompts' tokens at the context
	// budget.
	EstSummaries, EstReports, EstReportTokens int
	// Again, over an earlier output with a cache of replies, is what a
	// rehearsal of the run from the cache alone had to leave unanswered;
	// nil without an earlier output or cache.
	Again *Again
}

// Again is what a run over an earlier output asks again, found by running
// the pipeline on the cache alone: the extraction conversations of new
// text units, and the summaries and reports whose prompts are not in the
// cache once the graph is rebuilt from the cached extractions. What the
// new text units will add to the graph is unknown until the model answers
// them, so Summaries and Reports count what the change is known to touch
// (edits, removals, and what they move); the new units may touch more.
type Again struct {
	Extractions, Summaries, Reports int
}

// PlanRun reads and chunks opts.Input and tells what Run would ask of the
// model, calling none. It reads opts.CacheDir, when it exists, to say how
// much a resumed run would find there, and writes nothing.
func PlanRun(ctx context.Context, opts Options) (*Plan, error) {
	r, err := newRun(nil, opts)
	if err != nil {
		return nil, err
	}
	var cache *llmcache.Cache
	if dir := r.opts.CacheDir; dir != "" {
		if _, err := os.Stat(dir); err == nil {
			if cache, err = llmcache.Open(dir); err != nil {
				return nil, fmt.Errorf("indexer: cache %s: %w", dir, err)
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("indexer: cache %s: %w", dir, err)
		}
	}
	ds, units, err := r.textUnits(ctx, nil)
	if err != nil {
		return nil, err
	}
	x, err := extraction.New(noModel{}, r.enc, r.opts.Extraction)
	if err != nil {
		return nil, fmt.Errorf("indexer: extraction: %w", err)
	}
	prevDS, prevDocs := previous(ctx, r.opts.Output, r.opts.FreshCommunities || cache == nil)
	p := &Plan{Documents: len(ds.Documents), TextUnits: len(ds.TextUnits),
		Changes: changes(prevDocs, ds.Documents)}
	for _, u := range ds.TextUnits {
		p.Tokens += int(u.NTokens)
	}
	for _, u := range units {
		up, err := x.Plan(u)
		if err != nil {
			return nil, fmt.Errorf("indexer: text unit %s: %w", u.ID, err)
		}
		p.MinCalls += up.MinCalls
		p.MaxCalls += up.MaxCalls
		p.FirstTokens += up.FirstTokens
		p.Conversations += len(up.First)
		if cache == nil {
			continue
		}
		for _, msgs := range up.First {
			_, _, ok, err := cache.Get(llmcache.Key(r.opts.Model, msgs, r.opts.Extraction.Chat))
			if err != nil {
				return nil, fmt.Errorf("indexer: %w", err)
			}
			if ok {
				p.Cached++
			}
		}
	}
	if cache != nil && p.Changes != nil {
		if p.Again, err = rehearse(ctx, opts, cache, prevDS); err != nil {
			return nil, err
		}
	}
	k := float64(p.Tokens) / 1000
	p.EstSummaries = int(math.Round(k * summariesPer1000))
	p.EstReports = int(math.Round(k * reportsPer1000))
	p.EstReportTokens = p.EstReports * cmp.Or(r.reportInput, reports.DefaultMaxInputTokens)
	return p, nil
}

// noModel is the Chatter of a plan, which Plan never calls.
type noModel struct{}

func (noModel) Chat(context.Context, []llm.Message, llm.ChatOptions) (string, llm.Usage, error) {
	return "", llm.Usage{}, errors.New("indexer: a plan calls no model")
}

// rehearse runs the pipeline with a model that answers from the cache
// only, writing nothing (neither output nor cache), and counts per stage
// the calls the cache could not answer. Unanswered extractions fail their
// text units, which are left out; an unanswered summary gets a stand-in
// text, and an unanswered report none.
func rehearse(ctx context.Context, opts Options, cache *llmcache.Cache, prev *graphrag.Dataset) (*Again, error) {
	opts.CacheDir, opts.Progress = "", nil
	opts.Embedder = nil // no embedding calls in a plan: de-duplication is left out
	r, err := newRun(nil, opts)
	if err != nil {
		return nil, err
	}
	d := &cacheOnly{r: r, cache: cache, missed: map[string]int{}}
	r.model, r.dry, r.previous = d, true, prev
	if _, err := r.build(ctx, &Summary{}); err != nil && !errors.Is(err, errNotCached) {
		return nil, fmt.Errorf("indexer: plan: %w", err)
	}
	return &Again{Extractions: d.missed[StageExtraction], Summaries: d.missed[StageSummaries], Reports: d.missed[StageReports]}, nil
}

// errNotCached is a rehearsal's answer to a call the cache cannot answer.
var errNotCached = errors.New("indexer: plan: not in the cache")

// cacheOnly is the Chatter of a rehearsal.
type cacheOnly struct {
	r      *run
	cache  *llmcache.Cache
	mu     sync.Mutex
	missed map[string]int // per stage
}

func (c *cacheOnly) Chat(_ context.Context, msgs []llm.Message, opts llm.ChatOptions) (string, llm.Usage, error) {
	reply, usage, ok, err := c.cache.Get(llmcache.Key(c.r.opts.Model, msgs, opts))
	if err == nil && ok {
		return reply, usage, nil
	}
	c.mu.Lock()
	stage := c.r.current
	c.missed[stage]++
	c.mu.Unlock()
	if stage == StageSummaries {
		return "(to be summarised)", llm.Usage{}, nil
	}
	return "", llm.Usage{}, errNotCached
}
