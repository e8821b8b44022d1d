package loader_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kgrag/kgrag/loader"
	"github.com/kgrag/kgrag/loader/storetest"
)

// TestBoundedReplace runs the loads of a store with a transaction limit
// (Oxigraph, here with a limit far below the graph) against real
// Oxigraph: each leaves exactly the triples a plain swap would (compared
// by the store with a reference graph loaded without a limit), no update
// writes more than the limit, and a load that would needs fails with the
// graph unchanged.
func TestBoundedReplace(t *testing.T) {
	base := storeURL(t, realStores[0])
	ctx := context.Background()
	const n, limit = 20_000, 500
	s := openStore(t, "oxigraph", base, loader.Options{BatchSize: 2_000, MaxTransaction: limit})
	plain := openStore(t, "oxigraph", base, loader.Options{MaxTransaction: -1})
	g, ref := runGraph("bounded"), runGraph("bounded-ref")
	t.Cleanup(func() {
		_ = plain.Drop(context.Background(), g)
		_ = plain.Drop(context.Background(), ref)
	})
	same := func(t *testing.T, v version) {
		t.Helper()
		if _, err := plain.ReplaceGraph(ctx, ref, v.fill); err != nil {
			t.Fatal(err)
		}
		storetest.SameGraphs(t, plain, g, ref)
	}

	// An empty graph is filled by the bulk loader, all at once: a reader
	// polling all along sees no triple or every one, never a part.
	v1 := version{n: n}
	w := watchCounts(ctx, plain, g, 1)
	got, err := s.ReplaceGraph(ctx, g, v1.fill)
	for deadline := time.Now().Add(10 * time.Second); err == nil && time.Now().Before(deadline) && !w.saw(n); {
		time.Sleep(20 * time.Millisecond)
	}
	seen := w.stop()
	if err != nil || got != n {
		t.Fatalf("fill of the empty graph = %d, %v; want %d", got, err, n)
	}
	for c := range seen {
		if c != 0 && c != n {
			t.Errorf("a reader saw %d triples during the fill; want 0 or %d", c, n)
		}
	}
	t.Logf("counts seen during the fill: %v", seen)
	same(t, v1)
	if stamp, err := loader.Stamp(ctx, s.Client(), g); err != nil || stamp == "" {
		t.Errorf("no load record after the fill (%q, %v): the next --diff load could not send a difference", stamp, err)
	}

	// A full graph changes by its difference, one update under the limit.
	v2 := version{n: n, changed: map[int]bool{1: true, 4: true, 7: true}, gone: map[int]bool{9: true}}
	if got, err := s.ReplaceGraph(ctx, g, v2.fill); err != nil || got != n-1 {
		t.Fatalf("small change = %d, %v; want %d", got, err, n-1)
	}
	same(t, v2)
	res, err := s.LoadDiff(ctx, g, v1.fill, loader.DiffOptions{})
	if err != nil || res.Replaced || res.Deleted == 0 {
		t.Errorf("LoadDiff after a bounded replace = %+v, %v; want a difference against the recorded graph", res, err)
	}
	same(t, v1)

	// A change over the limit is refused, the graph as it was.
	big := version{n: n, changed: map[int]bool{}}
	for i := range 2 * limit {
		big.changed[i] = true
	}
	_, err = s.ReplaceGraph(ctx, g, big.fill)
	if !errors.Is(err, loader.ErrTransactionTooLarge) {
		t.Fatalf("change over the limit: err = %v; want ErrTransactionTooLarge", err)
	}
	t.Logf("refused: %v", err)
	same(t, v1)
	_, err = s.LoadDiff(ctx, g, big.fill, loader.DiffOptions{MaxChange: 0.01})
	if !errors.Is(err, loader.ErrTransactionTooLarge) {
		t.Errorf("LoadDiff over the limit: err = %v; want ErrTransactionTooLarge", err)
	}
	same(t, v1)

	// In place, the old graph goes in steps of the limit.
	if got, err := s.LoadInPlace(ctx, g, big.fill); err != nil || got != n {
		t.Fatalf("LoadInPlace = %d, %v", got, err)
	}
	same(t, big)
}

// TestBoundedFillStopped stops a private Oxigraph while the bulk fill of
// an empty graph streams: after a restart the graph is empty, as it was.
func TestBoundedFillStopped(t *testing.T) {
	storeURL(t, realStores[0])
	port, sh := privateServer(t, "oxigraph")
	base := "http://127.0.0.1:" + port
	ctx := context.Background()
	g := runGraph("fill-stopped")
	var once sync.Once
	s := openStore(t, "oxigraph", base, loader.Options{BatchSize: 5_000, Retries: 1, RetryBackoff: 50 * time.Millisecond,
		Counter: loader.CounterFunc(func(int64) { once.Do(func() { sh("stop") }) })})
	_, err := replaceN(ctx, s, g, 200_000, "new")
	if err == nil {
		t.Fatal("no error although the server stopped")
	}
	t.Logf("error: %v", err)
	if !strings.Contains(err.Error(), "connection") || !strings.Contains(err.Error(), "the graph was empty") {
		t.Errorf("error does not say the connection failed and what the graph holds: %v", err)
	}
	sh("start")
	direct := openStore(t, "oxigraph", base, loader.Options{})
	mustCount(t, direct, g, 0)
}
