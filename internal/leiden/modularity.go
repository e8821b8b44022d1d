package leiden

import "fmt"

// Modularity returns the modularity of partition p of g at the given
// resolution γ:
//
//	Q = 1/(2m) Σ_c ( 2·in_c − γ·K_c²/(2m) )
//
// where m is the total edge weight, in_c the weight of the edges inside
// community c (self-loops once) and K_c the total strength of its nodes
// (self-loops twice). It is the usual Q = 1/(2m) Σ_ij (A_ij − γ k_i k_j /
// 2m) δ(c_i, c_j) with A_ii twice the loop weight, as igraph and networkx
// count it. A graph without edge weight has modularity 0. p must give
// every node a community >= 0; Modularity panics otherwise.
func Modularity(g *Graph, p Partition, resolution float64) float64 {
	if len(p) != g.N() {
		panic(fmt.Sprintf("leiden: Modularity: partition of %d nodes for a graph of %d", len(p), g.N()))
	}
	if g.total == 0 {
		return 0
	}
	k := p.Count()
	in := make([]float64, k)
	strength := make([]float64, k)
	for v, c := range p {
		strength[c] += g.k[v]
		in[c] += g.self[v]
		for e := g.off[v]; e < g.off[v+1]; e++ {
			if u := int(g.adj[e]); u > v && p[u] == c {
				in[c] += g.w[e]
			}
		}
	}
	q := 0.0
	for c := range in {
		q += 2*in[c] - resolution*strength[c]*strength[c]/g.total
	}
	return q / g.total
}
