package localsearch

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llmcall"
	"github.com/kgrag/kgrag/internal/mode"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/internal/tokens"
	"github.com/kgrag/kgrag/prompts"
)

// Modes a Searcher builds contexts in, as the registry (internal/mode)
// names them.
const (
	// ModeLocal is GraphRAG's local search.
	ModeLocal = mode.Local
	// ModeSPARQLTemplates is the retrieval of the article on querying
	// GraphRAG output in an RDF store (GraphDB): its templated SPARQL
	// queries, top chunks by linked-entity count, top communities by rank
	// and weight, inside and outside relationships (retrieval.TemplatesBuilder).
	ModeSPARQLTemplates = mode.SPARQLTemplates
	// ModeSubgraph is the retrieval of the article on GraphRAG with
	// NetworkX (its section 9): the subgraph around the nearest nodes
	// (retrieval.SubgraphBuilder).
	ModeSubgraph = mode.Subgraph
	// ModeGraphOfThoughts is the same article's graph of thoughts (section
	// 10): the subgraph's context, from which the model builds a small
	// knowledge graph for the question set, then answers from that graph.
	ModeGraphOfThoughts = mode.GraphOfThoughts
)

// Modes are the modes a Searcher takes, by their names (not aliases).
var Modes = []string{ModeLocal, ModeSPARQLTemplates, ModeSubgraph, ModeGraphOfThoughts}

// Options are what a Searcher is built with.
type Options struct {
	// Mode is one of Modes (or an alias).
	Mode string
	// Params are local search's; in the other modes their TopKEntities
	// is the number of neighbours taken in ModeSPARQLTemplates,
	// HistoryTurns still applies to the text embedded and Encoding
	// counts tokens.
	Params retrieval.Params
	// Templates are ModeSPARQLTemplates'.
	Templates retrieval.TemplatesParams
	// Subgraph are ModeSubgraph's and ModeGraphOfThoughts'.
	Subgraph retrieval.SubgraphParams
	// ResponseType is the shape of the answer, in words.
	ResponseType string
	// Chat is passed to the answer call: model, temperature, max tokens.
	Chat llm.ChatOptions
	// JSONMode asks the server for JSON (response_format, see
	// llm.JSONFormat) on graph of thoughts' first call.
	JSONMode bool
	// Source names the graph in errors ("./output", "<g> at URL").
	Source string
	// Encoder counts tokens with Params.Encoding; nil builds one.
	// Searchers of one graph share one (building it parses the BPE ranks).
	Encoder *tokens.Encoder
	// EntityRetriever is how the start entities are found:
	// EntityRetrieverVector (GraphRAG's, the default) or
	// EntityRetrieverHybrid.
	EntityRetriever string
}

// How the start entities are found (kgrag ask --entity-retriever).
const (
	// EntityRetrieverVector: the nearest in the entity index (GraphRAG's).
	EntityRetrieverVector = "vector"
	// EntityRetrieverHybrid: the nearest and those of highest BM25 score
	// over titles and descriptions, joined by reciprocal rank fusion.
	EntityRetrieverHybrid = "hybrid"
)

// Searcher answers questions from one graph, one vector index, one
// embedding model and one chat model. It is safe for concurrent use.
type Searcher struct {
	idx       embedindex.Index
	emb       embedindex.Embedder
	chat      llmcall.Streamer
	local     *retrieval.Builder
	templates *retrieval.TemplatesBuilder
	subgraph  *retrieval.SubgraphBuilder
	opts      Options
	// lex ranks entities by their words, for EntityRetrieverHybrid.
	lex *retrieval.Lexical
}

