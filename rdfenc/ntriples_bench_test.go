package rdfenc_test

import (
	"io"
	"testing"

	"github.com/kgrag/kgrag/rdf"
	"github.com/kgrag/kgrag/rdfenc"
)

// countingWriter counts bytes and drops them.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

type benchEncoder interface {
	rdf.Writer
	Count() int64
}

// runEncoderBench measures one triple per op; SetBytes makes the MB/s
// figure the encoder's output rate.
func runEncoderBench(b *testing.B, newEnc func(io.Writer) (benchEncoder, func() error)) {
	ts := benchTriples(2000)
	var cw countingWriter
	enc, done := newEnc(&cw)
	for _, t := range ts {
		if err := enc.WriteTriple(t); err != nil {
			b.Fatal(err)
		}
	}
	if err := done(); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(cw.n / int64(len(ts)))
	enc, done = newEnc(io.Discard)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := enc.WriteTriple(ts[i%len(ts)]); err != nil {
			b.Fatal(err)
		}
	}
	if err := done(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "triples/s")
}

func BenchmarkNTriplesEncoder(b *testing.B) {
	runEncoderBench(b, func(w io.Writer) (benchEncoder, func() error) {
		e := rdfenc.NewNTriples(w)
		return e, e.Flush
	})
}

func BenchmarkTurtleEncoder(b *testing.B) {
	runEncoderBench(b, func(w io.Writer) (benchEncoder, func() error) {
		e := rdfenc.NewTurtle(w, []rdfenc.Prefix{
			{Name: "gr", IRI: benchVoc},
			{Name: "rdfs", IRI: rdf.RDFSNS},
			{Name: "xsd", IRI: rdf.XSDNS},
			{Name: "e", IRI: benchNS + "entity/"},
			{Name: "c", IRI: benchNS + "community/"},
			{Name: "t", IRI: benchNS + "text-unit/"},
		})
		return e, e.Close
	})
}
