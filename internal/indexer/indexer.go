// Package indexer wires kgrag's indexing stages into one pipeline, as
// Microsoft GraphRAG 3.3.0's standard indexing workflow runs them:
// documents, chunks, graph (and optionally claim) extraction, merge (and
// optionally the NetworkX article's de-duplication by embedding) and description
// summaries, hierarchical Leiden, the communities table and community
// reports, written as GraphRAG 3.x parquet tables. PlanRun tells what a
// run would cost without calling the model.
//
// Each stage is its own package; this one only feeds each stage's output to
// the next, counts the model calls per stage and writes the result whole or
// not at all: the tables go to a temporary folder beside the output that is
// renamed into place at the end.
package indexer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/chunk"
	"github.com/kgrag/kgrag/internal/communities"
	"github.com/kgrag/kgrag/internal/documents"
	"github.com/kgrag/kgrag/internal/extraction"
	"github.com/kgrag/kgrag/internal/graphbuild"
	"github.com/kgrag/kgrag/internal/leiden"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llmcache"
	"github.com/kgrag/kgrag/internal/llmcall"
	"github.com/kgrag/kgrag/internal/nounphrase"
	"github.com/kgrag/kgrag/internal/reports"
	"github.com/kgrag/kgrag/internal/tokens"
	"github.com/kgrag/kgrag/prompts"
)

// Stages of the pipeline, as Progress and StageStats name them.
const (
	StageDocuments     = "documents"
	StageChunks        = "chunks"
	StageExtraction    = "extraction"
	StageNounPhrases   = "noun phrases"
	StageDedup         = "dedup"
	StageSummaries     = "summaries"
	StageCommunities   = "communities"
	StageReports       = "reports"
	StageWrite         = "write"
	defaultLeidenSeed  = 0xDEADBEEF // GraphRAG's cluster_graph seed
	defaultConcurrency = 4
	maxDroppedShown    = 5
)

// Options configure a run. Start from DefaultOptions.
type Options struct {
	Input, Output string
	// CacheDir holds model replies (internal/llmcache); "" means no cache.
	CacheDir string
	// Model is the chat model, used for the cache key and every call.
	Model string
	// Temperature and MaxTokens go with every call of every stage (the
	// extraction's own Chat settings win where set). GraphRAG asks for
	// temperature 0; nil leaves it to the server.
	Temperature *float32
	MaxTokens   int
	Concurrency int
	Encoding    string
	Documents   documents.Options
	Chunk       chunk.Options
	Extraction  extraction.Options
	// Method is MethodStandard (the default, "" too) or MethodFast. The
	// fast method finds entities with NounPhrases, relates them by
	// co-occurrence (PMI weights, or the raw counts with RawEdgeWeights)
	// and prunes the graph with Prune, or with the preset PrunePreset
	// names when it is set (PruneAuto: by the corpus's shape); it makes
	// no summaries, and ignores Extraction, Embedder and SummaryJoinUnder.
	Method         string
	NounPhrases    nounphrase.Options
	Prune          graphbuild.PruneOptions
	PrunePreset    string
	RawEdgeWeights bool
	// NoReports leaves the communities without reports: with the fast
	// method, no model is called at all and Run takes a nil model.
	NoReports bool
	// Embedder, when set, turns on the NetworkX article's de-duplication: entities
	// whose embedded "title: descriptions" are at least Dedup.Threshold
	// alike are joined (graphbuild.Dedup) before the summaries. It does
	// one request per call, like llm.Embedder; the run batches the texts
	// by EmbedBatch (0: embedindex's default).
	Embedder   embedindex.Embedder
	Dedup      graphbuild.DedupOptions
	EmbedBatch int
	// Keep names folders inside Output that are not tables but belong
	// with them (kgrag's vector index): the previous output's are carried
	// into the new output rather than refused or lost.
	Keep []string
	// ReportMaxLength is the words a community report may have
	// (GraphRAG's community_reports.max_length); 0 means its 2000.
	ReportMaxLength int
	// SummaryJoinUnder is graphbuild.Summarizer's JoinUnder: 0 is
	// GraphRAG's rule, the NetworkX article used 300.
	SummaryJoinUnder int
	// Version is the kgrag version recorded in the run record, and
	// EmbeddingModel the embedding model of the de-duplication.
	Version, EmbeddingModel string
	// FreshCommunities clusters from scratch, as GraphRAG does, even when
	// Output holds an earlier output. By default Leiden starts from the
	// earlier output's communities (leiden.HierOptions.Previous) and the
	// communities that persist keep their numbers and ids
	// (communities.Carry), so that a small change moves few communities
	// and few reports are asked again.
	FreshCommunities bool
	// Prompts replaces kgrag's prompt templates for every stage (a folder
	// kgrag prompt-tune wrote, prompts.Open); nil keeps the embedded ones.
	// The requests then differ, and so do their cache keys.
	Prompts *prompts.Set
	// Window is the chat model's window (llm.Client.Window): when known,
	// every stage's prompts are cut to fit it (see fitWindow), and each
	// call says the window it needs (Ollama's num_ctx). WindowRatio is
	// the model's tokens per token of Encoding; 0 means
	// llm.DefaultTokenRatio.
	Window      llm.Window
	WindowRatio float64
	// LeidenSeed makes the communities repeatable.
	LeidenSeed uint64
	// Progress, when set, is told each stage's progress (done of total;
	// total 0 when unknown). It is called from one goroutine at a time per
	// stage.
	Progress func(stage string, done, total int)
}

