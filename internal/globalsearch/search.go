package globalsearch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llmcall"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/prompts"
)

// Options are the knobs of global search beyond the context
// (retrieval.GlobalParams). DefaultOptions returns GraphRAG's defaults
// where it has them.
type Options struct {
	// Concurrency bounds the model calls in flight (map and rating calls).
	Concurrency int
	// MapMaxLength and ReduceMaxLength are the word limits the prompts
	// ask for (GraphRAG map_max_length, reduce_max_length).
	MapMaxLength    int
	ReduceMaxLength int
	// ResponseType is the shape of the answer, in words.
	ResponseType string
	// GeneralKnowledge lets the reduce call add what the model knows
	// from elsewhere, and makes it answer even when no point scored.
	GeneralKnowledge bool
	// Dynamic turns on dynamic community selection; DynamicThreshold is
	// the lowest rating (0-5) kept, DynamicKeepParent keeps a relevant
	// community's parent along with it, and DynamicMaxLevel is the deepest
	// level rated wholesale when no community above it was relevant.
	Dynamic           bool
	DynamicThreshold  int
	DynamicKeepParent bool
	DynamicMaxLevel   int64
	// MaxLLMCalls caps the model calls of one question (0: no cap). A
	// question that needs more fails before its map calls, and dynamic
	// selection stops descending before it would leave too few.
	MaxLLMCalls int
	// Chat is passed to every call: model, temperature, max tokens.
	Chat llm.ChatOptions
	// JSONMode asks the server for JSON (response_format, in the form
	// it takes: llm.JSONFormat) on map and rating calls.
	JSONMode bool
	// ProseScore is the score of a map reply that holds no JSON points,
	// taken whole as one point: a small model often answers the batch in
	// prose. 0 drops such replies, as GraphRAG does (it scores them 0).
	ProseScore int
}

// DefaultOptions returns GraphRAG's global search defaults, except
// Concurrency: GraphRAG's 25 suits hosted APIs, while a local server
// (Ollama, llama.cpp) serves a few requests at once and queues the rest,
// where they would run into the request timeout.
func DefaultOptions() Options {
	return Options{
		Concurrency:      4,
		MapMaxLength:     1000,
		ReduceMaxLength:  2000,
		ResponseType:     prompts.DefaultResponseType,
		DynamicThreshold: 1,
		DynamicMaxLevel:  2,
		JSONMode:         true,
		ProseScore:       50,
	}
}

// Validate reports the first option that cannot work.
func (o Options) Validate() error {
	switch {
	case o.Concurrency <= 0:
		return fmt.Errorf("globalsearch: concurrency %d: must be > 0", o.Concurrency)
	case o.MapMaxLength <= 0 || o.ReduceMaxLength <= 0:
		return fmt.Errorf("globalsearch: map and reduce word limits must be > 0")
	case o.ResponseType == "":
		return fmt.Errorf("globalsearch: response type is empty")
	case o.DynamicThreshold < 0 || o.DynamicThreshold > 5:
		return fmt.Errorf("globalsearch: dynamic threshold %d: must be 0..5", o.DynamicThreshold)
	case o.MaxLLMCalls < 0:
		return fmt.Errorf("globalsearch: max LLM calls %d: must be >= 0", o.MaxLLMCalls)
	}
	return nil
}

// Searcher runs global searches over one report source with one model.
// It is safe for concurrent use.
type Searcher struct {
	src  retrieval.ReportSource
	b    *retrieval.GlobalBuilder
	chat *llmcall.Caller // nil for Plan alone
	opts Options
}

// New returns a Searcher; chat may be nil for Plan alone.
func New(src retrieval.ReportSource, b *retrieval.GlobalBuilder, chat llmcall.Streamer, opts Options) (*Searcher, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	s := &Searcher{src: src, b: b, opts: opts}
	if chat != nil {
		s.chat = llmcall.NewCaller(chat, opts.Chat, opts.JSONMode, b.Encoder())
	}
	return s, nil
}

// Phase names for Progress.
const (
	PhaseRate   = "rate"
	PhaseMap    = "map"
	PhaseReduce = "reduce"
)

