// Package driftsearch answers a question as Microsoft GraphRAG's DRIFT
// search does (graphrag/query/structured_search/drift_search: Dynamic
// Reasoning and Inference with Flexible Traversal): it starts wide, from
// the community reports, and goes deep with local searches.
//
//  1. Expand: the model writes a hypothetical answer to the question in the
//     shape of a community report (HyDE); its embedding finds the
//     KFollowUps reports nearest it in the reports' vector index (kgrag
//     embed --tables community_reports).
//  2. Primer: those reports, split into PrimerFolds folds, one call each,
//     give an intermediate answer, a score and follow-up questions.
//  3. Follow-ups, Depth rounds: each round answers up to KFollowUps open
//     follow-up questions with local search (their own nearest entities,
//     retrieval.Builder's context under DRIFT's budget shares), each
//     answer bringing follow-ups of its own.
//  4. Reduce: one call writes the answer from every step's answer.
//
// A Searcher reads the graph from a retrieval.Source, in memory or in a
// store, so DRIFT runs on either. Search documents where kgrag departs
// from GraphRAG: where GraphRAG draws at random (the report the expansion
// imitates, the order of open follow-ups) kgrag is deterministic, and a
// reply that is not the JSON asked for is read as far as it goes instead
// of being dropped.
package driftsearch
