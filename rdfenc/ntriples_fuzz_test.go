package rdfenc_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	krdf "github.com/knakk/rdf"

	"github.com/kgrag/kgrag/rdf"
	"github.com/kgrag/kgrag/rdfenc"
)

// This file round-trips fuzzed terms through both encoders. The expected
// output of each term is computed here independently of the encoders:
// wantIRI, blankOK, langOK and the XSD regexps are reference versions of
// the rules documented on NTriples.

const fuzzBase = "http://example.org/"

// fuzzInput is one fuzz case: a subject id (used in IRIs and as a blank
// node label), a literal value, a language tag and two numbers.
type fuzzInput struct {
	ID, Value, Lang string
	N               int64
	X               float64
}

// fuzzSeeds returns the seed corpus shared by both fuzz targets and by
// TestExternalParsers.
func fuzzSeeds() []fuzzInput {
	var c0 strings.Builder
	for c := 0; c < 0x20; c++ {
		c0.WriteByte(byte(c))
	}
	long := strings.Repeat("long \"value\" with \\ and é ", 4000)
	in := []fuzzInput{
		{"e1", "plain", "en", 42, 1.5},
		{"quote\"d", `say "hi"`, "en-US", -1, -0.0},
		{"back\\slash", `C:\dir\file \\ \"`, "de-CH-1901", 0, 0},
		{"triple", `"""x""" and ""`, "zh-Hans-CN", math.MaxInt64, math.MaxFloat64},
		{"nl", "line1\nline2\r\nline3\rend", "x-private", math.MinInt64, math.SmallestNonzeroFloat64},
		{"tab\t", "a\tb\vc\fd\be", "i-klingon", 7, math.Inf(1)},
		{"c0", c0.String(), "en-a-bbb", 8, math.Inf(-1)},
		{"del\x7f", "del \x7f end", "sgn-BE-FR", 9, math.NaN()},
		{"nul\x00", "nul \x00 byte", "EN-gb", 10, 1e21},
		{"中文", "中文字符 日本語 한국어", "ja", 11, 1e-7},
		{"😀", "emoji 😀👍🏽 flags 🇳🇱", "ko-KR", 12, 123456789.125},
		{"e\u0301", "combining e\u0301 a\u0308 \u0301start", "fr", 13, 3},
		{"fffe\ufffe", "nonchar \ufffe \uffff \U0001fffe", "en", 14, -2},
		{"sur\xed\xa0\x80", "lone surrogate \xed\xa0\x80 and \xed\xbf\xbf", "en", 15, 0.1},
		{"bad\xff", "invalid \xff\xfe \xc3 \xe2\x82", "en", 16, 0.2},
		{"a b<c>d{e}f|g^h`i\\j%k", "iri-unsafe", "en", 17, 0.3},
		{"%41%zz%", "percent", "en", 18, 0.4},
		{"#frag#twice", "hash", "en", 19, 0.5},
		{"[v6]", "brackets", "en", 20, 0.6},
		{"\ue000priv\U000f0000", "private use \ue000", "en", 21, 0.7},
		{"sp\u00a0\u2028\u3000", "unicode spaces \u00a0\u2028\u2029\u3000", "en", 22, 0.8},
		{"dep\u0149\u206a", "deprecated \u0149", "en", 23, 0.9},
		{"c1\u0085\u009f", "C1 controls \u0080\u0085\u009f", "en", 24, 1},
		{"bom\ufeff", "\ufeffbom", "en", 25, 1},
		{"dot.", "ends with dot.", "en", 26, 1},
		{"-dash", "-", "en", 27, 1},
		{"0digit", "0", "", 28, 1},
		{"a:b", "+5", "", 29, 1},
		{"", "", "", 0, 0},
		{"x", "-0", "en-", 0, 0},
		{"x", "007", "-en", 0, 0},
		{"x", "1.5E3", "en--us", 0, 0},
		{"x", "12", "abcdefghi", 0, 0},
		{"x", " 12", "en-a", 0, 0},
		{"x", "NaN", "en-a-bb-a-cc", 0, 0},
		{"x", "INF", "de-1901-1901", 0, 0},
		{"x", "+INF", "a", 0, 0},
		{"x", ".5e-3", "en_US", 0, 0},
		{"x", "5.", "en-US-US", 0, 0},
		{"x", "e5", "qaa-Qaaa-QM-x-southern", 0, 0},
		{"long", long, "en", 1 << 40, 1e300},
		{strings.Repeat("id/", 500), strings.Repeat("\\\"\n", 1000), "en", 0, 0},
	}
	return in
}

