// Package flat is kgrag's default vector index: one local file of
// normalised float32 vectors and their ids, read whole into memory and
// searched exactly by scanning every vector, or, for a large index, through
// an HNSW graph stored in the same file.
//
// Exact search needs no tuning and has perfect recall, and below
// DefaultANNThreshold vectors (20,000) a scan takes a few milliseconds.
// It grows with the index (8 ms at 100k x 768 on 2 cores with AVX2, ten
// times that at 1M), so from that size Commit also links the vectors into a
// hierarchical navigable small-world graph (BuildOptions; the ANN mode can
// force it on or off) and measures its recall@10 against the exact scan on
// 200 of the index's own vectors with noise added, widening the search
// (efSearch) until it reaches 0.98. The recall and efSearch are kept in
// the file and shown by Info. The build is deterministic: the same vectors
// and seed give the same file on any number of cores.
//
//	b, err := flat.Create(path, "nomic-embed-text", 0) // dim from the first vector
//	for ... { err = b.Add(entityID, vec) }
//	err = b.Commit() // atomic: readers see the old file or the new one
//
//	rep, err := flat.WriteWith(ctx, path, model, ids, vecs, flat.BuildOptions{ANN: flat.ANNOn})
//	// rep.Recall, rep.Ef: what the build measured
//
//	idx, err := flat.Open(ctx, path, flat.Options{})          // the graph when the file has one
//	ref, err := flat.Open(ctx, path, flat.Options{Exact: true}) // always the scan
//	hits, err := idx.Search(ctx, queryVec, 10)
//
// The file is written to a temporary name and renamed on Commit, carries
// a CRC-32C over everything after the header, and Open names the file when
// it is not an index or is truncated or damaged (ErrCorrupt). A file
// without a graph is version 1, as kgrag wrote before graphs existed.
package flat
