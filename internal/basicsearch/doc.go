// Package basicsearch answers a question as Microsoft GraphRAG's basic
// search does (graphrag/query/structured_search/basic_search): plain
// vector search over the text units, no graph. The question is embedded,
// the nearest text units are found in the text units' vector index
// (kgrag embed --tables text_units), their text is the context
// (retrieval.BasicBuilder) and one call answers from it.
//
// It is the baseline the graph's modes are measured against, and the mode
// for questions whose answer sits in one passage.
package basicsearch
