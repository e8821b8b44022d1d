// Package embedindex holds what `kgrag embed` and `kgrag ask` need to find
// the entities nearest a question: embedders, an embedding cache, and
// vector indexes behind one Index interface: the local file index in
// embedindex/flat (exact, or HNSW from 20,000 vectors), and Elasticsearch
// kNN in embedindex/elastic.
//
// The layers of an embedding run, outermost first:
//
//	Cached  (cache.go)  answers texts seen before from a Cache file, keyed
//	                    by sha256 of model and text, so a rerun sends only
//	                    new or changed texts
//	Batcher (batch.go)  splits the misses into batches and runs a few at
//	                    once, reporting progress to a Counter
//	Embedder            one request per call, e.g. llm.Client.Embedder()
//
// An index records the model and dimension of its vectors; Query and
// Check refuse a question embedded with another model or dimension
// (ErrModelMismatch, ErrDimMismatch) rather than return meaningless
// neighbours.
//
//	cache, err := embedindex.OpenCache(filepath.Join(dir, embedindex.CacheFile))
//	emb := embedindex.NewCached(
//		embedindex.NewBatcher(client.Embedder(), embedindex.BatchOptions{Size: 64, Concurrency: 2, Counter: progress}),
//		cache, progress)
//	vecs, err := emb.Embed(ctx, texts)
//	cache.Prune() // after a complete run: forget texts that left the graph
//	err = cache.Save(ctx)
//	err = flat.Write(ctx, filepath.Join(dir, "entities.vec"), emb.Model(), ids, vecs)
//	...
//	idx, err := flat.Open(ctx, filepath.Join(dir, "entities.vec"), flat.Options{})
//	hits, err := embedindex.Query(ctx, idx, client.Embedder(), question, 10)
package embedindex
