// Package walksearch answers a question by a walk over the graph, on
// HippoRAG's design (Gutiérrez et al., NeurIPS 2024, and HippoRAG 2):
// the entities the question names and the text units nearest it seed a
// personalized PageRank over entities and text units, and the text units
// the walk ranks highest are the context. It is the mode for questions
// whose answer joins two passages through an entity both name, which
// plain vector search finds one half of.
//
// The graph is read whole once (retrieval.WalkLoader: a snapshot or a
// store) and held in memory with its transitions and two BM25 indexes
// (internal/lexical). No chat model is called until the answer.
package walksearch
