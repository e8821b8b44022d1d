package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/kgrag/kgrag/internal/answer"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/mode"
	"github.com/kgrag/kgrag/internal/tokens"
	"github.com/kgrag/kgrag/prompts"
)

// A chat model reads a window of tokens: the prompt and the answer
// together. kgrag's budgets (--max-context-tokens and the others) say how
// much of the graph a mode would like to hand the model; fitting cuts them
// to what the window leaves after the prompt's own text, the question and
// a reserve for the answer, so that no server has to cut the prompt (with
// an error, or silently: Ollama keeps the start and drops the middle, LM
// Studio can truncate the middle). The window is in the model's tokens,
// the budgets in tiktoken's: Ratio converts.

// Window is the chat model's window, as the caller found it
// (llm.Client.Window), and what learns a window the server names when it
// refuses a prompt anyway.
type Window struct {
	llm.Window
	// Ratio is the model's tokens per tiktoken token of kgrag's count;
	// 0 means llm.DefaultTokenRatio.
	Ratio float64
	// Learn records a window the server named refusing a prompt of
	// prompt tokens (its count), for later calls and later runs
	// (llm.Client.Learn); nil learns nothing.
	Learn func(tokens, prompt int) llm.Window
}

// questionAllowance is the room kept for a question not known when the
// budgets are fitted (Open checks the options with it).
const questionAllowance = 256

// summariesBelow is the map batch below which global search maps report
// summaries instead of whole reports (GraphRAG's reports run to 1-3k
// tokens).
const summariesBelow = 4000

// minData is the least data a mode is worth running on: a window that
// leaves less is an error, not an answer from nothing.
const minData = 200

// WindowTooSmallError: the window leaves no room for a mode's data.
type WindowTooSmallError struct {
	Mode           string
	Window         llm.Window
	Prompt, Answer int // the prompt's own tokens and the answer's reserve
}

func (e *WindowTooSmallError) Error() string {
	return fmt.Sprintf("the chat model's window, %s, leaves no room for --mode %s's data: its prompt takes %d tokens and the answer %d; "+
		"give the model a longer context, or lower --max-tokens", e.Window, e.Mode, e.Prompt, e.Answer)
}

// fitted is the plan of one fit: options cut to the window, and the notes
// that say what was cut.
type fitted struct {
	opts  Options
	notes []string
}

