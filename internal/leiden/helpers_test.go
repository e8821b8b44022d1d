package leiden_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/kgrag/kgrag/internal/leiden"
)

// planted is a planted-partition graph: community sizes drawn from a
// power law (exponent 2) in [minSize, maxSize], edges between a uniform
// node and, with probability 1-mu, a node of its own community, else any
// node; weights 1..10. Parallel edges are summed by the Builder.
type planted struct {
	g     *leiden.Graph
	truth leiden.Partition
}

func newPlanted(t testing.TB, seed uint64, nodes, edges, minSize, maxSize int, mu float64) planted {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	truth := make(leiden.Partition, nodes)
	var members [][]int
	for v := 0; v < nodes; {
		// Inverse CDF of p(s) ~ 1/s² on [minSize, maxSize].
		u := r.Float64()
		a, b := 1/float64(minSize), 1/float64(maxSize)
		s := min(int(1/(a-u*(a-b))), nodes-v)
		c := make([]int, s)
		for i := range c {
			c[i] = v
			truth[v] = len(members)
			v++
		}
		members = append(members, c)
	}
	b := leiden.NewBuilder(nodes)
	for range edges {
		u := r.IntN(nodes)
		var v int
		for v = u; v == u; {
			if c := members[truth[u]]; r.Float64() >= mu && len(c) > 1 {
				v = c[r.IntN(len(c))]
			} else {
				v = r.IntN(nodes)
			}
		}
		b.AddEdge(u, v, float64(1+r.IntN(10)))
	}
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	return planted{g, truth}
}

// disconnected returns the communities of p whose nodes are not connected
// within the community, by breadth-first search.
func disconnected(g *leiden.Graph, p leiden.Partition) []int {
	var bad []int
	seen := make([]bool, g.N())
	for c, nodes := range p.Communities() {
		if len(nodes) == 0 {
			continue
		}
		queue := []int{nodes[0]}
		seen[nodes[0]] = true
		reached := 1
		for len(queue) > 0 {
			v := queue[0]
			queue = queue[1:]
			g.Neighbors(v, func(u int, _ float64) {
				if !seen[u] && p[u] == c {
					seen[u] = true
					reached++
					queue = append(queue, u)
				}
			})
		}
		if reached != len(nodes) {
			bad = append(bad, c)
		}
	}
	return bad
}

func mustLeiden(t testing.TB, g *leiden.Graph, o leiden.Options) leiden.Partition {
	t.Helper()
	p, err := leiden.Leiden(context.Background(), g, o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustHierarchical(t testing.TB, g *leiden.Graph, o leiden.HierOptions) *leiden.Hierarchy {
	t.Helper()
	h, err := leiden.Hierarchical(context.Background(), g, o)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func itoa(i int) string { return strconv.Itoa(i) }
