// Package thoughtgraph holds graph of thoughts' knowledge graph (the
// NetworkX GraphRAG article's section 10, "RAG + graph of thoughts"): the
// small graph of nodes and edges a chat model builds from a retrieved
// context for a set of questions, read from the model's reply, and printed
// for the call that answers from it.
//
// A reply is read leniently, as small local models write it: a reasoning
// block (<think>...</think>) is dropped, the JSON is found in prose or a
// code fence and repaired by internal/jsonrepair (a reply cut at
// max_tokens keeps the nodes and edges written before the cut), names are
// trimmed and matched without regard to case, and an edge naming a node
// that was not listed adds it. A reply with no node at all is ErrEmpty:
//
//	g, fixes, err := thoughtgraph.Parse(reply)
//	if err != nil {
//		return err // no graph to answer from
//	}
//	fmt.Println(len(fixes), g.Text())
package thoughtgraph
