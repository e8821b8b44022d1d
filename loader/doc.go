// Package loader serialises triples (N-Triples, Turtle; streaming) and
// uploads them to SPARQL 1.1 stores, replacing a named graph atomically.
package loader
