package main

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/indexer"
	"github.com/kgrag/kgrag/internal/indexer/indexertest"
	"github.com/kgrag/kgrag/internal/reports"
	"github.com/kgrag/kgrag/internal/tokens"
)

// forest is a stage's model calls as a schedule sees them: each call
// takes one unit of time (the server's fixed latency) and at most one
// other call waits for it directly (next, -1 for none); a call may wait
// for several. The calls of one text unit's conversation make a chain;
// a community report that waits for its sub-communities' reports waits
// for the last call of each.
type forest struct{ next []int }

// chain adds k calls made one after the other and returns the first and
// the last.
func (f *forest) chain(k int) (first, last int) {
	first = len(f.next)
	for i := range k {
		n := -1
		if i < k-1 {
			n = first + i + 1
		}
		f.next = append(f.next, n)
	}
	return first, len(f.next) - 1
}

// before makes call b wait for call a.
func (f *forest) before(a, b int) {
	if f.next[a] != -1 {
		panic(fmt.Sprintf("call %d already has a call waiting for it", a))
	}
	f.next[a] = b
}

// rounds is the fewest time units in which c servers, each making one
// call at a time, make every call: Hu's highest-level-first list
// schedule (at each unit, the ready calls with the longest chain of
// calls waiting behind them first), which is optimal for unit-time
// calls where each call has at most one direct successor (T. C. Hu,
// "Parallel sequencing and assembly line problems", Operations Research
// 9(6), 1961).
func (f *forest) rounds(c int) int {
	n := len(f.next)
	level := make([]int, n) // calls from this one to the end of its chain, itself included
	var depth func(i int) int
	depth = func(i int) int {
		if level[i] == 0 {
			level[i] = 1
			if f.next[i] >= 0 {
				level[i] += depth(f.next[i])
			}
		}
		return level[i]
	}
	waits := make([]int, n)
	for i, nx := range f.next {
		depth(i)
		if nx >= 0 {
			waits[nx]++
		}
	}
	var ready []int
	for i := range n {
		if waits[i] == 0 {
			ready = append(ready, i)
		}
	}
	rounds := 0
	for done := 0; done < n; rounds++ {
		slices.SortStableFunc(ready, func(a, b int) int { return cmp.Compare(level[b], level[a]) })
		take := min(c, len(ready))
		var freed []int
		for _, i := range ready[:take] {
			if nx := f.next[i]; nx >= 0 {
				if waits[nx]--; waits[nx] == 0 {
					freed = append(freed, nx)
				}
			}
		}
		done += take
		ready = append(ready[take:], freed...)
	}
	return rounds
}

// stagePlan is one stage's calls as the run made them.
type stagePlan struct {
	stage string
	f     forest
	// chains are the lengths of the stage's chains of calls, for
	// extraction and summaries (nil for reports).
	chains []int
	// shape describes the calls for the report ("16 units × 2").
	shape string
}

// slotRounds is the fewest rounds when each chain holds one of c slots
// from its first call to its last, as extraction.Run and the Summarizer
// run them: ceil(chains / c) × k for chains of k calls each. It is -1
// when the chains differ in length (the bound is then a bin-packing
// problem, not computed here) or there are none.
func (p stagePlan) slotRounds(c int) int {
	if len(p.chains) == 0 {
		return -1
	}
	for _, k := range p.chains {
		if k != p.chains[0] {
			return -1
		}
	}
	return (len(p.chains) + c - 1) / c * p.chains[0]
}

// itemRE finds the entity or relationship a summary prompt is about.
var itemRE = regexp.MustCompile(`(?m)^(?:Entity|Relationship): .*$`)

