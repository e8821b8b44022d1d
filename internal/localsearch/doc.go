// Package localsearch answers a question from the entities nearest it, as
// Microsoft GraphRAG's local search does
// (graphrag/query/structured_search/local_search), and with the RDF
// article's retrieval: the question (with the earlier user turns of a
// conversation) is embedded, the vector index gives the nearest entities,
// retrieval builds the context of the mode from a retrieval.Source, and a
// chat model answers from it, streamed.
//
// A Searcher is built once per graph and index and is safe for concurrent
// use, so that kgrag ask (one question per process) and kgrag serve (many
// questions on one loaded graph) run the same code, through the engines of
// internal/engine.
package localsearch
