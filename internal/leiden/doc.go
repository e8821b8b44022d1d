// Package leiden finds communities in undirected weighted graphs with the
// Leiden algorithm (V. A. Traag, L. Waltman and N. J. van Eck, "From
// Louvain to Leiden: guaranteeing well-connected communities", Scientific
// Reports 9, 5233, 2019) maximising modularity, and builds GraphRAG's
// community hierarchy with it. It is kgrag's own implementation, written
// from the paper: no Python, no cgo.
//
// It owns the graph (Graph, built by a Builder or NewGraph from weighted
// edges between named nodes, parallel edges summed), modularity
// (Modularity), flat Leiden (Leiden) and the hierarchy GraphRAG's
// create_communities step makes with graspologic's hierarchical_leiden
// (Hierarchical: Leiden on the whole graph, then again on every community
// of at least MaxClusterSize nodes, level after level), and the way
// GraphRAG turns relationships into that graph (GraphRAGEdges: pairs
// deduplicated, titles normalised, largest connected component). It knows
// nothing of parquet or of GraphRAG's tables.
//
// Leiden follows the paper's Algorithm A.1: fast local moving of nodes
// (a queue of nodes whose neighbourhood changed), refinement (nodes still
// alone merge, at random with probability proportional to exp(ΔQ/θ), into
// well-connected refined communities inside their community), and
// aggregation by the refined partition with the unrefined one as the
// start, until no community can grow. Every community it returns is
// connected. Runs are deterministic for a seed (PCG from math/rand/v2,
// nodes visited in seeded random order) and check their context between
// phases. Adjacency is in CSR arrays and the inner loops use flat slices
// indexed by node and community, no maps: a 100k-node, 300k-edge graph
// takes well under a second.
//
// Usage:
//
//	g, err := leiden.NewGraph(leiden.GraphRAGEdges(relationships, true))
//	h, err := leiden.Hierarchical(ctx, g, leiden.HierOptions{Seed: 0xDEADBEEF})
//	for _, c := range h.Communities {
//		// c.ID, c.Level, c.Parent (-1 at level 0), c.Nodes, c.Final
//	}
//	q := leiden.Modularity(g, h.Membership(0), 1)
//
// Communities are numbered as graspologic_native numbers them and GraphRAG
// stores them: level 0 from 0, then each level's communities grouped by
// parent. The tests check modularity, connectivity, nesting and
// determinism on hand-made and planted graphs, and compare modularity per
// level with graspologic_native and leidenalg (scripts/oracle/leiden.py).
package leiden
