package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	answerjson "github.com/kgrag/kgrag/internal/answer"
	"github.com/kgrag/kgrag/internal/globalsearch"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/urfave/cli/v3"
)

// globalFlags are the flags of --mode global, bound to g's fields.
func globalFlags(g *globalOptions) []cli.Flag {
	s, p := &g.search, &g.params
	const cat = "global search (--mode global)"
	return []cli.Flag{
		&cli.IntFlag{Name: "concurrency", Category: cat, Value: s.Concurrency, Destination: &s.Concurrency, Usage: "model calls in flight at once (GraphRAG uses 25, for hosted APIs; a local server queues what it cannot run)", Sources: cli.EnvVars("KGRAG_CONCURRENCY")},
		&cli.IntFlag{Name: "reduce-context-tokens", Category: cat, Value: p.ReduceContextTokens, Destination: &p.ReduceContextTokens, Usage: "token budget of the ranked points handed to the final (reduce) call; --max-context-tokens is each map batch's"},
		&cli.IntFlag{Name: "map-max-length", Category: cat, Value: s.MapMaxLength, Destination: &s.MapMaxLength, Usage: "word limit the map prompt asks for"},
		&cli.IntFlag{Name: "reduce-max-length", Category: cat, Value: s.ReduceMaxLength, Destination: &s.ReduceMaxLength, Usage: "word limit the answer prompt asks for"},
		&cli.BoolFlag{Name: "report-summaries", Category: cat, Destination: &p.UseCommunitySummary, Usage: "map (and rate) report summaries instead of full reports: many fewer tokens, for small models and small contexts"},
		&cli.BoolFlag{Name: "general-knowledge", Category: cat, Destination: &s.GeneralKnowledge, Usage: "let the answer add what the model knows from elsewhere, marked as such (and answer even when no report is relevant)"},
		&cli.BoolFlag{Name: "dynamic-community-selection", Category: cat, Destination: &s.Dynamic, Usage: "have the model rate reports 0-5 from the root communities down, and read only the relevant ones"},
		&cli.IntFlag{Name: "dynamic-threshold", Category: cat, Value: s.DynamicThreshold, Destination: &s.DynamicThreshold, Usage: "lowest rating (0-5) a report needs to be kept and its sub-communities rated"},
		&cli.BoolFlag{Name: "dynamic-keep-parent", Category: cat, Destination: &s.DynamicKeepParent, Usage: "keep a relevant community's parent report too (default: the child replaces it)"},
		&cli.IntFlag{Name: "max-llm-calls", Category: cat, Destination: &s.MaxLLMCalls, Usage: "refuse a question that needs more than `N` model calls (0: no limit); see --plan"},
		&cli.BoolFlag{Name: "plan", Category: cat, Destination: &g.plan, Usage: "print how many model calls and tokens the question would take, and stop (no model is called)"},
		&cli.Int64Flag{Name: "shuffle-seed", Category: cat, Value: p.ShuffleSeed, Destination: &p.ShuffleSeed, Usage: "seed of the report shuffle before batching (GraphRAG's 86 gives GraphRAG's batches; -1: community order)"},
		&cli.BoolFlag{Name: "json-mode", Category: cat, Value: s.JSONMode, Destination: &s.JSONMode, Usage: "ask the server for JSON replies on map and rating calls (response_format); dropped by itself if the server refuses it"},
	}
}

// globalOptions are the settings of --mode global.
type globalOptions struct {
	params retrieval.GlobalParams
	search globalsearch.Options
	plan   bool
}

func (o *askOptions) validateGlobal() error {
	const try = `kgrag ask --mode global --input ./output "What are the main themes?"`
	g := &o.global
	switch {
	case o.mode != modeGlobal && g.search.Dynamic:
		return usagef(try, "--dynamic-community-selection is for --mode global")
	case o.mode != modeGlobal && o.mode != modeDrift && g.plan:
		return usagef(try, "--plan is for --mode global and --mode drift")
	case g.plan && o.contextOnly:
		return usagef(try, "--plan and --context-only exclude each other: one counts the calls, the other prints the batches")
	case o.contextOnly && g.search.Dynamic:
		return usagef(strings.Replace(try, "--mode global", "--mode global --plan", 1),
			"--context-only cannot tell which reports dynamic selection keeps without the model rating them: use --plan for the most it could send")
	case o.mode == modeGlobal && o.noContext:
		return usagef(try, "--no-context asks the model alone and uses no mode: leave out --mode global")
	}
	if o.mode != modeGlobal {
		return nil
	}
	return o.checkGlobal()
}

