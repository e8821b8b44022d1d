// Package graphbuild turns the entities and relationships extracted from
// each text unit into GraphRAG's final entities and relationships tables,
// the way Microsoft GraphRAG 3.3.0 does between graph extraction and
// community detection:
//
//   - Merge groups the records by entity (title, type) and by relationship
//     (source, target), gathering descriptions and text unit ids and
//     summing weights, and drops relationships to unknown entities
//     (GraphRAG's extract_graph);
//   - Dedup (optional, from the NetworkX article's pipeline, not GraphRAG) merges as
//     Merge does and then joins the entities whose embeddings of
//     "title: descriptions" are alike, re-pointing their relationships;
//   - Summarizer.Summarize asks the model for one description where
//     several were gathered (summarize_descriptions);
//   - Finalize computes degrees and combined degrees and numbers and
//     names the rows (finalize_graph), giving graphrag.Entity and
//     graphrag.Relationship values that graphrag.Write3x writes.
//
// Unlike GraphRAG, whose entity and relationship ids are random, ids here
// are derived from titles (EntityID, RelationshipID), so they are the same
// on every run over the same text.
//
// In a pipeline:
//
//	g := graphbuild.Merge(extractions) // one Extraction per text unit
//	// or: g, rep, err := graphbuild.Dedup(ctx, extractions, embedder,
//	//	graphbuild.DedupOptions{Threshold: graphbuild.DefaultDedupThreshold})
//	s := &graphbuild.Summarizer{Model: client, Encoder: enc, Concurrency: 4}
//	stats, err := s.Summarize(ctx, g)
//	if err != nil {
//		return err
//	}
//	ds.Entities, ds.Relationships = graphbuild.Finalize(g)
//	err = graphrag.Write3x(ctx, dir, ds)
package graphbuild
