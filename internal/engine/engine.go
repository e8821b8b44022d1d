// Package engine is the one interface every query mode answers through,
// and the registry that opens a mode's engine from a graph, its vector
// indexes and the model servers. kgrag ask, kgrag serve (/v1/models,
// /v1/chat/completions, /api/ask), kgrag mcp and kgrag doctor hold no
// list of modes and no dispatch of their own: they ask Modes for the
// list and Open for the engine, and fill the ask --json record
// (answer.Result) the engine returns. A new mode is one entry in Modes
// and an Engine; the front ends take it from there.
//
// The modes themselves live in their search packages (localsearch,
// globalsearch, driftsearch, basicsearch, walksearch); an Engine adapts one to the
// common shape: Plan, Context, Search.
package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/internal/answer"
	"github.com/kgrag/kgrag/internal/basicsearch"
	"github.com/kgrag/kgrag/internal/driftsearch"
	"github.com/kgrag/kgrag/internal/embedtext"
	"github.com/kgrag/kgrag/internal/globalsearch"
	"github.com/kgrag/kgrag/internal/llmcall"
	"github.com/kgrag/kgrag/internal/localsearch"
	"github.com/kgrag/kgrag/internal/mode"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/internal/tokens"
	"github.com/kgrag/kgrag/internal/walksearch"
)

// Question is one question to a mode.
type Question struct {
	Text string
	// History are the conversation's earlier turns, which the modes that
	// start from the nearest entities join to the question.
	History []retrieval.Turn
	// SubQuestions join Text in graph of thoughts' question set.
	SubQuestions []string
}

// Progress is one step of a search that makes several model calls: Done
// of Total calls of Phase (of Round, for DRIFT's follow-ups; at Level,
// for global search's ratings). Phase is the search package's name for
// it (globalsearch.PhaseMap, driftsearch.PhasePrimer, PhaseThoughts...).
type Progress struct {
	Mode        string
	Phase       string
	Round       int
	Level       int64
	Done, Total int
}

// PhaseThoughts is the step where graph of thoughts built its graph,
// reported once it is built.
const PhaseThoughts = "graph-of-thoughts"

// Hooks receive what happens during a search. Any may be nil; an error
// a hook returns stops the search. They are called one at a time.
type Hooks struct {
	// Retrieved is called once the context is built, before the model
	// is asked, by the modes that build one context.
	Retrieved func(*answer.Result) error
	// Progress reports the steps of a search.
	Progress func(Progress)
	// Answer gets the answer as it streams; Reasoning a reasoning
	// model's thinking in the call that writes it, never part of it.
	Answer    func(piece string) error
	Reasoning func(piece string) error
}

// Engine answers questions in one mode over one graph. Its methods fill
// res, the ask --json record, as far as they got: on an error after the
// context was built, res holds the context (and a partial answer, marked
// AnswerPartial). An Engine is safe for concurrent use.
type Engine interface {
	// Mode is the mode the engine answers in.
	Mode() mode.Mode
	// Plan says what answering q can cost, without a chat model: a
	// *globalsearch.Plan or *driftsearch.Plan, kept in res.Plan.
	// Modes that make one call return ErrNoPlan.
	Plan(ctx context.Context, q Question, res *answer.Result) error
	// Context builds what the model would be given, without a chat
	// model: res.Context, or res.Global's batches. DRIFT, whose later
	// contexts come from answers, returns ErrNoContext.
	Context(ctx context.Context, q Question, res *answer.Result) error
	// Search answers q.
	Search(ctx context.Context, q Question, h Hooks, res *answer.Result) error
}

var (
	// ErrNoPlan: the mode makes one model call; there is nothing to plan.
	ErrNoPlan = errors.New("the mode makes one model call: there is no plan to show")
	// ErrNoContext: the mode's contexts come from the model's answers.
	ErrNoContext = errors.New("the mode's contexts come from the model's answers: there is no context without the model")
)

// Deps are what engines are built over. Indexes a mode does not need
// may be nil; Open says which one a mode lacks (MissingIndexError).
type Deps struct {
	Source retrieval.Source
	// Name says where the graph was read from, for errors.
	Name string
	// Entities, TextUnits and Reports are the vector indexes of the
	// tables kgrag embed embeds (embedtext.Entities...).
	Entities, TextUnits, Reports embedindex.Index
	Embedder                     embedindex.Embedder
	// Chat is the chat model; nil builds engines for Plan and Context.
	Chat llmcall.Streamer
	// Rerank, when set, reranks the text units basic search (by rank)
	// and the walk found.
	Rerank llmcall.Reranker
	// Encoder counts tokens with Options.Local.Params.Encoding; nil
	// builds one per engine.
	Encoder *tokens.Encoder
	// Window, when not nil, is the chat model's window: every budget is
	// cut to fit it and every call sends a max_tokens (see Reserve). Nil
	// keeps the budgets as given and leaves max_tokens to the options.
	Window *Window
}

