package memstore_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/kgrag/kgrag/loader"
	"github.com/kgrag/kgrag/loader/memstore"
	"github.com/kgrag/kgrag/loader/storetest"
	"github.com/kgrag/kgrag/rdf"
)

func TestSuite(t *testing.T) {
	var s *memstore.Store
	storetest.Suite(t, storetest.Config{
		New: func(t *testing.T) loader.Store { s = memstore.New(); return s },
		Has: func(_ context.Context, g string, tr rdf.Triple) (bool, error) {
			return slices.Contains(s.Triples(g), tr), nil
		},
	})
}

func TestFailAfter(t *testing.T) {
	s := memstore.New()
	ctx := context.Background()
	const g = "http://example.org/g"
	if _, err := s.ReplaceGraph(ctx, g, func(w rdf.Writer) error { return storetest.Write(w, 10, "") }); err != nil {
		t.Fatal(err)
	}
	var progress int64
	s.FailAfter = 5
	s.Counter = loader.CounterFunc(func(n int64) { progress += n })
	_, err := s.ReplaceGraph(ctx, g, func(w rdf.Writer) error { return storetest.Write(w, 10, "x") })
	if !errors.Is(err, memstore.ErrInjected) {
		t.Fatalf("err = %v; want ErrInjected", err)
	}
	if n, _ := s.Count(ctx, g); n != 10 {
		t.Errorf("Count after failure = %d; want 10", n)
	}
	if progress != 4 {
		t.Errorf("progress = %d; want 4", progress)
	}
}