// fit cuts o's budgets for mode m to w, given a question of qTokens.
func fit(m mode.Mode, o Options, w Window, enc *tokens.Encoder, qTokens int) (fitted, error) {
	b := llm.NewBudget(w.Window, w.Ratio, o.Local.Chat.MaxTokens)
	reserve := b.Reserve
	setChat := func(c *llm.ChatOptions, need int) {
		if c.MaxTokens == 0 {
			c.MaxTokens = reserve
		}
		if need > 0 {
			c.ContextTokens = need
		}
	}
	if !w.Known() {
		setChat(&o.Local.Chat, 0)
		setChat(&o.Basic.Chat, 0)
		setChat(&o.Global.Chat, 0)
		setChat(&o.Drift.Chat, 0)
		return fitted{opts: o}, nil
	}
	// room is what the window leaves for data under a prompt of
	// overhead tokens, in kgrag's count.
	room := func(overhead int) int { return b.Room() - overhead - qTokens }
	need := func(overhead, data int) int { return b.Need(overhead + qTokens + data) }
	var notes []string
	cut := func(what string, budget *int, overhead int) error {
		r := room(overhead)
		if r < minData {
			return &WindowTooSmallError{Mode: m.Name, Window: w.Window, Prompt: overhead + qTokens, Answer: reserve}
		}
		if *budget > r {
			notes = append(notes, fmt.Sprintf("%s cut from %d to %d tokens to fit the chat model's window of %s, with %d tokens kept for the answer",
				what, *budget, r, w.Window, reserve))
			*budget = r
		}
		return nil
	}
	over := func(name string, data any) int {
		s, err := prompts.Render(name, data)
		if err != nil {
			return 0
		}
		return enc.Count(s)
	}
	var err error
	switch m.Name {
	case mode.Local, mode.SPARQLTemplates, mode.Subgraph, mode.GraphOfThoughts:
		oh := over("local_answer", prompts.LocalAnswer{ResponseType: o.Local.ResponseType})
		if m.Name == mode.GraphOfThoughts {
			oh = max(oh, over("thoughts_graph", prompts.ThoughtsGraph{}))
		}
		err = cut("the context budget (--max-context-tokens)", &o.Local.Params.MaxContextTokens, oh)
		b := o.Local.Params.MaxContextTokens
		o.Local.Templates.MaxContextTokens = min(o.Local.Templates.MaxContextTokens, b)
		o.Local.Subgraph.MaxContextTokens = min(o.Local.Subgraph.MaxContextTokens, b)
		setChat(&o.Local.Chat, need(oh, b))
	case mode.Basic:
		oh := over("basic_answer", prompts.BasicAnswer{ResponseType: o.Basic.ResponseType})
		err = cut("the context budget (--max-context-tokens)", &o.Basic.Params.MaxContextTokens, oh)
		setChat(&o.Basic.Chat, need(oh, o.Basic.Params.MaxContextTokens))
	case mode.Walk:
		oh := over("basic_answer", prompts.BasicAnswer{ResponseType: o.Walk.ResponseType})
		err = cut("the context budget (--max-context-tokens)", &o.Walk.Params.MaxContextTokens, oh)
		setChat(&o.Walk.Chat, need(oh, o.Walk.Params.MaxContextTokens))
	case mode.Global:
		mapOH := over("global_map", prompts.GlobalMap{MaxLength: o.Global.MapMaxLength})
		redOH := over("global_reduce", prompts.GlobalReduce{ResponseType: o.Global.ResponseType, MaxLength: o.Global.ReduceMaxLength})
		before := o.GlobalParams.MaxContextTokens
		err = errors.Join(
			cut("each map batch's budget (--max-context-tokens)", &o.GlobalParams.MaxContextTokens, mapOH),
			cut("the reduce budget (--reduce-context-tokens)", &o.GlobalParams.ReduceContextTokens, redOH))
		if err == nil && !o.GlobalParams.UseCommunitySummary && o.GlobalParams.MaxContextTokens < min(before, summariesBelow) {
			// A batch this small holds a report or two, cut: their
			// summaries, written to stand for them, say more in
			// fewer calls.
			o.GlobalParams.UseCommunitySummary = true
			notes = append(notes, fmt.Sprintf("global search maps the reports' summaries (--report-summaries): a map batch of %d tokens would hold one or two reports, most of them cut", o.GlobalParams.MaxContextTokens))
		}
		setChat(&o.Global.Chat, max(need(mapOH, o.GlobalParams.MaxContextTokens), need(redOH, o.GlobalParams.ReduceContextTokens)))
	case mode.Drift:
		oh := max(over("drift_local", prompts.DriftLocal{FollowUps: o.Drift.KFollowUps, ResponseType: o.Drift.ResponseType}),
			over("drift_primer", prompts.DriftPrimer{}), over("drift_reduce", prompts.DriftReduce{ResponseType: o.Drift.ResponseType}))
		err = cut("the context budget (--max-context-tokens)", &o.Drift.Local.MaxContextTokens, oh)
		setChat(&o.Drift.Chat, need(oh, o.Drift.Local.MaxContextTokens))
	}
	if err != nil {
		return fitted{}, err
	}
	return fitted{opts: o, notes: notes}, nil
}

// fitEngine opens the engine of a mode with its budgets cut to the chat
// model's window for each question, and answers a refusal for length
// (the server's window is smaller than it said, or was unknown) by
// learning the window it names and answering again, once.
type fitEngine struct {
	m    mode.Mode
	d    Deps
	o    Options
	open func(mode.Mode, Deps, Options) (Engine, error)

	mu      sync.Mutex
	w       Window
	engines map[int]fitOpen // by question tokens
}

type fitOpen struct {
	e     Engine
	notes []string
}

func (f *fitEngine) Mode() mode.Mode { return f.m }

