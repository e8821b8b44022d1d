package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kgrag/kgrag/internal/driftsearch"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/urfave/cli/v3"
)

// driftFlags are the flags of --mode drift alone; it shares --concurrency,
// --max-llm-calls, --plan and --json-mode with global search.
func driftFlags(d *driftsearch.Options) []cli.Flag {
	const cat = "DRIFT search (--mode drift)"
	return []cli.Flag{
		&cli.IntFlag{Name: "drift-k-followups", Category: cat, Value: d.KFollowUps, Destination: &d.KFollowUps, Usage: "reports the primer reads, and follow-up questions answered per round (GraphRAG drift_k_followups)"},
		&cli.IntFlag{Name: "drift-primer-folds", Category: cat, Value: d.PrimerFolds, Destination: &d.PrimerFolds, Usage: "primer calls those reports are split between (GraphRAG primer_folds)"},
		&cli.IntFlag{Name: "drift-depth", Category: cat, Value: d.Depth, Destination: &d.Depth, Usage: "rounds of follow-up questions (GraphRAG n_depth); 0 answers from the primer alone"},
	}
}

// driftOptions are DRIFT's options from the flags the modes share.
func (o askOptions) driftOptions(source string) driftsearch.Options {
	d := o.drift
	d.CommunityLevel = o.params.CommunityLevel
	d.Local.TopKEntities, d.Local.TopKRelationships = o.params.TopKEntities, o.params.TopKRelationships
	d.Local.MaxContextTokens, d.Local.Encoding = o.params.MaxContextTokens, o.params.Encoding
	d.Local.RollUpReports = o.params.RollUpReports
	d.Concurrency, d.MaxLLMCalls, d.JSONMode = o.global.search.Concurrency, o.global.search.MaxLLMCalls, o.global.search.JSONMode
	d.ResponseType, d.Chat, d.Source = o.responseType, o.chatOptions(), source
	return d
}

// askDrift answers with DRIFT search, or with --plan says what it can
// cost.
func askDrift(ctx context.Context, opts askOptions, client *llm.Client, res *askResult, term terminal) error {
	t := time.Now()
	idx, src, emb, err := openIndexed(ctx, opts, tableEntities, client, res, term)
	if err != nil {
		return err
	}
	defer idx.Close()
	reports, err := opts.index.openTable(ctx, tableReports)
	if err != nil {
		return err
	}
	defer reports.Close()
	s, err := driftsearch.New(src.retrieval(), idx, reports, emb, client, nil, opts.driftOptions(src.name))
	if err != nil {
		return err
	}
	res.Timings["open"] = ms(time.Since(t))
	if opts.global.plan {
		pl, err := s.Plan(ctx, opts.question)
		if err != nil {
			return driftError(opts, src, err)
		}
		if opts.json {
			res.Plan = pl
			return nil
		}
		return writeDriftPlan(term.out, pl, opts)
	}

	res.ChatModel = opts.chatModel
	before := src.requests()
	p := newGlobalProgress(term, opts)
	r, err := s.Search(ctx, opts.question, driftsearch.Hooks{Progress: p.showDrift, Answer: p.answer(opts, term), Reasoning: p.reasoningHook()})
	p.clear()
	if err != nil {
		return driftError(opts, src, err)
	}
	res.Drift = r
	if r.Reduce != nil {
		p.reasoning.record(res, r.Reduce.Call.ReasoningChars)
	}
	answered(opts, src, before, res, term, r.Answer, r.Timings, driftWarnings(r))
	if term.tty && !opts.quiet && !opts.json {
		fmt.Fprintf(term.err, "drift: %d model calls (%d follow-ups answered, %d left open) in %s\n",
			r.LLMCalls, answeredActions(r)-1, r.Open, msText(r.Timings["expand"]+r.Timings["primer"]+r.Timings["follow_ups"]+r.Timings["reduce"]))
	}
	return nil
}

