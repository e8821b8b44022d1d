package leiden_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/kgrag/kgrag/internal/leiden"
)

// ringOfCliques is r cliques of s nodes (nodes numbered clique by clique),
// clique i joined to clique i+1 (mod r) by one edge.
func ringOfCliques(t testing.TB, r, s int) (*leiden.Graph, leiden.Partition) {
	t.Helper()
	b := leiden.NewBuilder(r * s)
	truth := make(leiden.Partition, r*s)
	for c := 0; c < r; c++ {
		for i := 0; i < s; i++ {
			truth[c*s+i] = c
			for j := i + 1; j < s; j++ {
				b.AddEdge(c*s+i, c*s+j, 1)
			}
		}
		b.AddEdge(c*s+s-1, (c+1)%r*s, 1)
	}
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	return g, truth
}

func graphOf(t testing.TB, n int, edges [][3]float64) *leiden.Graph {
	t.Helper()
	b := leiden.NewBuilder(n)
	for _, e := range edges {
		b.AddEdge(int(e[0]), int(e[1]), e[2])
	}
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestModularityByHand(t *testing.T) {
	// Two triangles 0-1-2 and 3-4-5 joined by the edge 2-3: m = 7, the
	// strengths are 2, 2, 3, 3, 2, 2 and each triangle holds 3 edges and
	// strength 7.
	triangles := graphOf(t, 6, [][3]float64{{0, 1, 1}, {1, 2, 1}, {0, 2, 1}, {3, 4, 1}, {4, 5, 1}, {3, 5, 1}, {2, 3, 1}})
	// Loop: 0-1 weight 2, a loop of weight 1 on 0, 1-2 weight 1: m = 4,
	// strengths 4 (the loop twice), 3, 1.
	loop := graphOf(t, 3, [][3]float64{{0, 1, 2}, {0, 0, 1}, {1, 2, 1}})
	ring, ringTruth := ringOfCliques(t, 10, 5)
	tests := []struct {
		name  string
		g     *leiden.Graph
		p     leiden.Partition
		gamma float64
		want  float64
	}{
		// 1/14 · (2·3 − 7²/14) · 2 = 5/14.
		{"triangles split", triangles, leiden.Partition{0, 0, 0, 1, 1, 1}, 1, 5.0 / 14},
		{"triangles whole", triangles, leiden.Partition{0, 0, 0, 0, 0, 0}, 1, 0},
		// −Σk²/(2m)² = −(4+4+9+9+4+4)/196.
		{"triangles singletons", triangles, leiden.Partition{0, 1, 2, 3, 4, 5}, 1, -34.0 / 196},
		// 1/14 · (12 − 0.5·98/14) = 8.5/14.
		{"triangles split γ=0.5", triangles, leiden.Partition{0, 0, 0, 1, 1, 1}, 0.5, 8.5 / 14},
		// {0,1}: in 2+1 (loop once), K 7; {2}: K 1. 1/8 · (6 − 49/8 − 1/8).
		{"loop", loop, leiden.Partition{0, 0, 1}, 1, -1.0 / 32},
		// {0}: in 1, K 4; {1,2}: in 1, K 4. 1/8 · (2 − 2 + 2 − 2).
		{"loop alone", loop, leiden.Partition{0, 1, 1}, 1, 0},
		// 10 cliques of 5: m = 110, each clique 10 edges and strength 22:
		// 10 · (10/110 − (22/220)²).
		{"ring of cliques", ring, ringTruth, 1, 10 * (10.0/110 - 0.01)},
	}
	for _, tt := range tests {
		if got := leiden.Modularity(tt.g, tt.p, tt.gamma); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%s: Modularity = %.15f; want %.15f", tt.name, got, tt.want)
		}
	}
}

