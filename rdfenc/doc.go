// Package rdfenc writes triples as N-Triples and Turtle, streaming, and
// refuses what would not parse: every term is checked (IRIs, blank node
// labels, language tags, lexical forms of the XSD datatypes) before a byte
// of its triple is written. kgrag load --turtle and --ntriples write with
// it, and package loader sends store uploads in N-Triples through it.
package rdfenc