// --- reference rules ------------------------------------------------

// wantIRI is the IRI the encoders must write for s (an absolute IRI whose
// scheme and authority need no escaping).
func wantIRI(s string) string {
	const plain = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:@/?"
	var sb strings.Builder
	pct := func(b byte) { fmt.Fprintf(&sb, "%%%02X", b) }
	hash := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			pct(s[i])
		case r < 0x80 && strings.ContainsRune(plain, r):
			sb.WriteRune(r)
		case r == '#' && !hash:
			hash = true
			sb.WriteRune(r)
		case r == '%' && len(s) > i+2 && isHexDigit(s[i+1]) && isHexDigit(s[i+2]):
			sb.WriteString(s[i : i+3])
			size = 3
		case r >= 0x80 && ucschar(r) && !unicode.Is(unicode.White_Space, r) && !unicode.Is(unicode.Deprecated, r):
			sb.WriteRune(r)
		default:
			for j := 0; j < size; j++ {
				pct(s[i+j])
			}
		}
		i += size
	}
	return sb.String()
}

func isHexDigit(c byte) bool { return strings.IndexByte("0123456789abcdefABCDEF", c) >= 0 }

// ucschar is RFC 3987's ucschar.
func ucschar(r rune) bool {
	if r >= 0xA0 && r <= 0xD7FF || r >= 0xF900 && r <= 0xFDCF || r >= 0xFDF0 && r <= 0xFFEF {
		return true
	}
	if r >= 0xE1000 && r <= 0xEFFFD {
		return true
	}
	return r >= 0x10000 && r < 0xE0000 && r&0xFFFF <= 0xFFFD
}

var (
	pnCharsBase = `A-Za-z\x{00C0}-\x{00D6}\x{00D8}-\x{00F6}\x{00F8}-\x{02FF}\x{0370}-\x{037D}\x{037F}-\x{1FFF}\x{200C}-\x{200D}\x{2070}-\x{218F}\x{2C00}-\x{2FEF}\x{3001}-\x{D7FF}\x{F900}-\x{FDCF}\x{FDF0}-\x{FFFD}\x{10000}-\x{EFFFF}`
	pnCharsU    = pnCharsBase + `_`
	pnChars     = pnCharsU + `\-0-9\x{00B7}\x{0300}-\x{036F}\x{203F}-\x{2040}`
	blankRE     = regexp.MustCompile(`^[` + pnCharsU + `0-9](?:[` + pnChars + `.]*[` + pnChars + `])?$`)
	// RFC 5646 section 2.1, well-formed tags (grandfathered ones listed).
	langRE    = regexp.MustCompile(`(?i)^(?:(?:[a-z]{2,3}(?:-[a-z]{3}){0,3}|[a-z]{4,8})(?:-[a-z]{4})?(?:-(?:[a-z]{2}|[0-9]{3}))?(?:-(?:[a-z0-9]{5,8}|[0-9][a-z0-9]{3}))*(?:-[a-wyz0-9](?:-[a-z0-9]{2,8})+)*(?:-x(?:-[a-z0-9]{1,8})+)?|x(?:-[a-z0-9]{1,8})+|en-GB-oed|i-(?:ami|bnn|default|enochian|hak|klingon|lux|mingo|navajo|pwn|tao|tay|tsu)|sgn-(?:BE-FR|BE-NL|CH-DE)|art-lojban|cel-gaulish|no-bok|no-nyn|zh-(?:guoyu|hakka|min|min-nan|xiang))$`)
	integerRE = regexp.MustCompile(`^[+-]?[0-9]+$`)
	doubleRE  = regexp.MustCompile(`^(?:[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?INF|NaN)$`)
)

func blankOK(label string) bool { return utf8.ValidString(label) && blankRE.MatchString(label) }

// langOK reports whether tag is well-formed and repeats no variant or
// extension singleton (both parsers reject repeats).
func langOK(tag string) bool {
	if !langRE.MatchString(tag) {
		return false
	}
	seen := map[string]bool{}
	for _, sub := range strings.Split(strings.ToLower(tag), "-") {
		if sub == "x" {
			break
		}
		if len(sub) == 1 || len(sub) >= 5 || len(sub) == 4 && sub[0] >= '0' && sub[0] <= '9' {
			if seen[sub] {
				return false
			}
			seen[sub] = true
		}
	}
	return true
}

// wantLiteral is the lexical form written for v.
func wantLiteral(v string) string { return string([]rune(v)) }

