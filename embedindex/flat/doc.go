// Package flat is kgrag's default vector index: one local file of
// normalised float32 vectors and their ids, read whole into memory and
// searched exactly by scanning every vector. Exact search needs no tuning
// and has perfect recall; at GraphRAG's scale (thousands to a few hundred
// thousand entities) a scan takes milliseconds, and approximate indexes
// tried for kgrag lost too much recall (see DEPENDENCIES.md).
//
//	b, err := flat.Create(path, "nomic-embed-text", 0) // dim from the first vector
//	for ... { err = b.Add(entityID, vec) }
//	err = b.Commit() // atomic: readers see the old file or the new one
//
//	idx, err := flat.Open(ctx, path, flat.Options{})
//	hits, err := idx.Search(ctx, queryVec, 10)
//
// The file is written to a temporary name and renamed on Commit, carries
// a CRC-32C, and Open names the file when it is not an index or is
// truncated or damaged (ErrCorrupt).
package flat