// checkGlobal checks global search's parameters.
func (o *askOptions) checkGlobal() error {
	g := &o.global
	if err := g.params.Validate(); err != nil {
		return usagef("kgrag ask --help", "%s", flagNames(err.Error()))
	}
	search := g.search
	search.ResponseType = o.responseType
	if err := search.Validate(); err != nil {
		return usagef("kgrag ask --help", "%s", strings.NewReplacer("globalsearch: ", "", "concurrency", "--concurrency",
			"dynamic threshold", "--dynamic-threshold", "max LLM calls", "--max-llm-calls",
			"map and reduce word limits", "--map-max-length and --reduce-max-length").Replace(err.Error()))
	}
	return nil
}

// askGlobal answers with global search: map-reduce over the community
// reports, or with --plan, --context-only only says what it would send.
func askGlobal(ctx context.Context, opts askOptions, client *llm.Client, res *askResult, term terminal) error {
	t := time.Now()
	src, err := openSource(ctx, opts, term.err)
	if err != nil {
		return err
	}
	res.Source = src.name
	res.LeftOut = src.leftOut
	rs := src.retrieval()
	b, err := retrieval.NewGlobalBuilder(opts.global.params, nil)
	if err != nil {
		return err
	}
	so := opts.global.search
	so.ResponseType = opts.responseType
	so.Chat = opts.chatOptions()
	s, err := globalsearch.New(rs, b, client, so)
	if err != nil {
		return err
	}
	res.Timings["open"] = ms(time.Since(t))

	switch {
	case opts.global.plan:
		pl, err := s.Plan(ctx, opts.question)
		if err != nil {
			return src.wrap(err)
		}
		if opts.json {
			res.Plan = pl
			return nil
		}
		return writePlan(term.out, pl, opts)
	case opts.contextOnly:
		return globalContextOnly(ctx, opts, rs, b, res, term, src)
	}

	res.ChatModel = opts.chatModel
	before := src.requests()
	p := newGlobalProgress(term, opts)
	r, err := s.Search(ctx, opts.question, globalsearch.Hooks{Progress: p.show, Answer: p.answer(opts, term), Reasoning: p.reasoningHook()})
	p.clear()
	var le *globalsearch.LimitError
	if errors.As(err, &le) {
		return usagef(fmt.Sprintf("--max-llm-calls %d (or see the calls with --plan)", le.Need),
			"the question needs %d model calls (%d map, 1 answer, %d rating), more than --max-llm-calls %d",
			le.Need, le.Batches, le.Spent, le.Max)
	}
	if err != nil {
		return src.wrap(fmt.Errorf("ask: %w", err))
	}
	if r.Reduce != nil {
		p.reasoning.record(res, r.Reduce.Call.ReasoningChars)
	}
	answered(opts, src, before, res, term, r.Answer, r.Timings, globalWarnings(r))
	res.Global = answerjson.GlobalResult(r, opts.global.params.CommunityLevel)
	if !opts.json {
		if term.tty && !opts.quiet {
			fmt.Fprintln(term.err, globalLine(r, opts))
		}
	}
	return nil
}

// globalContextOnly prints the map batches that would be sent.
func globalContextOnly(ctx context.Context, opts askOptions, rs retrieval.ReportSource, b *retrieval.GlobalBuilder, res *askResult, term terminal, src source) error {
	t, before := time.Now(), src.requests()
	all, err := rs.CommunityReports(ctx, opts.global.params.CommunityLevel)
	if err != nil {
		return src.wrap(fmt.Errorf("ask: read the community reports: %w", err))
	}
	batches := b.Batches(b.Select(all))
	res.Timings["retrieval"] = ms(time.Since(t))
	if src.counted() {
		n := src.requests() - before
		res.SPARQLRequests = &n
	}
	g := &answerjson.Global{CommunityLevel: opts.global.params.CommunityLevel, Reports: len(all)}
	for i, bt := range batches {
		bj := answerjson.Batch{Index: i, ContextTokens: bt.Tokens, Truncated: bt.Truncated, Text: bt.Text}
		for _, r := range bt.Reports {
			bj.ReportIDs = append(bj.ReportIDs, r.ID)
		}
		g.SelectedReports += len(bt.Reports)
		g.Batches = append(g.Batches, bj)
	}
	if opts.json {
		res.Global = g
		return nil
	}
	for i, bj := range g.Batches {
		if i > 0 {
			fmt.Fprintln(term.out)
		}
		fmt.Fprintf(term.out, "===== map batch %d of %d: %d reports, %d tokens =====\n%s", i+1, len(g.Batches), len(bj.ReportIDs), bj.ContextTokens, bj.Text)
	}
	if len(g.Batches) == 0 {
		fmt.Fprintf(term.err, "kgrag: no community report at level <= %d in %s\n", opts.global.params.CommunityLevel, src.name)
	}
	return nil
}