// DefaultOptions returns GraphRAG 3.3.0's defaults for the stages.
func DefaultOptions() Options {
	return Options{
		Concurrency: defaultConcurrency,
		Encoding:    chunk.DefaultEncoding,
		Chunk:       chunk.DefaultOptions(),
		Extraction:  extraction.DefaultOptions(),
		Method:      MethodStandard,
		NounPhrases: nounphrase.DefaultOptions(),
		Prune:       graphbuild.DefaultPruneOptions(),
		LeidenSeed:  defaultLeidenSeed,
		Temperature: new(float32), // 0, as GraphRAG's default model settings
	}
}

// StageStats count the model calls of one stage: Calls asked of the
// stage's Chatter, of which Cached were answered from the cache, and
// their tokens. The tokens are the server's usage figures where it
// reported them (a cached reply keeps its call's); for a call without
// them kgrag counts the prompt and reply with the run's encoding, and
// Counted says how many calls that was.
type StageStats struct {
	Stage                          string
	Calls, Cached, Failed          int64
	PromptTokens, CompletionTokens int64
	Counted                        int64
	// Reasoned counts the replies that held a reasoning model's thinking
	// (taken out before they were read), ReasoningChars its size.
	Reasoned, ReasoningChars int64
	Elapsed                  time.Duration
}

// Summary tells what a run made.
type Summary struct {
	Documents, TextUnits, Entities, Relationships, Communities, Reports int
	// Covariates counts the claims, 0 unless claims are on.
	Covariates int
	// Input is what the documents stage found: files read, files of other
	// types ignored, and under Documents.SkipBad the files and rows left
	// out.
	Input documents.Summary
	// Dedup says what de-duplication joined; nil when it was off.
	Dedup *graphbuild.DedupReport
	// Fast says what the fast method's noun graph held; nil with the
	// standard method.
	Fast *FastStats
	// Graph and Claims count what the extraction read: records, kept,
	// repaired and dropped, per conversation kind.
	Graph, Claims extraction.Stats
	// Dropped are the first records the extraction could not read (at
	// most maxDroppedShown), for the user to see what the model wrote.
	Dropped []extraction.Dropped
	// ExtractionFailed counts text units whose extraction failed and were
	// left out.
	ExtractionFailed int
	// Changes are the documents added, changed and removed since the
	// output this run replaced; nil when there was none.
	Changes *Changes
	// Degraded says where the model's replies could not be read and what
	// the run did instead (reports written from prose, communities left
	// without one).
	Degraded []string
	Stages   []StageStats
	Elapsed  time.Duration
}

