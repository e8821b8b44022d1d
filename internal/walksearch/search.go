package walksearch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/internal/lexical"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llmcall"
	"github.com/kgrag/kgrag/internal/localsearch"
	"github.com/kgrag/kgrag/internal/nounphrase"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/internal/tokens"
	"github.com/kgrag/kgrag/prompts"
)

// Options are what a Searcher is built with: the walk's parameters, the
// shape of the answer, the answer call's options, the graph's name for
// errors and the token encoder (nil builds one).
type Options struct {
	Params       Params
	ResponseType string
	Chat         llm.ChatOptions
	Source       string
	Encoder      *tokens.Encoder
	// Rerank, when set, reorders the walk's first RerankTop text units
	// by a cross-encoder's scores before the context takes them.
	Rerank    llmcall.Reranker
	RerankTop int
}

// Searcher answers questions by a walk over one graph. The graph is read
// whole at the first question and kept. It is safe for concurrent use.
type Searcher struct {
	loader        retrieval.WalkLoader
	entIdx, unIdx embedindex.Index
	emb           embedindex.Embedder
	chat          llmcall.Streamer
	enc           *tokens.Encoder
	phrases       *nounphrase.Extractor
	opts          Options

	mu sync.Mutex
	g  *graph // nil until read
}

// graph is what the walk reads, built once: the graph, its transitions,
// lexical indexes of text units and entities, entities by title.
type graph struct {
	*retrieval.WalkGraph
	w        *walker
	units    *lexical.Index
	entities *lexical.Index
	byTitle  map[string]int32
	entityID map[string]int32
	unitID   map[string]int32
}

// New returns a Searcher over the graph loader reads, seeding from the
// entity and text unit vector indexes (each checked against emb's
// model). chat may be nil for contexts alone.
func New(loader retrieval.WalkLoader, entities, units embedindex.Index, emb embedindex.Embedder, chat llmcall.Streamer, opts Options) (*Searcher, error) {
	if err := opts.Params.Validate(); err != nil {
		return nil, err
	}
	for _, idx := range []embedindex.Index{entities, units} {
		if err := embedindex.Check(idx.Info(), emb.Model(), 0); err != nil {
			return nil, err
		}
	}
	enc := opts.Encoder
	if enc == nil {
		var err error
		if enc, err = tokens.NewEncoder(opts.Params.Encoding); err != nil {
			return nil, err
		}
	}
	if opts.ResponseType == "" {
		opts.ResponseType = prompts.DefaultResponseType
	}
	x, err := nounphrase.New(nounphrase.DefaultOptions())
	if err != nil {
		return nil, err
	}
	return &Searcher{loader: loader, entIdx: entities, unIdx: units, emb: emb, chat: chat, enc: enc, phrases: x, opts: opts}, nil
}

// load reads the graph at the first question (read says it did now); a
// question whose context ends while it reads leaves it for the next.
func (s *Searcher) load(ctx context.Context) (g *graph, read bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.g != nil {
		return s.g, false, nil
	}
	wg, err := s.loader.WalkGraph(ctx)
	if err != nil {
		return nil, false, &localsearch.SourceError{Err: err}
	}
	if len(wg.Units) == 0 {
		return nil, false, fmt.Errorf("walksearch: %s holds no text units: the walk ranks text units", s.opts.Source)
	}
	g = &graph{WalkGraph: wg, w: newWalker(wg, s.opts.Params.RelationshipShare), units: lexical.New(), entities: lexical.New(),
		byTitle: map[string]int32{}, entityID: map[string]int32{}, unitID: map[string]int32{}}
	for i, u := range wg.Units {
		g.units.Add(u.Text)
		g.unitID[u.TextUnitID] = int32(i)
	}
	for i, e := range wg.Entities {
		g.entities.Add(e.Title + " " + e.Description)
		g.entityID[e.ID] = int32(i)
		if k := titleKey(e.Title); k != "" {
			if _, dup := g.byTitle[k]; !dup {
				g.byTitle[k] = int32(i)
			}
		}
	}
	s.g = g
	return g, true, nil
}

