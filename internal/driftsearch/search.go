package driftsearch

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/internal/llmcall"
	"github.com/kgrag/kgrag/internal/localsearch"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/internal/tokens"
	"github.com/kgrag/kgrag/prompts"
)

// Source is the graph as DRIFT reads it: the community reports for the
// primer, local search's lookups for the follow-ups. retrieval.Source
// (memory or a store) is one.
type Source interface {
	retrieval.Backend
	retrieval.ReportSource
}

// Searcher runs DRIFT searches over one graph with its entities' and
// reports' vector indexes, one embedding model and one chat model. It is
// safe for concurrent use.
type Searcher struct {
	src      Source
	entities embedindex.Index
	reports  embedindex.Index
	emb      embedindex.Embedder
	chat     *llmcall.Caller // nil for Plan alone
	local    *retrieval.Builder
	enc      *tokens.Encoder
	opts     Options
}

// New checks that both indexes were built with emb's model and returns a
// Searcher. enc counts tokens with opts.Local.Encoding (nil builds one);
// chat may be nil for Plan alone.
func New(src Source, entities, reports embedindex.Index, emb embedindex.Embedder, chat llmcall.Streamer, enc *tokens.Encoder, opts Options) (*Searcher, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	for _, idx := range []embedindex.Index{entities, reports} {
		if err := embedindex.Check(idx.Info(), emb.Model(), 0); err != nil {
			return nil, err
		}
	}
	if enc == nil {
		var err error
		if enc, err = tokens.NewEncoder(opts.Local.Encoding); err != nil {
			return nil, err
		}
	}
	local, err := retrieval.NewBuilderWithEncoder(src, opts.Local, enc)
	if err != nil {
		return nil, err
	}
	s := &Searcher{src: src, entities: entities, reports: reports, emb: emb, local: local, enc: enc, opts: opts}
	if chat != nil {
		s.chat = llmcall.NewCaller(chat, opts.Chat, opts.JSONMode, enc)
	}
	return s, nil
}

// Phases of a search, for Progress.
const (
	PhaseExpand    = "expand"
	PhasePrimer    = "primer"
	PhaseFollowUps = "follow-ups"
	PhaseReduce    = "reduce"
)

// Progress is one step of a search: Done of Total calls of the phase (of
// Round, for the follow-ups) have finished.
type Progress struct {
	Phase       string
	Round       int
	Done, Total int
}

// Hooks receive what happens during a search; either may be nil. They are
// called from one goroutine at a time.
type Hooks struct {
	Progress func(Progress)
	// Answer gets the final answer piece by piece as it streams.
	Answer func(piece string) error
	// Reasoning gets a reasoning model's thinking in the call that writes
	// the answer, as it streams; it is never part of the answer.
	Reasoning func(piece string) error
}

// PrimerCall is one primer call: the reports of its fold and what the
// reply held.
type PrimerCall struct {
	llmcall.Call
	Fold               int      `json:"fold"`
	ReportIDs          []string `json:"report_ids"`
	IntermediateAnswer string   `json:"intermediate_answer,omitempty"`
	Score              *float64 `json:"score,omitempty"`
	FollowUps          []string `json:"follow_ups,omitempty"`
}

