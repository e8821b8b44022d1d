package basicsearch

import (
	"context"
	"fmt"
	"time"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llmcall"
	"github.com/kgrag/kgrag/internal/localsearch"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/internal/tokens"
	"github.com/kgrag/kgrag/prompts"
)

// Options are what a Searcher is built with: the parameters of the
// context, and as in localsearch.Options the shape of the answer, the
// answer call's options, the graph's name for errors and the token
// encoder (nil builds one).
type Options struct {
	Params       retrieval.BasicParams
	ResponseType string
	Chat         llm.ChatOptions
	Source       string
	Encoder      *tokens.Encoder
	// Rerank, when set, reorders the first RerankTop text units found by
	// a cross-encoder's scores (with a retriever that keeps them by rank:
	// not GraphRAG's).
	Rerank    llmcall.Reranker
	RerankTop int
}

// Searcher answers questions from the text units of one graph with one
// text unit index, embedding model and chat model. It is safe for
// concurrent use.
type Searcher struct {
	idx  embedindex.Index
	emb  embedindex.Embedder
	chat llmcall.Streamer
	b    *retrieval.BasicBuilder
	opts Options
	// lex ranks the text units by BM25 for the BM25 retrievers.
	lex *retrieval.Lexical
	// src reads the texts a rerank scores.
	src retrieval.Backend
}

// New checks that idx was built with emb's model and returns a Searcher
// over src. chat may be nil for contexts alone.
func New(src retrieval.Backend, idx embedindex.Index, emb embedindex.Embedder, chat llmcall.Streamer, opts Options) (*Searcher, error) {
	if err := embedindex.Check(idx.Info(), emb.Model(), 0); err != nil {
		return nil, err
	}
	if opts.Rerank != nil && !opts.Params.ByRank() {
		return nil, fmt.Errorf("basicsearch: a rerank reorders the text units, and GraphRAG's retriever prints them in table order: choose --basic-retriever vector, bm25 or hybrid")
	}
	if opts.ResponseType == "" {
		opts.ResponseType = prompts.DefaultResponseType
	}
	b, err := retrieval.NewBasicBuilder(src, opts.Params, opts.Encoder)
	if err != nil {
		return nil, err
	}
	s := &Searcher{idx: idx, emb: emb, chat: chat, b: b, opts: opts, src: src}
	if r := opts.Params.Retriever; r == retrieval.RetrieverBM25 || r == retrieval.RetrieverHybrid {
		l, ok := src.(retrieval.WalkLoader)
		if !ok {
			return nil, fmt.Errorf("basicsearch: retriever %s needs every text unit of the graph, which %s cannot list", r, opts.Source)
		}
		s.lex = retrieval.NewLexical(l)
	}
	return s, nil
}

// Result is what a search found and answered.
type Result struct {
	// Neighbours are the text units nearest the question, nearest first
	// (none with the BM25 retriever).
	Neighbours []embedindex.Hit
	// Ranking is the text units the retriever found, best first: the
	// neighbours, BM25's hits or their fusion.
	Ranking []embedindex.Hit
	Context *retrieval.BasicContext
	// Reply is the answer; zero after Context.
	Reply localsearch.Reply
	// Timings are milliseconds per phase: embed, knn, retrieval, llm.
	Timings map[string]float64
}

// NoTextUnitsError is returned when no text unit the index gave is in the
// graph: the index was built from another graph.
type NoTextUnitsError struct {
	Neighbours int
	Index      string
	Source     string
}

func (e *NoTextUnitsError) Error() string {
	return fmt.Sprintf("none of the %d text units nearest the question in index %s is in %s: "+
		"was the index built from this graph? rebuild it with kgrag embed --tables text_units", e.Neighbours, e.Index, e.Source)
}

// Context embeds the question, finds the nearest text units and builds
// the context. It calls no chat model.
func (s *Searcher) Context(ctx context.Context, question string) (*Result, error) {
	res := &Result{Timings: map[string]float64{}}
	p := s.b.Params()
	var hits []embedindex.Hit
	var err error
	if p.Retriever != retrieval.RetrieverBM25 {
		hits, err = localsearch.Neighbours(ctx, s.idx, s.emb, question, p.K, res.Timings)
		if err != nil {
			return nil, err
		}
	}
	res.Neighbours = hits
	res.Ranking = hits
	if s.lex != nil {
		t := time.Now()
		bm, err := s.lex.TextUnits(ctx, question, p.K)
		if err != nil {
			return nil, &localsearch.SourceError{Err: err}
		}
		res.Ranking = bm
		if p.Retriever == retrieval.RetrieverHybrid {
			res.Ranking = embedindex.Fuse(p.K, hits, bm)
		}
		res.Timings["lexical"] = ms(time.Since(t))
	}
	if s.opts.Rerank != nil {
		if err := s.rerank(ctx, question, res); err != nil {
			return nil, err
		}
	}
	ids := make([]string, len(res.Ranking))
	for i, h := range res.Ranking {
		ids[i] = h.ID
	}
	t := time.Now()
	res.Context, err = s.b.BasicContext(ctx, ids)
	if err != nil {
		return nil, &localsearch.SourceError{Err: fmt.Errorf("build the context: %w", err)}
	}
	res.Timings["retrieval"] = ms(time.Since(t))
	if res.Context.Found == 0 {
		return nil, &NoTextUnitsError{Neighbours: len(hits), Index: s.idx.Info().Path, Source: s.opts.Source}
	}
	return res, nil
}

// rerank reorders res.Ranking's first RerankTop text units by the
// reranker's scores of their text.
func (s *Searcher) rerank(ctx context.Context, question string, res *Result) error {
	t := time.Now()
	n := min(s.opts.RerankTop, len(res.Ranking))
	ids := make([]string, n)
	for i := range n {
		ids[i] = res.Ranking[i].ID
	}
	units, err := s.src.TextUnits(ctx, ids)
	if err != nil {
		return &localsearch.SourceError{Err: fmt.Errorf("rerank: text units: %w", err)}
	}
	text := make(map[string]string, len(units))
	for _, u := range units {
		text[u.TextUnitID] = u.Text
	}
	res.Ranking, err = llmcall.Rerank(ctx, s.opts.Rerank, question, res.Ranking, n, func(h embedindex.Hit) string { return text[h.ID] })
	res.Timings["rerank"] = ms(time.Since(t))
	return err
}

// System is the system prompt of the answer call for a context.
func (s *Searcher) System(c *retrieval.BasicContext) (string, error) {
	return prompts.Render("basic_answer", prompts.BasicAnswer{Context: c.Text, ResponseType: s.opts.ResponseType})
}

// Search builds the context of the question and has the chat model answer
// from it, streaming the answer to h.Answer (h.Retrieved, which takes a
// local search result, is not called). The result is returned with an
// error that comes after the context was built.
func (s *Searcher) Search(ctx context.Context, question string, h localsearch.Hooks) (*Result, error) {
	res, err := s.Context(ctx, question)
	if err != nil {
		return nil, err
	}
	system, err := s.System(res.Context)
	if err != nil {
		return res, err
	}
	t := time.Now()
	res.Reply, err = localsearch.Answer(ctx, s.chat, s.opts.Chat, system, question, h)
	res.Timings["llm"] = ms(time.Since(t))
	return res, err
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
