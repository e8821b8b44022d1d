package rdfenc_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/rdf"
	"github.com/kgrag/kgrag/rdfenc"
)

const ex = "http://example.org/"

func writeNT(t *testing.T, ts ...rdf.Triple) (string, error) {
	t.Helper()
	var buf bytes.Buffer
	enc := rdfenc.NewNTriples(&buf)
	for _, tr := range ts {
		if err := enc.WriteTriple(tr); err != nil {
			if ferr := enc.Flush(); ferr != nil {
				t.Fatal(ferr)
			}
			return buf.String(), err
		}
	}
	if err := enc.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.String(), nil
}

func TestNTriplesEncoderTerms(t *testing.T) {
	s, p := rdf.IRI(ex+"s"), rdf.IRI(ex+"p")
	tests := []struct {
		name string
		o    rdf.Term
		want string // the object as written
	}{
		{"iri", rdf.IRI(ex + "o"), "<http://example.org/o>"},
		{"iri space", rdf.IRI(ex + "a b"), "<http://example.org/a%20b>"},
		{"iri forbidden", rdf.IRI(ex + "<>\"{}|^`\\"), "<http://example.org/%3C%3E%22%7B%7D%7C%5E%60%5C>"},
		{"iri controls", rdf.IRI(ex + "\x00\x1f\x7f"), "<http://example.org/%00%1F%7F>"},
		{"iri kept escapes", rdf.IRI(ex + "a%2Fb%c3%a9"), "<http://example.org/a%2Fb%c3%a9>"},
		{"iri lone percent", rdf.IRI(ex + "100%"), "<http://example.org/100%25>"},
		{"iri bad percent", rdf.IRI(ex + "%zz%4"), "<http://example.org/%25zz%254>"},
		{"iri second hash", rdf.IRI(ex + "a#b#c"), "<http://example.org/a#b%23c>"},
		{"iri brackets in path", rdf.IRI(ex + "[x]"), "<http://example.org/%5Bx%5D>"},
		{"iri ipv6 host", rdf.IRI("http://[::1]:80/a"), "<http://[::1]:80/a>"},
		{"iri unicode kept", rdf.IRI(ex + "Zürich/東京/😀"), "<http://example.org/Zürich/東京/😀>"},
		{"iri invalid utf8", rdf.IRI(ex + "\xff\xed\xa0\x80"), "<http://example.org/%FF%ED%A0%80>"},
		{"iri non-character", rdf.IRI(ex + "\ufffe\ufffd"), "<http://example.org/%EF%BF%BE%EF%BF%BD>"},
		{"iri private use", rdf.IRI(ex + "\ue000"), "<http://example.org/%EE%80%80>"},
		{"iri unicode space", rdf.IRI(ex + "a\u3000b\u00a0"), "<http://example.org/a%E3%80%80b%C2%A0>"},
		{"iri deprecated", rdf.IRI(ex + "\u0149"), "<http://example.org/%C5%89>"},
		{"iri C1 control", rdf.IRI(ex + "\u0085"), "<http://example.org/%C2%85>"},
		{"blank", rdf.Blank("b0.x-y_z"), "_:b0.x-y_z"},
		{"blank digit first", rdf.Blank("0"), "_:0"},
		{"string", rdf.String("plain"), `"plain"`},
		{"escapes", rdf.String("q\" b\\ n\n r\r t\t"), `"q\" b\\ n\n r\r t\t"`},
		{"controls", rdf.String("\x00\x01\x08\x0b\x0c\x1f\x7f"), `"\u0000\u0001\u0008\u000B\u000C\u001F\u007F"`},
		{"triple quotes", rdf.String(`"""`), `"\"\"\""`},
		{"unicode raw", rdf.String("é 中 😀 e\u0301"), "\"é 中 😀 e\u0301\""},
		{"non-characters escaped", rdf.String("\ufffe\uffff\ufdd0\uff01"), "\"\\uFFFE\\uFFFF\\uFDD0\uff01\""},
		{"invalid utf8 replaced", rdf.String("a\xffb\xed\xa0\x80"), "\"a\ufffdb\ufffd\ufffd\ufffd\""},
		{"invalid utf8 and escapes", rdf.String("\xff\"\n\ufffe"), "\"\ufffd\\\"\\n\\uFFFE\""},
		{"lang", rdf.LangString("hi", "en-GB"), `"hi"@en-GB`},
		{"lang grandfathered", rdf.LangString("x", "i-klingon"), `"x"@i-klingon`},
		{"lang script region", rdf.LangString("x", "zh-Hans-CN"), `"x"@zh-Hans-CN`},
		{"lang private", rdf.LangString("x", "x-kgrag"), `"x"@x-kgrag`},
		{"xsd string dropped", rdf.Typed("s", rdf.XSDString), `"s"`},
		{"integer", rdf.Integer(-7), `"-7"^^<http://www.w3.org/2001/XMLSchema#integer>`},
		{"double", rdf.Double(0.5), `"5.0E-1"^^<http://www.w3.org/2001/XMLSchema#double>`},
		{"double zero", rdf.Double(0), `"0.0E0"^^<http://www.w3.org/2001/XMLSchema#double>`},
		{"custom datatype", rdf.Typed("a\"b", ex+"dt x"), `"a\"b"^^<http://example.org/dt%20x>`},
		{"other xsd unchecked", rdf.Typed("whenever", rdf.XSDDateTime), `"whenever"^^<http://www.w3.org/2001/XMLSchema#dateTime>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := writeNT(t, rdf.Triple{S: s, P: p, O: tt.o})
			if err != nil {
				t.Fatalf("WriteTriple(%q) = %v", tt.o, err)
			}
			want := "<http://example.org/s> <http://example.org/p> " + tt.want + " .\n"
			if got != want {
				t.Errorf("WriteTriple(%q) wrote %q; want %q", tt.o, got, want)
			}
		})
	}
}

func TestNTriplesEncoderErrors(t *testing.T) {
	s, p, o := rdf.IRI(ex+"s"), rdf.IRI(ex+"p"), rdf.String("o")
	tests := []struct {
		name    string
		tr      rdf.Triple
		wantMsg string // must appear in the error
	}{
		{"relative subject", rdf.Triple{S: rdf.IRI("s"), P: p, O: o}, `IRI "s" is not absolute`},
		{"empty predicate", rdf.Triple{S: s, P: rdf.IRI(""), O: o}, `predicate: IRI "" is not absolute`},
		{"bad scheme", rdf.Triple{S: s, P: p, O: rdf.IRI("1http://x")}, `object: IRI "1http://x"`},
		{"literal subject", rdf.Triple{S: o, P: p, O: o}, "subject: term kind"},
		{"blank predicate", rdf.Triple{S: s, P: rdf.Blank("b"), O: o}, "predicate: term kind"},
		{"zero object", rdf.Triple{S: s, P: p}, "object: term kind"},
		{"empty blank", rdf.Triple{S: rdf.Blank(""), P: p, O: o}, `blank node label ""`},
		{"blank ends with dot", rdf.Triple{S: s, P: p, O: rdf.Blank("b.")}, `blank node label "b."`},
		{"blank with space", rdf.Triple{S: s, P: p, O: rdf.Blank("a b")}, `blank node label "a b"`},
		{"blank starts with dash", rdf.Triple{S: s, P: p, O: rdf.Blank("-a")}, `blank node label "-a"`},
		{"blank invalid utf8", rdf.Triple{S: s, P: p, O: rdf.Blank("a\xff")}, `blank node label "a\xff"`},
		{"lang empty", rdf.Triple{S: s, P: p, O: rdf.LangString("x", "")}, "rdf:langString but no language tag"},
		{"lang underscore", rdf.Triple{S: s, P: p, O: rdf.LangString("x", "en_US")}, `language tag "en_US"`},
		{"lang one letter", rdf.Triple{S: s, P: p, O: rdf.LangString("x", "a")}, `language tag "a"`},
		{"lang long subtag", rdf.Triple{S: s, P: p, O: rdf.LangString("x", "en-abcdefghi")}, `language tag "en-abcdefghi"`},
		{"lang empty subtag", rdf.Triple{S: s, P: p, O: rdf.LangString("x", "en--us")}, `language tag "en--us"`},
		{"lang trailing dash", rdf.Triple{S: s, P: p, O: rdf.LangString("x", "en-")}, `language tag "en-"`},
		{"lang singleton alone", rdf.Triple{S: s, P: p, O: rdf.LangString("x", "en-a")}, `language tag "en-a"`},
		{"lang two regions", rdf.Triple{S: s, P: p, O: rdf.LangString("x", "en-US-US")}, `language tag "en-US-US"`},
		{"lang repeated singleton", rdf.Triple{S: s, P: p, O: rdf.LangString("x", "en-a-bb-a-cc")}, `language tag "en-a-bb-a-cc"`},
		{"lang repeated variant", rdf.Triple{S: s, P: p, O: rdf.LangString("x", "de-1901-1901")}, `language tag "de-1901-1901"`},
		{"lang and datatype", rdf.Triple{S: s, P: p, O: rdf.Term{Kind: rdf.KindLiteral, Value: "x", Lang: "en", Datatype: rdf.XSDInteger}}, "language tag \"en\" and datatype"},
		{"integer", rdf.Triple{S: s, P: p, O: rdf.Typed("1.0", rdf.XSDInteger)}, `"1.0" is not a valid xsd:integer`},
		{"integer space", rdf.Triple{S: s, P: p, O: rdf.Typed(" 1", rdf.XSDInteger)}, `" 1" is not a valid xsd:integer`},
		{"double", rdf.Triple{S: s, P: p, O: rdf.Typed("1e", rdf.XSDDouble)}, `"1e" is not a valid xsd:double`},
		{"double inf", rdf.Triple{S: s, P: p, O: rdf.Typed("Infinity", rdf.XSDDouble)}, `"Infinity" is not a valid xsd:double`},
		{"decimal", rdf.Triple{S: s, P: p, O: rdf.Typed("1e3", rdf.XSDNS+"decimal")}, `"1e3" is not a valid xsd:decimal`},
		{"boolean", rdf.Triple{S: s, P: p, O: rdf.Typed("yes", rdf.XSDBoolean)}, `"yes" is not a valid xsd:boolean`},
		{"relative datatype", rdf.Triple{S: s, P: p, O: rdf.Typed("x", "dt")}, `datatype: IRI "dt" is not absolute`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			good := rdf.Triple{S: s, P: p, O: o}
			got, err := writeNT(t, good, tt.tr, good)
			if err == nil {
				t.Fatalf("WriteTriple(%q) succeeded; want an error", tt.tr)
			}
			if !errors.Is(err, rdfenc.ErrInvalidTerm) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("WriteTriple(%q) = %q; want ErrInvalidTerm and %q", tt.tr, err, tt.wantMsg)
			}
			// Nothing of the rejected triple may be written.
			if want := "<http://example.org/s> <http://example.org/p> \"o\" .\n"; got != want {
				t.Errorf("output after the rejected triple = %q; want %q", got, want)
			}
		})
	}
}

func TestNTriplesEncoderValidValues(t *testing.T) {
	s, p := rdf.IRI(ex+"s"), rdf.IRI(ex+"p")
	tests := []rdf.Term{
		rdf.Typed("+007", rdf.XSDInteger), rdf.Typed("-0", rdf.XSDInteger),
		rdf.Typed(".5", rdf.XSDNS+"decimal"), rdf.Typed("5.", rdf.XSDNS+"decimal"),
		rdf.Typed("1E-3", rdf.XSDDouble), rdf.Typed("-INF", rdf.XSDDouble), rdf.Typed("NaN", rdf.XSDNS+"float"),
		rdf.Typed("1", rdf.XSDBoolean), rdf.Typed("false", rdf.XSDBoolean),
		rdf.LangString("x", "EN"), rdf.LangString("x", "sgn-BE-FR"), rdf.LangString("x", "en-a-bbb-x-a"),
		rdf.LangString("x", "ca-ES-valencia"), rdf.LangString("x", "zh-yue-HK"), rdf.LangString("x", "abcdefgh"),
	}
	for _, o := range tests {
		if _, err := writeNT(t, rdf.Triple{S: s, P: p, O: o}); err != nil {
			t.Errorf("WriteTriple(%q) = %v; want success", o, err)
		}
	}
}

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	w.n++
	return 0, errors.New("disk full")
}

func TestNTriplesEncoderWriteError(t *testing.T) {
	w := &failWriter{}
	enc := rdfenc.NewNTriples(w)
	tr := rdf.Triple{S: rdf.IRI(ex + "s"), P: rdf.IRI(ex + "p"), O: rdf.String("o")}
	if err := enc.WriteTriple(tr); err != nil {
		t.Fatalf("buffered WriteTriple = %v; want nil", err)
	}
	err := enc.Flush()
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Flush() = %v; want the writer's error", err)
	}
	if err2 := enc.WriteTriple(tr); err2 != err {
		t.Errorf("WriteTriple after a write error = %v; want %v", err2, err)
	}
	if enc.Count() != 1 {
		t.Errorf("Count() = %d; want 1", enc.Count())
	}
}

func TestNTriplesEncoderLarge(t *testing.T) {
	// More than one buffer's worth: output must equal the concatenation of
	// single-triple outputs, in order.
	ts := benchTriples(300)
	var want strings.Builder
	for _, tr := range ts {
		one, err := writeNT(t, tr)
		if err != nil {
			t.Fatal(err)
		}
		want.WriteString(one)
	}
	got, err := writeNT(t, ts...)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < 128<<10 {
		t.Fatalf("test output is only %d bytes; want several buffers", len(got))
	}
	if got != want.String() {
		t.Errorf("streamed output differs from triple-by-triple output")
	}
}
