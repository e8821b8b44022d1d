package rdfenc_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/rdf"
	"github.com/kgrag/kgrag/rdfenc"
)

var testPrefixes = []rdfenc.Prefix{
	{Name: "ex", IRI: ex},
	{Name: "xsd", IRI: rdf.XSDNS},
	{Name: "", IRI: ex + "id/"},
	{Name: "exv", IRI: ex + "vocab#"},
}

const testHeader = "@prefix ex: <http://example.org/> .\n" +
	"@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n" +
	"@prefix : <http://example.org/id/> .\n" +
	"@prefix exv: <http://example.org/vocab#> .\n\n"

func writeTTL(t *testing.T, prefixes []rdfenc.Prefix, ts ...rdf.Triple) (string, error) {
	t.Helper()
	var buf bytes.Buffer
	enc := rdfenc.NewTurtle(&buf, prefixes)
	for _, tr := range ts {
		if err := enc.WriteTriple(tr); err != nil {
			return buf.String(), err
		}
	}
	if err := enc.Close(); err != nil {
		return buf.String(), err
	}
	return buf.String(), nil
}

func TestTurtleEncoderObjects(t *testing.T) {
	s, p := rdf.IRI(ex+"s"), rdf.IRI(ex+"p")
	tests := []struct {
		name string
		o    rdf.Term
		want string
	}{
		{"prefixed", rdf.IRI(ex + "o"), "ex:o"},
		{"longest namespace wins", rdf.IRI(ex + "id/x"), ":x"},
		{"hash namespace", rdf.IRI(ex + "vocab#Thing"), "exv:Thing"},
		{"empty local", rdf.IRI(ex), "ex:"},
		{"digit first", rdf.IRI(ex + "42"), "ex:42"},
		{"colon and percent", rdf.IRI(ex + "a:b%20c"), "ex:a:b%20c"},
		{"inner dot", rdf.IRI(ex + "a.b"), "ex:a.b"},
		{"unicode local", rdf.IRI(ex + "Zürich_東京"), "ex:Zürich_東京"},
		{"trailing dot needs full IRI", rdf.IRI(ex + "a."), "<http://example.org/a.>"},
		{"slash needs full IRI", rdf.IRI(ex + "a/b"), "<http://example.org/a/b>"},
		{"dash first needs full IRI", rdf.IRI(ex + "-a"), "<http://example.org/-a>"},
		{"apostrophe needs full IRI", rdf.IRI(ex + "O'Neil"), "<http://example.org/O'Neil>"},
		{"escaped IRI after encoding", rdf.IRI(ex + "a b"), "ex:a%20b"},
		{"no namespace", rdf.IRI("urn:isbn:123"), "<urn:isbn:123>"},
		{"string", rdf.String("say \"hi\"\n"), `"say \"hi\"\n"`},
		{"triple quote", rdf.String(`"""`), `"\"\"\""`},
		{"lang", rdf.LangString("hallo", "de"), `"hallo"@de`},
		{"integer bare", rdf.Integer(-42), "-42"},
		{"integer zero bare", rdf.Integer(0), "0"},
		{"integer leading zero quoted", rdf.Typed("007", rdf.XSDInteger), `"007"^^xsd:integer`},
		{"integer plus quoted", rdf.Typed("+7", rdf.XSDInteger), `"+7"^^xsd:integer`},
		{"integer minus zero quoted", rdf.Typed("-0", rdf.XSDInteger), `"-0"^^xsd:integer`},
		{"double bare", rdf.Double(1.5), "1.5E0"},
		{"double negative exponent bare", rdf.Double(-2.5e-10), "-2.5E-10"},
		{"double without exponent quoted", rdf.Typed("1.5", rdf.XSDDouble), `"1.5"^^xsd:double`},
		{"double INF quoted", rdf.Typed("INF", rdf.XSDDouble), `"INF"^^xsd:double`},
		{"double NaN quoted", rdf.Typed("NaN", rdf.XSDDouble), `"NaN"^^xsd:double`},
		{"decimal bare", rdf.Typed("-1.50", rdf.XSDNS+"decimal"), "-1.50"},
		{"decimal without dot quoted", rdf.Typed("1", rdf.XSDNS+"decimal"), `"1"^^xsd:decimal`},
		{"decimal trailing dot quoted", rdf.Typed("1.", rdf.XSDNS+"decimal"), `"1."^^xsd:decimal`},
		{"boolean bare", rdf.Typed("true", rdf.XSDBoolean), "true"},
		{"boolean digit quoted", rdf.Typed("1", rdf.XSDBoolean), `"1"^^xsd:boolean`},
		{"float quoted", rdf.Typed("1E0", rdf.XSDNS+"float"), `"1E0"^^xsd:float`},
		{"custom datatype", rdf.Typed("v", ex+"dt"), `"v"^^ex:dt`},
		{"datatype needing full IRI", rdf.Typed("v", "urn:x:dt"), `"v"^^<urn:x:dt>`},
		{"blank", rdf.Blank("b1"), "_:b1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := writeTTL(t, testPrefixes, rdf.Triple{S: s, P: p, O: tt.o})
			if err != nil {
				t.Fatalf("WriteTriple(%q) = %v", tt.o, err)
			}
			want := testHeader + "ex:s ex:p " + tt.want + " .\n"
			if got != want {
				t.Errorf("WriteTriple(%q) wrote\n%s\nwant\n%s", tt.o, got, want)
			}
		})
	}
}