// Progress is one step of a search, for a progress line. Done of Total
// calls of the phase have finished (for PhaseRate, of the current level).
type Progress struct {
	Phase       string
	Done, Total int
	Level       int64 // PhaseRate: the level being rated
}

// Hooks receive what happens during a search. Either may be nil; they are
// called from one goroutine at a time.
type Hooks struct {
	Progress func(Progress)
	// Answer, when set, gets the answer piece by piece as the reduce call
	// streams it. Otherwise the answer comes in one piece.
	Answer func(piece string) error
	// Reasoning gets a reasoning model's thinking in the reduce call (the
	// one that writes the answer), as it streams; it is never part of the
	// answer. The map calls' thinking is only counted (Call).
	Reasoning func(piece string) error
}

// BatchResult is one map call.
type BatchResult struct {
	llmcall.Call
	Index         int                  `json:"index"`
	ReportIDs     []string             `json:"report_ids"`
	ContextTokens int                  `json:"context_tokens"`
	Truncated     int                  `json:"truncated_reports,omitempty"`
	Points        []retrieval.KeyPoint `json:"-"`
	// Dropped counts the points of a parsed reply that lacked a text or a
	// usable score.
	Dropped int `json:"dropped_points,omitempty"`
	// Prose marks a reply without JSON taken whole as one point scored
	// Options.ProseScore.
	Prose bool `json:"prose,omitempty"`
}

// ParseCounts count replies by how they parsed.
type ParseCounts struct {
	Valid    int `json:"valid"`
	Repaired int `json:"repaired"`
	Unusable int `json:"unusable"`
}

func (p *ParseCounts) add(how string) {
	switch how {
	case llmcall.ParseValid:
		p.Valid++
	case llmcall.ParseRepaired:
		p.Repaired++
	case llmcall.ParseUnusable:
		p.Unusable++
	}
}

// Result is a finished global search.
type Result struct {
	Answer string
	// NoData says no point scored above 0: Answer is prompts.NoDataAnswer
	// and no reduce call was made (unless GeneralKnowledge).
	NoData bool
	// Reports is how many reports were read from the source up to the
	// level; Selected how many the batches hold.
	Reports  int
	Selected int
	// Selection is set with dynamic community selection.
	Selection *Selection
	Batches   []BatchResult
	// MapParse counts the map replies by how they parsed; MapFailed the
	// map calls that failed for good and were skipped; MapProse the
	// unusable replies taken as one point each (Options.ProseScore).
	MapParse  ParseCounts
	MapFailed int
	MapProse  int
	// Degraded says where replies that could not be read were done
	// without, and how: rating and map replies without JSON.
	Degraded []string
	Reduce   *ReduceResult
	// LLMCalls counts every model call (rating, map, reduce), not the
	// client's retries.
	LLMCalls int
	// Cited are the report ids the answer cites that were in the batches;
	// UnknownCited those it cites that were not (made up by the model).
	Cited, UnknownCited []string
	Timings             map[string]float64
}

// ReduceResult is the reduce call and its context.
type ReduceResult struct {
	llmcall.Call
	Context retrieval.ReduceContext
}