// Run indexes opts.Input into opts.Output with model.
func Run(ctx context.Context, model llmcall.Chatter, opts Options) (*Summary, error) {
	r, err := newRun(model, opts)
	if err != nil {
		return nil, err
	}
	if model == nil && r.callsModel() {
		return nil, errors.New("indexer: no model: only the fast method without reports runs without one")
	}
	// Checked now as well as at the end, so that no call is paid for an
	// output that cannot be written.
	if _, err := os.Stat(r.opts.Output); err == nil {
		if err := replaceable(r.opts.Output, r.opts.Keep); err != nil {
			return nil, err
		}
	}
	if r.opts.CacheDir != "" && r.callsModel() {
		if r.cache, err = llmcache.Open(r.opts.CacheDir); err != nil {
			return nil, fmt.Errorf("indexer: cache %s: %w", r.opts.CacheDir, err)
		}
	}
	start := time.Now()
	sum := &Summary{Degraded: slices.Clone(r.notes)}
	defer func() { sum.Elapsed = time.Since(start) }()
	var prev map[string]string
	r.previous, prev = previous(ctx, r.opts.Output, r.opts.FreshCommunities)
	ds, err := r.build(ctx, sum)
	if err != nil {
		return sum, err
	}
	sum.Changes = changes(prev, ds.Documents)
	r.progress(StageWrite, 0, 1)
	rec, err := r.record(ds, start)
	if err != nil {
		return sum, err
	}
	if err := writeAtomic(ctx, r.opts.Output, r.opts.Keep, ds, rec); err != nil {
		return sum, err
	}
	r.progress(StageWrite, 1, 1)
	return sum, nil
}

// record is the run record written beside the tables: what the mapped
// graph's provenance says of this run.
func (r *run) record(ds *graphrag.Dataset, start time.Time) (*graphrag.Run, error) {
	rec := &graphrag.Run{Tool: "kgrag", Version: r.opts.Version, Started: start.UTC().Truncate(time.Second),
		Ended:   time.Now().UTC().Truncate(time.Second),
		Prompts: map[string]string{}, Documents: map[string]graphrag.RunDocument{}}
	if r.callsModel() {
		rec.ChatModel = r.opts.Model
	}
	if r.opts.Embedder != nil {
		rec.EmbeddingModel = r.opts.EmbeddingModel
	}
	for _, n := range prompts.Names() {
		if !r.usesPrompt(n) {
			continue
		}
		h, err := r.opts.Prompts.SHA256(n)
		if err != nil {
			return nil, fmt.Errorf("indexer: run record: %w", err)
		}
		rec.Prompts[n] = h
	}
	for _, d := range ds.Documents {
		rec.Documents[d.ID] = graphrag.RunDocument{Path: r.paths[d.ID]}
	}
	return rec, nil
}

// callsModel tells whether the run calls the chat model: the fast
// method without reports does not.
func (r *run) callsModel() bool { return r.opts.Method != MethodFast || !r.opts.NoReports }

// usesPrompt tells whether the run uses the prompt template name: the
// index_ templates, the claims' only when claims are on, and with the
// fast method only the report's.
func (r *run) usesPrompt(name string) bool {
	switch {
	case !strings.HasPrefix(name, "index_"):
		return false
	case r.opts.Method == MethodFast:
		return name == "index_report_text" && !r.opts.NoReports
	case name == "index_report_text":
		return false
	case name == "index_report":
		return !r.opts.NoReports
	case strings.HasPrefix(name, "index_claims"):
		return r.opts.Extraction.Claims.Enabled
	}
	return true
}

// chatOptions are the settings of the summary and report calls.
func (r *run) chatOptions() llm.ChatOptions {
	return llm.ChatOptions{Model: r.opts.Model, Temperature: r.opts.Temperature, MaxTokens: r.opts.MaxTokens}
}

// newRun checks opts and fills in the defaults Run and Plan share.
func newRun(model llmcall.Chatter, opts Options) (*run, error) {
	if opts.Input == "" || opts.Output == "" {
		return nil, errors.New("indexer: input and output folders are required")
	}
	switch opts.Method {
	case "":
		opts.Method = MethodStandard
	case MethodStandard, MethodFast:
	default:
		return nil, fmt.Errorf("indexer: method %q: want %s or %s", opts.Method, MethodStandard, MethodFast)
	}
	if opts.Concurrency < 1 {
		opts.Concurrency = 1
	}
	if opts.Encoding == "" {
		opts.Encoding = chunk.DefaultEncoding
	}
	if opts.Extraction.Prompts == nil {
		opts.Extraction.Prompts = opts.Prompts
	}
	if opts.Extraction.Chat.Model == "" {
		opts.Extraction.Chat.Model = opts.Model
	}
	if opts.Extraction.Chat.Temperature == nil {
		opts.Extraction.Chat.Temperature = opts.Temperature
	}
	if opts.Extraction.Chat.MaxTokens == 0 {
		opts.Extraction.Chat.MaxTokens = opts.MaxTokens
	}
	enc, err := tokens.NewEncoder(opts.Encoding)
	if err != nil {
		return nil, fmt.Errorf("indexer: encoding %s: %w", opts.Encoding, err)
	}
	r := &run{opts: opts, enc: enc, model: model, paths: map[string]string{}}
	if err := r.fitWindow(); err != nil {
		return nil, err
	}
	return r, nil
}

