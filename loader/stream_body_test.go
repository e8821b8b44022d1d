package loader

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/rdf"
	"github.com/kgrag/kgrag/rdfenc"
)

// pieceRecorder keeps each piece a streamBody writes.
type pieceRecorder struct {
	all    []byte
	pieces []int // len(all) after each piece
}

func (r *pieceRecorder) Write(p []byte) (int, error) {
	r.all = append(r.all, p...)
	r.pieces = append(r.pieces, len(r.all))
	return len(p), nil
}

// TestStreamBodyPieces: whatever a store has received after any piece
// fails to parse as N-Triples (it ends inside a triple), and after end the
// body holds every triple, in order. Fuseki commits a broken-off body that
// parses, so this is what keeps a load killed between writes from leaving a
// shorter graph.
func TestStreamBodyPieces(t *testing.T) {
	tests := []struct {
		name string
		n    int
		obj  func(i int) rdf.Term
	}{
		{"ShortLiterals", 40_000, func(i int) rdf.Term { return rdf.String("v") }},
		{"IRIs", 30_000, func(i int) rdf.Term { return rdf.IRI("http://kgrag.test/o/" + strings.Repeat("x", i%50)) }},
		{"DotsAndNewlines", 20_000, func(i int) rdf.Term { return rdf.String("a .\nb .\n" + strings.Repeat(" .", i%9)) }},
		// Longer than a piece: a piece must wait for the triple's end.
		{"HugeLiterals", 6, func(i int) rdf.Term { return rdf.String(strings.Repeat("w .", 150_000)) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &pieceRecorder{}
			body := &streamBody{ctx: context.Background(), w: rec}
			enc := rdfenc.NewNTriples(body)
			want := make([]rdf.Triple, tt.n)
			for i := range tt.n {
				want[i] = rdf.Triple{S: rdf.IRI("http://kgrag.test/s"), P: rdf.IRI("http://kgrag.test/p"), O: tt.obj(i)}
				if err := enc.WriteTriple(want[i]); err != nil {
					t.Fatal(err)
				}
			}
			if err := enc.Flush(); err != nil {
				t.Fatal(err)
			}
			if len(rec.pieces) < 2 {
				t.Fatalf("%d pieces; want several", len(rec.pieces))
			}
			for _, end := range rec.pieces {
				if n, err := parse(rec.all[:end]); err == nil {
					t.Fatalf("after a piece, the %d bytes sent parse as %d whole triples", end, n)
				}
			}
			if err := body.end(); err != nil {
				t.Fatal(err)
			}
			got, err := ParseNTriples(rec.all)
			if err != nil {
				t.Fatalf("whole body: %v", err)
			}
			if len(got) != len(want) {
				t.Fatalf("whole body holds %d triples; want %d", len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("triple %d = %v; want %v", i, got[i], want[i])
				}
			}
		})
	}
}

// TestStreamBodyCanceled: a piece is not sent once ctx has ended.
func TestStreamBodyCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	rec := &pieceRecorder{}
	body := &streamBody{ctx: ctx, w: rec}
	cancel()
	line := []byte("<http://kgrag.test/s> <http://kgrag.test/p> \"v\" .\n")
	var err error
	for i := 0; err == nil && i < 2*streamPiece/len(line); i++ {
		_, err = body.Write(line)
	}
	if !errors.Is(err, context.Canceled) || len(rec.all) != 0 {
		t.Errorf("err = %v, %d bytes sent; want context.Canceled and none", err, len(rec.all))
	}
	if err := body.end(); !errors.Is(err, context.Canceled) || len(rec.all) != 0 {
		t.Errorf("end: err = %v, %d bytes sent; want context.Canceled and none", err, len(rec.all))
	}
}

func parse(b []byte) (int, error) {
	ts, err := ParseNTriples(b)
	return len(ts), err
}

// ParseNTriples reads b as an N-Triples document (for this package's
// external tests too).
func ParseNTriples(b []byte) ([]rdf.Triple, error) {
	r := rdfenc.NewNTriplesReader(bytes.NewReader(b))
	var out []rdf.Triple
	for {
		tr, err := r.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, tr)
	}
}