// New checks that the index was built with emb's model and builds the
// context builder of opts.Mode over src. chat may be nil for contexts
// alone.
func New(src retrieval.Source, idx embedindex.Index, emb embedindex.Embedder, chat llmcall.Streamer, opts Options) (*Searcher, error) {
	if err := embedindex.Check(idx.Info(), emb.Model(), 0); err != nil {
		return nil, err
	}
	if opts.ResponseType == "" {
		opts.ResponseType = prompts.DefaultResponseType
	}
	opts.Mode = mode.Canonical(opts.Mode)
	s := &Searcher{idx: idx, emb: emb, chat: chat, opts: opts}
	switch opts.EntityRetriever {
	case "", EntityRetrieverVector:
	case EntityRetrieverHybrid:
		l, ok := src.(retrieval.WalkLoader)
		if !ok {
			return nil, fmt.Errorf("localsearch: entity retriever %s needs every entity of the graph, which %s cannot list", opts.EntityRetriever, opts.Source)
		}
		s.lex = retrieval.NewLexical(l)
	default:
		return nil, fmt.Errorf("localsearch: entity retriever %q: want %s or %s", opts.EntityRetriever, EntityRetrieverVector, EntityRetrieverHybrid)
	}
	enc, err := opts.Encoder, error(nil)
	if enc == nil {
		if enc, err = tokens.NewEncoder(opts.Params.Encoding); err != nil {
			return nil, err
		}
	}
	switch opts.Mode {
	case ModeLocal:
		s.local, err = retrieval.NewBuilderWithEncoder(src, opts.Params, enc)
	case ModeSPARQLTemplates:
		if err = opts.Params.Validate(); err == nil {
			s.templates, err = retrieval.NewTemplatesBuilder(src, opts.Templates, enc)
		}
	case ModeSubgraph, ModeGraphOfThoughts:
		if err = opts.Params.Validate(); err == nil {
			s.subgraph, err = retrieval.NewSubgraphBuilder(src, opts.Subgraph, enc)
		}
	default:
		err = fmt.Errorf("localsearch: mode %q: want one of %s", opts.Mode, strings.Join(Modes, ", "))
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Mode is the mode the Searcher builds contexts in.
func (s *Searcher) Mode() string { return s.opts.Mode }

// EmbedModel is the embedding model the question is embedded with.
func (s *Searcher) EmbedModel() string { return s.emb.Model() }

// Question is one question, asked after History (oldest first; empty for
// a first question).
type Question struct {
	Text    string
	History []retrieval.Turn
	// SubQuestions join Text in graph of thoughts' question set (the
	// graph is built for all of them); other modes ignore them.
	SubQuestions []string
}

// Hooks are called as a search goes. Any may be nil; an error a hook
// returns stops the search and is returned.
type Hooks struct {
	// Retrieved is called with the result once the context is built,
	// before the model is asked.
	Retrieved func(*Result) error
	// Built is called in ModeGraphOfThoughts once the graph is built
	// (res.Thoughts), before the answer is asked for.
	Built func(*Result) error
	// Answer gets the answer as it streams.
	Answer func(piece string) error
	// Reasoning gets a reasoning model's thinking as it streams; it is
	// never part of the answer.
	Reasoning func(piece string) error
}

// Result is what a search found and answered.
type Result struct {
	// Neighbours are the kNN hits, nearest first, before unknown ids were
	// dropped and top-k kept.
	Neighbours []embedindex.Hit
	// Local is the context in ModeLocal, Templates in ModeSPARQLTemplates,
	// Subgraph in ModeSubgraph and ModeGraphOfThoughts.
	Local     *retrieval.Context
	Templates *retrieval.TemplatesResult
	Subgraph  *retrieval.SubgraphResult
	// Thoughts is the graph ModeGraphOfThoughts built (BuildGraph).
	Thoughts *Thoughts
	// Degraded says what the search did instead of what a model reply it
	// could not use was for: graph of thoughts answering from the
	// subgraph context when the reply held no graph.
	Degraded []string
	// Reply is the answer; zero after Context.
	Reply Reply
	// Timings are milliseconds per phase: embed, knn, retrieval, llm.
	Timings map[string]float64
}

// Text is the context handed to the model.
func (r *Result) Text() string {
	if r.Templates != nil {
		return r.Templates.Text
	}
	if r.Subgraph != nil {
		return r.Subgraph.Context.Text
	}
	return r.Local.Text
}

// Reply is a chat model's answer.
type Reply struct {
	Answer string
	// Partial marks an answer the server stopped sending before it ended;
	// the error returned with it says why.
	Partial bool
	// Usage counts tokens and a reasoning model's thinking
	// (ReasoningChars), which Hooks.Reasoning got.
	Usage llm.Usage
}

// NoEntitiesError is returned when no neighbour the index gave is in the
// graph: the index was built from another graph.
type NoEntitiesError struct {
	Neighbours int
	Index      string
	Source     string
}

func (e *NoEntitiesError) Error() string {
	return fmt.Sprintf("none of the %d entities nearest the question in index %s is in %s: "+
		"was the index built from this graph? rebuild it with kgrag embed", e.Neighbours, e.Index, e.Source)
}

// neighbours is how many kNN hits to ask for: in local mode more than
// are kept, as GraphRAG's map_query_to_entities does, since some may be
// unknown to the graph; the articles' modes take the k nearest as they
// come.
func (s *Searcher) neighbours() int {
	switch s.opts.Mode {
	case ModeSPARQLTemplates:
		return s.opts.Params.TopKEntities
	case ModeSubgraph, ModeGraphOfThoughts:
		return s.opts.Subgraph.TopNodes
	}
	return s.opts.Params.TopKEntities * s.opts.Params.OversampleScaler
}

// Context embeds the question, finds its nearest entities and builds the
// context of the mode. It calls no chat model.
func (s *Searcher) Context(ctx context.Context, q Question) (*Result, error) {
	res := &Result{Timings: map[string]float64{}}
	info := s.idx.Info()
	text := retrieval.SearchText(q.Text, q.History, s.opts.Params.HistoryTurns)
	hits, err := Neighbours(ctx, s.idx, s.emb, text, s.neighbours(), res.Timings)
	if err != nil {
		return nil, err
	}
	if s.lex != nil {
		t := time.Now()
		bm, err := s.lex.Entities(ctx, text, s.neighbours())
		if err != nil {
			return nil, &SourceError{err}
		}
		hits = embedindex.Fuse(s.neighbours(), hits, bm)
		res.Timings["lexical"] = ms(time.Since(t))
	}
	res.Neighbours = hits
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}

	t := time.Now()
	found := 0
	switch {
	case s.templates != nil:
		res.Templates, err = s.templates.TemplatesContext(ctx, ids)
		if err == nil {
			found = res.Templates.Matched
		}
	case s.subgraph != nil:
		res.Subgraph, err = s.subgraph.SubgraphContext(ctx, ids)
		if err == nil {
			found = len(res.Subgraph.Records.Found)
		}
	default:
		res.Local, err = s.local.LocalContext(ctx, ids, q.History...)
		if err == nil {
			found = res.Local.Matched
		}
	}
	if err != nil {
		return nil, &SourceError{fmt.Errorf("build the context: %w", err)}
	}
	res.Timings["retrieval"] = ms(time.Since(t))
	if found == 0 {
		return nil, &NoEntitiesError{Neighbours: len(hits), Index: info.Path, Source: s.opts.Source}
	}
	return res, nil
}

// Search builds the context of the question and has the chat model answer
// from it, streaming the answer to h.Answer. The result is returned with
// the error too when there is one after the context was built, so that
// an answer cut short can be reported as far as it came.
func (s *Searcher) Search(ctx context.Context, q Question, h Hooks) (*Result, error) {
	res, err := s.Context(ctx, q)
	if err != nil {
		return nil, err
	}
	if h.Retrieved != nil {
		if err := h.Retrieved(res); err != nil {
			return res, err
		}
	}
	if s.opts.Mode == ModeGraphOfThoughts {
		var ng *NoGraphError
		switch err := s.BuildGraph(ctx, q, res); {
		case errors.As(err, &ng):
			// A small model's prose is no graph, but the context it was
			// given still answers the question.
			res.Degraded = append(res.Degraded, ng.Error()+"; answered from the subgraph context")
		case err != nil:
			return res, err
		}
		if h.Built != nil {
			if err := h.Built(res); err != nil {
				return res, err
			}
		}
	}
	system, err := s.AnswerPrompt(res)
	if err != nil {
		return res, err
	}
	t := time.Now()
	res.Reply, err = Answer(ctx, s.chat, s.opts.Chat, system, q.Text, h)
	res.Timings["llm"] = ms(time.Since(t))
	return res, err
}

// Answer asks chat the question under the system prompt, streaming the
// answer to h.Answer and any reasoning to h.Reasoning. It fails on an
// answer that is empty because a reasoning model spent its tokens
// thinking; an answer cut by the connection is returned, Partial, with
// an error wrapping llm.ErrResponse.
func Answer(ctx context.Context, chat llmcall.Streamer, o llm.ChatOptions, system, question string, h Hooks) (Reply, error) {
	if chat == nil {
		return Reply{}, errors.New("localsearch: no chat model")
	}
	o.OnReasoning = h.Reasoning
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: system}, {Role: llm.RoleUser, Content: question}}
	onDelta := h.Answer
	if onDelta == nil {
		onDelta = func(string) error { return nil }
	}
	text, usage, err := chat.ChatStream(ctx, msgs, o, onDelta)
	r := Reply{Answer: text, Usage: usage}
	if err != nil {
		if text != "" && errors.Is(err, llm.ErrResponse) {
			r.Partial = true
		}
		return r, fmt.Errorf("answer: %w", err)
	}
	if strings.TrimSpace(text) == "" && usage.ReasoningChars > 0 {
		return r, fmt.Errorf("answer: %w: the model reasoned (%d characters) but gave no answer (finish_reason %q): "+
			"raise --max-tokens, which the reasoning counts against, or leave it 0", llmcall.ErrUnusable, usage.ReasoningChars, usage.FinishReason)
	}
	return r, nil
}