type run struct {
	opts  Options
	enc   *tokens.Encoder
	model llmcall.Chatter
	cache *llmcache.Cache
	paths map[string]string // document id to its path under the input
	// previous is the output this run replaces, whose communities the
	// clustering starts from; nil for a cold start.
	previous *graphrag.Dataset
	// dry marks a plan's rehearsal (see rehearse): calls the cache cannot
	// answer fail, and a stage whose every call failed goes on.
	dry bool
	// current is the stage running, for the rehearsal's counts.
	current string
	// budget is the chat window's, when known (fitWindow); notes say
	// what fitting it cut, and summaryInput and reportInput are the
	// summaries' and reports' input budgets (0: the defaults).
	budget                    *llm.Budget
	notes                     []string
	summaryInput, reportInput int
}

func (r *run) progress(stage string, done, total int) {
	if r.opts.Progress != nil {
		r.opts.Progress(stage, done, total)
	}
}

// stage returns the Chatter a stage calls (through the cache when there is
// one) and the function that records its counts in sum when it is done.
// Stages run one after the other, so the cache's hits between the two are
// the stage's.
func (r *run) stage(name string, sum *Summary) (llmcall.Chatter, func()) {
	r.current = name
	var next llmcall.Chatter = r.model
	if r.budget != nil {
		// Under the cache: the window a call needs is not its key.
		next = llmcall.Fitted(next, *r.budget, r.enc)
	}
	var hits0 int64
	if r.cache != nil {
		next = r.cache.Wrap(next, r.opts.Model)
		hits0 = r.cache.Stats().Hits
	}
	c := &counting{next: next, enc: r.enc}
	start := time.Now()
	return c, func() {
		st := StageStats{Stage: name, Calls: c.calls.Load(), Failed: c.failed.Load(),
			PromptTokens: c.prompt.Load(), CompletionTokens: c.completion.Load(),
			Counted: c.counted.Load(), Reasoned: c.reasoned.Load(), ReasoningChars: c.reasoning.Load(), Elapsed: time.Since(start)}
		if r.cache != nil {
			st.Cached = r.cache.Stats().Hits - hits0
		}
		sum.Stages = append(sum.Stages, st)
	}
}

func (r *run) build(ctx context.Context, sum *Summary) (*graphrag.Dataset, error) {
	ds, xunits, err := r.textUnits(ctx, &sum.Input)
	if err != nil {
		return nil, err
	}
	sum.Documents, sum.TextUnits = len(ds.Documents), len(ds.TextUnits)
	if r.opts.Method == MethodFast {
		g, err := r.nounGraph(ctx, xunits, sum)
		if err != nil {
			return nil, err
		}
		return r.finish(ctx, ds, g, sum)
	}

	// Extraction.
	chat, done := r.stage(StageExtraction, sum)
	x, err := extraction.New(chat, r.enc, r.opts.Extraction)
	if err != nil {
		return nil, fmt.Errorf("indexer: extraction: %w", err)
	}
	batch, err := x.Run(ctx, xunits, extraction.RunOptions{
		Concurrency: r.opts.Concurrency,
		Progress:    func(n, total int) { r.progress(StageExtraction, n, total) },
	})
	done()
	if err != nil {
		return nil, fmt.Errorf("indexer: %w", err)
	}
	sum.ExtractionFailed = len(batch.Failed)
	sum.Graph, sum.Claims = batch.Graph, batch.Claims
	if n := batch.Graph.GleaningsSkipped + batch.Claims.GleaningsSkipped; n > 0 {
		sum.Degraded = append(sum.Degraded, fmt.Sprintf("extraction: %d conversations stopped gleaning early: the next round would not fit the chat model's window of %s", n, r.opts.Window))
	}
	for _, res := range batch.Results {
		if res == nil {
			continue
		}
		for _, d := range res.Dropped {
			if len(sum.Dropped) < maxDroppedShown {
				sum.Dropped = append(sum.Dropped, d)
			}
		}
	}
	ds.Covariates = extraction.Covariates(batch.Results)
	sum.Covariates = len(ds.Covariates)

	// Merge (and join duplicates), summaries, finalize.
	exts := extraction.Extractions(batch.Results)
	var g *graphbuild.Graph
	if r.opts.Embedder != nil {
		if g, err = r.dedup(ctx, exts, sum); err != nil {
			return nil, err
		}
	} else {
		g = graphbuild.Merge(exts)
	}
	if len(g.Entities) == 0 {
		// The model answered but named nothing (a tiny model may not follow
		// the record format). GraphRAG stops with an error; kgrag writes
		// the documents and text units, which still load as a graph, and
		// the summary's 0 entities tells the user.
		return ds, nil
	}
	chat, done = r.stage(StageSummaries, sum)
	s := &graphbuild.Summarizer{
		Model: chat, Chat: r.chatOptions(), Encoder: r.enc,
		Concurrency: r.opts.Concurrency, JoinUnder: r.opts.SummaryJoinUnder, MaxInputTokens: r.summaryInput,
		Progress: func(n, total int) { r.progress(StageSummaries, n, total) },
		Prompts:  r.opts.Prompts,
	}
	_, err = s.Summarize(ctx, g)
	done()
	if err != nil {
		return nil, fmt.Errorf("indexer: summaries: %w", err)
	}
	return r.finish(ctx, ds, g, sum)
}