// titleKey is how a phrase of the question meets an entity's title: their
// terms (lower case, no accents or punctuation) joined by spaces.
func titleKey(s string) string { return strings.Join(lexical.Terms(s), " ") }

// Seed is an entity the walk started from, with its share of the
// restarts and what chose it: "named" (a phrase of the question is its
// title), "lexical" (BM25 over titles and descriptions), "vector" (the
// entity index).
type Seed struct {
	Title  string   `json:"title"`
	Weight float64  `json:"weight"`
	By     []string `json:"by"`
}

// Ranked is a text unit and its score in the walk.
type Ranked struct {
	ID, TextUnitID string
	Score          float64
}

// maxRanking is how many text units Result.Ranking keeps.
const maxRanking = 100

// Result is what a search found and answered.
type Result struct {
	// Seeds are the entities the walk started from, heaviest first.
	Seeds []Seed
	// Ranking is the text units the walk reached, best first: the first
	// maxRanking (a walk over a large graph reaches thousands).
	Ranking []Ranked
	// Entities and Units are the context's records, in the order printed.
	Entities []retrieval.EntityRecord
	Units    []retrieval.TextUnitRecord
	Text     string
	Tokens   int
	Reply    localsearch.Reply
	// Timings are milliseconds per phase: load (the first question
	// only), embed, knn, walk, retrieval, llm.
	Timings map[string]float64
}

// Context seeds and runs the walk for question and builds the context of
// what it ranks highest. It calls no chat model.
func (s *Searcher) Context(ctx context.Context, question string) (*Result, error) {
	res := &Result{Timings: map[string]float64{}}
	t := time.Now()
	g, read, err := s.load(ctx)
	if err != nil {
		return nil, err
	}
	if read {
		res.Timings["load"] = ms(time.Since(t))
	}
	p := s.opts.Params
	t = time.Now()
	vecs, err := s.emb.Embed(ctx, []string{question})
	if err != nil {
		return nil, fmt.Errorf("embed the question: %w", err)
	}
	if len(vecs) != 1 {
		return nil, fmt.Errorf("embed the question: got %d vectors for 1 text", len(vecs))
	}
	for _, idx := range []embedindex.Index{s.entIdx, s.unIdx} {
		if err := embedindex.Check(idx.Info(), s.emb.Model(), len(vecs[0])); err != nil {
			return nil, err
		}
	}
	res.Timings["embed"] = ms(time.Since(t))
	t = time.Now()
	var entHits, unitHits []embedindex.Hit
	if p.SeedEntities > 0 {
		if entHits, err = s.entIdx.Search(ctx, vecs[0], p.SeedEntities); err != nil {
			return nil, &localsearch.IndexError{Err: fmt.Errorf("search %s: %w", s.entIdx.Info().Path, err)}
		}
	}
	if p.SeedTextUnits > 0 {
		if unitHits, err = s.unIdx.Search(ctx, vecs[0], p.SeedTextUnits); err != nil {
			return nil, &localsearch.IndexError{Err: fmt.Errorf("search %s: %w", s.unIdx.Info().Path, err)}
		}
	}
	res.Timings["knn"] = ms(time.Since(t))

	t = time.Now()
	reset, seeds, seeded := s.seeds(g, question, entHits, unitHits)
	if !seeded {
		return nil, errors.New("walksearch: nothing in the graph matches the question: no entity or text unit to start from")
	}
	res.Seeds = seeds
	scores := g.w.rank(reset, p.Damping, maxIterations, tolerance)
	ne := len(g.Entities)
	for j, u := range g.Units {
		if sc := scores[ne+j]; sc > 0 {
			res.Ranking = append(res.Ranking, Ranked{ID: u.ID, TextUnitID: u.TextUnitID, Score: sc})
		}
	}
	slices.SortStableFunc(res.Ranking, func(a, b Ranked) int { return cmp.Compare(b.Score, a.Score) })
	res.Timings["walk"] = ms(time.Since(t))
	if s.opts.Rerank != nil {
		t = time.Now()
		res.Ranking, err = llmcall.Rerank(ctx, s.opts.Rerank, question, res.Ranking, s.opts.RerankTop,
			func(r Ranked) string { return g.Units[g.unitID[r.TextUnitID]].Text })
		if err != nil {
			return nil, err
		}
		res.Timings["rerank"] = ms(time.Since(t))
	}

	t = time.Now()
	s.build(g, scores, res)
	if len(res.Ranking) > maxRanking {
		res.Ranking = res.Ranking[:maxRanking]
	}
	res.Timings["retrieval"] = ms(time.Since(t))
	return res, nil
}

