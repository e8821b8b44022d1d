package ontology_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/ontology"
	"github.com/kgrag/kgrag/rdf"
	"github.com/kgrag/kgrag/rdfenc"
)

// encoder is what the test serialises with: a Turtle or N-Triples encoder.
type encoder interface {
	rdf.Writer
	finish() error
}

type turtleEnc struct{ *rdfenc.Turtle }

func (e turtleEnc) finish() error { return e.Close() }

type ntriplesEnc struct{ *rdfenc.NTriples }

func (e ntriplesEnc) finish() error { return e.Flush() }

// TestStreamMatchesMap: mapping the tables graphrag.Walk hands over, one at
// a time, writes the same bytes as mapping the Dataset graphrag.Open reads,
// in both serialisations, with and without document text, for every sample.
func TestStreamMatchesMap(t *testing.T) {
	samples := test.GraphRAGSamples(t)
	formats := []struct {
		name string
		enc  func(*bytes.Buffer) encoder
	}{
		{"turtle", func(b *bytes.Buffer) encoder { return turtleEnc{rdfenc.NewTurtle(b, nil)} }},
		{"ntriples", func(b *bytes.Buffer) encoder { return ntriplesEnc{rdfenc.NewNTriples(b)} }},
	}
	ctx := context.Background()
	for _, v := range test.Samples() {
		dir := filepath.Join(samples, v)
		whole, err := graphrag.Open(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range formats {
			for _, omit := range []bool{false, true} {
				m := ontology.Mapper{Base: "http://kgrag.test/", OmitDocumentText: omit}
				t.Run(fmt.Sprintf("%s/%s/omit-text=%v", v, f.name, omit), func(t *testing.T) {
					var want bytes.Buffer
					enc := f.enc(&want)
					wantStats, err := m.Map(ctx, whole, enc)
					if err == nil {
						err = enc.finish()
					}
					if err != nil {
						t.Fatalf("Map: %v", err)
					}

					var got bytes.Buffer
					enc = f.enc(&got)
					// A Stream's caller gives the run and release,
					// which Map takes from the dataset.
					sm := m
					sm.Run, sm.Release = whole.Run, whole.Release
					s, err := sm.Stream(enc)
					if err != nil {
						t.Fatal(err)
					}
					meta, err := graphrag.Walk(ctx, dir, s.Visitor())
					if err == nil {
						err = enc.finish()
					}
					if err != nil {
						t.Fatalf("Walk: %v", err)
					}
					if !bytes.Equal(got.Bytes(), want.Bytes()) {
						t.Errorf("Walk+Stream wrote %d bytes, Open+Map %d; want the same bytes", got.Len(), want.Len())
					}
					if d := cmp.Diff(s.Stats(), wantStats); d != "" {
						t.Errorf("Stream stats differ from Map's (-stream +map):\n%s", d)
					}
					if meta.Release != whole.Release || meta.Placeholders != whole.Placeholders {
						t.Errorf("Walk dataset = %s with %d placeholders; want %s with %d",
							meta.Release, meta.Placeholders, whole.Release, whole.Placeholders)
					}
				})
			}
		}
	}
}

// failWriter fails once it has been given n triples.
type failWriter struct{ n int }

var errFull = errors.New("writer full")

func (w *failWriter) WriteTriple(rdf.Triple) error {
	if w.n == 0 {
		return errFull
	}
	w.n--
	return nil
}

// TestStreamStops: a Stream stops at the writer's first error and when ctx
// is done, and Walk returns that error as it is.
func TestStreamStops(t *testing.T) {
	dir := filepath.Join(test.GraphRAGSamples(t), "v3")
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		w    rdf.Writer
		want error
	}{
		{"writer error", context.Background(), &failWriter{n: 1000}, errFull},
		{"canceled", canceled, &failWriter{n: 1 << 30}, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := (ontology.Mapper{Base: "http://kgrag.test/"}).Stream(tt.w)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := graphrag.Walk(tt.ctx, dir, s.Visitor()); !errors.Is(err, tt.want) {
				t.Errorf("Walk(%s) = %v; want %v", tt.name, err, tt.want)
			}
		})
	}
}

func TestStreamBadBase(t *testing.T) {
	if _, err := (ontology.Mapper{Base: "http://kgrag.test"}).Stream(&failWriter{}); err == nil {
		t.Error(`Stream with base "http://kgrag.test" succeeded; want an error (no trailing / or #)`)
	}
}