// finish turns the merged graph g into ds's entities and relationships,
// finds the communities and writes their reports.
func (r *run) finish(ctx context.Context, ds *graphrag.Dataset, g *graphbuild.Graph, sum *Summary) (*graphrag.Dataset, error) {
	ds.Entities, ds.Relationships = graphbuild.Finalize(g)
	sum.Entities, sum.Relationships = len(ds.Entities), len(ds.Relationships)
	attachIDs(ds)

	// Communities.
	r.progress(StageCommunities, 0, 1)
	if err := r.communities(ctx, ds); err != nil {
		return nil, err
	}
	sum.Communities = len(ds.Communities)
	r.progress(StageCommunities, 1, 1)

	// Reports.
	if len(ds.Communities) > 0 && !r.opts.NoReports {
		chat, done := r.stage(StageReports, sum)
		newBuilder := reports.NewBuilder
		if r.opts.Method == MethodFast {
			// GraphRAG's fast method writes its reports from the text units
			// (create_community_reports_text).
			newBuilder = reports.NewTextBuilder
		}
		b, err := newBuilder(ds, r.enc, cmp.Or(r.reportInput, reports.DefaultMaxInputTokens))
		if err != nil {
			return nil, fmt.Errorf("indexer: reports: %w", err)
		}
		ro := reports.DefaultOptions()
		ro.Concurrency = r.opts.Concurrency
		ro.Chat = r.chatOptions()
		ro.Prompts = r.opts.Prompts
		if r.opts.ReportMaxLength > 0 {
			ro.MaxLength = r.opts.ReportMaxLength
		}
		gen, err := reports.NewGenerator(b, chat, ro)
		if err != nil {
			return nil, fmt.Errorf("indexer: reports: %w", err)
		}
		res, err := gen.Run(ctx, reports.Hooks{Progress: func(p reports.Progress) {
			r.progress(StageReports, p.Done, p.Total)
		}})
		done()
		if err != nil && r.dry {
			return ds, nil // every report call missed the cache: counted
		}
		if err != nil {
			return nil, fmt.Errorf("indexer: reports: %w", err)
		}
		res.Attach(ds)
		sum.Reports = len(res.Reports)
		sum.Degraded = append(sum.Degraded, reportNotes(res)...)
	}
	return ds, nil
}

// reportNotes are the degraded notes of a report run.
func reportNotes(res *reports.Result) []string {
	var out []string
	n := len(res.Communities)
	if res.Prose > 0 {
		out = append(out, fmt.Sprintf("reports: %d of %d communities were answered in prose, not the JSON report asked for: "+
			"their reports hold that prose as the summary, unrated (rank 0), without findings", res.Prose, n))
	}
	if res.NoReport > 0 {
		out = append(out, fmt.Sprintf("reports: %d of %d communities got no report: no reply could be read as one", res.NoReport, n))
	}
	return out
}