// plans reads the stages' calls from the requests the server saw and the
// run's output: extraction, one chain per text unit (its first prompt
// opens the conversation); summaries, one chain per entity or
// relationship; reports, one call per report written, and a community
// over the budget waits for its sub-communities (reports.Builder says
// which are over it), as reports.Generator schedules them. It fails
// when the requests do not add up to the run's own counts.
func plans(ctx context.Context, r *indexRun, output, encoding string) ([]stagePlan, error) {
	units := map[string]int{}
	items := map[string]int{}
	var unitOrder, itemOrder []string
	nReports := 0
	for _, req := range r.requests {
		switch indexertest.Kind(req) {
		case indexertest.KindExtraction, indexertest.KindGleaning:
			k := req.Messages[0].Content
			if units[k] == 0 {
				unitOrder = append(unitOrder, k)
			}
			units[k]++
		case indexertest.KindSummary:
			k := itemRE.FindString(req.Messages[len(req.Messages)-1].Content)
			if k == "" {
				return nil, fmt.Errorf("summary prompt without an Entity: or Relationship: line")
			}
			if items[k] == 0 {
				itemOrder = append(itemOrder, k)
			}
			items[k]++
		case indexertest.KindReport:
			nReports++
		default:
			return nil, fmt.Errorf("request %s: not an index prompt", req.Path)
		}
	}
	ext := stagePlan{stage: indexer.StageExtraction}
	for _, k := range unitOrder {
		ext.f.chain(units[k])
		ext.chains = append(ext.chains, units[k])
	}
	ext.shape = chainShape("text units", ext.chains)
	summ := stagePlan{stage: indexer.StageSummaries}
	for _, k := range itemOrder {
		summ.f.chain(items[k])
		summ.chains = append(summ.chains, items[k])
	}
	summ.shape = chainShape("entities and relationships", summ.chains)
	rep, err := reportPlan(ctx, output, encoding, nReports, r.sum.Reports)
	if err != nil {
		return nil, err
	}
	out := []stagePlan{ext, summ, rep}
	for _, p := range out {
		if got, want := len(p.f.next), r.stage(p.stage).Calls; int64(got) != want {
			return nil, fmt.Errorf("%s: the server saw %d requests, the run counts %d calls", p.stage, got, want)
		}
	}
	return out, nil
}

// chainShape describes chains of calls: "16 text units: 16 × 2 calls in
// a row", with one group per length.
func chainShape(what string, chains []int) string {
	if len(chains) == 0 {
		return "none"
	}
	counts := map[int]int{}
	for _, k := range chains {
		counts[k]++
	}
	ks := slices.Sorted(maps.Keys(counts))
	s := fmt.Sprintf("%d %s:", len(chains), what)
	for i, k := range ks {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprintf(" %d × %d call", counts[k], k)
		if k > 1 {
			s += "s in a row"
		}
	}
	return s
}

// reportPlan is the reports stage: one call per report written (checked
// against the requests seen: the bound assumes no retry), and the
// dependencies reports.Generator keeps: a community whose local context
// is over the budget waits for its sub-communities one level down.
func reportPlan(ctx context.Context, output, encoding string, requests, written int) (stagePlan, error) {
	p := stagePlan{stage: indexer.StageReports}
	if requests != written {
		return p, fmt.Errorf("reports: %d requests for %d reports written: the bound assumes one call per report", requests, written)
	}
	if written == 0 {
		p.shape = "none"
		return p, nil
	}
	ds, err := graphrag.Open(ctx, output)
	if err != nil {
		return p, fmt.Errorf("reports: read the output back: %w", err)
	}
	enc, err := tokens.NewEncoder(encoding)
	if err != nil {
		return p, err
	}
	b, err := reports.NewBuilder(ds, enc, reports.DefaultMaxInputTokens)
	if err != nil {
		return p, fmt.Errorf("reports: %w", err)
	}
	byNum := map[string]*graphrag.Community{}
	call := map[string]int{}
	for i := range ds.Communities {
		c := &ds.Communities[i]
		byNum[c.Community] = c
		if c.Report != nil {
			call[c.Community], _ = p.f.chain(1)
		}
	}
	// waiter is the call that waits for community num's report: its
	// parent's, when the parent waits, or the parent's own waiter when
	// the parent made no call.
	var waiter func(num string) int
	waiter = func(num string) int {
		c := byNum[num]
		par := byNum[c.Parent]
		if c.Parent == "" || par == nil || par.Level != c.Level-1 {
			return -1
		}
		if l, ok := b.Local(par.Community); !ok || !l.Exceeds {
			return -1
		}
		if i, ok := call[par.Community]; ok {
			return i
		}
		return waiter(par.Community)
	}
	waiting := 0
	levels := map[int64]int{}
	for num, i := range call {
		levels[byNum[num].Level]++
		if w := waiter(num); w >= 0 {
			p.f.before(i, w)
			waiting++
		}
	}
	var ls []int64
	for l := range levels {
		ls = append(ls, l)
	}
	slices.Sort(ls)
	p.shape = fmt.Sprintf("%d reports, one call each (per level:", written)
	for _, l := range ls {
		p.shape += fmt.Sprintf(" %d: %d", l, levels[l])
	}
	p.shape += fmt.Sprintf("); a parent over the budget waits for %d of them", waiting)
	return p, nil
}