// seeds is the walk's restart distribution: the entities the question
// names, those the lexical and vector indexes find, each weighed by how
// specific it is (HippoRAG's node specificity: one over the number of
// text units it comes from), and the text units the two indexes find.
// seeded says some entity or text unit was.
func (s *Searcher) seeds(g *graph, question string, entHits, unitHits []embedindex.Hit) (reset []float64, seeds []Seed, seeded bool) {
	p := s.opts.Params
	ne := len(g.Entities)
	reset = make([]float64, ne+len(g.Units))
	type seed struct {
		w  float64
		by []string
	}
	ents := map[int32]*seed{}
	add := func(e int32, w float64, by string) {
		x := ents[e]
		if x == nil {
			x = &seed{}
			ents[e] = x
		}
		x.w += w
		if !slices.Contains(x.by, by) {
			x.by = append(x.by, by)
		}
	}
	for _, ph := range s.phrases.Extract(question) {
		if e, ok := g.byTitle[titleKey(ph)]; ok {
			add(e, 1, "named")
		}
	}
	if p.SeedEntities > 0 {
		for _, h := range normalized(g.entities.Search(question, p.SeedEntities), p.SeedSharpness) {
			add(int32(h.Doc), h.Score, "lexical")
		}
	}
	for _, h := range normalizedHits(entHits, p.SeedSharpness) {
		if e, ok := g.entityID[h.id]; ok {
			add(e, h.score, "vector")
		}
	}
	var entTotal float64
	for e, x := range ents {
		n := len(g.Entities[e].Units)
		if n == 0 {
			n = 1
		}
		x.w /= float64(n)
		entTotal += x.w
	}
	units := map[int32]float64{}
	if p.SeedTextUnits > 0 {
		for _, h := range normalized(g.units.Search(question, p.SeedTextUnits), p.SeedSharpness) {
			units[int32(h.Doc)] += h.Score
		}
	}
	for _, h := range normalizedHits(unitHits, p.SeedSharpness) {
		if u, ok := g.unitID[h.id]; ok {
			units[u] += h.score
		}
	}
	var unitTotal float64
	for _, w := range units {
		unitTotal += w
	}
	entShare, unitShare := 1-p.UnitSeedShare, p.UnitSeedShare
	switch {
	case unitTotal == 0:
		entShare, unitShare = 1, 0
	case entTotal == 0:
		entShare, unitShare = 0, 1
	}
	var out []Seed
	for e, x := range ents {
		w := entShare * x.w / entTotal
		reset[e] = w
		out = append(out, Seed{Title: g.Entities[e].Title, Weight: w, By: x.by})
	}
	for u, w := range units {
		reset[int32(ne)+u] = unitShare * w / unitTotal
	}
	slices.SortFunc(out, func(a, b Seed) int {
		if c := cmp.Compare(b.Weight, a.Weight); c != 0 {
			return c
		}
		return strings.Compare(a.Title, b.Title)
	})
	return reset, out, entTotal > 0 || unitTotal > 0
}

// normalized scales lexical hits to the best one's score (1), raised to
// the power sharpness.
func normalized(hits []lexical.Hit, sharpness float64) []lexical.Hit {
	if len(hits) == 0 || hits[0].Score <= 0 {
		return nil
	}
	top := hits[0].Score
	out := make([]lexical.Hit, len(hits))
	for i, h := range hits {
		out[i] = lexical.Hit{Doc: h.Doc, Score: math.Pow(h.Score/top, sharpness)}
	}
	return out
}