// writePlan prints a plan for people.
func writePlan(w io.Writer, pl *globalsearch.Plan, opts askOptions) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Global search plan for %q\n", opts.question)
	fmt.Fprintf(&b, "  reports up to level %d:  %d", pl.Level, pl.Reports)
	if pl.Selected != pl.Reports {
		fmt.Fprintf(&b, " (%d after --roll-up-reports)", pl.Selected)
	}
	b.WriteString("\n")
	bound := ""
	if pl.Dynamic {
		bound = "at most "
		fmt.Fprintf(&b, "  rating calls:           %s%d (%s%d prompt tokens; the ratings decide how many)\n", bound, pl.RateCalls, bound, pl.RatePromptTokens)
	}
	fmt.Fprintf(&b, "  map calls:              %s%d, %d concurrently (%s%d prompt tokens", bound, len(pl.Batches), opts.global.search.Concurrency, bound, pl.MapPromptTokens)
	if len(pl.Batches) > 0 {
		lo, hi := pl.Batches[0].PromptTokens, pl.Batches[0].PromptTokens
		for _, x := range pl.Batches {
			lo, hi = min(lo, x.PromptTokens), max(hi, x.PromptTokens)
		}
		fmt.Fprintf(&b, "; %d to %d per call", lo, hi)
	}
	b.WriteString(")\n")
	if pl.TruncatedReports > 0 {
		fmt.Fprintf(&b, "  reports cut to fit:     %d (each alone is over --max-context-tokens)\n", pl.TruncatedReports)
	}
	fmt.Fprintf(&b, "  answer call:            1 (at most %d prompt tokens)\n", pl.ReducePromptMax)
	fmt.Fprintf(&b, "  total:                  %s%d model calls, %s%d prompt tokens", bound, pl.Calls, bound, pl.PromptTokens)
	if opts.maxTokens > 0 {
		fmt.Fprintf(&b, ", at most %d answer tokens", pl.Calls*opts.maxTokens)
	}
	b.WriteString("\n")
	if pl.MaxLLMCalls > 0 {
		verdict := "within"
		if pl.Calls > pl.MaxLLMCalls {
			verdict = "OVER"
		}
		fmt.Fprintf(&b, "  --max-llm-calls %d:     %s the limit\n", pl.MaxLLMCalls, verdict)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// globalProgress draws "map 3/12" on a terminal's stderr.
type globalProgress struct {
	w     io.Writer
	on    bool
	drawn bool
	// reasoning is the answer call's thinking, with --show-reasoning.
	reasoning *reasoningOut
}

func newGlobalProgress(term terminal, opts askOptions) *globalProgress {
	return &globalProgress{w: term.err, on: term.tty && !opts.quiet && !opts.json, reasoning: &reasoningOut{opts: opts, term: term}}
}

// reasoningHook is the search's Reasoning hook: the progress line is
// cleared before the thinking is printed.
func (p *globalProgress) reasoningHook() func(string) error {
	h := p.reasoning.hook()
	if h == nil {
		return nil
	}
	return func(piece string) error {
		p.clear()
		return h(piece)
	}
}

func (p *globalProgress) show(e globalsearch.Progress) {
	if !p.on {
		return
	}
	switch e.Phase {
	case globalsearch.PhaseRate:
		fmt.Fprintf(p.w, "\rrating reports at level %d: %d/%d\x1b[K", e.Level, e.Done, e.Total)
	case globalsearch.PhaseMap:
		fmt.Fprintf(p.w, "\rmap: %d/%d batches\x1b[K", e.Done, e.Total)
	case globalsearch.PhaseReduce:
		fmt.Fprintf(p.w, "\rwriting the answer...\x1b[K")
	}
	p.drawn = true
}

// answer is the Answer hook of a search that streams its answer: to
// stdout after the progress line is cleared, or nowhere with --json.
func (p *globalProgress) answer(opts askOptions, term terminal) func(string) error {
	if opts.json {
		return nil
	}
	return func(piece string) error {
		p.clear()
		p.reasoning.endLine()
		_, err := io.WriteString(term.out, piece)
		return err
	}
}

// answered records a search's answer in res with its timings and the
// store requests since before; on stdout it ends the streamed answer's
// line and prints the warnings to stderr.
func answered(opts askOptions, src source, before int, res *askResult, term terminal, answer string, timings map[string]float64, warnings []string) {
	if src.counted() {
		n := src.requests() - before
		res.SPARQLRequests = &n
	}
	for k, v := range timings {
		res.Timings[k] = v
	}
	res.Answer = &answer
	if opts.json {
		return
	}
	if answer != "" && !strings.HasSuffix(answer, "\n") {
		fmt.Fprintln(term.out)
	}
	for _, w := range warnings {
		fmt.Fprintln(term.err, "kgrag: warning:", w)
	}
}

func (p *globalProgress) clear() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
}

