package walksearch

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kgrag/kgrag/internal/retrieval"
)

// bridgeGraph is a small graph: text unit 0 names A and B, unit 1 names
// B and C, unit 2 names C and D, unit 3 names D; A-B and C-D are
// related.
func bridgeGraph() *retrieval.WalkGraph {
	g := &retrieval.WalkGraph{
		Entities: []retrieval.WalkEntity{
			{ID: "a", Title: "A", Units: []int32{0}},
			{ID: "b", Title: "B", Units: []int32{0, 1}},
			{ID: "c", Title: "C", Units: []int32{1, 2}},
			{ID: "d", Title: "D", Units: []int32{2, 3}},
		},
		Units: []retrieval.WalkUnit{
			{ID: "0", TextUnitID: "u0", Text: "A and B", Entities: []int32{0, 1}},
			{ID: "1", TextUnitID: "u1", Text: "B and C", Entities: []int32{1, 2}},
			{ID: "2", TextUnitID: "u2", Text: "C and D", Entities: []int32{2, 3}},
			{ID: "3", TextUnitID: "u3", Text: "D", Entities: []int32{3}},
		},
		Edges: [][]retrieval.WalkEdge{
			{{To: 1, Weight: 2}}, {{To: 0, Weight: 2}},
			{{To: 3, Weight: 1}}, {{To: 2, Weight: 1}},
		},
	}
	return g
}

func TestWalkerRowsSumToOne(t *testing.T) {
	w := newWalker(bridgeGraph(), 0.3)
	for i, row := range w.out {
		sum := 0.0
		for _, s := range row {
			sum += s.p
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("node %d: transitions sum to %v; want 1", i, sum)
		}
	}
}

// TestRankAgainstLinearSolve checks the power iteration against
// personalized PageRank solved exactly: p = (1-d) (I - d Mᵀ)⁻¹ r, where
// M holds the transition probabilities (the graph has no dead end), by
// Gaussian elimination.
func TestRankAgainstLinearSolve(t *testing.T) {
	g := bridgeGraph()
	w := newWalker(g, 0.3)
	n := len(w.out)
	const d = 0.5
	reset := make([]float64, n)
	reset[0], reset[len(g.Entities)+3] = 0.7, 0.3
	got := w.rank(reset, d, 200, 1e-14)

	// a = I - d Mᵀ, solved for (1-d) r.
	a := make([][]float64, n)
	for i := range a {
		a[i] = make([]float64, n+1)
		a[i][i] = 1
		a[i][n] = (1 - d) * reset[i]
	}
	for i, row := range w.out {
		for _, s := range row {
			a[s.to][i] -= d * s.p
		}
	}
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		a[c], a[p] = a[p], a[c]
		for r := range n {
			if r == c {
				continue
			}
			f := a[r][c] / a[c][c]
			for k := c; k <= n; k++ {
				a[r][k] -= f * a[c][k]
			}
		}
	}
	for i := range n {
		want := a[i][n] / a[i][i]
		if math.Abs(got[i]-want) > 1e-9 {
			t.Errorf("node %d: score %.10f; want %.10f", i, got[i], want)
		}
	}
	sum := 0.0
	for _, v := range got {
		sum += v
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Errorf("scores sum to %v; want 1", sum)
	}
}

// TestRankDeadEnd: a node with no step hands its mass back to the seeds,
// so nothing is lost.
func TestRankDeadEnd(t *testing.T) {
	g := &retrieval.WalkGraph{
		Entities: []retrieval.WalkEntity{{ID: "a", Title: "A"}},
		Units:    []retrieval.WalkUnit{{ID: "0", TextUnitID: "u0"}},
		Edges:    [][]retrieval.WalkEdge{nil},
	}
	w := newWalker(g, 0.2)
	got := w.rank([]float64{1, 0}, 0.5, 50, 1e-12)
	if got[0] != 1 || got[1] != 0 {
		t.Errorf("rank = %v; want [1 0]", got)
	}
}

// synthetic is a random graph of the bench's default size: n entities in
// n/5 text units (each entity in 1-3 of them) and 3n relationships.
func synthetic(n int) *retrieval.WalkGraph {
	r := rand.New(rand.NewPCG(1, 2))
	g := &retrieval.WalkGraph{Entities: make([]retrieval.WalkEntity, n), Units: make([]retrieval.WalkUnit, n/5), Edges: make([][]retrieval.WalkEdge, n)}
	for e := range n {
		for range 1 + r.IntN(3) {
			u := int32(r.IntN(n / 5))
			g.Entities[e].Units = append(g.Entities[e].Units, u)
			g.Units[u].Entities = append(g.Units[u].Entities, int32(e))
		}
	}
	for range 3 * n {
		a, b := int32(r.IntN(n)), int32(r.IntN(n))
		w := r.Float64() + 0.01
		g.Edges[a] = append(g.Edges[a], retrieval.WalkEdge{To: b, Weight: w})
		g.Edges[b] = append(g.Edges[b], retrieval.WalkEdge{To: a, Weight: w})
	}
	return g
}

// BenchmarkRank is one question's walk over 100,000 entities, 20,000
// text units and 300,000 relationships from 30 seeds, to the default
// tolerance.
func BenchmarkRank(b *testing.B) {
	g := synthetic(100000)
	w := newWalker(g, DefaultParams().RelationshipShare)
	reset := make([]float64, len(w.out))
	for i := range 30 {
		reset[i*997%len(reset)] = 1.0 / 30
	}
	b.ResetTimer()
	for b.Loop() {
		w.rank(reset, 0.5, maxIterations, tolerance)
	}
}
