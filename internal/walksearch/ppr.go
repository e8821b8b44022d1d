package walksearch

import (
	"math"

	"github.com/kgrag/kgrag/internal/retrieval"
)

// walker holds a graph's transition weights for personalized PageRank:
// nodes are the entities, numbered first, then the text units. An
// entity's weight is split between the text units it comes from and its
// relationships; a text unit's goes to its entities.
type walker struct {
	entities, units int
	// out[i] are node i's successors and their transition probabilities
	// (each row sums to 1; a node without any has none).
	out [][]step
}

type step struct {
	to int32
	p  float64
}

// newWalker builds the transitions of g. relShare is the part of an
// entity's step that follows its relationships (by weight) rather than
// its text units (evenly); an entity with only one kind gives it all.
func newWalker(g *retrieval.WalkGraph, relShare float64) *walker {
	ne, nu := len(g.Entities), len(g.Units)
	w := &walker{entities: ne, units: nu, out: make([][]step, ne+nu)}
	for i, e := range g.Entities {
		edges := g.Edges[i]
		var sum float64
		for _, x := range edges {
			sum += x.Weight
		}
		rel, unit := relShare, 1-relShare
		switch {
		case len(edges) == 0 || sum <= 0:
			rel, unit = 0, 1
		case len(e.Units) == 0:
			rel, unit = 1, 0
		}
		row := make([]step, 0, len(edges)+len(e.Units))
		if rel > 0 {
			for _, x := range edges {
				row = append(row, step{x.To, rel * x.Weight / sum})
			}
		}
		if unit > 0 {
			for _, u := range e.Units {
				row = append(row, step{int32(ne) + u, unit / float64(len(e.Units))})
			}
		}
		w.out[i] = row
	}
	for j, u := range g.Units {
		row := make([]step, 0, len(u.Entities))
		var sum float64
		for _, e := range u.Entities {
			sum += specificity(g, e)
		}
		for _, e := range u.Entities {
			row = append(row, step{e, specificity(g, e) / sum})
		}
		w.out[ne+j] = row
	}
	return w
}

// The walk's iterations stop when the scores move less than tolerance
// (L1: with damping 0.5 some 20 rounds), or after maxIterations.
const (
	maxIterations = 50
	tolerance     = 1e-6
)

// rank is personalized PageRank from reset (a weight per node, summing to
// 1): the walk goes on with probability damping and starts again from
// reset otherwise; a node without successors hands its mass back to
// reset. It iterates until the scores move less than tol (L1) or after
// maxIter rounds.
func (w *walker) rank(reset []float64, damping float64, maxIter int, tol float64) []float64 {
	n := len(w.out)
	p := make([]float64, n)
	copy(p, reset)
	next := make([]float64, n)
	for range maxIter {
		clear(next)
		lost := 0.0
		for i, row := range w.out {
			if p[i] == 0 {
				continue
			}
			if len(row) == 0 {
				lost += p[i]
				continue
			}
			m := damping * p[i]
			for _, s := range row {
				next[s.to] += m * s.p
			}
			lost += (1 - damping) * p[i]
		}
		diff := 0.0
		for i := range next {
			next[i] += lost * reset[i]
			diff += math.Abs(next[i] - p[i])
		}
		p, next = next, p
		if diff < tol {
			break
		}
	}
	return p
}

// specificity is how much a walk leaving a text unit favours entity e:
// one over the number of text units e comes from (HippoRAG's node
// specificity), so that the walk goes on by the names that join few
// passages (a bridge) rather than the common words that join many.
func specificity(g *retrieval.WalkGraph, e int32) float64 {
	n := len(g.Entities[e].Units)
	if n == 0 {
		n = 1
	}
	return 1 / float64(n)
}