// Options are every mode's options; an engine reads its own.
type Options struct {
	// Local: the modes that start from the entities nearest the question
	// (local, sparql-templates, subgraph, graph-of-thoughts). Its Mode is
	// set by Open.
	Local localsearch.Options
	// Global: global search; GlobalParams its context.
	Global       globalsearch.Options
	GlobalParams retrieval.GlobalParams
	Basic        basicsearch.Options
	Drift        driftsearch.Options
	Walk         walksearch.Options
}

// entry is one mode in the registry: its description and how its engine
// is opened.
type entry struct {
	mode.Mode
	open func(m mode.Mode, d Deps, o Options) (Engine, error)
}

// registry pairs every mode of the mode package with its engine, in
// mode.All's order. TestRegistry fails when a mode lacks one.
func registry() []entry {
	var out []entry
	for _, m := range mode.All() {
		e := entry{Mode: m}
		switch m.Name {
		case mode.Local, mode.SPARQLTemplates, mode.Subgraph, mode.GraphOfThoughts:
			e.open = openLocal
		case mode.Global:
			e.open = openGlobal
		case mode.Drift:
			e.open = openDrift
		case mode.Basic:
			e.open = openBasic
		case mode.Walk:
			e.open = openWalk
		}
		out = append(out, e)
	}
	return out
}

// Modes are the modes that have an engine, in the order help and
// /v1/models list them.
func Modes() []mode.Mode {
	var out []mode.Mode
	for _, e := range registry() {
		if e.open != nil {
			out = append(out, e.Mode)
		}
	}
	return out
}

// Tables are the tables whose vector indexes m searches
// (embedtext.Entities...), for the caller to open.
func Tables(m mode.Mode) []string {
	var out []string
	for _, t := range []struct {
		need  mode.Needs
		table string
	}{{mode.EntityIndex, embedtext.Entities}, {mode.TextUnitIndex, embedtext.TextUnits}, {mode.ReportIndex, embedtext.Reports}} {
		if m.Needs&t.need != 0 {
			out = append(out, t.table)
		}
	}
	return out
}

// MissingIndexError: a mode whose table has no vector index in Deps.
type MissingIndexError struct {
	Mode, Table string
}

func (e *MissingIndexError) Error() string {
	if e.Table == embedtext.Entities {
		return fmt.Sprintf("--mode %s needs the vector index of the entities: build it with kgrag embed", e.Mode)
	}
	return fmt.Sprintf("--mode %s needs the vector index of %s: build it with kgrag embed --tables %s", e.Mode, e.Table, e.Table)
}

// slot is where d keeps table's index; nil for a table without one.
func (d *Deps) slot(table string) *embedindex.Index {
	switch table {
	case embedtext.Entities:
		return &d.Entities
	case embedtext.TextUnits:
		return &d.TextUnits
	case embedtext.Reports:
		return &d.Reports
	}
	return nil
}

// SetIndex sets the index of table (embedtext.Entities...).
func (d *Deps) SetIndex(table string, idx embedindex.Index) {
	if p := d.slot(table); p != nil {
		*p = idx
	}
}

// Open returns the engine of the mode named name (a name, an alias or a
// model name: mode.Lookup) over d.
func Open(name string, d Deps, o Options) (Engine, error) {
	m, ok := mode.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("engine: no mode %q", name)
	}
	for _, e := range registry() {
		if e.Name != m.Name || e.open == nil {
			continue
		}
		for _, t := range Tables(m) {
			if p := d.slot(t); p == nil || *p == nil {
				return nil, &MissingIndexError{Mode: m.Name, Table: t}
			}
		}
		if d.Encoder == nil {
			enc, err := tokens.NewEncoder(o.Local.Params.Encoding)
			if err != nil {
				return nil, err
			}
			d.Encoder = enc
		}
		if d.Window != nil {
			f := &fitEngine{m: m, d: d, o: o, open: e.open, w: *d.Window}
			// Open once now, so that bad options fail here as they
			// would without a window.
			if _, _, err := f.engine(Question{}); err != nil {
				var small *WindowTooSmallError
				if !errors.As(err, &small) {
					return nil, err
				}
			}
			return f, nil
		}
		return e.open(m, d, o)
	}
	return nil, fmt.Errorf("engine: mode %q has no engine", m.Name)
}

// merge adds timings to res's.
func merge(res *answer.Result, timings map[string]float64) {
	if res.Timings == nil {
		res.Timings = map[string]float64{}
	}
	for k, v := range timings {
		res.Timings[k] = v
	}
}