// --- building the triples ---------------------------------------------

// fuzzCase is one triple the encoders are given, with the triple they must
// write, or wantErr when they must reject it.
type fuzzCase struct {
	in      rdf.Triple
	want    rdf.Triple
	wantErr bool
}

func iriCase(s string) rdf.Term { return rdf.IRI(wantIRI(s)) }

func litWant(t rdf.Term) rdf.Term {
	t.Value = wantLiteral(t.Value)
	if t.Datatype != "" {
		t.Datatype = wantIRI(t.Datatype)
	}
	return t
}

// fuzzCases expands one input into the triples to write.
func fuzzCases(in fuzzInput) []fuzzCase {
	s := fuzzBase + "id/" + in.ID
	subj, want := rdf.IRI(s), iriCase(s)
	p := func(local string) rdf.Term { return rdf.IRI(fuzzBase + "p/" + local) }
	lit := func(o rdf.Term, ok bool) fuzzCase {
		return fuzzCase{in: rdf.Triple{S: subj, P: p("value"), O: o}, want: rdf.Triple{S: want, P: p("value"), O: litWant(o)}, wantErr: !ok}
	}
	cs := []fuzzCase{
		{in: rdf.Triple{S: subj, P: rdf.IRI(rdf.RDFType), O: rdf.IRI(fuzzBase + "class/" + in.Value)},
			want: rdf.Triple{S: want, P: rdf.IRI(rdf.RDFType), O: iriCase(fuzzBase + "class/" + in.Value)}},
		lit(rdf.String(in.Value), true),
		lit(rdf.String(in.Value), true),                         // same subject and predicate: "," in Turtle
		lit(rdf.LangString(in.Value, in.Lang), langOK(in.Lang)), // "" too is an error
		lit(rdf.Typed(in.Value, rdf.XSDInteger), integerRE.MatchString(in.Value)),
		lit(rdf.Typed(in.Value, rdf.XSDDouble), doubleRE.MatchString(in.Value)),
		lit(rdf.Typed(in.Value, fuzzBase+"dt/"+in.ID), true),
		lit(rdf.Integer(in.N), true),
		lit(rdf.Double(in.X), true),
		{in: rdf.Triple{S: rdf.IRI(fuzzBase + "k/" + in.ID), P: p("id#" + in.ID), O: subj},
			want: rdf.Triple{S: iriCase(fuzzBase + "k/" + in.ID), P: iriCase(fuzzBase + "p/id#" + in.ID), O: want}},
		{in: rdf.Triple{S: rdf.Blank(in.ID), P: p("blank"), O: rdf.Blank(in.ID)},
			want: rdf.Triple{S: rdf.Blank(in.ID), P: p("blank"), O: rdf.Blank(in.ID)}, wantErr: !blankOK(in.ID)},
	}
	return cs
}

// fuzzPrefixes are the Turtle prefixes used in the round trips: IDs that
// are valid local names come out as prefixed names.
var fuzzPrefixes = []rdfenc.Prefix{
	{Name: "", IRI: fuzzBase + "id/"},
	{Name: "p", IRI: fuzzBase + "p/"},
	{Name: "cls", IRI: fuzzBase + "class/"},
	{Name: "xsd", IRI: rdf.XSDNS},
	{Name: "rdf", IRI: rdf.RDFNS},
}

// encodeCases writes the cases with enc, checks which ones fail and
// returns the triples that must come back.
func encodeCases(t testing.TB, enc rdf.Writer, cs []fuzzCase) []rdf.Triple {
	t.Helper()
	var want []rdf.Triple
	for _, c := range cs {
		err := enc.WriteTriple(c.in)
		switch {
		case c.wantErr && err == nil:
			t.Errorf("WriteTriple(%q) succeeded; want an error", c.in)
		case c.wantErr && !errors.Is(err, rdfenc.ErrInvalidTerm):
			t.Errorf("WriteTriple(%q) = %v; want an error wrapping ErrInvalidTerm", c.in, err)
		case !c.wantErr && err != nil:
			t.Errorf("WriteTriple(%q) = %v; want success", c.in, err)
		case !c.wantErr:
			want = append(want, c.want)
		}
	}
	return want
}

// normalise gives a literal term its explicit datatype, as parsers report
// it, so that written and parsed triples compare equal.
func normalise(t rdf.Term) rdf.Term {
	if t.Kind == rdf.KindLiteral && t.Datatype == "" {
		t.Datatype = rdf.XSDString
	}
	return t
}

