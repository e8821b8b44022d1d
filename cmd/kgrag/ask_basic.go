package main

import (
	"strings"

	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/internal/walksearch"
	"github.com/urfave/cli/v3"
)

// basicFlags are the flags of --mode basic.
func basicFlags(o *askOptions) []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "top-k-text-units", Category: "basic search (--mode basic)", Value: o.basic.K, Destination: &o.basic.K,
			Usage: "text units taken from the text units' vector index (kgrag embed --tables text_units)"},
		&cli.StringFlag{Name: "basic-retriever", Category: "basic search (--mode basic)", Value: retrieval.RetrieverGraphRAG, Destination: &o.basic.Retriever,
			Usage: "`HOW` text units are found: " + strings.Join(retrieval.Retrievers(), ", ") + ". graphrag is GraphRAG's (the nearest, in table order, cut where the budget ends); " +
				"vector keeps the nearest best first while they fit; bm25 ranks by Okapi BM25 over the text units' words; hybrid joins vector and bm25 by reciprocal rank fusion"},
	}
}

// walkFlags are the flags of --mode walk.
func walkFlags(o *askOptions) []cli.Flag {
	const cat = "graph walk (--mode walk)"
	return []cli.Flag{
		&cli.IntFlag{Name: "walk-text-units", Category: cat, Value: o.walk.TextUnits, Destination: &o.walk.TextUnits,
			Usage: "text units in the context at most, best first, within --max-context-tokens"},
		&cli.FloatFlag{Name: "walk-damping", Category: cat, Value: o.walk.Damping, Destination: &o.walk.Damping,
			Usage: "the chance the walk takes one more step rather than start again from the question's entities and text units (HippoRAG's 0.5)"},
	}
}

// walkOptions are the walk's options.
func (o askOptions) walkOptions(source string) walksearch.Options {
	p := o.walk
	p.MaxContextTokens, p.Encoding = o.params.MaxContextTokens, o.params.Encoding
	return walksearch.Options{Params: p, ResponseType: o.responseType, Chat: o.chatOptions(), Source: source, RerankTop: o.rerankTop}
}
