// Package communities builds GraphRAG's communities table from a
// hierarchical clustering of the relationship graph, as Microsoft GraphRAG
// 3.3.0's create_communities workflow does after clustering: per
// community of each level, its entities, the relationships (and their
// text units) inside it, its parent and children, title, size and period.
// The clustering itself is internal/leiden's; this package knows nothing
// of how it was made, nor of parquet (graphrag.Write3x writes the rows).
//
// In the indexer, after graphbuild.Finalize:
//
//	edges := make([]leiden.Edge, len(rels))
//	for i, r := range rels {
//		edges[i] = leiden.Edge{Source: r.Source, Target: r.Target, Weight: r.Weight}
//	}
//	g, err := leiden.NewGraph(leiden.GraphRAGEdges(edges, true))
//	h, err := leiden.Hierarchical(ctx, g, leiden.HierOptions{Seed: 0xDEADBEEF})
//	ds.Communities = communities.Build(entities, rels, g, h.Rows(), communities.Options{})
//	err = graphrag.Write3x(ctx, dir, ds)
//
// The tests compare Build with GraphRAG's own create_communities fed the
// same clustering, on two GraphRAG samples and hand-made graphs, and read
// the written table back with graphrag.Open and GraphRAG's
// read_indexer_communities.
package communities