// Search answers question. It fails when the reports cannot be read, when
// every map call fails, when a call fails in a way that would fail every
// call (no such model, refused key), or when the reduce call fails; map
// calls that fail otherwise, and replies that cannot be parsed, are
// skipped and counted in the Result.
func (s *Searcher) Search(ctx context.Context, question string, h Hooks) (*Result, error) {
	if s.chat == nil {
		return nil, errors.New("globalsearch: no model to search with")
	}
	res := &Result{Timings: map[string]float64{}}
	var mu sync.Mutex // serialises hooks
	progress := llmcall.Locked(&mu, h.Progress)

	t := time.Now()
	all, err := s.src.CommunityReports(ctx, s.b.Params().CommunityLevel)
	if err != nil {
		return nil, fmt.Errorf("globalsearch: read the community reports: %w", err)
	}
	res.Reports = len(all)
	res.Timings["reports"] = ms(time.Since(t))

	reports := s.b.Select(all)
	if s.opts.Dynamic {
		t = time.Now()
		sel, err := s.selectDynamic(ctx, question, all, progress)
		if err != nil {
			return nil, err
		}
		res.Selection = sel
		if sel.Degraded != "" {
			res.Degraded = append(res.Degraded, sel.Degraded)
		}
		res.LLMCalls += sel.Calls
		reports = sel.Reports
		res.Timings["rate"] = ms(time.Since(t))
	}
	res.Selected = len(reports)

	t = time.Now()
	batches := s.b.Batches(reports)
	res.Timings["batch"] = ms(time.Since(t))
	if limit := s.opts.MaxLLMCalls; limit > 0 && res.LLMCalls+len(batches)+1 > limit {
		return nil, &LimitError{Need: res.LLMCalls + len(batches) + 1, Spent: res.LLMCalls, Max: limit, Batches: len(batches)}
	}

	t = time.Now()
	if err := s.mapAll(ctx, question, batches, res, progress); err != nil {
		return nil, err
	}
	res.Timings["map"] = ms(time.Since(t))

	var points []retrieval.KeyPoint
	for _, b := range res.Batches {
		points = append(points, b.Points...)
	}
	t = time.Now()
	if err := s.reduce(ctx, question, points, res, h, progress, &mu); err != nil {
		return nil, err
	}
	res.Timings["reduce"] = ms(time.Since(t))
	known := make(map[string]bool)
	for _, b := range res.Batches {
		for _, id := range b.ReportIDs {
			known[id] = true
		}
	}
	res.Cited, res.UnknownCited = citations(res.Answer, known)
	return res, nil
}

// LimitError is a question that needs more model calls than MaxLLMCalls.
type LimitError struct {
	Need, Spent, Max, Batches int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("globalsearch: the question needs %d model calls (%d spent on rating, %d map, 1 reduce), more than the limit of %d",
		e.Need, e.Spent, e.Batches, e.Max)
}

// mapAll runs the map calls, Concurrency at a time, filling res.Batches in
// batch order.
func (s *Searcher) mapAll(ctx context.Context, question string, batches []retrieval.Batch, res *Result, progress func(Progress)) error {
	res.Batches = make([]BatchResult, len(batches))
	errs := make([]error, len(batches))
	for i, b := range batches {
		br := &res.Batches[i]
		br.Index, br.ContextTokens, br.Truncated = i, b.Tokens, b.Truncated
		for _, r := range b.Reports {
			br.ReportIDs = append(br.ReportIDs, r.ID)
		}
	}
	var mu sync.Mutex // orders the progress counts
	done := 0
	progress(Progress{Phase: PhaseMap, Total: len(batches)})
	err := s.each(ctx, len(batches), func(ctx context.Context, i int) error {
		br := &res.Batches[i]
		system, err := prompts.Render("global_map", prompts.GlobalMap{Context: batches[i].Text, MaxLength: s.opts.MapMaxLength})
		if err != nil {
			return err
		}
		reply, call, err := s.chat.Call(ctx, system, question, pointsSchema)
		br.Call, errs[i] = call, err
		if err != nil && llmcall.Fatal(err) {
			return err
		}
		if err == nil {
			br.Points, br.Dropped, br.Parse, br.Fixes = parsePoints(reply, i)
			if text := strings.TrimSpace(reply); br.Parse == llmcall.ParseUnusable && s.opts.ProseScore > 0 && text != "" && isProse(text) {
				br.Points, br.Prose = []retrieval.KeyPoint{{Batch: i, Description: text, Score: s.opts.ProseScore}}, true
			}
		}
		mu.Lock()
		done++
		progress(Progress{Phase: PhaseMap, Done: done, Total: len(batches)})
		mu.Unlock()
		return nil
	})
	if err != nil {
		return fmt.Errorf("globalsearch: map: %w", err)
	}
	var firstErr error
	for i, b := range res.Batches {
		res.LLMCalls++
		if errs[i] != nil {
			res.MapFailed++
			if firstErr == nil {
				firstErr = errs[i]
			}
			continue
		}
		res.MapParse.add(b.Parse)
		if b.Prose {
			res.MapProse++
		}
	}
	if res.MapProse > 0 {
		res.Degraded = append(res.Degraded, fmt.Sprintf("global: %d of %d map replies held no JSON points: each was taken whole as one point scored %d",
			res.MapProse, len(batches), s.opts.ProseScore))
	}
	if n := res.MapParse.Unusable - res.MapProse; n > 0 {
		res.Degraded = append(res.Degraded, fmt.Sprintf("global: %d of %d map replies held no usable JSON and were skipped", n, len(batches)))
	}
	if len(batches) > 0 && res.MapFailed == len(batches) {
		return fmt.Errorf("globalsearch: all %d map calls failed; the first: %w", len(batches), firstErr)
	}
	return nil
}