// Result is a finished DRIFT search.
type Result struct {
	Answer string `json:"-"`
	// Reports is how many reports the graph holds up to the level.
	Reports int `json:"reports"`
	// Template is the report whose shape the expansion imitates, and
	// Expanded the expansion (the question itself when the call failed or
	// gave nothing).
	Template   string       `json:"template_report"`
	Expanded   string       `json:"expanded_query"`
	ExpandCall llmcall.Call `json:"expand_call"`
	// Primed are the reports nearest the expansion, nearest first.
	Primed []string     `json:"primed_reports"`
	Primer []PrimerCall `json:"primer"`
	// Actions are the question (0) and every follow-up asked, in the
	// order asked; Edges who asked for which.
	Actions []*Action `json:"actions"`
	Edges   []Edge    `json:"edges"`
	Reduce  *Reduce   `json:"reduce,omitempty"`
	// LLMCalls counts the model calls made (not the client's retries);
	// FailedCalls those that failed for good and were skipped.
	LLMCalls    int `json:"llm_calls"`
	FailedCalls int `json:"failed_calls"`
	// Open counts the follow-ups asked but never answered: more than the
	// rounds could take, or cut by MaxLLMCalls (Capped).
	Open   int  `json:"open_follow_ups"`
	Capped bool `json:"capped_by_max_llm_calls,omitempty"`
	// CutReports counts the reports quoted in part, to fit CutBudget
	// tokens (the local budget) in the expansion or a primer call.
	CutReports int                `json:"cut_reports,omitempty"`
	CutBudget  int                `json:"cut_budget,omitempty"`
	Timings    map[string]float64 `json:"timings_ms"`
	// Degraded says where replies without JSON were taken as answers
	// (the record's degraded notes).
	Degraded []string `json:"-"`
}

// Reduce is the final call and its context.
type Reduce struct {
	llmcall.Call
	Steps   int    `json:"steps"`
	Context string `json:"-"`
}

// LimitError is a MaxLLMCalls that leaves no room for the calls every
// DRIFT search makes: the expansion, the primer's and the answer.
type LimitError struct {
	Max, Need, Folds int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("driftsearch: a limit of %d model calls is too low: DRIFT needs at least %d (1 expansion, %d primer, 1 answer) before any follow-up",
		e.Max, e.Need, e.Folds)
}

// MissingEmbeddingsError is a report up to the level that the reports'
// vector index lacks: the index is older than the reports.
type MissingEmbeddingsError struct {
	Missing, Reports int
	Index            string
	Example          string
}

func (e *MissingEmbeddingsError) Error() string {
	return fmt.Sprintf("driftsearch: %d of the %d community reports have no embedding in %s (report %s, for one): "+
		"rebuild it with kgrag embed --tables community_reports", e.Missing, e.Reports, e.Index, e.Example)
}

// Search answers question with DRIFT. It fails when the reports cannot be
// read or lack embeddings, when every primer call fails, when a call
// fails in a way that would fail every call (no such model, refused key,
// a server that is down), when the follow-ups' context cannot be built,
// and when the final call fails. A follow-up whose call fails otherwise
// is skipped, counted and not asked again (GraphRAG leaves it open and
// asks it again next round).
func (s *Searcher) Search(ctx context.Context, question string, h Hooks) (*Result, error) {
	if s.chat == nil {
		return nil, errors.New("driftsearch: no model to search with")
	}
	res := &Result{Timings: map[string]float64{}}
	var mu sync.Mutex // serialises hooks
	progress := llmcall.Locked(&mu, h.Progress)
	t := time.Now()
	reports, err := s.readReports(ctx)
	if err != nil {
		return nil, err
	}
	res.Reports = len(reports)
	res.Timings["reports"] = ms(time.Since(t))
	folds := min(s.opts.PrimerFolds, s.opts.KFollowUps, len(reports))
	need := folds + 2
	if limit := s.opts.MaxLLMCalls; limit > 0 && limit < need {
		return nil, &LimitError{Max: limit, Need: need, Folds: folds}
	}

	t = time.Now()
	progress(Progress{Phase: PhaseExpand, Total: 1})
	tmpl := template(reports)
	res.Template = tmpl.ID
	shape := s.fit([]string{tmpl.FullContent}, res)
	expand, err := prompts.Render("drift_expand", prompts.DriftExpand{Question: question, Template: shape[0]})
	if err != nil {
		return nil, err
	}
	expanded, call, err := s.chat.Call(ctx, "", expand, nil)
	res.ExpandCall = call
	res.LLMCalls++
	if err != nil && llmcall.Fatal(err) {
		return nil, fmt.Errorf("driftsearch: expand the question: %w", err)
	}
	if err != nil {
		res.FailedCalls++
	}
	// GraphRAG searches with the question itself when the expansion is
	// empty; kgrag does the same when its call failed.
	if strings.TrimSpace(expanded) == "" {
		expanded = question
	}
	res.Expanded = expanded
	progress(Progress{Phase: PhaseExpand, Done: 1, Total: 1})
	res.Timings["expand"] = ms(time.Since(t))

	t = time.Now()
	primed, err := s.nearestReports(ctx, expanded, reports)
	if err != nil {
		return nil, err
	}
	for _, r := range primed {
		res.Primed = append(res.Primed, r.ID)
	}
	res.Timings["knn"] = ms(time.Since(t))

	t = time.Now()
	st := newState(question)
	if err := s.prime(ctx, question, primed, st.actions[0], res, progress); err != nil {
		return nil, err
	}
	st.follow(st.actions[0])
	res.Timings["primer"] = ms(time.Since(t))

	t = time.Now()
	if err := s.followUps(ctx, question, st, res, progress); err != nil {
		return nil, err
	}
	res.Timings["follow_ups"] = ms(time.Since(t))
	res.Actions, res.Edges, res.Open = st.actions, st.edges, len(st.open())

	t = time.Now()
	if err := s.reduce(ctx, question, st.actions, res, h, progress, &mu); err != nil {
		return nil, err
	}
	res.Timings["reduce"] = ms(time.Since(t))
	res.Degraded = degraded(res)
	return res, nil
}

