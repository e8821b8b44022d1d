// Package graphrag is kgrag's domain core: one normalised model of the
// parquet output of Microsoft GraphRAG indexing, filled from any release
// from 0.2 to 3.x, and the reader that detects the release and fills it.
//
// It knows nothing of RDF, SPARQL or LLMs.
package graphrag
