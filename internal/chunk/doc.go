// Package chunk splits documents into text units as GraphRAG 3.3.0's
// create_base_text_units does with its default token chunker: windows of
// Options.Size tokens (tiktoken's encoding, o200k_base by default)
// overlapping by Options.Overlap, each decoded back to text, its id the
// SHA-512 of that text and its n_tokens the count of it. The same text
// and options give the same chunks and ids as GraphRAG, run after run.
//
// Documents are chunked one at a time:
//
//	enc, _ := tokens.NewEncoder(chunk.DefaultEncoding)
//	c, err := chunk.New(enc, chunk.DefaultOptions())
//	...
//	next := 0
//	for each document d {
//		units := c.Document(d)
//		next = chunk.Number(units, next) // GraphRAG's human_readable_id
//	}
package chunk