// degraded are the notes of what the search did for replies without
// JSON: a primer or follow-up reply in prose is taken as the answer
// itself, with no score and no follow-ups, so the search stops expanding
// from it.
func degraded(res *Result) []string {
	var out []string
	if res.CutReports > 0 {
		out = append(out, fmt.Sprintf("drift: %d report quotes cut to fit --max-context-tokens %d in the expansion and primer prompts", res.CutReports, res.CutBudget))
	}
	prose := 0
	for _, p := range res.Primer {
		if p.Parse == llmcall.ParseUnusable {
			prose++
		}
	}
	if prose > 0 {
		out = append(out, fmt.Sprintf("drift: %d of %d primer replies held no JSON: each was taken as an intermediate answer, with no follow-ups from it", prose, len(res.Primer)))
	}
	prose, answered := 0, 0
	for _, a := range res.Actions {
		if a.Call == nil || !a.Answered || a.Round == 0 {
			continue
		}
		answered++
		if a.Call.Parse == llmcall.ParseUnusable {
			prose++
		}
	}
	if prose > 0 {
		out = append(out, fmt.Sprintf("drift: %d of %d follow-up replies held no JSON: each was taken as the answer, with no follow-ups from it", prose, answered))
	}
	return out
}

// fit cuts texts, the reports one prompt quotes, when together they
// pass the local budget (--max-context-tokens): each is cut to an equal
// share, on a token boundary, and res counts it. GraphRAG quotes them
// whole, which with its 12,000-token budget rarely matters; a small
// model's 2048-token context is overrun by one long report, and the
// server refuses the call. The caller serialises calls that share res.
func (s *Searcher) fit(texts []string, res *Result) []string {
	budget := s.opts.Local.MaxContextTokens
	total := 0
	for _, t := range texts {
		total += s.enc.Count(t)
	}
	if budget <= 0 || total <= budget {
		return texts
	}
	share := budget / len(texts)
	out := make([]string, len(texts))
	for i, t := range texts {
		toks := s.enc.Tokens(t)
		if len(toks) <= share {
			out[i] = t
			continue
		}
		out[i] = t[:toks[share].Start]
		res.CutReports++
	}
	res.CutBudget = budget
	return out
}

// readReports reads the reports up to the level, refusing a graph that
// has none.
func (s *Searcher) readReports(ctx context.Context) ([]retrieval.ReportRecord, error) {
	reports, err := s.src.CommunityReports(ctx, s.opts.CommunityLevel)
	if err != nil {
		return nil, &localsearch.SourceError{Err: fmt.Errorf("driftsearch: read the community reports: %w", err)}
	}
	if len(reports) == 0 {
		return nil, fmt.Errorf("driftsearch: %s holds no community reports up to level %d: DRIFT starts from them (see kgrag inspect)",
			s.opts.Source, s.opts.CommunityLevel)
	}
	return reports, nil
}