func TestBuilder(t *testing.T) {
	var b leiden.Builder
	b.AddNamed("a", "b", 1)
	b.AddNamed("b", "a", 2) // parallel, reversed: summed
	b.AddNamed("b", "c", 0.5)
	b.AddNamed("c", "c", 3) // loop
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	if g.N() != 3 || g.Name(0) != "a" || g.Index("c") != 2 || g.Index("z") != -1 {
		t.Fatalf("nodes: N %d, names %q %q", g.N(), g.Name(0), g.Name(2))
	}
	want := []leiden.Edge{{"a", "b", 3}, {"b", "c", 0.5}, {"c", "c", 3}}
	if got := g.Edges(); !slices.Equal(got, want) {
		t.Errorf("Edges() = %v; want %v", got, want)
	}
	for v, want := range []float64{3, 3.5, 6.5} {
		if got := g.Strength(v); got != want {
			t.Errorf("Strength(%d) = %v; want %v", v, got, want)
		}
	}
	if got := g.TotalWeight(); got != 6.5 {
		t.Errorf("TotalWeight() = %v; want 6.5", got)
	}

	for _, tt := range []struct {
		u, v int
		w    float64
	}{{0, 5, 1}, {-1, 0, 1}, {0, 1, -1}, {0, 1, math.NaN()}, {0, 1, math.Inf(1)}} {
		b := leiden.NewBuilder(2)
		b.AddEdge(tt.u, tt.v, tt.w)
		if _, err := b.Graph(); err == nil {
			t.Errorf("AddEdge(%d, %d, %v): Graph() gave no error", tt.u, tt.v, tt.w)
		}
	}
}

func TestLeidenRingOfCliques(t *testing.T) {
	// 20 cliques of 6: below the resolution limit (r < s(s−1)+2 = 32),
	// so the cliques are the optimum.
	g, truth := ringOfCliques(t, 20, 6)
	for seed := range uint64(5) {
		p := mustLeiden(t, g, leiden.Options{Seed: seed})
		if !slices.Equal(p, truth) {
			t.Errorf("seed %d: Leiden = %v; want the cliques %v", seed, p, truth)
		}
	}
	// Started from the cliques, it stays there.
	if p := mustLeiden(t, g, leiden.Options{Initial: truth}); !slices.Equal(p, truth) {
		t.Errorf("from the cliques: Leiden = %v", p)
	}
}

// nmi is the normalised mutual information of two partitions.
func nmi(a, b leiden.Partition) float64 {
	n := float64(len(a))
	joint := map[[2]int]float64{}
	ca, cb := map[int]float64{}, map[int]float64{}
	for i := range a {
		joint[[2]int{a[i], b[i]}]++
		ca[a[i]]++
		cb[b[i]]++
	}
	entropy := func(m map[int]float64) float64 {
		h := 0.0
		for _, c := range m {
			h -= c / n * math.Log(c/n)
		}
		return h
	}
	mi := 0.0
	for k, c := range joint {
		mi += c / n * math.Log(c*n/(ca[k[0]]*cb[k[1]]))
	}
	return 2 * mi / (entropy(ca) + entropy(cb))
}

func TestLeidenPlantedPartition(t *testing.T) {
	// 3000 nodes in communities of 50 to 300, 10% of the edges leaving:
	// a stochastic block model well above the detection threshold.
	pl := newPlanted(t, 3, 3000, 15000, 50, 300, 0.1)
	qTruth := leiden.Modularity(pl.g, pl.truth, 1)
	for seed := range uint64(3) {
		p := mustLeiden(t, pl.g, leiden.Options{Seed: seed})
		q := leiden.Modularity(pl.g, p, 1)
		if got := nmi(p, pl.truth); got < 0.99 {
			t.Errorf("seed %d: NMI with the planted partition = %.4f; want >= 0.99 (%d communities, %d planted)",
				seed, got, p.Count(), pl.truth.Count())
		}
		if q < qTruth-1e-9 {
			t.Errorf("seed %d: modularity %.6f below the planted partition's %.6f", seed, q, qTruth)
		}
		if bad := disconnected(pl.g, p); len(bad) > 0 {
			t.Errorf("seed %d: communities %v are not connected", seed, bad)
		}
	}
}

func TestLeidenConnectedAndDeterministic(t *testing.T) {
	graphs := map[string]*leiden.Graph{
		"planted 20k": newPlanted(t, 5, 20_000, 60_000, 8, 500, 0.4).g,
		"sparse":      newPlanted(t, 6, 5_000, 4_000, 3, 50, 0.3).g, // many components
	}
	for name, g := range graphs {
		for _, o := range []leiden.Options{{Seed: 1}, {Seed: 2, Iterations: 1}, {Seed: 3, Iterations: -1}, {Seed: 4, Resolution: 3, Randomness: 0.001}} {
			p := mustLeiden(t, g, o)
			if bad := disconnected(g, p); len(bad) > 0 {
				t.Errorf("%s %+v: %d of %d communities are not connected", name, o, len(bad), p.Count())
			}
			if again := mustLeiden(t, g, o); !slices.Equal(p, again) {
				t.Errorf("%s %+v: two runs with one seed differ", name, o)
			}
			if len(p) != g.N() {
				t.Fatalf("%s: partition of %d nodes for %d", name, len(p), g.N())
			}
		}
		a := mustLeiden(t, g, leiden.Options{Seed: 1})
		b := mustLeiden(t, g, leiden.Options{Seed: 99})
		if slices.Equal(a, b) {
			t.Errorf("%s: seeds 1 and 99 gave the same partition; is the seed used?", name)
		}
	}
}