// dedup merges exts joining alike entities, counting the embedding
// requests as the dedup stage's calls.
func (r *run) dedup(ctx context.Context, exts []graphbuild.Extraction, sum *Summary) (*graphbuild.Graph, error) {
	start := time.Now()
	c := &countingEmbedder{next: r.opts.Embedder}
	var mu sync.Mutex // the Batcher counts from its goroutines
	texts := 0
	emb := embedindex.NewBatcher(c, embedindex.BatchOptions{Size: r.opts.EmbedBatch, Concurrency: r.opts.Concurrency,
		Counter: progressCounter(func(n int64) {
			mu.Lock()
			defer mu.Unlock()
			texts += int(n)
			r.progress(StageDedup, texts, 0)
		})})
	opts := r.opts.Dedup
	if opts.Encoder == nil {
		opts.Encoder = r.enc
	}
	r.progress(StageDedup, 0, 0)
	g, rep, err := graphbuild.Dedup(ctx, exts, emb, opts)
	sum.Stages = append(sum.Stages, StageStats{Stage: StageDedup, Calls: c.calls.Load(), Failed: c.failed.Load(), Elapsed: time.Since(start)})
	if err != nil {
		return nil, fmt.Errorf("indexer: dedup: %w", err)
	}
	sum.Dedup = &rep
	return g, nil
}

// progressCounter is an embedindex.Counter calling a function.
type progressCounter func(int64)

func (f progressCounter) Add(n int64) { f(n) }

// countingEmbedder counts embedding requests.
type countingEmbedder struct {
	next          embedindex.Embedder
	calls, failed atomic.Int64
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.calls.Add(1)
	v, err := c.next.Embed(ctx, texts)
	if err != nil {
		c.failed.Add(1)
	}
	return v, err
}

func (c *countingEmbedder) Model() string { return c.next.Model() }

func (r *run) communities(ctx context.Context, ds *graphrag.Dataset) error {
	edges := clusterEdges(ds.Relationships)
	if len(edges) == 0 {
		return nil // no relationship: GraphRAG has no communities either
	}
	lg, err := leiden.NewGraph(edges)
	if err != nil {
		return fmt.Errorf("indexer: communities: %w", err)
	}
	hopts := leiden.HierOptions{Seed: r.opts.LeidenSeed}
	var titleOf map[string]string
	if r.previous != nil {
		titleOf = make(map[string]string, len(r.previous.Entities))
		for _, e := range r.previous.Entities {
			titleOf[e.ID] = e.Title
		}
		prev := previousRows(lg, r.previous.Communities, titleOf)
		if slices.Equal(edges, clusterEdges(r.previous.Relationships)) {
			// The graph did not change: its communities stay as they
			// were (Leiden, even warm, could move some).
			ds.Communities = communities.Build(ds.Entities, ds.Relationships, lg, prev, communities.Options{})
			return nil
		}
		hopts.Previous = previousLevels(lg.N(), prev)
	}
	h, err := leiden.Hierarchical(ctx, lg, hopts)
	if err != nil {
		return fmt.Errorf("indexer: communities: %w", err)
	}
	rows := h.Rows()
	if r.previous != nil {
		rows = communities.Carry(rows, lg, r.previous.Communities, titleOf)
	}
	ds.Communities = communities.Build(ds.Entities, ds.Relationships, lg, rows, communities.Options{})
	return nil
}

// clusterEdges is the graph Leiden clusters for rels, as GraphRAG's
// cluster_graph builds it.
func clusterEdges(rels []graphrag.Relationship) []leiden.Edge {
	edges := make([]leiden.Edge, len(rels))
	for i, rel := range rels {
		edges[i] = leiden.Edge{Source: rel.Source, Target: rel.Target, Weight: rel.Weight}
	}
	return leiden.GraphRAGEdges(edges, true)
}

// previousRows are the rows of an earlier output's communities over g, as
// a hierarchy of g would give them, its members matched by entity title.
func previousRows(g *leiden.Graph, prev []graphrag.Community, titleOf map[string]string) []leiden.Row {
	index := make(map[string]int, g.N())
	for v := range g.N() {
		index[g.Name(v)] = v
	}
	var rows []leiden.Row
	for _, c := range prev {
		n, err := strconv.Atoi(c.Community)
		if err != nil || c.Level < 0 {
			continue
		}
		parent := -1
		if p, err := strconv.Atoi(c.Parent); err == nil {
			parent = p
		}
		for _, id := range c.EntityIDs {
			if v, ok := index[leiden.NormaliseTitle(titleOf[id])]; ok {
				rows = append(rows, leiden.Row{Node: v, Cluster: n, Level: int(c.Level), Parent: parent, Final: len(c.Children) == 0})
			}
		}
	}
	return rows
}