// isProse says reply holds no JSON at all (rather than JSON of another
// shape): a small model's answer to the batch in words.
func isProse(reply string) bool {
	_, parse, _ := Decode(reply)
	return parse == llmcall.ParseUnusable
}

// each runs fn for 0..n-1, Concurrency at a time.
func (s *Searcher) each(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	return llmcall.Each(ctx, s.opts.Concurrency, n, fn)
}

// JSON schemas of the replies, sent with JSON mode so that servers that
// constrain decoding to a schema (llama.cpp) make even small models keep
// to the shape.
var (
	pointsSchema = json.RawMessage(`{"type":"object","properties":{"points":{"type":"array","items":{"type":"object",` +
		`"properties":{"description":{"type":"string","minLength":1},"score":{"type":"integer","minimum":0,"maximum":100}},` +
		`"required":["description","score"]}}},"required":["points"]}`)
	ratingSchema = json.RawMessage(`{"type":"object","properties":{"reason":{"type":"string"},` +
		`"rating":{"type":"integer","minimum":0,"maximum":5}},"required":["reason","rating"]}`)
)

// reduce ranks the points, and unless none scored, asks for the answer.
func (s *Searcher) reduce(ctx context.Context, question string, points []retrieval.KeyPoint, res *Result, h Hooks, progress func(Progress), mu *sync.Mutex) error {
	rc := s.b.ReduceContext(points)
	res.Reduce = &ReduceResult{Context: rc}
	if len(rc.Points) == 0 && !s.opts.GeneralKnowledge {
		res.NoData = true
		res.Answer = prompts.NoDataAnswer
		if h.Answer != nil {
			mu.Lock()
			defer mu.Unlock()
			return h.Answer(res.Answer)
		}
		return nil
	}
	system, err := prompts.Render("global_reduce", prompts.GlobalReduce{Context: rc.Text, ResponseType: s.opts.ResponseType,
		MaxLength: s.opts.ReduceMaxLength, GeneralKnowledge: s.opts.GeneralKnowledge})
	if err != nil {
		return err
	}
	progress(Progress{Phase: PhaseReduce, Total: 1})
	answer, c, err := s.chat.Answer(ctx, system, question, llmcall.Hooks{Answer: h.Answer, Reasoning: h.Reasoning}.Serialized(mu))
	res.LLMCalls++
	if err != nil {
		return fmt.Errorf("globalsearch: reduce: %w", err)
	}
	res.Reduce.Call = c
	res.Answer = answer
	return nil
}

// citeRE finds "Reports (1, 2, +more)" in an answer's citations.
var citeRE = regexp.MustCompile(`Reports\s*\(([^)]*)\)`)

// citations returns the report ids answer cites, in order of first
// citation, split into those in known and the others.
func citations(answer string, known map[string]bool) (cited, unknown []string) {
	seen := make(map[string]bool)
	for _, m := range citeRE.FindAllStringSubmatch(answer, -1) {
		for _, id := range strings.Split(m[1], ",") {
			id = strings.TrimSpace(id)
			if id == "" || strings.HasPrefix(id, "+") || seen[id] {
				continue
			}
			seen[id] = true
			if known[id] {
				cited = append(cited, id)
			} else {
				unknown = append(unknown, id)
			}
		}
	}
	return cited, unknown
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// sortedKeys returns m's keys ordered as community numbers.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, retrieval.CompareIDs)
	return keys
}
