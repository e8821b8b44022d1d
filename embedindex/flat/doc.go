// Package flat is kgrag's default vector index: one local file of
// normalised float32 vectors and their ids, memory-mapped and searched
// exactly by scanning every vector, or, for a large index, through an
// HNSW graph stored in the same file.
//
// Exact search needs no tuning and has perfect recall, and below
// DefaultANNThreshold vectors (20,000) a scan takes a few milliseconds.
// It grows with the index (8 ms at 100k x 768 on 2 cores with AVX2, ten
// times that at 1M), so from that size Commit also links the vectors into a
// hierarchical navigable small-world graph (BuildOptions; the ANN mode can
// force it on or off) and measures its recall@10 against the exact scan on
// 200 of the index's own vectors with noise added, widening the search
// (efSearch) until it reaches 0.98. The recall and efSearch are kept in
// the file and shown by Info. Under ANNAuto a graph that misses 0.98 even
// at the widest search is dropped and the index stays exact
// (Report.Exact). The build is deterministic: the same vectors and seed
// give the same file on any number of cores.
//
// Opening costs little at any size: the file (format version 3,
// format.go) is mapped, and its vectors, ids and links are used in place
// on little-endian hosts, paged in as searches touch them (elsewhere, or
// with Options.Read, it is read into the heap). Open checks the header,
// every section's size and offset, every link, and a checksum over all
// but the vectors; the vectors' own checksum is checked by Verify, and by
// Open too when they take 64 MiB or less. Close releases the mapping.
//
//	b, err := flat.Create(path, "nomic-embed-text", 0) // dim from the first vector
//	for ... { err = b.Add(entityID, vec) }
//	err = b.Commit() // atomic: readers see the old file or the new one
//
//	rep, err := flat.WriteWith(ctx, path, model, ids, vecs, flat.BuildOptions{ANN: flat.ANNOn})
//	// rep.Recall, rep.Ef: what the build measured
//
//	idx, err := flat.Open(ctx, path, flat.Options{})          // the graph when the file has one
//	defer idx.Close()
//	ref, err := flat.Open(ctx, path, flat.Options{Exact: true}) // always the scan
//	hits, err := idx.Search(ctx, queryVec, 10)
//	err = idx.Verify(ctx) // every vector against its checksum (kgrag doctor)
//
// The file is written to a temporary name and renamed on Commit, so a
// mapped file is never rewritten under its readers, and Open and Verify
// name the file when it is not an index or is truncated or damaged
// (ErrCorrupt). Files of versions 1 and 2, which kgrag wrote before, are
// still read (into the heap).
package flat
