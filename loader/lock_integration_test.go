package loader_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kgrag/kgrag/loader"
	"github.com/kgrag/kgrag/loader/storetest"
	"github.com/kgrag/kgrag/rdf"
)

// holdingFill writes n triples of variant, stopping after the first
// thousand until release is closed, so that a test can start a second load
// while the first holds its lock.
func holdingFill(n int, variant string, started chan<- struct{}, release <-chan struct{}) func(rdf.Writer) error {
	return func(w rdf.Writer) error {
		for i := range n {
			if i == 1000 {
				close(started)
				<-release
			}
			if err := w.WriteTriple(storetest.Triple(i, variant)); err != nil {
				return err
			}
		}
		return nil
	}
}

// TestConcurrentLoadsSerialised: a second load of a graph while the first
// runs fails with ErrLocked, and the graph then holds the first load's
// triples alone; loads started at the same instant never both succeed and
// never leave a mix.
func TestConcurrentLoadsSerialised(t *testing.T) {
	const n = 8000
	forEachStore(t, func(t *testing.T, rs realStore, base string) {
		ctx := context.Background()
		// Batches: a streamed PUT into Fuseki holds the dataset's one
		// write transaction, so the second load's lock would wait for the
		// held first one (see TestStreamConcurrentLoads).
		s := openStore(t, rs.profile, base, loader.Options{BatchSize: 2000, Upload: loader.UploadBatches})
		g := runGraph("concurrent")
		t.Cleanup(func() { _ = s.Drop(context.Background(), g) })

		started, release := make(chan struct{}), make(chan struct{})
		first := make(chan error, 1)
		go func() {
			_, err := s.ReplaceGraph(ctx, g, holdingFill(n, "first", started, release))
			first <- err
		}()
		<-started
		_, err := replaceN(ctx, s, g, n, "second")
		close(release)
		if !errors.Is(err, loader.ErrLocked) {
			t.Errorf("second load while the first runs: %v; want ErrLocked", err)
		}
		if err := <-first; err != nil {
			t.Fatalf("first load: %v", err)
		}
		mustCount(t, s, g, n)
		checkVariant(t, s, g, "first", "second")

		// Started together: each succeeds or fails with ErrLocked, one at
		// least succeeds (both may, one after the other), and the graph
		// is then one load's triples, never a mix.
		for round := range 3 {
			loadTogether(ctx, t, s, g, n, round)
		}
		if tg := tempGraphs(t, s, g); len(tg) > 0 {
			t.Errorf("temporary graphs left: %v", tg)
		}
	})
}

// checkVariant checks that graph holds triples of variant and none of
// other.
func checkVariant(t *testing.T, s *loader.SPARQLStore, graph, variant, other string) {
	t.Helper()
	for _, c := range []struct {
		v    string
		want bool
	}{{variant, true}, {other, false}} {
		for _, i := range []int{0, 1500, 7999} {
			ok, err := has(context.Background(), s.Client(), graph, storetest.Triple(i, c.v))
			if err != nil || ok != c.want {
				t.Errorf("triple %d of %q in the graph: %v (%v); want %v", i, c.v, ok, err, c.want)
			}
		}
	}
}

// TestLeftoversOfKilledLoad: what a killed load leaves (its temporary
// graph, and its lock, whose heartbeat stopped) is cleared by the next
// load, which names the temporary graphs it dropped.
func TestLeftoversOfKilledLoad(t *testing.T) {
	forEachStore(t, func(t *testing.T, rs realStore, base string) {
		ctx := context.Background()
		var dropped []string
		s := openStore(t, rs.profile, base, loader.Options{OnLeftovers: func(gs []string) { dropped = gs }})
		g := runGraph("killed")
		tmp := g + "#" + loader.TempGraphMarker + "00112233445566ff"
		old := time.Now().Add(-2 * loader.LockStale).Unix()
		if err := s.Client().Update(ctx, fmt.Sprintf(`INSERT DATA { GRAPH <%s> { <http://kgrag.test/s> <http://kgrag.test/p> "left" } } ;
INSERT DATA { GRAPH <%s> { <urn:kgrag:load:deadbeefdeadbeef> <urn:kgrag:graph> <%s> ; <urn:kgrag:heartbeat> %d . <%s> <urn:kgrag:temporaryGraphOf> <%s> } }`,
			tmp, loader.LoadsGraph, g, old, tmp, g)); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Drop(context.Background(), g); _ = s.Drop(context.Background(), tmp) })
		if _, err := replaceN(ctx, s, g, 500, "after"); err != nil {
			t.Fatalf("load after a killed one: %v", err)
		}
		if tg := tempGraphs(t, s, g); len(tg) > 0 {
			t.Errorf("temporary graphs left: %v", tg)
		}
		if len(dropped) != 1 || dropped[0] != tmp {
			t.Errorf("OnLeftovers got %v; want [%s]", dropped, tmp)
		}
		locks, err := s.Client().Ask(ctx, fmt.Sprintf("ASK { GRAPH <%s> { ?l ?p <%s> } }", loader.LoadsGraph, g))
		if err != nil || locks {
			t.Errorf("locks or temporary graph names of %s remain after the load: %v (%v)", g, locks, err)
		}
		mustCount(t, s, g, 500)
	})
}

