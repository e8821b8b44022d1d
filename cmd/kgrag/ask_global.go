package main

import (
	"fmt"
	"io"
	"strings"

	answerjson "github.com/kgrag/kgrag/internal/answer"
	"github.com/kgrag/kgrag/internal/driftsearch"
	"github.com/kgrag/kgrag/internal/engine"
	"github.com/kgrag/kgrag/internal/globalsearch"
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
		&cli.BoolFlag{Name: "json-mode", Category: cat, Value: s.JSONMode, Destination: &s.JSONMode, Usage: "ask the server for JSON (response_format json_schema, else json_object) on the calls whose replies are parsed: map and rating calls, DRIFT's, graph of thoughts' graph; dropped by itself if the server refuses both"},
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

// printBatches prints the map batches global search would send (its
// --context-only), or keeps them for --json.
func printBatches(opts askOptions, src source, before int, res *askResult, term terminal) error {
	if src.counted() {
		n := src.requests() - before
		res.SPARQLRequests = &n
	}
	g := res.Global
	if opts.json {
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

// writeModePlan prints --plan's bounds for people.
func writeModePlan(w io.Writer, plan any, opts askOptions) error {
	switch pl := plan.(type) {
	case *globalsearch.Plan:
		return writePlan(w, pl, opts)
	case *driftsearch.Plan:
		return writeDriftPlan(w, pl, opts)
	}
	return fmt.Errorf("ask: --mode %s has no plan to print", opts.mode)
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

// progress draws a search's steps ("map 3/12") on a terminal's stderr,
// and streams the answer and the thinking where they go.
type progress struct {
	w     io.Writer
	on    bool
	drawn bool
	res   *askResult
	// open: the answer printed so far does not end its line.
	open bool
	// reasoning is the answer call's thinking, with --show-reasoning.
	reasoning *reasoningOut
}

func newProgress(term terminal, opts askOptions, res *askResult) *progress {
	return &progress{w: term.err, on: term.tty && !opts.quiet && !opts.json, res: res, reasoning: &reasoningOut{opts: opts, term: term}}
}

// reasoningHook is the search's Reasoning hook: the progress line is
// cleared before the thinking is printed.
func (p *progress) reasoningHook() func(string) error {
	h := p.reasoning.hook()
	if h == nil {
		return nil
	}
	return func(piece string) error {
		p.clear()
		return h(piece)
	}
}

func (p *progress) show(e engine.Progress) {
	if !p.on {
		return
	}
	switch e.Phase {
	case globalsearch.PhaseRate:
		fmt.Fprintf(p.w, "\rrating reports at level %d: %d/%d\x1b[K", e.Level, e.Done, e.Total)
	case globalsearch.PhaseMap:
		fmt.Fprintf(p.w, "\rmap: %d/%d batches\x1b[K", e.Done, e.Total)
	case driftsearch.PhaseExpand:
		fmt.Fprintf(p.w, "\rexpanding the question...\x1b[K")
	case driftsearch.PhasePrimer:
		fmt.Fprintf(p.w, "\rprimer: %d/%d calls\x1b[K", e.Done, e.Total)
	case driftsearch.PhaseFollowUps:
		fmt.Fprintf(p.w, "\rfollow-ups, round %d: %d/%d\x1b[K", e.Round, e.Done, e.Total)
	case globalsearch.PhaseReduce:
		fmt.Fprintf(p.w, "\rwriting the answer...\x1b[K")
	case engine.PhaseThoughts:
		if g := p.res.GraphOfThoughts; g != nil {
			fmt.Fprintf(p.w, "graph of thoughts: %d nodes, %d edges, built in %s\n", len(g.Nodes), len(g.Edges), msText(p.res.Timings["llm_graph"]))
		}
		return
	default:
		return
	}
	p.drawn = true
}

// answer is the Answer hook of a search that streams its answer: to
// stdout after the progress line is cleared, or nowhere with --json.
func (p *progress) answer(opts askOptions, term terminal) func(string) error {
	if opts.json {
		return nil
	}
	return func(piece string) error {
		p.clear()
		p.reasoning.endLine()
		if piece != "" {
			p.open = !strings.HasSuffix(piece, "\n")
		}
		_, err := io.WriteString(term.out, piece)
		return err
	}
}

// endAnswer ends the line of an answer streamed to stdout, whole or cut.
func (p *progress) endAnswer(term terminal) {
	if p.open {
		fmt.Fprintln(term.out)
		p.open = false
	}
}

// answered ends the answer of a search of many calls: the store
// requests since before, the end of the streamed answer's line, the
// warnings (to stderr whether or not it is a terminal) and the summary.
func answered(opts askOptions, src source, before int, res *askResult, term terminal, p *progress) {
	if src.counted() {
		n := src.requests() - before
		res.SPARQLRequests = &n
	}
	if opts.json {
		printDegraded(term, res)
		return
	}
	p.endAnswer(term)
	printDegraded(term, res)
	var warnings []string
	switch {
	case res.Global != nil:
		warnings = globalWarnings(res.Global)
	case res.Drift != nil:
		warnings = driftWarnings(res.Drift)
	}
	for _, w := range warnings {
		fmt.Fprintln(term.err, "kgrag: warning:", w)
	}
	if !term.tty || opts.quiet {
		return
	}
	switch {
	case res.Global != nil:
		fmt.Fprintln(term.err, globalLine(res, opts))
	case res.Drift != nil:
		r := res.Drift
		fmt.Fprintf(term.err, "drift: %d model calls (%d follow-ups answered, %d left open) in %s\n",
			r.LLMCalls, answeredActions(r)-1, r.Open, msText(r.Timings["expand"]+r.Timings["primer"]+r.Timings["follow_ups"]+r.Timings["reduce"]))
	}
}

func (p *progress) clear() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
}

// globalWarnings are what the user must know about an answer: calls that
// failed, made-up citations.
func globalWarnings(g *answerjson.Global) []string {
	var out []string
	n := len(g.Batches)
	if g.MapFailed > 0 {
		first := ""
		for _, b := range g.Batches {
			if b.Call != nil && b.Err != "" {
				first = b.Err
				break
			}
		}
		out = append(out, fmt.Sprintf("%d of %d map calls failed and were skipped: the answer rests on the other %d batches of reports (first error: %s)",
			g.MapFailed, n, n-g.MapFailed, first))
	}
	// Replies that could not be read are in the record's degraded notes.
	if sel := g.Dynamic; sel != nil && sel.Stopped != "" {
		out = append(out, "dynamic selection "+sel.Stopped)
	}
	if len(g.UnknownCited) > 0 {
		out = append(out, fmt.Sprintf("the answer cites reports that were not given to the model: %s", strings.Join(g.UnknownCited, ", ")))
	}
	return out
}

// globalLine is the terminal summary of a global search, on stderr.
func globalLine(res *askResult, opts askOptions) string {
	g := res.Global
	var b strings.Builder
	fmt.Fprintf(&b, "global: %d reports up to level %d", g.Reports, opts.global.params.CommunityLevel)
	if sel := g.Dynamic; sel != nil {
		fmt.Fprintf(&b, ", %d rated, %d kept", len(sel.Rated), len(sel.Reports))
	}
	var repaired, unusable int
	if mp := g.MapParse; mp != nil {
		repaired, unusable = mp.Repaired, mp.Unusable
	}
	fmt.Fprintf(&b, " · %d map calls (%d repaired, %d unusable, %d failed), %d points", len(g.Batches), repaired, unusable, g.MapFailed, g.Points)
	if g.Reduce != nil {
		fmt.Fprintf(&b, ", %d of %d scored in the answer's context", len(g.Reduce.Points), g.ScoredPoints)
	}
	fmt.Fprintf(&b, " · %d model calls in %s", g.LLMCalls, msText(res.Timings["rate"]+res.Timings["map"]+res.Timings["reduce"]))
	if len(g.Cited) > 0 {
		fmt.Fprintf(&b, " · cites reports %s", strings.Join(g.Cited, ", "))
	}
	return b.String()
}
