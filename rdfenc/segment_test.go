package rdfenc_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/rdf"
	"github.com/kgrag/kgrag/rdfenc"
)

// segmented is one way of encoding: ts cut into segments of size (the last
// one shorter), each encoded into its own segment and written in order.
type segmented struct {
	name   string
	encode func(ts []rdf.Triple, size int) ([]byte, []error)
}

// serialEncode writes ts one by one, the reference the segments must
// reproduce byte for byte.
func serialEncode(turtle bool, ts []rdf.Triple) ([]byte, []error) {
	var buf bytes.Buffer
	var errs []error
	if turtle {
		enc := rdfenc.NewTurtle(&buf, segPrefixes)
		for _, t := range ts {
			errs = append(errs, enc.WriteTriple(t))
		}
		errs = append(errs, enc.Close())
	} else {
		enc := rdfenc.NewNTriples(&buf)
		for _, t := range ts {
			errs = append(errs, enc.WriteTriple(t))
		}
		errs = append(errs, enc.Flush())
	}
	return buf.Bytes(), errs
}

var segPrefixes = []rdfenc.Prefix{{Name: "ex", IRI: "http://ex.test/"}, {Name: "rdfs", IRI: rdf.RDFSNS}}

func segmentEncode(turtle bool, ts []rdf.Triple, size int) ([]byte, []error) {
	var buf bytes.Buffer
	var errs []error
	if turtle {
		enc := rdfenc.NewTurtle(&buf, segPrefixes)
		seg := enc.NewSegment()
		for i := 0; i < len(ts); i += size {
			seg.Reset() // segments are reused
			for _, t := range ts[i:min(i+size, len(ts))] {
				errs = append(errs, seg.WriteTriple(t))
			}
			if err := enc.WriteSegment(seg); err != nil {
				errs = append(errs, err)
			}
		}
		errs = append(errs, enc.Close())
	} else {
		enc := rdfenc.NewNTriples(&buf)
		seg := enc.NewSegment()
		for i := 0; i < len(ts); i += size {
			seg.Reset()
			for _, t := range ts[i:min(i+size, len(ts))] {
				errs = append(errs, seg.WriteTriple(t))
			}
			if err := enc.WriteSegment(seg); err != nil {
				errs = append(errs, err)
			}
		}
		errs = append(errs, enc.Flush())
	}
	return buf.Bytes(), errs
}

// checkSegments encodes ts serially and cut into segments of every size
// from 1 to len(ts), and fails unless the bytes and the errors of each
// triple are the same.
func checkSegments(t *testing.T, ts []rdf.Triple) {
	t.Helper()
	for _, turtle := range []bool{true, false} {
		want, wantErrs := serialEncode(turtle, ts)
		for size := 1; size <= max(len(ts), 1); size++ {
			got, errs := segmentEncode(turtle, ts, size)
			if !bytes.Equal(got, want) {
				t.Fatalf("turtle=%v, segments of %d: output differs from the serial encoder's\n got: %q\nwant: %q", turtle, size, got, want)
			}
			if len(errs) != len(wantErrs) {
				t.Fatalf("turtle=%v, segments of %d: %d results; want %d", turtle, size, len(errs), len(wantErrs))
			}
			for i := range errs {
				if (errs[i] == nil) != (wantErrs[i] == nil) || errs[i] != nil && errs[i].Error() != wantErrs[i].Error() {
					t.Errorf("turtle=%v, segments of %d: triple %d: error %v; want %v", turtle, size, i, errs[i], wantErrs[i])
				}
			}
		}
	}
}

func TestSegmentsMatchSerial(t *testing.T) {
	s1, s2 := rdf.IRI("http://ex.test/s1"), rdf.IRI("http://ex.test/s2")
	p, q := rdf.IRI("http://ex.test/p"), rdf.IRI("http://other.test/q")
	long := strings.Repeat("x", 70<<10) // over the encoders' buffer
	tests := []struct {
		name string
		ts   []rdf.Triple
	}{
		{"none", nil},
		{"one", []rdf.Triple{{S: s1, P: p, O: rdf.String("a")}}},
		{"same subject and predicate across a seam", []rdf.Triple{
			{S: s1, P: p, O: rdf.String("a")}, {S: s1, P: p, O: rdf.String("b")}, {S: s1, P: p, O: rdf.Integer(3)}}},
		{"same subject across a seam", []rdf.Triple{
			{S: s1, P: rdf.IRI(rdf.RDFType), O: rdf.IRI("http://ex.test/C")}, {S: s1, P: q, O: rdf.String("b")}, {S: s1, P: p, O: rdf.String("c")}}},
		{"new subjects", []rdf.Triple{
			{S: s1, P: p, O: rdf.String("a")}, {S: s2, P: p, O: s1}, {S: s1, P: p, O: s2}, {S: rdf.Blank("b0"), P: q, O: rdf.Blank("b1")}}},
		{"invalid triples inside and at the ends", []rdf.Triple{
			{S: rdf.IRI("rel"), P: p, O: rdf.String("a")}, {S: s1, P: p, O: rdf.String("a")},
			{S: s1, P: p, O: rdf.LangString("x", "not a tag")}, {S: s1, P: p, O: rdf.String("b")},
			{S: s1, P: q, O: rdf.Typed("1.5", rdf.XSDInteger)}, {S: s2, P: p, O: rdf.String("c")},
			{S: s2, P: rdf.String("lit"), O: rdf.String("d")}}},
		{"over the buffer", []rdf.Triple{
			{S: s1, P: p, O: rdf.String(long)}, {S: s1, P: p, O: rdf.String(long)}, {S: s1, P: q, O: rdf.String(long)},
			{S: s2, P: q, O: rdf.String("short")}, {S: s2, P: q, O: rdf.String(long)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkSegments(t, tt.ts) })
	}
}
