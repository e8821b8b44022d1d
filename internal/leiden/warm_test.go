package leiden_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/internal/leiden"
	"github.com/kgrag/kgrag/internal/leiden/leidentest"
)

// previousOf is HierOptions.Previous for g from h, a clustering of prev,
// matched by node name.
func previousOf(prev *leiden.Graph, h *leiden.Hierarchy, g *leiden.Graph) [][]int {
	out := make([][]int, h.Levels)
	for l := range out {
		out[l] = slices.Repeat([]int{-1}, g.N())
	}
	for _, c := range h.Communities {
		for _, v := range c.Nodes {
			if u := g.Index(prev.Name(v)); u >= 0 {
				out[c.Level][u] = c.ID
			}
		}
	}
	return out
}

// memberSets are the communities of h as sets of node names, per level.
func memberSets(g *leiden.Graph, h *leiden.Hierarchy) map[string]bool {
	out := map[string]bool{}
	for _, c := range h.Communities {
		names := make([]string, len(c.Nodes))
		for i, v := range c.Nodes {
			names[i] = g.Name(v)
		}
		slices.Sort(names)
		out[fmt.Sprint(c.Level, "|", strings.Join(names, ","))] = true
	}
	return out
}

// TestWarmStartMovesFewer changes 1% of a planted graph's edges and
// clusters it again, cold and warm-started from the first clustering:
// the warm start must keep more communities exactly (same members at the
// same level), stay a valid hierarchy of connected communities, and keep
// level 0's modularity within 2% of the cold run's.
func TestWarmStartMovesFewer(t *testing.T) {
	ctx := context.Background()
	g0, _, err := leidentest.Planted(leidentest.Spec{Seed: 3, Nodes: 5000, Edges: 15000, MinSize: 8, MaxSize: 64, Mu: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	edges := g0.Edges()
	r := rand.New(rand.NewPCG(7, 7))
	change := len(edges) / 100
	r.Shuffle(len(edges), func(i, j int) { edges[i], edges[j] = edges[j], edges[i] })
	edges = edges[change:] // 1% removed
	for range change {     // and 1% added
		edges = append(edges, leiden.Edge{Source: g0.Name(r.IntN(g0.N())), Target: g0.Name(r.IntN(g0.N())), Weight: 1})
	}
	g1, err := leiden.NewGraph(edges)
	if err != nil {
		t.Fatal(err)
	}
	opts := leiden.HierOptions{Seed: 1}
	h0, err := leiden.Hierarchical(ctx, g0, opts)
	if err != nil {
		t.Fatal(err)
	}
	cold, err := leiden.Hierarchical(ctx, g1, opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.Previous = previousOf(g0, h0, g1)
	warm, err := leiden.Hierarchical(ctx, g1, opts)
	if err != nil {
		t.Fatal(err)
	}
	checkHierarchy(t, g1, warm, leiden.DefaultMaxClusterSize)
	before := memberSets(g0, h0)
	kept := func(h *leiden.Hierarchy) int {
		n := 0
		for k := range memberSets(g1, h) {
			if before[k] {
				n++
			}
		}
		return n
	}
	for l := range 3 {
		ck, ca := keptAt(before, memberSets(g1, cold), l)
		wk, wa := keptAt(before, memberSets(g1, warm), l)
		t.Logf("level %d: kept exactly cold %d of %d, warm %d of %d; mean best Jaccard with the old communities cold %.3f, warm %.3f",
			l, ck, ca, wk, wa, meanJaccard(g0, h0, g1, cold, l), meanJaccard(g0, h0, g1, warm, l))
	}
	qc := leiden.Modularity(g1, cold.Membership(0), 1)
	qw := leiden.Modularity(g1, warm.Membership(0), 1)
	t.Logf("%d of %d edges changed: communities kept exactly: cold %d of %d, warm %d of %d (of %d before); level-0 modularity cold %.4f, warm %.4f",
		2*change, len(g0.Edges()), kept(cold), len(cold.Communities), kept(warm), len(warm.Communities), len(h0.Communities), qc, qw)
	if jc, jw := meanJaccard(g0, h0, g1, cold, 0), meanJaccard(g0, h0, g1, warm, 0); jw < jc+0.1 {
		t.Errorf("level 0: warm communities' mean best Jaccard with the old ones %.3f; want well above cold's %.3f", jw, jc)
	}
	if kept(warm) <= kept(cold) {
		t.Errorf("warm start kept %d communities, cold %d; want more kept warm", kept(warm), kept(cold))
	}
	if qw < 0.98*qc {
		t.Errorf("warm level-0 modularity %.4f; want within 2%% of cold's %.4f", qw, qc)
	}
}

// keptAt counts the communities of level l in after, and those also in
// before.
func keptAt(before, after map[string]bool, l int) (kept, all int) {
	prefix := fmt.Sprint(l, "|")
	for k := range after {
		if strings.HasPrefix(k, prefix) {
			all++
			if before[k] {
				kept++
			}
		}
	}
	return kept, all
}

// meanJaccard is the mean, over b's communities at level l, of the best
// Jaccard similarity (by node name) with a community of a at that level.
func meanJaccard(ga *leiden.Graph, a *leiden.Hierarchy, gb *leiden.Graph, b *leiden.Hierarchy, l int) float64 {
	of := map[string]int{} // node name -> a's community at l
	size := map[int]int{}
	for _, c := range a.Communities {
		if c.Level == l {
			for _, v := range c.Nodes {
				of[ga.Name(v)] = c.ID
			}
			size[c.ID] = len(c.Nodes)
		}
	}
	sum, n := 0.0, 0
	for _, c := range b.Communities {
		if c.Level != l {
			continue
		}
		overlap := map[int]int{}
		for _, v := range c.Nodes {
			if id, ok := of[gb.Name(v)]; ok {
				overlap[id]++
			}
		}
		best := 0.0
		for id, o := range overlap {
			best = max(best, float64(o)/float64(len(c.Nodes)+size[id]-o))
		}
		sum += best
		n++
	}
	return sum / float64(max(n, 1))
}
