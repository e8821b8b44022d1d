// Package tokens counts and splits text into tokens as tiktoken does
// (cl100k_base, GraphRAG's default before 3.x, and o200k_base, its 3.x
// default), offline, from the BPE ranks embedded by tiktoken-go-loader.
// Everything in kgrag that fills a token budget counts with an Encoder:
// retrieval's contexts, global search's batches and prompts. The indexer's
// chunker takes the tokens themselves, with where each is in the text,
// and decodes windows of them as GraphRAG does:
//
//	enc, err := tokens.NewEncoder(tokens.EncodingO200K)
//	...
//	n := enc.Count(text)         // len(tiktoken encode_ordinary(text))
//	toks := enc.Tokens(text)     // ids and byte spans, n of them
//	s, err := enc.Decode(ids)    // tiktoken decode, errors="replace"
//
// The pre-tokenisers and the BPE merge are kgrag's own, checked against
// tiktoken-go on every text of the GraphRAG samples and by fuzzing, and
// against GraphRAG's own tokenizer (Python tiktoken) on the Christmas
// Carol.
package tokens
