// Package leidentest makes synthetic graphs with known communities for the
// tests and benchmarks of package leiden, and reads the relationship
// graph of a GraphRAG output.
//
//	g, truth, err := leidentest.Planted(leidentest.Benchmark100k)
package leidentest

import (
	"math/rand/v2"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/leiden"
)

// Spec describes a planted-partition graph: community sizes drawn from a
// power law (exponent 2) in [MinSize, MaxSize]; Edges draws, each between
// a uniform node and, with probability 1-Mu, a node of its own community,
// else any node; weights 1..10 (parallel draws are summed).
type Spec struct {
	Seed             uint64
	Nodes, Edges     int
	MinSize, MaxSize int
	Mu               float64
}

// Benchmark100k is the graph the tests compare with the Python peers and
// the benchmarks time: 100k nodes and 300k edge draws (about 293k
// distinct edges) in communities of 16 to 1024 nodes, a quarter of the
// draws leaving their community.
var Benchmark100k = Spec{Seed: 1, Nodes: 100_000, Edges: 300_000, MinSize: 16, MaxSize: 1024, Mu: 0.25}

// Planted builds the graph of s and returns it with the planted partition.
// The same Spec gives the same graph.
func Planted(s Spec) (*leiden.Graph, leiden.Partition, error) {
	r := rand.New(rand.NewPCG(s.Seed, 7))
	truth := make(leiden.Partition, s.Nodes)
	var members [][]int
	for v := 0; v < s.Nodes; {
		// Inverse CDF of p(size) ~ 1/size² on [MinSize, MaxSize].
		a, b := 1/float64(s.MinSize), 1/float64(s.MaxSize)
		size := min(int(1/(a-r.Float64()*(a-b))), s.Nodes-v)
		c := make([]int, size)
		for i := range c {
			c[i] = v
			truth[v] = len(members)
			v++
		}
		members = append(members, c)
	}
	bld := leiden.NewBuilder(s.Nodes)
	for range s.Edges {
		u := r.IntN(s.Nodes)
		v := u
		for v == u {
			if c := members[truth[u]]; r.Float64() >= s.Mu && len(c) > 1 {
				v = c[r.IntN(len(c))]
			} else {
				v = r.IntN(s.Nodes)
			}
		}
		bld.AddEdge(u, v, float64(1+r.IntN(10)))
	}
	g, err := bld.Graph()
	return g, truth, err
}

// RelationshipEdges returns what GraphRAG clusters, in table order: each
// relationship's source and target titles and its weight (1 where the
// table has none, as cluster_graph does). leiden.GraphRAGEdges prepares
// them as cluster_graph does.
func RelationshipEdges(ds *graphrag.Dataset) []leiden.Edge {
	edges := make([]leiden.Edge, len(ds.Relationships))
	for i, r := range ds.Relationships {
		w := r.Weight
		if !r.HasWeight {
			w = 1
		}
		edges[i] = leiden.Edge{Source: r.Source, Target: r.Target, Weight: w}
	}
	return edges
}