// template is the report the expansion imitates: the highest rated, the
// first in GraphRAG's order among equals. GraphRAG draws one at random
// (secrets.choice, which no seed repeats); a fixed choice makes the
// search repeatable, and a high rating is a full report.
func template(reports []retrieval.ReportRecord) retrieval.ReportRecord {
	best := reports[0]
	for _, r := range reports[1:] {
		if r.Rank > best.Rank {
			best = r
		}
	}
	return best
}

// nearestReports embeds text and returns the KFollowUps reports nearest
// it, nearest first (GraphRAG computes the cosine of every report's full
// content embedding and takes the largest). Every report must have an
// embedding.
func (s *Searcher) nearestReports(ctx context.Context, text string, reports []retrieval.ReportRecord) ([]retrieval.ReportRecord, error) {
	info := s.reports.Info()
	hits, err := localsearch.Neighbours(ctx, s.reports, s.emb, text, info.Count, nil)
	if err != nil {
		return nil, fmt.Errorf("driftsearch: find the reports nearest the question: %w", err)
	}
	byID := make(map[string]int, len(reports))
	for i, r := range reports {
		byID[r.ID] = i
	}
	embedded := make(map[string]bool, len(hits))
	var out []retrieval.ReportRecord
	for _, h := range hits {
		embedded[h.ID] = true
		if i, ok := byID[h.ID]; ok && len(out) < s.opts.KFollowUps {
			out = append(out, reports[i])
		}
	}
	missing, example := 0, ""
	for _, r := range reports {
		if !embedded[r.ID] {
			if missing == 0 {
				example = r.ID
			}
			missing++
		}
	}
	if missing > 0 {
		return nil, &MissingEmbeddingsError{Missing: missing, Reports: len(reports), Index: info.Path, Example: example}
	}
	return out, nil
}

// folds splits reports into at most n folds as numpy's array_split does:
// the first len%n folds one longer. Empty folds are left out: GraphRAG
// asks the model about an empty fold when it has fewer reports than folds.
func folds(reports []retrieval.ReportRecord, n int) [][]retrieval.ReportRecord {
	var out [][]retrieval.ReportRecord
	size, extra := len(reports)/n, len(reports)%n
	for i, lo := 0, 0; i < n; i++ {
		hi := lo + size
		if i < extra {
			hi++
		}
		if hi > lo {
			out = append(out, reports[lo:hi])
		}
		lo = hi
	}
	return out
}

// JSON schemas of the replies, sent with JSON mode so that servers that
// constrain decoding to a schema (llama.cpp) keep small models to it.
var (
	primerSchema = json.RawMessage(`{"type":"object","properties":{"intermediate_answer":{"type":"string","minLength":1},` +
		`"score":{"type":"integer","minimum":0,"maximum":100},"follow_up_queries":{"type":"array","items":{"type":"string","minLength":1}}},` +
		`"required":["intermediate_answer","score","follow_up_queries"]}`)
	followUpSchema = json.RawMessage(`{"type":"object","properties":{"response":{"type":"string","minLength":1},` +
		`"score":{"type":"integer","minimum":0,"maximum":100},"follow_up_queries":{"type":"array","items":{"type":"string","minLength":1}}},` +
		`"required":["response","score","follow_up_queries"]}`)
)