type scoredID struct {
	id    string
	score float64
}

// normalizedHits scales vector hits to the nearest one's similarity (1),
// raised to the power sharpness; a hit of no similarity or less counts
// nothing.
func normalizedHits(hits []embedindex.Hit, sharpness float64) []scoredID {
	if len(hits) == 0 || hits[0].Score <= 0 {
		return nil
	}
	top := float64(hits[0].Score)
	var out []scoredID
	for _, h := range hits {
		if h.Score > 0 {
			out = append(out, scoredID{h.ID, math.Pow(float64(h.Score)/top, sharpness)})
		}
	}
	return out
}

// build fills res's context: a table of the entities the walk went
// through most (seeds among them), within EntityShare of the budget, then
// the text units of highest score while they fit, best first.
func (s *Searcher) build(g *graph, scores []float64, res *Result) {
	p := s.opts.Params
	d := "|"
	var sb strings.Builder
	used := 0
	ne := len(g.Entities)
	order := make([]int32, 0, ne)
	for i := range ne {
		if scores[i] > 0 {
			order = append(order, int32(i))
		}
	}
	slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(scores[b], scores[a]) })
	entBudget := int(float64(p.MaxContextTokens) * p.EntityShare)
	if len(order) > 0 && entBudget > 0 {
		head := "-----Entities-----\nid" + d + "entity" + d + "description\n"
		n := s.enc.Count(head)
		var rows strings.Builder
		for _, i := range order {
			e := g.Entities[i]
			row := retrieval.CSVRow([]string{e.HumanReadableID, e.Title, e.Description}, d)
			c := s.enc.Count(row)
			if n+c > entBudget {
				break
			}
			n += c
			rows.WriteString(row)
			res.Entities = append(res.Entities, retrieval.EntityRecord{ID: e.HumanReadableID, EntityID: e.ID, Title: e.Title, Description: e.Description})
		}
		if len(res.Entities) > 0 {
			sb.WriteString(head)
			sb.WriteString(rows.String())
			sb.WriteString("\n")
			used += n
		}
	}
	head := "-----Sources-----\nid" + d + "text\n"
	used += s.enc.Count(head)
	var rows strings.Builder
	for _, r := range res.Ranking {
		if len(res.Units) == p.TextUnits {
			break
		}
		u := g.Units[g.unitID[r.TextUnitID]]
		row := retrieval.CSVRow([]string{u.ID, u.Text}, d)
		c := s.enc.Count(row)
		if used+c > p.MaxContextTokens {
			continue // a shorter unit further down may still fit
		}
		used += c
		rows.WriteString(row)
		res.Units = append(res.Units, retrieval.TextUnitRecord{ID: u.ID, TextUnitID: u.TextUnitID, Text: u.Text})
	}
	if len(res.Units) > 0 {
		sb.WriteString(head)
		sb.WriteString(rows.String())
	}
	res.Text = sb.String()
	res.Tokens = s.enc.Count(res.Text)
}

// System is the system prompt of the answer call for a context: basic
// search's, whose context is text units too.
func (s *Searcher) System(res *Result) (string, error) {
	return prompts.Render("basic_answer", prompts.BasicAnswer{Context: res.Text, ResponseType: s.opts.ResponseType})
}

// Search builds the context of the question and has the chat model answer
// from it, streaming to h.Answer. The result is returned with an error
// that comes after the context was built.
func (s *Searcher) Search(ctx context.Context, question string, h localsearch.Hooks) (*Result, error) {
	res, err := s.Context(ctx, question)
	if err != nil {
		return nil, err
	}
	system, err := s.System(res)
	if err != nil {
		return res, err
	}
	t := time.Now()
	res.Reply, err = localsearch.Answer(ctx, s.chat, s.opts.Chat, system, question, h)
	res.Timings["llm"] = ms(time.Since(t))
	return res, err
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
