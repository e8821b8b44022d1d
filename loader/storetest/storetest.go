// Package storetest checks that a loader.Store behaves: Suite runs the same
// tests against loader/memstore and against each real store, and Triple
// makes deterministic synthetic triples with tricky literals.
//
// Usage, in a store's test:
//
//	func TestSuite(t *testing.T) {
//		storetest.Suite(t, storetest.Config{
//			New:     func(t *testing.T) loader.Store { return memstore.New() },
//			Triples: 1000,
//		})
//	}
package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/loader"
	"github.com/kgrag/kgrag/ontology"
	"github.com/kgrag/kgrag/rdf"
)

// Base is the IRI prefix of everything storetest writes.
const Base = "http://kgrag.test/storetest/"

var tricky = []string{
	`plain ascii`,
	`"double" and 'single' quotes`,
	"line one\nline two\r\nline three",
	"tab\there and a backslash \\ and \\n literally",
	"日本語のテキスト、中文文本，한국어",
	"emoji 😀🚀👩‍💻 and a flag 🇩🇪",
	"",
	"control \u0001\u001f and del \u007f",
	`trailing backslash \`,
	"<not an IRI> & {braces} ^^ @en",
	"combining e\u0301 and zero\u200bwidth",
	strings.Repeat("long ", 400),
}

// Triple returns the i-th synthetic triple of a data set. variant changes
// the objects, so two variants share subjects and predicates but differ in
// values. Triples are distinct for distinct i.
func Triple(i int, variant string) rdf.Triple {
	s := rdf.IRI(fmt.Sprintf("%se/%d", Base, i/8))
	p := rdf.IRI(fmt.Sprintf("%sp/%d", Base, i%8))
	var o rdf.Term
	lex := fmt.Sprintf("%s #%d %s", tricky[i%len(tricky)], i, variant)
	switch i % 8 {
	case 0, 1, 2:
		o = rdf.String(lex)
	case 3:
		o = rdf.LangString(lex, []string{"en", "ja", "zh-Hans-CN", "de-CH"}[(i/8)%4])
	case 4:
		o = rdf.Integer(int64(i) * 7919)
		if variant != "" {
			o = rdf.Typed(fmt.Sprintf("%s-%d", variant, i), rdf.XSDString)
		}
	case 5:
		o = rdf.Double(float64(i) / 3)
	case 6:
		o = rdf.IRI(fmt.Sprintf("%se/%d", Base, (i*31+7)%1000003))
	default:
		o = rdf.Typed(lex, "http://kgrag.test/storetest/dt")
	}
	return rdf.Triple{S: s, P: p, O: o}
}

// Write writes triples 0..n-1 of variant to w.
func Write(w rdf.Writer, n int, variant string) error {
	for i := range n {
		if err := w.WriteTriple(Triple(i, variant)); err != nil {
			return err
		}
	}
	return nil
}

// Config configures Suite.
type Config struct {
	// New returns the store under test. Suite uses fresh graph IRIs and
	// drops them at the end, so one store may serve several runs.
	New func(t *testing.T) loader.Store
	// Triples is the size of the main data set; zero means 2000.
	Triples int
	// Has, when set, reports whether graph holds triple t; Suite then
	// checks sample triples, including the tricky literals.
	Has func(ctx context.Context, graph string, t rdf.Triple) (bool, error)
}

// errFill is what Suite's fill functions fail with.
var errFill = errors.New("storetest: fill failed on purpose")

// Suite runs the store tests. Each subtest names what it checks.
func Suite(t *testing.T, cfg Config) {
	t.Helper()
	if cfg.Triples == 0 {
		cfg.Triples = 2000
	}
	n := cfg.Triples
	s := cfg.New(t)
	ctx := context.Background()
	run := fmt.Sprintf("%s%x/", Base, rand.Uint64())
	g1, g2 := run+"g1", run+"g2"
	t.Cleanup(func() {
		_ = s.Drop(context.Background(), g1)
		_ = s.Drop(context.Background(), g2)
	})

	replace := func(t *testing.T, g string, n int, variant string) {
		t.Helper()
		got, err := s.ReplaceGraph(ctx, g, func(w rdf.Writer) error { return Write(w, n, variant) })
		if err != nil {
			t.Fatalf("ReplaceGraph(%s, %d triples): %v", g, n, err)
		}
		if got != int64(n) {
			t.Errorf("ReplaceGraph wrote %d; want %d", got, n)
		}
	}
	expectCount := func(t *testing.T, g string, want int) {
		t.Helper()
		got, err := s.Count(ctx, g)
		if err != nil {
			t.Fatalf("Count(%s): %v", g, err)
		}
		if got != int64(want) {
			t.Errorf("Count(%s) = %d; want %d", g, got, want)
		}
	}
	expectHas := func(t *testing.T, g string, tr rdf.Triple, want bool) {
		t.Helper()
		if cfg.Has == nil {
			return
		}
		got, err := cfg.Has(ctx, g, tr)
		if err != nil {
			t.Fatalf("Has(%s, %v): %v", g, tr, err)
		}
		if got != want {
			t.Errorf("Has(%s, %v) = %v; want %v", g, tr.O, got, want)
		}
	}
	expectNoTemp := func(t *testing.T) {
		t.Helper()
		gs, err := s.Graphs(ctx)
		if err != nil {
			t.Fatalf("Graphs: %v", err)
		}
		for _, g := range gs {
			if strings.HasPrefix(g, run) && strings.Contains(g, loader.TempGraphMarker) {
				t.Errorf("temporary graph left: %s", g)
			}
		}
	}

	t.Run("ReplaceAndCount", func(t *testing.T) {
		replace(t, g1, n, "")
		expectCount(t, g1, n)
		for i := range min(n, 2*len(tricky)*8) {
			expectHas(t, g1, Triple(i, ""), true)
		}
		expectNoTemp(t)
	})
	t.Run("ReloadNoDuplicates", func(t *testing.T) {
		replace(t, g1, n, "")
		expectCount(t, g1, n)
	})
	t.Run("ReplaceShrinks", func(t *testing.T) {
		replace(t, g1, n/2, "v2")
		expectCount(t, g1, n/2)
		expectHas(t, g1, Triple(1, "v2"), true)
		expectHas(t, g1, Triple(1, ""), false)
		replace(t, g1, n, "")
		expectCount(t, g1, n)
	})
	t.Run("OtherGraphUntouched", func(t *testing.T) {
		replace(t, g2, 10, "other")
		expectCount(t, g1, n)
		expectCount(t, g2, 10)
	})
	t.Run("FillErrorKeepsOldGraph", func(t *testing.T) {
		for _, at := range []int{0, 3, n/2 + 1} {
			_, err := s.ReplaceGraph(ctx, g1, func(w rdf.Writer) error {
				if err := Write(w, at, "broken"); err != nil {
					return err
				}
				return errFill
			})
			if !errors.Is(err, errFill) {
				t.Errorf("fail after %d: err = %v; want errFill", at, err)
			}
			var le *loader.Error
			if !errors.As(err, &le) {
				t.Errorf("fail after %d: err %T is not *loader.Error", at, err)
			}
		}
		expectCount(t, g1, n)
		expectHas(t, g1, Triple(0, ""), true)
		expectNoTemp(t)
	})
	t.Run("CanceledKeepsOldGraph", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		_, err := s.ReplaceGraph(cctx, g1, func(w rdf.Writer) error {
			for i := range n {
				if i == n/3 {
					cancel()
				}
				if err := w.WriteTriple(Triple(i, "canceled")); err != nil {
					return err
				}
			}
			return nil
		})
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v; want context.Canceled", err)
		}
		expectCount(t, g1, n)
		expectHas(t, g1, Triple(1, ""), true)
		expectNoTemp(t)
	})
	t.Run("Empty", func(t *testing.T) {
		replace(t, g2, 0, "")
		expectCount(t, g2, 0)
	})
	t.Run("Drop", func(t *testing.T) {
		replace(t, g2, 5, "")
		if err := s.Drop(ctx, g2); err != nil {
			t.Fatalf("Drop: %v", err)
		}
		expectCount(t, g2, 0)
		if err := s.Drop(ctx, g2); err != nil {
			t.Errorf("second Drop: %v", err)
		}
		gs, err := s.Graphs(ctx)
		if err != nil {
			t.Fatalf("Graphs: %v", err)
		}
		var found1 bool
		for _, g := range gs {
			found1 = found1 || g == g1
			if g == g2 {
				t.Errorf("Graphs lists dropped %s", g2)
			}
		}
		if !found1 {
			t.Errorf("Graphs does not list %s", g1)
		}
	})
}

// SameGraphs checks, with the store's own queries, that graphs a and b of
// s hold the same triples: the same count, not zero, and nothing in one
// that is not in the other.
func SameGraphs(t *testing.T, s *loader.SPARQLStore, a, b string) {
	t.Helper()
	ctx := context.Background()
	na, err := s.Count(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	nb, err := s.Count(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if na != nb || na == 0 {
		t.Errorf("<%s> holds %d triples, <%s> %d", a, na, b, nb)
	}
	for _, g := range [][2]string{{a, b}, {b, a}} {
		extra, err := s.Client().Ask(ctx, fmt.Sprintf(
			"ASK { GRAPH <%s> { ?s ?p ?o } FILTER NOT EXISTS { GRAPH <%s> { ?s ?p ?o } } }", g[0], g[1]))
		if err != nil {
			t.Fatal(err)
		}
		if extra {
			t.Errorf("<%s> holds triples that <%s> does not", g[0], g[1])
		}
	}
}

// Open opens the real store named (oxigraph, fuseki, virtuoso), at the URL
// of its service variable (KGRAG_TEST_<SERVICE>, see internal/test.Service:
// skipped or failed when unset), with the loader's profile for it.
func Open(t testing.TB, name, service string, o loader.Options) *loader.SPARQLStore {
	t.Helper()
	prof, err := loader.ProfileFor(name, test.Service(t, service))
	if err != nil {
		t.Fatal(err)
	}
	st, err := loader.Open(prof, o)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// LoadDataset maps ds (instances under Base) into a graph of st unique to
// this run, dropped at cleanup, and returns the graph's IRI.
func LoadDataset(ctx context.Context, t testing.TB, st *loader.SPARQLStore, ds *graphrag.Dataset, name string) string {
	t.Helper()
	graph := fmt.Sprintf("%sgraph/%x/%s", Base, rand.Uint64(), name)
	t.Cleanup(func() {
		if err := st.Drop(context.Background(), graph); err != nil {
			t.Errorf("drop %s: %v", graph, err)
		}
	})
	m := ontology.Mapper{Base: Base}
	if _, err := st.ReplaceGraph(ctx, graph, func(w rdf.Writer) error {
		_, err := m.Map(ctx, ds, w)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return graph
}