func compareTriples(t testing.TB, what string, got, want []rdf.Triple) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: parsed %d triples; want %d", what, len(got), len(want))
	}
	for i := 0; i < len(got) && i < len(want); i++ {
		g, w := got[i], want[i]
		w.S, w.P, w.O = normalise(w.S), normalise(w.P), normalise(w.O)
		g.S, g.P, g.O = normalise(g.S), normalise(g.P), normalise(g.O)
		if g != w {
			t.Errorf("%s: triple %d = %q; want %q", what, i, g, w)
		}
	}
}

// --- decoders ---------------------------------------------------------

// fromKnakk converts a knakk/rdf term.
func fromKnakk(t krdf.Term) rdf.Term {
	switch v := t.(type) {
	case krdf.IRI:
		return rdf.IRI(v.String())
	case krdf.Blank:
		return rdf.Blank(v.String())
	case krdf.Literal:
		if v.Lang() != "" {
			return rdf.LangString(v.String(), v.Lang())
		}
		return rdf.Typed(v.String(), v.DataType.String())
	}
	return rdf.Term{}
}

// decodeKnakk parses Turtle or N-Triples with knakk/rdf.
func decodeKnakk(data []byte, f krdf.Format) ([]rdf.Triple, error) {
	d := krdf.NewTripleDecoder(bytes.NewReader(data), f)
	var out []rdf.Triple
	for {
		tr, err := d.Decode()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, rdf.Triple{S: fromKnakk(tr.Subj), P: fromKnakk(tr.Pred), O: fromKnakk(tr.Obj)})
	}
}

// --- fuzz targets -----------------------------------------------------

// watchdog crashes the fuzz worker when one input takes too long, so
// that the fuzzer saves it (a hang is otherwise never reported).
func watchdog(in fuzzInput) *time.Timer {
	return time.AfterFunc(20*time.Second, func() {
		panic(fmt.Sprintf("round trip of %#v hangs", in))
	})
}

func addSeeds(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s.ID, s.Value, s.Lang, s.N, s.X)
	}
}

func FuzzNTriplesRoundTrip(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, id, value, lang string, n int64, x float64) {
		in := fuzzInput{id, value, lang, n, x}
		defer watchdog(in).Stop()
		var buf bytes.Buffer
		enc := rdfenc.NewNTriples(&buf)
		want := encodeCases(t, enc, fuzzCases(in))
		if err := enc.Flush(); err != nil {
			t.Fatal(err)
		}
		if enc.Count() != int64(len(want)) {
			t.Errorf("Count() = %d; want %d", enc.Count(), len(want))
		}
		got, err := parseNTriplesStrict(buf.Bytes())
		if err != nil {
			t.Fatalf("strict N-Triples parse: %v\n%s", err, buf.Bytes())
		}
		compareTriples(t, "strict parser", got, want)
		got, err = decodeKnakk(buf.Bytes(), krdf.NTriples)
		if err != nil {
			t.Fatalf("knakk N-Triples parse: %v\n%s", err, buf.Bytes())
		}
		compareTriples(t, "knakk/rdf", got, want)
		got, err = readNTriples(buf.Bytes())
		if err != nil {
			t.Fatalf("NTriplesReader: %v\n%s", err, buf.Bytes())
		}
		compareTriples(t, "rdfenc.NTriplesReader", got, want)
		checkSegments(t, caseTriples(fuzzCases(in)))
	})
}

func FuzzTurtleRoundTrip(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, id, value, lang string, n int64, x float64) {
		in := fuzzInput{id, value, lang, n, x}
		defer watchdog(in).Stop()
		var buf bytes.Buffer
		enc := rdfenc.NewTurtle(&buf, fuzzPrefixes)
		want := encodeCases(t, enc, fuzzCases(in))
		if err := enc.Close(); err != nil {
			t.Fatal(err)
		}
		got, err := decodeKnakk(buf.Bytes(), krdf.Turtle)
		if err != nil {
			t.Fatalf("knakk Turtle parse: %v\n%s", err, buf.Bytes())
		}
		compareTriples(t, "knakk/rdf", got, want)
		// Segments, as kgrag load encodes on several cores, give the
		// same bytes (checkSegments covers both encoders).
		checkSegments(t, caseTriples(fuzzCases(in)))
	})
}

// caseTriples returns the triples the cases write, valid or not.
func caseTriples(cs []fuzzCase) []rdf.Triple {
	ts := make([]rdf.Triple, len(cs))
	for i, c := range cs {
		ts[i] = c.in
	}
	return ts
}
