// Package snapshot owns the graph snapshot: the lookup tables retrieval
// reads from a GraphRAG output (entities, relationships, text units and
// communities with their reports, each addressable by row, and the
// indexes between them), in one file that is memory-mapped rather than
// read. Opening a snapshot costs a few page faults whatever the graph's
// size, where reading the parquet tables and indexing them takes seconds
// at a million entities; a question then touches only the records it
// needs, decoding each on access.
//
// kgrag embed writes the snapshot beside the vector index. It records the
// files it was built from (size and modification time of every table
// file GraphRAG's reader would look at), and Check refuses a snapshot
// whose output has changed since, so that a stale snapshot is never read
// in place of the tables.
//
// The same tables are built in memory from a *graphrag.Dataset (Build),
// so every retrieval over a dataset runs through this package and its
// tests cover the snapshot too.
//
// File layout, little-endian, every section aligned to 8 bytes:
//
//	magic    [8]byte "KGSNAPSH"
//	version  uint32
//	sections uint32  number of sections that follow (numSections)
//	table    sections x (offset uint64, length uint64)
//	crc      uint32  CRC-32C of the bytes above and of the meta section
//	pad      uint32
//	...      the sections, in table order
//
// The meta section is JSON (what the snapshot was built from and the
// row counts); the others are arrays of uint32/uint64 or record blobs
// addressed by offset arrays (see sections.go). Offsets read from a file
// are checked on every access, so a damaged file gives an error naming
// the record, never a read out of bounds.
package snapshot