func TestLeidenEdgeCases(t *testing.T) {
	empty := graphOf(t, 0, nil)
	if p := mustLeiden(t, empty, leiden.Options{}); len(p) != 0 {
		t.Errorf("empty graph: %v", p)
	}
	isolated := graphOf(t, 3, nil)
	if p := mustLeiden(t, isolated, leiden.Options{}); !slices.Equal(p, leiden.Partition{0, 1, 2}) {
		t.Errorf("isolated nodes: %v; want each alone", p)
	}
	// A star cannot be split: any part without the centre loses weight.
	star := graphOf(t, 6, [][3]float64{{0, 1, 1}, {0, 2, 1}, {0, 3, 1}, {0, 4, 1}, {0, 5, 1}})
	if p := mustLeiden(t, star, leiden.Options{}); p.Count() != 1 {
		t.Errorf("star: %v; want one community", p)
	}
	g, _ := ringOfCliques(t, 4, 4)
	for _, o := range []leiden.Options{{Resolution: -1}, {Randomness: math.NaN()}, {Initial: leiden.Partition{0}}, {Initial: make(leiden.Partition, 15)}} {
		if _, err := leiden.Leiden(context.Background(), g, o); err == nil {
			t.Errorf("Leiden(%+v): no error", o)
		}
	}
}

func TestCancel(t *testing.T) {
	g := newPlanted(t, 1, 50_000, 150_000, 16, 1024, 0.25).g
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := leiden.Leiden(ctx, g, leiden.Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Leiden with a cancelled context: %v; want context.Canceled", err)
	}
	if _, err := leiden.Hierarchical(ctx, g, leiden.HierOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Hierarchical with a cancelled context: %v; want context.Canceled", err)
	}
}

func TestGraphRAGEdgesByHand(t *testing.T) {
	e := func(s, t string, w float64) leiden.Edge { return leiden.Edge{Source: s, Target: t, Weight: w} }
	tests := []struct {
		name   string
		rels   []leiden.Edge
		useLCC bool
		want   []leiden.Edge
	}{
		{"last row of a pair wins, either direction", []leiden.Edge{e("b", "a", 1), e("a", "b", 2)}, false,
			[]leiden.Edge{e("a", "b", 2)}},
		{"no normalising without the LCC", []leiden.Edge{e("x&amp;y", "z", 1), e("b", "a", 1)}, false,
			[]leiden.Edge{e("a", "b", 1), e("x&amp;y", "z", 1)}},
		{"largest component, titles normalised", []leiden.Edge{e("x&amp;y", "z", 1), e("b", "a", 1), e(" c\t", "a", 4)}, true,
			[]leiden.Edge{e("A", "B", 1), e("A", "C", 4)}},
		{"first row wins once titles are normalised", []leiden.Edge{e("a", "b", 1), e("A ", "B", 3)}, true,
			[]leiden.Edge{e("A", "B", 1)}},
		// Two components of two: the one seen first among the sources
		// (r, of the ordered pair r-s) wins, though p-q comes first among
		// the targets.
		{"ties go to the first source", []leiden.Edge{e("s", "r", 1), e("q", "p", 1)}, true,
			[]leiden.Edge{e("R", "S", 1)}},
		{"html entities", []leiden.Edge{e("AT&amp;T", "x", 1), e("&lt;a&gt;", "x", 2)}, true,
			[]leiden.Edge{e("<A>", "X", 2), e("AT&T", "X", 1)}},
	}
	for _, tt := range tests {
		if got := leiden.GraphRAGEdges(tt.rels, tt.useLCC); !slices.Equal(got, tt.want) {
			t.Errorf("%s: GraphRAGEdges(%v, %v) = %v; want %v", tt.name, tt.rels, tt.useLCC, got, tt.want)
		}
	}
}
