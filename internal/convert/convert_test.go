package convert_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/convert"
	"github.com/kgrag/kgrag/internal/synth"
	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/ontology"
	"github.com/kgrag/kgrag/rdf"
	"github.com/kgrag/kgrag/rdfenc"
)

// memWalker hands over a dataset held in memory, as graphrag.Walker hands
// over one read from parquet, with copies of its rows (Table.Map zeroes
// what it wrote). failAt, when set, fails the walk instead of handing
// over that table, as an unreadable table does.
type memWalker struct {
	ds     *graphrag.Dataset
	failAt string
}

var errUnreadable = errors.New("table cannot be read")

func (w memWalker) Walk(ctx context.Context, v graphrag.Visitor) error {
	steps := []struct {
		name string
		call func() error
	}{
		{graphrag.TableDocuments, func() error { return v.Documents(ctx, slices.Clone(w.ds.Documents)) }},
		{graphrag.TableTextUnits, func() error { return v.TextUnits(ctx, slices.Clone(w.ds.TextUnits)) }},
		{graphrag.TableEntities, func() error { return v.Entities(ctx, slices.Clone(w.ds.Entities)) }},
		{graphrag.TableRelationships, func() error { return v.Relationships(ctx, slices.Clone(w.ds.Relationships)) }},
		{graphrag.TableCommunities, func() error { return v.Communities(ctx, slices.Clone(w.ds.Communities)) }},
		{graphrag.TableCovariates, func() error { return v.Covariates(ctx, slices.Clone(w.ds.Covariates)) }},
	}
	for _, s := range steps {
		if s.name == w.failAt {
			return fmt.Errorf("%s: %w", s.name, errUnreadable)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := s.call(); err != nil {
			return err
		}
	}
	return nil
}

var prefixes = []rdfenc.Prefix{{Name: "gr", IRI: ontology.NS}, {Name: "xsd", IRI: rdf.XSDNS}}

// encode writes ds as Turtle or N-Triples, serially (ontology.Mapper.Map
// into one encoder: the reference) or with convert and workers goroutines.
func encode(ds *graphrag.Dataset, failAt string, turtle bool, workers int, w interface{ Write([]byte) (int, error) }) (ontology.Stats, error) {
	ctx := context.Background()
	m := ontology.Mapper{Base: "http://kgrag.test/", Release: ds.Release}
	wk := memWalker{ds: ds, failAt: failAt}
	if turtle {
		enc := rdfenc.NewTurtle(w, prefixes)
		var st ontology.Stats
		var err error
		if workers == 0 {
			var s *ontology.Stream
			s, _ = m.Stream(enc)
			err = wk.Walk(ctx, s.Visitor())
			st = s.Stats()
		} else {
			s, _ := m.Stream(nil)
			st, err = convert.Turtle(ctx, wk, s, enc, convert.Options{Workers: workers})
		}
		if err != nil {
			return st, err
		}
		return st, enc.Close()
	}
	enc := rdfenc.NewNTriples(w)
	var st ontology.Stats
	var err error
	if workers == 0 {
		s, _ := m.Stream(enc)
		err = wk.Walk(ctx, s.Visitor())
		st = s.Stats()
	} else {
		s, _ := m.Stream(nil)
		st, err = convert.NTriples(ctx, wk, s, enc, convert.Options{Workers: workers})
	}
	if err != nil {
		return st, err
	}
	return st, enc.Flush()
}

func datasets(t *testing.T) map[string]*graphrag.Dataset {
	t.Helper()
	out := map[string]*graphrag.Dataset{
		"synthetic": synth.Generate(5, synth.Sizes{Entities: 1500, Relationships: 4500, TextUnits: 300, Communities: 300}),
		"empty":     {Release: graphrag.Release3},
	}
	for _, v := range test.Samples() {
		ds, err := graphrag.Open(context.Background(), filepath.Join(test.GraphRAGSamples(t), v))
		if err != nil {
			t.Fatal(err)
		}
		out[v] = ds
	}
	return out
}

// TestMatchesSerial: for every sample, a synthetic set and an empty one,
// in both formats and with 1 to 8 workers (so batch boundaries fall in
// different places), convert writes the serial bytes and counts.
func TestMatchesSerial(t *testing.T) {
	for name, ds := range datasets(t) {
		for _, turtle := range []bool{true, false} {
			var want bytes.Buffer
			wantSt, err := encode(ds, "", turtle, 0, &want)
			if err != nil {
				t.Fatalf("%s: serial: %v", name, err)
			}
			for _, workers := range []int{1, 2, 3, 8} {
				t.Run(fmt.Sprintf("%s/turtle=%v/workers=%d", name, turtle, workers), func(t *testing.T) {
					var got bytes.Buffer
					st, err := encode(ds, "", turtle, workers, &got)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got.Bytes(), want.Bytes()) {
						t.Errorf("output (%d bytes) differs from the serial one (%d bytes)", got.Len(), want.Len())
					}
					if st != wantSt {
						t.Errorf("stats %+v; want %+v", st, wantSt)
					}
				})
			}
		}
	}
}