// TestInterruptedCommit: a load interrupted while the store runs its swap
// reports what the store then holds. A proxy holds the commit request
// until the load's context has ended, then lets the store run it: the
// swap happened, and the load says so (no error) rather than "the
// previous graph is unchanged".
func TestInterruptedCommit(t *testing.T) {
	forEachStore(t, func(t *testing.T, rs realStore, base string) {
		target, _ := url.Parse(base)
		rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		px := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && bodyHas(r, "urn:kgrag:committed") {
				cancel() // the user presses Ctrl-C while the swap is on its way
				time.Sleep(200 * time.Millisecond)
				// The store runs it regardless. A context that can end but
				// never does: with none, ReverseProxy would cancel when the
				// client hangs up.
				keep, stop := context.WithCancel(context.Background())
				defer stop()
				r = r.WithContext(keep)
			}
			rp.ServeHTTP(w, r)
		}))
		defer px.Close()
		via := strings.Replace(base, target.Host, strings.TrimPrefix(px.URL, "http://"), 1)
		direct := openStore(t, rs.profile, base, loader.Options{})
		s := openStore(t, rs.profile, via, loader.Options{Retries: -1})
		g := runGraph("commit")
		t.Cleanup(func() { _ = direct.Drop(context.Background(), g) })
		if _, err := replaceN(ctx, s, g, 300, "swapped"); err != nil {
			t.Errorf("interrupted during a swap that happened: %v; want no error", err)
		}
		mustCount(t, direct, g, 300)
		if tg := tempGraphs(t, direct, g); len(tg) > 0 {
			t.Errorf("temporary graphs left: %v", tg)
		}
	})
}

// bodyHas reports whether r's body holds s (form-encoded or not), leaving
// the body to be read again.
func bodyHas(r *http.Request, s string) bool {
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	if strings.Contains(string(b), s) {
		return true
	}
	v, err := url.ParseQuery(string(b))
	return err == nil && strings.Contains(v.Get("update"), s)
}

// loadTogether starts two loads of n triples into g at the same instant
// (variants named after round) and checks that each succeeds or fails
// with ErrLocked, that one at least succeeds, and that g then holds one
// load's triples alone, never a mix. It reports false when neither
// succeeded.
func loadTogether(ctx context.Context, t *testing.T, s *loader.SPARQLStore, g string, n, round int) bool {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	variants := []string{fmt.Sprintf("r%da", round), fmt.Sprintf("r%db", round)}
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = replaceN(ctx, s, g, n, variants[i])
		}()
	}
	wg.Wait()
	ok := 0
	for i, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, loader.ErrLocked):
			t.Errorf("round %d, load %d: %v; want success or ErrLocked", round, i, err)
		}
	}
	if ok == 0 {
		t.Errorf("round %d: neither load succeeded", round)
		return false
	}
	mustCount(t, s, g, n)
	if a, _ := has(ctx, s.Client(), g, storetest.Triple(0, variants[0])); a {
		checkVariant(t, s, g, variants[0], variants[1])
	} else {
		checkVariant(t, s, g, variants[1], variants[0])
	}
	t.Logf("round %d: %v / %v", round, errs[0], errs[1])
	return true
}