// previousLevels is leiden.HierOptions.Previous for a graph of n nodes
// from the rows of its earlier communities.
func previousLevels(n int, rows []leiden.Row) [][]int {
	var out [][]int
	for _, r := range rows {
		for r.Level >= len(out) {
			out = append(out, slices.Repeat([]int{-1}, n))
		}
		out[r.Level][r.Node] = r.Cluster
	}
	return out
}

// textUnits reads the documents and chunks them: a dataset holding the
// documents and text units, and the units to extract from, each distinct
// text once.
func (r *run) textUnits(ctx context.Context, found *documents.Summary) (*graphrag.Dataset, []extraction.Unit, error) {
	ds := &graphrag.Dataset{}
	chunker, err := chunk.New(r.enc, r.opts.Chunk)
	if err != nil {
		return nil, nil, fmt.Errorf("indexer: chunking: %w", err)
	}
	var units []chunk.TextUnit
	next := 0
	r.progress(StageDocuments, 0, 0)
	in, err := documents.Read(ctx, r.opts.Input, r.opts.Documents, func(d documents.Document) error {
		us := chunker.Document(d)
		next = chunk.Number(us, next)
		doc := graphrag.Document{
			ID: d.ID, HumanReadableID: strconv.Itoa(len(ds.Documents)),
			Title: d.Title, Text: d.Text, CreationDate: d.CreationDate,
		}
		for _, u := range us {
			doc.TextUnitIDs = append(doc.TextUnitIDs, u.ID)
		}
		ds.Documents = append(ds.Documents, doc)
		if _, ok := r.paths[d.ID]; !ok {
			r.paths[d.ID] = d.Path
		}
		units = append(units, us...)
		r.progress(StageDocuments, len(ds.Documents), 0)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("indexer: input %s: %w", r.opts.Input, err)
	}
	if found != nil {
		*found = in
	}
	r.progress(StageChunks, len(units), len(units))
	xunits := make([]extraction.Unit, 0, len(units))
	seen := make(map[string]bool, len(units))
	for _, u := range units {
		// Equal chunks share an id: extract, and write, each once.
		if seen[u.ID] {
			continue
		}
		seen[u.ID] = true
		xunits = append(xunits, extraction.Unit{ID: u.ID, Text: u.Text})
		ds.TextUnits = append(ds.TextUnits, graphrag.TextUnit{
			ID: u.ID, HumanReadableID: strconv.Itoa(u.HumanReadableID), Text: u.Text,
			NTokens: int64(u.NTokens), HasNTokens: true, DocumentIDs: []string{u.DocumentID},
		})
	}
	if len(xunits) == 0 {
		return nil, nil, fmt.Errorf("indexer: %s: no text to index", r.opts.Input)
	}
	return ds, xunits, nil
}

// attachIDs fills the text units' entity, relationship and covariate ids
// from the rows' text unit ids, as GraphRAG's
// create_final_text_units joins them: each id once per unit, in table order.
func attachIDs(ds *graphrag.Dataset) {
	at := make(map[string]int, len(ds.TextUnits))
	for i, u := range ds.TextUnits {
		at[u.ID] = i
	}
	add := func(ids func(*graphrag.TextUnit) *[]string, id string, units []string) {
		for _, uid := range units {
			i, ok := at[uid]
			if !ok {
				continue
			}
			list := ids(&ds.TextUnits[i])
			if n := len(*list); n > 0 && (*list)[n-1] == id {
				continue // the unit named it twice
			}
			*list = append(*list, id)
		}
	}
	for _, e := range ds.Entities {
		add(func(u *graphrag.TextUnit) *[]string { return &u.EntityIDs }, e.ID, e.TextUnitIDs)
	}
	for _, rel := range ds.Relationships {
		add(func(u *graphrag.TextUnit) *[]string { return &u.RelationshipIDs }, rel.ID, rel.TextUnitIDs)
	}
	for _, c := range ds.Covariates {
		add(func(u *graphrag.TextUnit) *[]string { return &u.CovariateIDs }, c.ID, []string{c.TextUnitID})
	}
}

// writeAtomic writes ds into a fresh folder beside dir and renames it into
// place, so a failed run leaves the old output (or none) and no mix. The
// folders of the old output named in keep move into the new one.
func writeAtomic(ctx context.Context, dir string, keep []string, ds *graphrag.Dataset, rec *graphrag.Run) error {
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("indexer: output %s: %w", dir, err)
	}
	prefix := "." + filepath.Base(dir) + ".tmp-"
	removeStale(dir, prefix)
	tmp, err := os.MkdirTemp(parent, prefix)
	if err != nil {
		return fmt.Errorf("indexer: output %s: %w", dir, err)
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	if err := graphrag.Write3x(ctx, tmp, ds); err != nil {
		return fmt.Errorf("indexer: write %s: %w", dir, err)
	}
	if rec != nil {
		if err := graphrag.WriteRun(tmp, rec); err != nil {
			return fmt.Errorf("indexer: write %s: %w", dir, err)
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("indexer: output %s: %w", dir, err)
	}
	if _, err := os.Stat(dir); err != nil {
		if err := os.Rename(tmp, dir); err != nil {
			return fmt.Errorf("indexer: output %s: %w", dir, err)
		}
		return nil
	}
	if err := replaceable(dir, keep); err != nil {
		return err
	}
	// Kept folders move into the new output first; should anything below
	// fail, they move back, and the old output is whole again.
	var moved []string
	restore := func() {
		for _, name := range moved {
			_ = os.Rename(filepath.Join(tmp, name), filepath.Join(dir, name))
		}
	}
	for _, name := range keep {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			continue
		}
		if err := os.Rename(filepath.Join(dir, name), filepath.Join(tmp, name)); err != nil {
			restore()
			return fmt.Errorf("indexer: output %s: carry %s over: %w", dir, name, err)
		}
		moved = append(moved, name)
	}
	old := tmp + ".old"
	if err := os.Rename(dir, old); err != nil {
		restore()
		return fmt.Errorf("indexer: output %s: move the previous output aside: %w", dir, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		_ = os.Rename(old, dir)
		restore()
		return fmt.Errorf("indexer: output %s: %w", dir, err)
	}
	if err := os.RemoveAll(old); err != nil {
		return fmt.Errorf("indexer: output %s: remove the previous output %s: %w", dir, old, err)
	}
	return nil
}

// removeStale clears what a run killed in writeAtomic left beside dir:
// its temporary folders are removed, and a previous output it had moved
// aside is moved back when dir is missing (the run was killed between its
// two renames), or else removed. It is best effort: what cannot be
// removed only takes space.
func removeStale(dir, prefix string) {
	parent := filepath.Dir(filepath.Clean(dir))
	entries, _ := os.ReadDir(parent)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		p := filepath.Join(parent, e.Name())
		if strings.HasSuffix(e.Name(), ".old") {
			if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) && os.Rename(p, dir) == nil {
				continue
			}
		}
		_ = os.RemoveAll(p)
	}
}

