// Package globalsearch answers questions about a whole corpus the way
// Microsoft GraphRAG's global search does
// (graphrag/query/structured_search/global_search): map-reduce over the
// community reports of one level.
//
// A Searcher reads the reports from a retrieval.ReportSource (in memory or
// a SPARQL store), has retrieval.GlobalBuilder pack them into batches
// under the context budget, and asks the model, one call per batch and a
// bounded number at a time, for the key points each batch holds on the
// question, scored 0-100 and returned as JSON. Points scored 0 are
// dropped, the rest ranked and packed into the reduce context, and one
// last call writes the answer, citing reports. With dynamic community
// selection the model first rates reports 0-5 from the root communities
// down, and only the relevant ones, and the children of those, are read.
//
// Small local models write imperfect JSON: replies are repaired where that
// is safe (internal/jsonrepair) and otherwise counted and skipped, as are
// map calls that keep failing; neither stops the answer, and Result says
// how many there were. Plan tells, without calling the model, how many
// calls and tokens a question will take.
package globalsearch
