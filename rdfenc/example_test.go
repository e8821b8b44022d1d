package rdfenc_test

import (
	"fmt"
	"os"

	"github.com/kgrag/kgrag/rdf"
	"github.com/kgrag/kgrag/rdfenc"
)

func exampleTriples() []rdf.Triple {
	const gr = "https://kgrag.example.org/ns#"
	acme := rdf.IRI("https://kgrag.example.org/entity/ACME_INC.")
	return []rdf.Triple{
		{S: acme, P: rdf.IRI(rdf.RDFType), O: rdf.IRI(gr + "Entity")},
		{S: acme, P: rdf.IRI(gr + "name"), O: rdf.LangString(`ACME "Inc."`, "en")},
		{S: acme, P: rdf.IRI(gr + "degree"), O: rdf.Integer(12)},
		{S: acme, P: rdf.IRI(gr + "rank"), O: rdf.Double(0.25)},
		{S: acme, P: rdf.IRI(gr + "textUnit"), O: rdf.IRI("https://kgrag.example.org/text unit/1")},
		{S: acme, P: rdf.IRI(gr + "textUnit"), O: rdf.IRI("https://kgrag.example.org/text unit/2")},
	}
}

func ExampleTurtle() {
	enc := rdfenc.NewTurtle(os.Stdout, []rdfenc.Prefix{
		{Name: "gr", IRI: "https://kgrag.example.org/ns#"},
		{Name: "e", IRI: "https://kgrag.example.org/entity/"},
	})
	for _, t := range exampleTriples() {
		if err := enc.WriteTriple(t); err != nil {
			fmt.Println(err)
			return
		}
	}
	if err := enc.Close(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// @prefix gr: <https://kgrag.example.org/ns#> .
	// @prefix e: <https://kgrag.example.org/entity/> .
	//
	// <https://kgrag.example.org/entity/ACME_INC.> a gr:Entity ;
	// 	gr:name "ACME \"Inc.\""@en ;
	// 	gr:degree 12 ;
	// 	gr:rank 2.5E-1 ;
	// 	gr:textUnit <https://kgrag.example.org/text%20unit/1>, <https://kgrag.example.org/text%20unit/2> .
}

func ExampleNTriples() {
	enc := rdfenc.NewNTriples(os.Stdout)
	for _, t := range exampleTriples()[:2] {
		if err := enc.WriteTriple(t); err != nil {
			fmt.Println(err)
			return
		}
	}
	// A bad language tag is rejected and nothing of the triple is written.
	err := enc.WriteTriple(rdf.Triple{
		S: rdf.IRI("https://kgrag.example.org/entity/x"),
		P: rdf.IRI("https://kgrag.example.org/ns#name"),
		O: rdf.LangString("x", "en_US"),
	})
	if err := enc.Flush(); err != nil {
		fmt.Println(err)
	}
	fmt.Println(err)
	// Output:
	// <https://kgrag.example.org/entity/ACME_INC.> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <https://kgrag.example.org/ns#Entity> .
	// <https://kgrag.example.org/entity/ACME_INC.> <https://kgrag.example.org/ns#name> "ACME \"Inc.\""@en .
	// rdfenc: object: invalid language tag "en_US": not well-formed BCP 47: invalid RDF term
}
