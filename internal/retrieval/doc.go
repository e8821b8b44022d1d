// Package retrieval builds the context that `kgrag ask` hands to the model,
// following Microsoft GraphRAG's local search
// (graphrag/query/structured_search/local_search/mixed_context.py and the
// context builders in graphrag/query/context_builder).
//
// A Backend answers a few batched lookups (entities, relationships touching
// entities, text units, community reports of entities); MemoryBackend
// answers them from a *graphrag.Dataset. A Builder ranks the records and
// fills the Reports, Entities, Relationships and Sources tables into a
// token budget counted with tiktoken (offline BPE ranks):
//
//	ds, err := graphrag.Open(ctx, dir)
//	if err != nil {
//		return err
//	}
//	b, err := retrieval.NewBuilder(retrieval.NewMemoryBackend(ds), retrieval.DefaultParams())
//	if err != nil {
//		return err
//	}
//	// selected: entity ids from the vector index, nearest first.
//	c, err := b.LocalContext(ctx, selected)
//	if err != nil {
//		return err
//	}
//	fmt.Println(c.Text, c.Tokens)
//
// Builder.LocalContext documents where kgrag follows GraphRAG and where it
// deliberately differs.
//
// Seed mode (NewSeedBuilder over a SeedBackend: MemorySource or
// SPARQLSource) runs the seed article's five retrievals instead;
// SeedBackend lists the seed's bugs and how kgrag fixes them.
package retrieval
