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
// The other modes have builders of their own, over the same backends:
//
//	GlobalBuilder    global search: community reports packed into batches
//	                 for the map calls, the key points into the reduce call
//	BasicBuilder     basic search: the text units nearest the question
//	TemplatesBuilder      sparql-templates: the RDF article's five templated
//	                 retrievals (over a TemplatesBackend: MemorySource or
//	                 SPARQLSource); TemplatesBackend lists the article's bugs
//	                 and how kgrag fixes them
//	SubgraphBuilder  subgraph and graph-of-thoughts: the NetworkX
//	                 article's retrieval of the nearest nodes' subgraph
//
// DRIFT search builds its local contexts with Builder.
package retrieval
