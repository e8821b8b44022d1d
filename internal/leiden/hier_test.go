package leiden_test

import (
	"slices"
	"testing"

	"github.com/kgrag/kgrag/internal/leiden"
	"github.com/kgrag/kgrag/internal/test"
)

// induced builds the subgraph of g on nodes (ascending) through the public
// API, independently of the package's own.
func induced(t testing.TB, g *leiden.Graph, nodes []int) *leiden.Graph {
	t.Helper()
	b := leiden.NewBuilder(len(nodes))
	for i, v := range nodes {
		g.Neighbors(v, func(u int, w float64) {
			if j, ok := slices.BinarySearch(nodes, u); ok && j > i {
				b.AddEdge(i, j, w)
			}
		})
	}
	sub, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

// checkHierarchy checks the structure GraphRAG relies on: level 0
// partitions the graph; the children of a community partition it and sit
// one level down; IDs run in level order with children grouped by parent;
// a community is split exactly when it has at least max nodes, and one
// that has that many but is final has no structure at its own scale;
// every community is connected.
// maxUnsplitQ bounds the modularity, on its own subgraph, of any split of
// a community that Hierarchical found it could not split.
const maxUnsplitQ = 0.05

func checkHierarchy(t *testing.T, g *leiden.Graph, h *leiden.Hierarchy, max int) {
	t.Helper()
	children := map[int][]int{}
	covered := make([]int, g.N())
	prevParent, prevLevel := -1, 0
	for i, c := range h.Communities {
		if c.ID != i {
			t.Fatalf("community %d has ID %d", i, c.ID)
		}
		if c.Level < prevLevel {
			t.Fatalf("community %d at level %d after level %d", i, c.Level, prevLevel)
		}
		if c.Level > prevLevel {
			prevParent = -1
		}
		prevLevel = c.Level
		if len(c.Nodes) == 0 || !slices.IsSorted(c.Nodes) {
			t.Errorf("community %d: nodes empty or not sorted", i)
		}
		if c.Level == 0 {
			if c.Parent != -1 {
				t.Errorf("community %d at level 0 has parent %d", i, c.Parent)
			}
			for _, v := range c.Nodes {
				covered[v]++
			}
			continue
		}
		if c.Parent < prevParent {
			t.Errorf("community %d: parent %d after parent %d at its level", i, c.Parent, prevParent)
		}
		prevParent = c.Parent
		if c.Parent < 0 || c.Parent >= i || h.Communities[c.Parent].Level != c.Level-1 {
			t.Fatalf("community %d (level %d): bad parent %d", i, c.Level, c.Parent)
		}
		children[c.Parent] = append(children[c.Parent], i)
	}
	for v, n := range covered {
		if n != 1 {
			t.Fatalf("node %d is in %d level-0 communities", v, n)
		}
	}
	unsplit := 0
	for _, c := range h.Communities {
		kids := children[c.ID]
		if c.Final != (len(kids) == 0) {
			t.Errorf("community %d: Final %v with %d children", c.ID, c.Final, len(kids))
		}
		if len(kids) > 0 {
			if len(c.Nodes) < max {
				t.Errorf("community %d of %d nodes (< %d) was split", c.ID, len(c.Nodes), max)
			}
			var union []int
			for _, k := range kids {
				union = append(union, h.Communities[k].Nodes...)
			}
			slices.Sort(union)
			if !slices.Equal(union, c.Nodes) {
				t.Errorf("community %d: its children do not partition it", c.ID)
			}
		}
		if c.Final && len(c.Nodes) >= max {
			// Leiden returned it whole. Check that it has no structure
			// of its own: other seeds either return it whole too or split
			// it with a subgraph modularity near 0.
			unsplit++
			if len(c.Nodes) < 10 {
				continue // on a few nodes, any split scores high
			}
			sub := induced(t, g, c.Nodes)
			for seed := uint64(100); seed < 103; seed++ {
				p := mustLeiden(t, sub, leiden.Options{Seed: seed, Iterations: 1})
				if q := leiden.Modularity(sub, p, 1); p.Count() > 1 && q > maxUnsplitQ {
					t.Errorf("community %d of %d nodes is final, but Leiden (seed %d) splits it in %d with modularity %.4f",
						c.ID, len(c.Nodes), seed, p.Count(), q)
				}
			}
		}
	}
	for l := 0; l < h.Levels; l++ {
		if bad := disconnected(g, h.Membership(l)); len(bad) > 0 {
			t.Errorf("level %d: communities %v are not connected", l, bad)
		}
	}
	t.Logf("%d nodes: %d levels, %d communities, %d final with >= %d nodes (could not be split)",
		g.N(), h.Levels, len(h.Communities), unsplit, max)
}

func TestHierarchical(t *testing.T) {
	graphs := map[string]*leiden.Graph{
		"planted 20k": newPlanted(t, 5, 20_000, 60_000, 8, 500, 0.4).g,
		"sparse":      newPlanted(t, 6, 5_000, 4_000, 3, 50, 0.3).g,
	}
	for _, s := range test.Samples() {
		graphs[s], _ = sampleGraph(t, s)
	}
	for name, g := range graphs {
		for _, o := range []leiden.HierOptions{{Seed: 0xDEADBEEF}, {Seed: 1, MaxClusterSize: 50, Trials: 1}, {Seed: 2, MaxClusterSize: 3}} {
			t.Run(name, func(t *testing.T) {
				max := o.MaxClusterSize
				if max == 0 {
					max = leiden.DefaultMaxClusterSize
				}
				h := mustHierarchical(t, g, o)
				checkHierarchy(t, g, h, max)
				// Level 0 is Leiden's partition with the same seed and
				// iterations.
				want := mustLeiden(t, g, leiden.Options{Seed: o.Seed, Iterations: 1, Randomness: leiden.DefaultHierRandomness})
				if got := h.Membership(0); !slices.Equal(got, want) {
					t.Errorf("level 0 differs from Leiden with the same seed")
				}
				// Deterministic, whatever the number of workers.
				o.Workers = 1
				again := mustHierarchical(t, g, o)
				if !slices.EqualFunc(h.Communities, again.Communities, func(a, b leiden.Community) bool {
					return a.ID == b.ID && a.Level == b.Level && a.Parent == b.Parent && a.Final == b.Final && slices.Equal(a.Nodes, b.Nodes)
				}) {
					t.Errorf("%+v: a run with one worker differs", o)
				}
				// Rows agree with Communities.
				rows := h.Rows()
				n := 0
				for _, c := range h.Communities {
					for _, v := range c.Nodes {
						if r := rows[n]; r != (leiden.Row{Node: v, Cluster: c.ID, Level: c.Level, Parent: c.Parent, Final: c.Final}) {
							t.Fatalf("row %d = %+v; community %d", n, r, c.ID)
						}
						n++
					}
				}
				if n != len(rows) {
					t.Errorf("%d rows for %d memberships", len(rows), n)
				}
			})
		}
	}
}

func TestHierarchicalSmall(t *testing.T) {
	// A star of 12 cannot be split: one final community above the maximum.
	b := leiden.NewBuilder(12)
	for v := 1; v < 12; v++ {
		b.AddEdge(0, v, 1)
	}
	star, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	h := mustHierarchical(t, star, leiden.HierOptions{})
	if len(h.Communities) != 1 || !h.Communities[0].Final || h.Levels != 1 {
		t.Errorf("star: %+v; want one final community", h)
	}
	// Two cliques of 12 joined by an edge: level 0 has both, each is then
	// split (12 >= 10) or found unsplittable.
	g, _ := ringOfCliques(t, 2, 12)
	h = mustHierarchical(t, g, leiden.HierOptions{Seed: 3})
	checkHierarchy(t, g, h, 10)
	if h.Communities[0].Level != 0 || h.Communities[1].Level != 0 || len(h.Communities[0].Nodes) != 12 {
		t.Errorf("two cliques: level 0 = %+v", h.Communities[:2])
	}
	empty, _ := leiden.NewBuilder(0).Graph()
	if h := mustHierarchical(t, empty, leiden.HierOptions{}); h.Levels != 0 || len(h.Communities) != 0 {
		t.Errorf("empty graph: %+v", h)
	}
}

// modularityTerm is community nodes' share of g's modularity times m:
// in − K²/4m, K the nodes' total strength in g.
func modularityTerm(g *leiden.Graph, nodes []int) float64 {
	in, k := 0.0, 0.0
	for _, v := range nodes {
		k += g.Strength(v)
		out := 0.0
		g.Neighbors(v, func(u int, w float64) {
			out += w
			if _, ok := slices.BinarySearch(nodes, u); ok && u > v {
				in += w
			}
		})
		in += (g.Strength(v) - out) / 2 // the self-loop, counted twice in the strength
	}
	return in - k*k/(4*g.TotalWeight())
}

func TestHierarchicalTrials(t *testing.T) {
	graphs := map[string]*leiden.Graph{"planted 20k": newPlanted(t, 5, 20_000, 60_000, 8, 500, 0.4).g}
	graphs["v3"], _ = sampleGraph(t, "v3")
	for name, g := range graphs {
		one := mustHierarchical(t, g, leiden.HierOptions{Seed: 9})
		five := mustHierarchical(t, g, leiden.HierOptions{Seed: 9, Trials: 5})
		checkHierarchy(t, g, five, leiden.DefaultMaxClusterSize)
		// Level 0 is one Leiden run either way; the split of each level-0
		// community keeps at least as much of g's modularity with five
		// runs as with the first of them alone.
		children := func(h *leiden.Hierarchy) map[int][][]int {
			m := map[int][][]int{}
			for _, c := range h.Communities {
				if c.Level == 1 {
					m[c.Parent] = append(m[c.Parent], c.Nodes)
				}
			}
			return m
		}
		c1, c5 := children(one), children(five)
		better := 0
		for parent, kids1 := range c1 {
			if one.Communities[parent].Level != 0 || !slices.Equal(one.Communities[parent].Nodes, five.Communities[parent].Nodes) {
				t.Fatalf("%s: level 0 differs between 1 and 5 trials", name)
			}
			sum := func(kids [][]int) float64 {
				s := 0.0
				for _, k := range kids {
					s += modularityTerm(g, k)
				}
				return s
			}
			s1, s5 := sum(kids1), sum(c5[parent])
			if s5 < s1-1e-9 {
				t.Errorf("%s: community %d: split kept by 5 trials scores %.6f, the first trial alone %.6f", name, parent, s5, s1)
			}
			if s5 > s1+1e-9 {
				better++
			}
		}
		q1, q5 := leiden.Modularity(g, one.Membership(1), 1), leiden.Modularity(g, five.Membership(1), 1)
		t.Logf("%s: 5 trials split %d of %d level-0 communities better; level 1 modularity %.4f -> %.4f", name, better, len(c1), q1, q5)
		if better == 0 {
			t.Errorf("%s: 5 trials never found a better split", name)
		}
	}
}