// answeredActions counts the actions answered, the question included.
func answeredActions(r *driftsearch.Result) int {
	n := 0
	for _, a := range r.Actions {
		if a.Answered {
			n++
		}
	}
	return n
}

// driftError names the flag to fix for a call limit that is too low, and
// which service failed otherwise.
func driftError(opts askOptions, src source, err error) error {
	var le *driftsearch.LimitError
	if errors.As(err, &le) {
		return usagef(fmt.Sprintf("--max-llm-calls %d (or see the calls with --plan)", le.Need),
			"--max-llm-calls %d is too low for DRIFT: it needs at least %d calls (1 expansion, %d primer, 1 answer) before any follow-up",
			le.Max, le.Need, le.Folds)
	}
	return searchError(opts, src, err)
}

// driftWarnings are what the user must know about a DRIFT answer.
func driftWarnings(r *driftsearch.Result) []string {
	var out []string
	if r.FailedCalls > 0 {
		out = append(out, fmt.Sprintf("%d of %d model calls failed and were skipped (see --json: primer, actions)", r.FailedCalls, r.LLMCalls))
	}
	unusable := 0
	for _, a := range r.Actions {
		if a.Call != nil && a.Call.Parse == "unusable" {
			unusable++
		}
	}
	for _, pc := range r.Primer {
		if pc.Parse == "unusable" {
			unusable++
		}
	}
	if unusable > 0 {
		out = append(out, fmt.Sprintf("%d replies were not the JSON asked for: their text was taken as the answer, without follow-ups", unusable))
	}
	if r.Capped {
		out = append(out, fmt.Sprintf("--max-llm-calls stopped the follow-ups: %d were left unanswered", r.Open))
	}
	return out
}

func (p *globalProgress) showDrift(e driftsearch.Progress) {
	if !p.on {
		return
	}
	switch e.Phase {
	case driftsearch.PhaseExpand:
		fmt.Fprintf(p.w, "\rexpanding the question...\x1b[K")
	case driftsearch.PhasePrimer:
		fmt.Fprintf(p.w, "\rprimer: %d/%d calls\x1b[K", e.Done, e.Total)
	case driftsearch.PhaseFollowUps:
		fmt.Fprintf(p.w, "\rfollow-ups, round %d: %d/%d\x1b[K", e.Round, e.Done, e.Total)
	case driftsearch.PhaseReduce:
		fmt.Fprintf(p.w, "\rwriting the answer...\x1b[K")
	}
	p.drawn = true
}

// writeDriftPlan prints --plan's bounds for DRIFT.
func writeDriftPlan(w io.Writer, pl *driftsearch.Plan, opts askOptions) error {
	var b strings.Builder
	fmt.Fprintf(&b, "DRIFT search plan for %q\n", opts.question)
	fmt.Fprintf(&b, "  reports up to level %d:  %d (the primer reads the %d nearest the expanded question)\n", pl.Level, pl.Reports, min(pl.Reports, opts.drift.KFollowUps))
	fmt.Fprintf(&b, "  expansion call:         1 (%d prompt tokens; report %s is its template)\n", pl.ExpandPromptTokens, pl.Template)
	fmt.Fprintf(&b, "  primer calls:           %d (at most %d prompt tokens)\n", pl.PrimerCalls, pl.PrimerPromptTokensMax)
	fmt.Fprintf(&b, "  follow-up calls:        at most %d, %d concurrently (at most %d prompt tokens each; the answers decide how many)\n",
		pl.FollowUpCallsMax, opts.global.search.Concurrency, pl.FollowUpPromptTokensMax)
	fmt.Fprintf(&b, "  answer call:            1\n")
	fmt.Fprintf(&b, "  total:                  %d to %d model calls, at most %d prompt tokens before the answer's\n", pl.CallsMin, pl.CallsMax, pl.PromptTokensMax)
	if pl.MaxLLMCalls > 0 {
		fmt.Fprintf(&b, "  --max-llm-calls %d:     follow-ups stop when it is reached\n", pl.MaxLLMCalls)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