// globalWarnings are what the user must know about an answer: calls that
// failed, replies that could not be read, made-up citations. They go to
// stderr whether or not it is a terminal.
func globalWarnings(r *globalsearch.Result) []string {
	var out []string
	n := len(r.Batches)
	if r.MapFailed > 0 {
		first := ""
		for _, b := range r.Batches {
			if b.Err != "" {
				first = b.Err
				break
			}
		}
		out = append(out, fmt.Sprintf("%d of %d map calls failed and were skipped: the answer rests on the other %d batches of reports (first error: %s)",
			r.MapFailed, n, n-r.MapFailed, first))
	}
	if r.MapParse.Unusable > 0 {
		w := fmt.Sprintf("%d of %d map replies were not usable JSON and were skipped", r.MapParse.Unusable, n)
		if r.MapParse.Unusable*2 > n {
			w += " (does the model follow JSON instructions? --json shows each reply; a larger model, or a server that honours --json-mode, helps)"
		}
		out = append(out, w)
	}
	if sel := r.Selection; sel != nil {
		if sel.Failed+sel.Parse.Unusable > 0 {
			out = append(out, fmt.Sprintf("%d of %d rating calls failed or gave no rating; those reports were rated 1", sel.Failed+sel.Parse.Unusable, len(sel.Rated)))
		}
		if sel.Stopped != "" {
			out = append(out, "dynamic selection "+sel.Stopped)
		}
	}
	if len(r.UnknownCited) > 0 {
		out = append(out, fmt.Sprintf("the answer cites reports that were not given to the model: %s", strings.Join(r.UnknownCited, ", ")))
	}
	return out
}

// globalLine is the terminal summary of a global search, on stderr.
func globalLine(r *globalsearch.Result, opts askOptions) string {
	var b strings.Builder
	fmt.Fprintf(&b, "global: %d reports up to level %d", r.Reports, opts.global.params.CommunityLevel)
	if sel := r.Selection; sel != nil {
		fmt.Fprintf(&b, ", %d rated, %d kept", len(sel.Rated), len(sel.Reports))
	}
	points := 0
	for _, x := range r.Batches {
		points += len(x.Points)
	}
	fmt.Fprintf(&b, " · %d map calls (%d repaired, %d unusable, %d failed), %d points", len(r.Batches),
		r.MapParse.Repaired, r.MapParse.Unusable, r.MapFailed, points)
	if r.Reduce != nil {
		fmt.Fprintf(&b, ", %d of %d scored in the answer's context", len(r.Reduce.Context.Points), r.Reduce.Context.Scored)
	}
	fmt.Fprintf(&b, " · %d model calls in %s", r.LLMCalls, msText(r.Timings["rate"]+r.Timings["map"]+r.Timings["reduce"]))
	if len(r.Cited) > 0 {
		fmt.Fprintf(&b, " · cites reports %s", strings.Join(r.Cited, ", "))
	}
	return b.String()
}
