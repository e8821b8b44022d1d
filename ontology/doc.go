// Package ontology owns the gr: vocabulary (http://ormynet.com/ns/msft-graphrag#)
// and the mapping from the normalised GraphRAG model to triples.
//
// The vocabulary itself, with labels, comments, domains, ranges and SHACL
// shapes, is gr.ttl, embedded as Turtle. The mapping does no I/O: it pushes
// triples into an rdf.Writer, which the loader package serialises or uploads.
//
//	m := ontology.Mapper{Base: "http://example.org/christmas-carol/"}
//	stats, err := m.Map(ctx, ds, enc) // ds from graphrag.Open, enc from loader
package ontology