// prime runs the primer calls, Concurrency at a time, and makes root
// (the question) answered with their joined answers, mean score and
// follow-ups, in fold order.
func (s *Searcher) prime(ctx context.Context, question string, primed []retrieval.ReportRecord, root *Action, res *Result, progress func(Progress)) error {
	fs := folds(primed, s.opts.PrimerFolds)
	res.Primer = make([]PrimerCall, len(fs))
	errs := make([]error, len(fs))
	var mu sync.Mutex
	done := 0
	progress(Progress{Phase: PhasePrimer, Total: len(fs)})
	err := s.each(ctx, len(fs), func(ctx context.Context, i int) error {
		pc := &res.Primer[i]
		pc.Fold = i
		texts := make([]string, len(fs[i]))
		for j, r := range fs[i] {
			pc.ReportIDs = append(pc.ReportIDs, r.ID)
			texts[j] = r.FullContent
		}
		mu.Lock()
		texts = s.fit(texts, res)
		mu.Unlock()
		prompt, err := prompts.Render("drift_primer", prompts.DriftPrimer{Question: question, Reports: strings.Join(texts, "\n\n")})
		if err != nil {
			return err
		}
		reply, call, err := s.chat.Call(ctx, "", prompt, primerSchema)
		pc.Call, errs[i] = call, err
		if err != nil && llmcall.Fatal(err) {
			return err
		}
		if err == nil {
			r := parseReply(reply, "intermediate_answer")
			pc.IntermediateAnswer, pc.Score, pc.FollowUps = r.answer, r.score, r.followUps
			pc.Parse, pc.Fixes = r.parse, r.fixes
		}
		mu.Lock()
		done++
		progress(Progress{Phase: PhasePrimer, Done: done, Total: len(fs)})
		mu.Unlock()
		return nil
	})
	res.LLMCalls += len(fs)
	if err != nil {
		return fmt.Errorf("driftsearch: primer: %w", err)
	}
	var answers []string
	var sum float64
	scored := 0
	var firstErr error
	for i, pc := range res.Primer {
		if errs[i] != nil {
			res.FailedCalls++
			firstErr = cmp.Or(firstErr, errs[i])
			continue
		}
		if pc.IntermediateAnswer != "" {
			answers = append(answers, pc.IntermediateAnswer)
		}
		if pc.Score != nil {
			sum += *pc.Score
			scored++
		}
		root.FollowUps = append(root.FollowUps, pc.FollowUps...)
	}
	if firstErr != nil && res.FailedCalls == len(fs) {
		return fmt.Errorf("driftsearch: all %d primer calls failed; the first: %w", len(fs), firstErr)
	}
	root.Answered, root.Answer = true, strings.Join(answers, "\n\n")
	if scored > 0 {
		mean := sum / float64(scored)
		root.Score = &mean
	}
	return nil
}

// followUps answers the open follow-ups, round by round: each round the
// first KFollowUps open ones (fewer when MaxLLMCalls leaves fewer calls
// before the answer), Concurrency at a time, each with its own local
// search. The follow-ups an answer asks for are added after the round,
// in the order of the actions answered.
func (s *Searcher) followUps(ctx context.Context, question string, st *state, res *Result, progress func(Progress)) error {
	left := math.MaxInt
	if s.opts.MaxLLMCalls > 0 {
		left = s.opts.MaxLLMCalls - res.LLMCalls - 1
	}
	for round := 1; round <= s.opts.Depth; round++ {
		open := st.open()
		take := open[:min(len(open), s.opts.KFollowUps)]
		if len(take) > left {
			take, res.Capped = take[:left], true
		}
		if len(take) == 0 {
			break
		}
		var mu sync.Mutex
		done := 0
		progress(Progress{Phase: PhaseFollowUps, Round: round, Total: len(take)})
		err := s.each(ctx, len(take), func(ctx context.Context, i int) error {
			if err := s.answer(ctx, question, take[i], round); err != nil {
				return err
			}
			mu.Lock()
			done++
			progress(Progress{Phase: PhaseFollowUps, Round: round, Done: done, Total: len(take)})
			mu.Unlock()
			return nil
		})
		res.LLMCalls += len(take)
		left -= len(take)
		if err != nil {
			return fmt.Errorf("driftsearch: follow-ups, round %d: %w", round, err)
		}
		for _, a := range take {
			if a.Failed {
				res.FailedCalls++
				continue
			}
			st.follow(a)
		}
	}
	return nil
}

