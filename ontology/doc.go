// Package ontology owns the gr: vocabulary (http://ormynet.com/ns/msft-graphrag#)
// and the mapping from the normalised GraphRAG model to triples.
//
// The vocabulary itself, with labels, comments, domains, ranges and SHACL
// shapes, is gr.ttl, embedded as Turtle (and as gr.nt, for stores that take
// triples: see Triples). The mapping does no I/O: it pushes triples into an
// rdf.Writer, which the loader package serialises or uploads.
//
// A dataset held in memory maps in one call:
//
//	m := ontology.Mapper{Base: "http://example.org/christmas-carol/"}
//	stats, err := m.Map(ctx, ds, enc) // ds from graphrag.Open, enc from loader
//
// A large one maps table by table as graphrag.Walk reads it, so no table is
// held longer than its own mapping takes:
//
//	s, err := m.Stream(enc)
//	_, err = graphrag.Walk(ctx, dir, s.Visitor())
//	stats := s.Stats()
package ontology
