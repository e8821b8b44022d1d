// Package loader uploads triples to SPARQL 1.1 stores, replacing a named
// graph atomically (ReplaceGraph), in place (LoadInPlace), or by sending
// only the difference from what the graph holds (LoadDiff), with store
// profiles, batching or one streamed request (UploadMode), retries and a
// lock against concurrent loads. The triples are sent as N-Triples written
// by package rdfenc.
package loader
