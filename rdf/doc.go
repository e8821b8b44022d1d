// Package rdf holds the RDF 1.1 terms and triples that kgrag produces: IRIs,
// blank nodes and literals, with the XSD datatypes the gr: ontology uses.
//
// It does no I/O. The ontology package builds triples from the GraphRAG model
// and the loader package serialises them:
//
//	t := rdf.Triple{
//		S: rdf.IRI("http://example.org/kg/entity/42"),
//		P: rdf.IRI(rdf.RDFType),
//		O: rdf.IRI("http://ormynet.com/ns/msft-graphrag#Entity"),
//	}
//	lit := rdf.Integer(7) // "7"^^xsd:integer
package rdf
