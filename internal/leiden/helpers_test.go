package leiden_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/kgrag/kgrag/internal/leiden"
	"github.com/kgrag/kgrag/internal/leiden/leidentest"
)

// planted is a planted-partition graph and its planted communities.
type planted struct {
	g     *leiden.Graph
	truth leiden.Partition
}

func newPlanted(t testing.TB, seed uint64, nodes, edges, minSize, maxSize int, mu float64) planted {
	t.Helper()
	return plantedSpec(t, leidentest.Spec{Seed: seed, Nodes: nodes, Edges: edges, MinSize: minSize, MaxSize: maxSize, Mu: mu})
}

func plantedSpec(t testing.TB, s leidentest.Spec) planted {
	t.Helper()
	g, truth, err := leidentest.Planted(s)
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