// IndexError marks an error of the vector index (a search that failed),
// SourceError one of the graph's source (a store query that failed), so
// that callers can say which service to check.
type IndexError struct{ Err error }

func (e *IndexError) Error() string { return e.Err.Error() }
func (e *IndexError) Unwrap() error { return e.Err }

// SourceError: see IndexError.
type SourceError struct{ Err error }

func (e *SourceError) Error() string { return e.Err.Error() }
func (e *SourceError) Unwrap() error { return e.Err }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// ChatModel is the model that writes the answers.
func (s *Searcher) ChatModel() string { return s.opts.Chat.Model }

// Nearest returns the k entities nearest text in the vector index, nearest
// first: what search-by-meaning needs without a context.
func (s *Searcher) Nearest(ctx context.Context, text string, k int) ([]embedindex.Hit, error) {
	return Neighbours(ctx, s.idx, s.emb, text, k, nil)
}

// Neighbours embeds text with emb and returns the k vectors of idx nearest
// it, nearest first, refusing an embedding of another model or dimension
// than the index's. With timings, the milliseconds of the embedding and
// of the search go to its "embed" and "knn". A failed search is an
// *IndexError.
func Neighbours(ctx context.Context, idx embedindex.Index, emb embedindex.Embedder, text string, k int, timings map[string]float64) ([]embedindex.Hit, error) {
	t := time.Now()
	vecs, err := emb.Embed(ctx, []string{text})
	if err != nil {
		return nil, fmt.Errorf("embed the question: %w", err)
	}
	if len(vecs) != 1 {
		return nil, fmt.Errorf("embed the question: got %d vectors for 1 text", len(vecs))
	}
	d := time.Since(t)
	info := idx.Info()
	if err := embedindex.Check(info, emb.Model(), len(vecs[0])); err != nil {
		return nil, err
	}
	t = time.Now()
	hits, err := idx.Search(ctx, vecs[0], k)
	if err != nil {
		return nil, &IndexError{fmt.Errorf("search %s: %w", info.Path, err)}
	}
	if timings != nil {
		timings["embed"], timings["knn"] = ms(d), ms(time.Since(t))
	}
	return hits, nil
}
