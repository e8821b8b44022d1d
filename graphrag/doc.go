// Package graphrag is kgrag's domain core: one normalised model of the
// parquet output of Microsoft GraphRAG indexing, filled from any release
// from 0.2 to 3.x, and the reader that detects the release and fills it.
// It knows nothing of RDF, SPARQL or LLMs, so that every later stage
// (ontology mapping, loading, retrieval) is written once against the model
// rather than once per GraphRAG release.
//
// Open reads a directory into memory; Write3x writes a Dataset back in the
// 3.x layout (used by the synthetic benchmark data in internal/synth):
//
//	ds, err := graphrag.Open(ctx, "ragtest/output")
//	if err != nil {
//		return err // a *graphrag.Error naming the file and column
//	}
//	fmt.Println(ds.Release, len(ds.Entities), ds.Placeholders)
//	for _, c := range ds.Communities {
//		fmt.Println(c.Community, c.Title, c.Weight, c.Report != nil)
//	}
//
// Walk hands the same rows over one table at a time (documents, text units,
// entities, relationships, communities, covariates), so that a caller that
// writes each table out needs memory for the largest table rather than for
// the dataset; with Visitor.Windows each table comes in windows of rows, so
// that no table is held whole (kgrag load and its mapping ask for them). It
// first reads the few columns that tie tables together, so each row
// arrives complete; Open is Walk collecting every table:
//
//	ds, err := graphrag.Walk(ctx, "ragtest/output", graphrag.Visitor{
//		Windows: true,
//		Entities: func(ctx context.Context, es []graphrag.Entity) error {
//			for _, e := range es {
//				fmt.Println(e.Title, e.Communities, e.Placeholder)
//			}
//			return nil // es is not kept: it is freed as the walk goes on
//		},
//	})
//
// What a window needs whole is only what links tables: which entity a
// title names (relationship and claim ends, placeholders from the
// relationships and claims), the communities that list each entity (from
// the communities table, read before the entities are handed over),
// text units' entities where text_units lacks them, and the community
// reports, merged into the communities by number. The walk's order is the
// output's: those links are read by NewWalker before the first table.
//
// NewWalker does Walk's first half alone, so that a bad input fails before
// anything is written.
//
// What Open absorbs, per release:
//
//   - 0.2: output/<timestamp>/artifacts/create_final_*.parquet; the newest
//     run is read (Dataset.Notes says which). Columns as 0.3.
//   - 0.3/0.4: create_final_*; entities have name (not title), 0.3 also
//     description_embedding; community ids are strings in `id`; membership
//     and hierarchy come from create_final_nodes rows (title, community,
//     level); relationships have rank and a string human_readable_id;
//     reports have rank_explanation; documents have raw_content.
//   - 0.5-0.9: entities have title; communities have an int `community` and
//     entity_ids; relationships have combined_degree.
//   - 1.x: communities and reports have parent (-1 for a root); children
//     are derived from it.
//   - 2.x: short file names (entities.parquet ...); communities have
//     children; reports have rating_explanation; documents have metadata.
//   - 3.x: text_units have one document_id; documents have raw_data.
//
// Everywhere: numeric ids are stored as decimal strings, NULLs and NULL-typed
// columns read as zero values, empty lists as nil, pandas index columns are
// ignored, relationship ends are resolved from titles to entity ids (ends
// missing from the entities table get placeholder entities), reports are
// merged into communities, entities list the communities they belong to,
// and community weights are computed (see Dataset.ComputeWeights).
package graphrag