func TestTurtleEncoderGrouping(t *testing.T) {
	a, b := rdf.IRI(ex+"id/a"), rdf.IRI(ex+"id/b")
	p, q := rdf.IRI(ex+"p"), rdf.IRI(ex+"q")
	ty := rdf.IRI(rdf.RDFType)
	tests := []struct {
		name string
		ts   []rdf.Triple
		want string
	}{
		{"empty", nil, ""},
		{"one", []rdf.Triple{{S: a, P: p, O: b}}, ":a ex:p :b .\n"},
		{"same subject", []rdf.Triple{{S: a, P: ty, O: b}, {S: a, P: p, O: b}},
			":a a :b ;\n\tex:p :b .\n"},
		{"same subject and predicate", []rdf.Triple{{S: a, P: p, O: rdf.Integer(1)}, {S: a, P: p, O: rdf.Integer(2)}, {S: a, P: q, O: rdf.Integer(3)}},
			":a ex:p 1, 2 ;\n\tex:q 3 .\n"},
		{"subject changes", []rdf.Triple{{S: a, P: p, O: b}, {S: b, P: p, O: a}, {S: a, P: p, O: b}},
			":a ex:p :b .\n:b ex:p :a .\n:a ex:p :b .\n"},
		{"predicate comes back", []rdf.Triple{{S: a, P: p, O: b}, {S: a, P: q, O: b}, {S: a, P: p, O: a}},
			":a ex:p :b ;\n\tex:q :b ;\n\tex:p :a .\n"},
		{"blank and IRI with same text", []rdf.Triple{{S: rdf.Blank("x"), P: p, O: b}, {S: rdf.IRI("x:y"), P: p, O: b}},
			"_:x ex:p :b .\n<x:y> ex:p :b .\n"},
		{"rdf:type object not shortened", []rdf.Triple{{S: a, P: p, O: ty}},
			":a ex:p <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> .\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := writeTTL(t, testPrefixes, tt.ts...)
			if err != nil {
				t.Fatal(err)
			}
			if want := testHeader + tt.want; got != want {
				t.Errorf("wrote\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func TestTurtleEncoderRejectKeepsStatement(t *testing.T) {
	a, p := rdf.IRI(ex+"id/a"), rdf.IRI(ex+"p")
	var buf bytes.Buffer
	enc := rdfenc.NewTurtle(&buf, testPrefixes)
	steps := []struct {
		tr      rdf.Triple
		wantErr bool
	}{
		{rdf.Triple{S: a, P: p, O: rdf.Integer(1)}, false},
		{rdf.Triple{S: a, P: p, O: rdf.LangString("x", "not a tag")}, true},
		{rdf.Triple{S: rdf.IRI("rel"), P: p, O: rdf.Integer(2)}, true},
		{rdf.Triple{S: a, P: rdf.IRI("rel"), O: rdf.Integer(2)}, true},
		{rdf.Triple{S: a, P: p, O: rdf.Integer(2)}, false},
	}
	for i, st := range steps {
		err := enc.WriteTriple(st.tr)
		if (err != nil) != st.wantErr {
			t.Fatalf("step %d: WriteTriple(%q) = %v; want error %v", i, st.tr, err, st.wantErr)
		}
		if err != nil && !errors.Is(err, rdfenc.ErrInvalidTerm) {
			t.Errorf("step %d: error %v does not wrap ErrInvalidTerm", i, err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	if want := testHeader + ":a ex:p 1, 2 .\n"; buf.String() != want {
		t.Errorf("wrote\n%s\nwant\n%s", buf.String(), want)
	}
	if enc.Count() != 2 {
		t.Errorf("Count() = %d; want 2", enc.Count())
	}
}

func TestTurtleEncoderPrefixErrors(t *testing.T) {
	tests := []struct {
		name     string
		prefixes []rdfenc.Prefix
		wantMsg  string
	}{
		{"digit first", []rdfenc.Prefix{{Name: "1x", IRI: ex}}, `prefix "1x"`},
		{"trailing dot", []rdfenc.Prefix{{Name: "a.", IRI: ex}}, `prefix "a."`},
		{"underscore first", []rdfenc.Prefix{{Name: "_a", IRI: ex}}, `prefix "_a"`},
		{"colon", []rdfenc.Prefix{{Name: "a:b", IRI: ex}}, `prefix "a:b"`},
		{"twice", []rdfenc.Prefix{{Name: "a", IRI: ex}, {Name: "a", IRI: ex + "x/"}}, "declared twice"},
		{"relative IRI", []rdfenc.Prefix{{Name: "a", IRI: "/x/"}}, `IRI "/x/" is not absolute`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			enc := rdfenc.NewTurtle(&buf, tt.prefixes)
			err := enc.WriteTriple(rdf.Triple{S: rdf.IRI(ex + "s"), P: rdf.IRI(ex + "p"), O: rdf.String("o")})
			if err == nil || !errors.Is(err, rdfenc.ErrInvalidTerm) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("WriteTriple with prefixes %q = %v; want ErrInvalidTerm and %q", tt.prefixes, err, tt.wantMsg)
			}
			if cerr := enc.Close(); cerr == nil {
				t.Errorf("Close() = nil; want the prefix error")
			}
			if buf.Len() != 0 {
				t.Errorf("wrote %q; want nothing", buf.String())
			}
		})
	}
}

func TestTurtleEncoderPrefixIRIEscaped(t *testing.T) {
	got, err := writeTTL(t, []rdfenc.Prefix{{Name: "sp", IRI: ex + "a b/"}},
		rdf.Triple{S: rdf.IRI(ex + "a b/s"), P: rdf.IRI(ex + "a%20b/p"), O: rdf.IRI(ex + "a b/")})
	if err != nil {
		t.Fatal(err)
	}
	want := "@prefix sp: <http://example.org/a%20b/> .\n\nsp:s sp:p sp: .\n"
	if got != want {
		t.Errorf("wrote\n%s\nwant\n%s", got, want)
	}
}

func TestTurtleEncoderClose(t *testing.T) {
	var buf bytes.Buffer
	enc := rdfenc.NewTurtle(&buf, nil)
	tr := rdf.Triple{S: rdf.IRI(ex + "s"), P: rdf.IRI(ex + "p"), O: rdf.String("o")}
	if err := enc.WriteTriple(tr); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 0 {
		t.Errorf("wrote %d bytes before Close; want buffering", buf.Len())
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Errorf("second Close() = %v; want nil", err)
	}
	if err := enc.WriteTriple(tr); err == nil {
		t.Errorf("WriteTriple after Close succeeded; want an error")
	}
	if want := "<http://example.org/s> <http://example.org/p> \"o\" .\n"; buf.String() != want {
		t.Errorf("wrote %q; want %q", buf.String(), want)
	}

	w := &failWriter{}
	enc = rdfenc.NewTurtle(w, nil)
	if err := enc.WriteTriple(tr); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Close() on a failing writer = %v; want the writer's error", err)
	}
}

func TestTurtleEncoderDeterministicAndLarge(t *testing.T) {
	ts := benchTriples(300)
	first, err := writeTTL(t, testPrefixes, ts...)
	if err != nil {
		t.Fatal(err)
	}
	second, err := writeTTL(t, testPrefixes, ts...)
	if err != nil {
		t.Fatal(err)
	}
	if first != second {
		t.Errorf("two runs over the same triples differ")
	}
	if len(first) < 128<<10 {
		t.Fatalf("output is %d bytes; want several buffers", len(first))
	}
	if n := strings.Count(first, " ;\n\t"); n != 300*8 {
		t.Errorf("output has %d \";\" continuations; want %d (ten triples, nine predicates per subject, one repeated)", n, 300*8)
	}
}
