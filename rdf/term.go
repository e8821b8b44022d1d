package rdf

import (
	"math"
	"strconv"
)

// Kind says which of the three RDF term kinds a Term is.
type Kind uint8

// The term kinds. The zero Kind is not a valid term.
const (
	KindIRI Kind = iota + 1
	KindBlank
	KindLiteral
)

// Well-known vocabulary IRIs.
const (
	RDFNS  = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
	RDFSNS = "http://www.w3.org/2000/01/rdf-schema#"
	XSDNS  = "http://www.w3.org/2001/XMLSchema#"

	RDFType       = RDFNS + "type"
	RDFLangString = RDFNS + "langString"

	XSDString   = XSDNS + "string"
	XSDInteger  = XSDNS + "integer"
	XSDDouble   = XSDNS + "double"
	XSDBoolean  = XSDNS + "boolean"
	XSDDateTime = XSDNS + "dateTime"
	XSDDate     = XSDNS + "date"
)

// Term is an RDF term. Value holds the IRI, the blank node label or the
// lexical form of a literal. Datatype is set only for literals other than
// xsd:string; Lang only for language-tagged strings. The zero Term is invalid.
//
// Terms are small values: copy them freely.
type Term struct {
	Kind     Kind
	Value    string
	Datatype string
	Lang     string
}

// Triple is one RDF statement.
type Triple struct {
	S, P, O Term
}

// IRI returns an IRI term. The caller guarantees iri is an absolute IRI.
func IRI(iri string) Term { return Term{Kind: KindIRI, Value: iri} }

// Blank returns a blank node with the given label.
func Blank(label string) Term { return Term{Kind: KindBlank, Value: label} }

// String returns an xsd:string literal.
func String(s string) Term { return Term{Kind: KindLiteral, Value: s} }

// LangString returns a language-tagged string literal.
func LangString(s, lang string) Term {
	return Term{Kind: KindLiteral, Value: s, Datatype: RDFLangString, Lang: lang}
}

// Typed returns a literal with the given lexical form and datatype IRI.
// An empty datatype or xsd:string gives a plain xsd:string literal.
func Typed(lexical, datatype string) Term {
	if datatype == XSDString {
		datatype = ""
	}
	return Term{Kind: KindLiteral, Value: lexical, Datatype: datatype}
}

// Integer returns an xsd:integer literal.
func Integer(n int64) Term {
	return Term{Kind: KindLiteral, Value: strconv.FormatInt(n, 10), Datatype: XSDInteger}
}

// Double returns an xsd:double literal in its canonical-ish form ("1.5E0",
// "INF", "NaN"), which both Turtle and N-Triples read back as xsd:double.
func Double(f float64) Term {
	return Term{Kind: KindLiteral, Value: FormatDouble(f), Datatype: XSDDouble}
}

// FormatDouble formats f as an xsd:double lexical form.
func FormatDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "INF"
	case math.IsInf(f, -1):
		return "-INF"
	}
	s := strconv.FormatFloat(f, 'E', -1, 64)
	// strconv writes "1.5E+00"; XSD's canonical form is "1.5E0".
	mant, exp := s, ""
	for i := 0; i < len(s); i++ {
		if s[i] == 'E' {
			mant, exp = s[:i], s[i+1:]
			break
		}
	}
	neg := false
	if exp != "" && (exp[0] == '+' || exp[0] == '-') {
		neg = exp[0] == '-'
		exp = exp[1:]
	}
	for len(exp) > 1 && exp[0] == '0' {
		exp = exp[1:]
	}
	hasDot := false
	for i := 0; i < len(mant); i++ {
		if mant[i] == '.' {
			hasDot = true
			break
		}
	}
	if !hasDot {
		mant += ".0"
	}
	if neg {
		return mant + "E-" + exp
	}
	return mant + "E" + exp
}

// IsLiteral reports whether t is a literal.
func (t Term) IsLiteral() bool { return t.Kind == KindLiteral }

// Writer consumes triples one at a time: a serialiser, a store batcher or a
// test collector. Implementations document whether they are safe for
// concurrent use; none in kgrag are.
type Writer interface {
	WriteTriple(Triple) error
}