// replaceable reports an error unless dir is a folder that holds nothing
// but parquet files and the folders named in keep: the rest of the folder
// is replaced whole, so anything else in it (the input, say) would be
// lost.
func replaceable(dir string, keep []string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("indexer: output %s: %w", dir, err)
	}
	for _, e := range entries {
		if e.IsDir() && slices.Contains(keep, e.Name()) {
			continue
		}
		if e.IsDir() || filepath.Ext(e.Name()) != ".parquet" && e.Name() != graphrag.RunFile {
			return fmt.Errorf("indexer: output %s holds %s, which is not a GraphRAG table: the output folder is replaced whole, so give an empty or new folder, or one holding only a previous output", dir, e.Name())
		}
	}
	return nil
}

// counting counts a stage's calls and tokens.
type counting struct {
	next                              llmcall.Chatter
	enc                               *tokens.Encoder
	calls, failed, prompt, completion atomic.Int64
	counted                           atomic.Int64
	reasoned, reasoning               atomic.Int64 // replies that held reasoning, and its characters
}

func (c *counting) Chat(ctx context.Context, msgs []llm.Message, opts llm.ChatOptions) (string, llm.Usage, error) {
	c.calls.Add(1)
	reply, u, err := c.next.Chat(ctx, msgs, opts)
	if err != nil {
		c.failed.Add(1)
		return reply, u, err
	}
	if u.PromptTokens == 0 && u.CompletionTokens == 0 {
		// The server reported no usage: count what was sent and received.
		for _, m := range msgs {
			u.PromptTokens += c.enc.Count(m.Content)
		}
		u.CompletionTokens = c.enc.Count(reply)
		c.counted.Add(1)
	}
	c.prompt.Add(int64(u.PromptTokens))
	c.completion.Add(int64(u.CompletionTokens))
	if u.ReasoningChars > 0 {
		c.reasoned.Add(1)
		c.reasoning.Add(int64(u.ReasoningChars))
	}
	return reply, u, nil
}