// answer answers one follow-up with local search: its nearest entities,
// their context under DRIFT's budget shares, one JSON call. A call that
// fails for good marks it failed; only errors that would fail every
// call, and a context that cannot be built, are returned.
func (s *Searcher) answer(ctx context.Context, question string, a *Action, round int) error {
	p := s.opts.Local
	hits, err := localsearch.Neighbours(ctx, s.entities, s.emb, a.Query, p.TopKEntities*p.OversampleScaler, nil)
	if err != nil {
		return fmt.Errorf("follow-up %q: %w", a.Query, err)
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	c, err := s.local.LocalContext(ctx, ids)
	if err != nil {
		return &localsearch.SourceError{Err: fmt.Errorf("follow-up %q: build the context: %w", a.Query, err)}
	}
	a.Context = records(c)
	system, err := prompts.Render("drift_local", prompts.DriftLocal{Context: c.Text, GlobalQuestion: question,
		FollowUps: s.opts.KFollowUps, ResponseType: followUpResponseType})
	if err != nil {
		return err
	}
	reply, call, err := s.chat.Call(ctx, system, a.Query, followUpSchema)
	a.Call, a.Round = &call, round
	if err != nil {
		if llmcall.Fatal(err) {
			return fmt.Errorf("follow-up %q: %w", a.Query, err)
		}
		a.Failed = true
		return nil
	}
	r := parseReply(reply, "response")
	a.Answered, a.Answer, a.Score, a.FollowUps = true, r.answer, r.score, r.followUps
	a.Call.Parse, a.Call.Fixes = r.parse, r.fixes
	return nil
}

// records are the ids of a local context's records.
func records(c *retrieval.Context) *Records {
	r := &Records{Tokens: c.Tokens, Reports: []string{}, Entities: []string{}, Relationships: []string{}, Sources: []string{}}
	for _, x := range c.Reports {
		r.Reports = append(r.Reports, x.ID)
	}
	for _, x := range c.Entities {
		r.Entities = append(r.Entities, x.ID)
	}
	for _, x := range c.Relationships {
		r.Relationships = append(r.Relationships, x.ID)
	}
	for _, x := range c.TextUnits {
		r.Sources = append(r.Sources, x.ID)
	}
	return r
}

// reduceContext is the final call's context: one section per step that
// has an answer, in the order asked. GraphRAG hands the model the
// Python list of the answers as text (its repr, newlines as "\n"); kgrag
// prints each answer under its question.
func reduceContext(actions []*Action) (string, int) {
	var sb strings.Builder
	n := 0
	for _, a := range actions {
		if strings.TrimSpace(a.Answer) == "" {
			continue
		}
		n++
		if n > 1 {
			sb.WriteString("\n\n")
		}
		fmt.Fprintf(&sb, "----Step %d: %s----\n%s", n, a.Query, strings.TrimSpace(a.Answer))
	}
	return sb.String(), n
}

// reduce writes the answer from the steps' answers, streaming it to
// h.Answer.
func (s *Searcher) reduce(ctx context.Context, question string, actions []*Action, res *Result, h Hooks, progress func(Progress), mu *sync.Mutex) error {
	text, steps := reduceContext(actions)
	if steps == 0 {
		return errors.New("driftsearch: no step gave an answer to build on (see --json: primer and actions)")
	}
	system, err := prompts.Render("drift_reduce", prompts.DriftReduce{Context: text, ResponseType: s.opts.ResponseType})
	if err != nil {
		return err
	}
	progress(Progress{Phase: PhaseReduce, Total: 1})
	// Streamed even with no one listening, so that the answer call is
	// made the same way for ask, serve and the tests' recording server.
	hooks := llmcall.Hooks{Answer: h.Answer, Reasoning: h.Reasoning}.Serialized(mu)
	if hooks.Answer == nil {
		hooks.Answer = func(string) error { return nil }
	}
	answer, c, err := s.chat.Answer(ctx, system, question, hooks)
	res.LLMCalls++
	res.Reduce = &Reduce{Steps: steps, Context: text}
	if err != nil {
		res.Reduce.Call = c
		return fmt.Errorf("driftsearch: answer: %w", err)
	}
	res.Reduce.Call = c
	res.Answer = answer
	progress(Progress{Phase: PhaseReduce, Done: 1, Total: 1})
	return nil
}

// each runs fn for 0..n-1, Concurrency at a time.
func (s *Searcher) each(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	return llmcall.Each(ctx, s.opts.Concurrency, n, fn)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