// engine returns the engine fitted for q.
func (f *fitEngine) engine(q Question) (Engine, []string, error) {
	qTokens := questionAllowance
	if q.Text != "" {
		// The question, and the few tokens of its message's framing.
		qTokens = f.d.Encoder.Count(q.Text) + 16
		for _, s := range q.SubQuestions {
			qTokens += f.d.Encoder.Count(s) + 4
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if e, ok := f.engines[qTokens]; ok {
		return e.e, e.notes, nil
	}
	p, err := fit(f.m, f.o, f.w, f.d.Encoder, qTokens)
	if err != nil {
		return nil, nil, err
	}
	e, err := f.open(f.m, f.d, p.opts)
	if err != nil {
		return nil, nil, err
	}
	if f.engines == nil {
		f.engines = map[int]fitOpen{}
	}
	f.engines[qTokens] = fitOpen{e, p.notes}
	return e, p.notes, nil
}

// fitted returns the engine fitted for q, with its notes added to res.
func (f *fitEngine) fitted(q Question, res *answer.Result) (Engine, error) {
	e, notes, err := f.engine(q)
	if err != nil {
		return nil, err
	}
	res.Degrade(notes...)
	return e, nil
}

func (f *fitEngine) Plan(ctx context.Context, q Question, res *answer.Result) error {
	e, err := f.fitted(q, res)
	if err != nil {
		return err
	}
	return e.Plan(ctx, q, res)
}

func (f *fitEngine) Context(ctx context.Context, q Question, res *answer.Result) error {
	e, err := f.fitted(q, res)
	if err != nil {
		return err
	}
	return e.Context(ctx, q, res)
}

func (f *fitEngine) Search(ctx context.Context, q Question, h Hooks, res *answer.Result) error {
	before := *res
	before.Timings = maps.Clone(res.Timings)
	e, err := f.fitted(q, res)
	if err != nil {
		return err
	}
	err = e.Search(ctx, q, h, res)
	var we *llm.WindowError
	if err == nil || !errors.As(err, &we) || we.Window <= 0 || res.AnswerPartial || !f.learn(we, res) {
		return err
	}
	*res = before
	e, ferr := f.fitted(q, res)
	if ferr != nil {
		return errors.Join(err, ferr)
	}
	return e.Search(ctx, q, h, res)
}

// learn takes the window a refusal named, and the ratio of the model's
// count of the refused prompt to kgrag's (from the context it held), and
// drops the engines fitted to the old window. It reports whether the
// window is new: a refusal within a window already fitted to is not
// answered again.
func (f *fitEngine) learn(we *llm.WindowError, res *answer.Result) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	ratio := f.w.Ratio
	if ratio <= 0 {
		ratio = llm.DefaultTokenRatio
	}
	if res.Context != nil && res.Context.Tokens > 0 && we.Prompt > 0 {
		// The refused prompt held the context and the prompt's own
		// text: counting the context alone overstates the ratio, which
		// errs on the side of fitting.
		ratio = max(ratio, min(float64(we.Prompt)/float64(res.Context.Tokens), 4)*1.05)
	} else if f.w.Known() && we.Window >= f.w.Tokens {
		ratio *= 1.25 // refused within the window fitted to: count more
	}
	if f.w.Known() && we.Window >= f.w.Tokens && ratio <= max(f.w.Ratio, llm.DefaultTokenRatio) {
		return false
	}
	w := f.w
	if we.Window < w.Tokens || !w.Known() {
		if f.w.Learn != nil {
			w.Window = f.w.Learn(we.Window, we.Prompt)
		} else {
			w.Tokens, w.Source = we.Window, fmt.Sprintf("the server named it refusing a prompt of %d tokens", we.Prompt)
		}
	}
	w.Ratio = ratio
	f.w = w
	f.engines = nil
	return true
}

// FitNotes says what fitting o to the window w does to mode m's budgets
// for a short question: the notes a search would record (none when the
// budgets fit), or the error when the window leaves no room. kgrag doctor
// prints them.
func FitNotes(name string, o Options, w Window, enc *tokens.Encoder) ([]string, error) {
	m, ok := mode.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("engine: no mode %q", name)
	}
	p, err := fit(m, o, w, enc, 32)
	return p.notes, err
}