// failingWriter fails once n bytes have been written.
type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		return 0, errors.New("disk full")
	}
	w.n -= len(p)
	return len(p), nil
}

// TestSameErrors: a row the mapping refuses is reported as serially, the
// first of several even when a later one fails on another core first, and
// ahead of an unreadable later table; an unreadable table and a failing
// writer are reported as serially too.
func TestSameErrors(t *testing.T) {
	bad := func(nums ...int) *graphrag.Dataset {
		ds := synth.Generate(5, synth.Sizes{Entities: 1500, Relationships: 4500, TextUnits: 300, Communities: 300})
		for _, i := range nums {
			ds.Communities[i].Community = fmt.Sprintf("x%d", i)
		}
		return ds
	}
	good := bad()
	tests := []struct {
		name   string
		ds     *graphrag.Dataset
		failAt string
		w      func() *failingWriter
		want   string
		// tail: the error need only end as the serial one does. A
		// failing output is named, not the triple whose encoding
		// happened to fill the buffer, which only the serial path has.
		tail bool
	}{
		{"two bad rows", bad(120, 280), "", nil, `"x120"`, false},
		{"bad row at the end", bad(299), "", nil, `"x299"`, false},
		{"bad row, then an unreadable table", bad(150), graphrag.TableCovariates, nil, `"x150"`, false},
		{"unreadable table", good, graphrag.TableRelationships, nil, "relationships: table cannot be read", false},
		{"writer fails", good, "", func() *failingWriter { return &failingWriter{n: 3 << 20} }, "disk full", true},
	}
	for _, tt := range tests {
		for _, turtle := range []bool{true, false} {
			newW := func() interface{ Write([]byte) (int, error) } {
				if tt.w != nil {
					return tt.w()
				}
				return &bytes.Buffer{}
			}
			_, wantErr := encode(tt.ds, tt.failAt, turtle, 0, newW())
			if wantErr == nil || !strings.Contains(wantErr.Error(), tt.want) {
				t.Fatalf("%s: serial error %v; want one mentioning %s", tt.name, wantErr, tt.want)
			}
			for _, workers := range []int{2, 8} {
				t.Run(fmt.Sprintf("%s/turtle=%v/workers=%d", tt.name, turtle, workers), func(t *testing.T) {
					_, err := encode(tt.ds, tt.failAt, turtle, workers, newW())
					if tt.tail && err != nil && strings.HasSuffix(wantErr.Error(), ": "+err.Error()) {
						return
					}
					if err == nil || err.Error() != wantErr.Error() {
						t.Errorf("error %v; want the serial one: %v", err, wantErr)
					}
				})
			}
		}
	}
}

// TestCancel: a cancelled context stops the conversion with its error.
func TestCancel(t *testing.T) {
	ds := synth.Generate(5, synth.Sizes{Entities: 1500, Relationships: 4500, TextUnits: 300, Communities: 300})
	ctx, cancel := context.WithCancel(context.Background())
	var n int
	s, _ := ontology.Mapper{Base: "http://kgrag.test/"}.Stream(nil)
	enc := rdfenc.NewNTriples(&bytes.Buffer{})
	_, err := convert.NTriples(ctx, memWalker{ds: ds}, s, enc, convert.Options{Workers: 2, Progress: func(int64) {
		if n++; n == 3 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v; want context.Canceled", err)
	}
}
