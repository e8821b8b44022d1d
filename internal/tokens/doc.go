// Package tokens counts tokens as tiktoken does (cl100k_base, GraphRAG's
// default before 3.x, and o200k_base), offline, from the BPE ranks
// embedded by tiktoken-go-loader. Everything in kgrag that fills a token
// budget counts with an Encoder: retrieval's contexts, global search's
// batches and prompts.
//
// The pre-tokenisers and the BPE merge are kgrag's own, checked against
// tiktoken-go on every text of the GraphRAG samples and by fuzzing.
package tokens
