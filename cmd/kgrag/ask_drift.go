package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/kgrag/kgrag/internal/driftsearch"
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
