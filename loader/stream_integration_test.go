package loader_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/loader"
	"github.com/kgrag/kgrag/loader/storetest"
	"github.com/kgrag/kgrag/rdf"
	"github.com/kgrag/kgrag/sparqlq"
)

// The streamed upload (one Graph Store Protocol PUT, Quirks.StreamPut) is
// asked for with loader.UploadStream (auto means batches). These tests
// check the streamed path against the batch path and against failures.

var fusekiStore = realStores[1]

// TestStreamSameGraph: the streamed PUT and the batches leave the same
// triples, by the store's own count and queries, for the v3 sample's
// mapping and for the tricky generated triples; and it is what auto picks.
func TestStreamSameGraph(t *testing.T) {
	base := storeURL(t, fusekiStore)
	ctx := context.Background()
	streamed := openStore(t, "fuseki", base, loader.Options{Upload: loader.UploadStream})
	batched := openStore(t, "fuseki", base, loader.Options{Upload: loader.UploadBatches, BatchSize: 3_000})
	ds, err := graphrag.Open(ctx, filepath.Join(test.GraphRAGSamples(t), "v3"))
	if err != nil {
		t.Fatal(err)
	}
	a := storetest.LoadDataset(ctx, t, batched, ds, "batched")
	b := storetest.LoadDataset(ctx, t, streamed, ds, "streamed")
	storetest.SameGraphs(t, streamed, a, b)

	ga, gb := runGraph("tricky-batched"), runGraph("tricky-streamed")
	t.Cleanup(func() { _ = batched.Drop(context.Background(), ga); _ = batched.Drop(context.Background(), gb) })
	const n = 20_000
	for _, c := range []struct {
		s *loader.SPARQLStore
		g string
	}{{batched, ga}, {streamed, gb}} {
		got, err := replaceN(ctx, c.s, c.g, n, "")
		if err != nil || got != n {
			t.Fatalf("replace %s: %d, %v; want %d", c.g, got, err, n)
		}
	}
	storetest.SameGraphs(t, streamed, ga, gb)
	mustCount(t, streamed, gb, n)
}

// TestStreamConnectionCut: the connection drops mid-body, at a byte inside
// a triple, so what arrived does not parse and the store refuses it: the
// old graph stays whole, no temporary graph exists, the error says the
// connection broke and what that may mean, and the next load goes
// through. (A cut between two triples would commit what arrived:
// TestStreamBrokenOff.)
func TestStreamConnectionCut(t *testing.T) {
	const oldN, newN = 5_000, 40_000
	base := storeURL(t, fusekiStore)
	ctx := context.Background()
	direct := openStore(t, "fuseki", base, loader.Options{})
	px := newCutProxy(t, hostOf(t, base))
	g := runGraph("stream-cut")
	t.Cleanup(func() { _ = direct.Drop(context.Background(), g) })
	if _, err := replaceN(ctx, direct, g, oldN, "old"); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, "fuseki", px.base(t, base), loader.Options{Upload: loader.UploadStream, BatchSize: 5_000})
	px.arm(2_500_000)
	_, err := replaceN(ctx, s, g, newN, "new")
	if err == nil {
		t.Fatalf("no error although the proxy cut the connection (%d cuts)", px.cuts.Load())
	}
	t.Logf("error: %v", err)
	var le *loader.Error
	if !errors.As(err, &le) || !strings.Contains(le.Hint, "connection broke") {
		t.Errorf("err = %v; want *loader.Error saying the connection broke", err)
	}
	mustCount(t, direct, g, oldN)
	if ok, err := has(ctx, direct.Client(), g, storetest.Triple(3, "old")); err != nil || !ok {
		t.Errorf("sample triple gone: %v %v", ok, err)
	}
	if ok, err := has(ctx, direct.Client(), g, storetest.Triple(3, "new")); err != nil || ok {
		t.Errorf("a triple of the cut upload is in the graph: %v %v", ok, err)
	}
	if tg := tempGraphs(t, direct, g); len(tg) > 0 {
		t.Errorf("temporary graphs left: %v", tg)
	}
	if _, err := replaceN(ctx, direct, g, newN, "new"); err != nil {
		t.Fatalf("load after the cut: %v", err)
	}
	mustCount(t, direct, g, newN)
}

// TestStream503: the store refuses the PUT; it is not retried (its body is
// gone), the error gives the status and the old graph stays.
func TestStream503(t *testing.T) {
	base := storeURL(t, fusekiStore)
	ctx := context.Background()
	direct := openStore(t, "fuseki", base, loader.Options{})
	g := runGraph("stream-503")
	t.Cleanup(func() { _ = direct.Drop(context.Background(), g) })
	if _, err := replaceN(ctx, direct, g, 5_000, "old"); err != nil {
		t.Fatal(err)
	}
	fp := newFailProxy(t, base, 1, 1000)
	s := openStore(t, "fuseki", fp.base(t, base), loader.Options{Upload: loader.UploadStream, Retries: 3, RetryBackoff: 5 * time.Millisecond})
	_, err := replaceN(ctx, s, g, 40_000, "new")
	var se *sparqlq.StatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("err = %v; want a 503 *sparqlq.StatusError", err)
	}
	if got := fp.failed.Load(); got != 1 {
		t.Errorf("the PUT was sent %d times; want once", got)
	}
	if msg := err.Error(); !strings.Contains(msg, "HTTP 503") || !strings.Contains(msg, "previous graph is unchanged") {
		t.Errorf("error %q does not say status and outcome", msg)
	}
	mustCount(t, direct, g, 5_000)
}

// TestStreamServerStopped stops a private Fuseki (TDB2 on disk) while the
// body is streaming, starts it again and checks that the old graph came
// back whole, with nothing of the new one and no temporary graph.
func TestStreamServerStopped(t *testing.T) {
	storeURL(t, fusekiStore) // Fuseki is installed here
	if runtime.GOOS != "linux" {
		t.Skip("uses scripts/fuseki.sh")
	}
	if _, err := exec.LookPath("java"); err != nil {
		test.SkipOrFail(t, "java: %v", err)
	}
	port, sh := privateServer(t, "fuseki")
	base := "http://127.0.0.1:" + port + "/ds"
	ctx := context.Background()
	direct := openStore(t, "fuseki", base, loader.Options{})
	g := runGraph("stream-stopped")
	if _, err := replaceN(ctx, direct, g, 5_000, "old"); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	s := openStore(t, "fuseki", base, loader.Options{Upload: loader.UploadStream, BatchSize: 5_000, Retries: 1, RetryBackoff: 50 * time.Millisecond,
		Counter: loader.CounterFunc(func(int64) { once.Do(func() { sh("stop") }) })})
	_, err := replaceN(ctx, s, g, 200_000, "new")
	if err == nil {
		t.Fatal("no error although the server stopped")
	}
	t.Logf("error: %v", err)
	if !strings.Contains(err.Error(), "connection broke") {
		t.Errorf("error does not say the connection broke: %v", err)
	}
	sh("start")
	mustCount(t, direct, g, 5_000)
	if ok, err := has(ctx, direct.Client(), g, storetest.Triple(3, "old")); err != nil || !ok {
		t.Errorf("sample triple gone after restart: %v %v", ok, err)
	}
	if ok, err := has(ctx, direct.Client(), g, storetest.Triple(3, "new")); err != nil || ok {
		t.Errorf("a triple of the stopped upload is in the graph: %v %v", ok, err)
	}
	if tg := tempGraphs(t, direct, g); len(tg) > 0 {
		t.Errorf("temporary graphs left: %v", tg)
	}
}

// TestUploadModeChoice: auto streams only where the profile says so, and
// a stream needs the Graph Store Protocol.
func TestUploadModeChoice(t *testing.T) {
	for _, name := range loader.ProfileNames() {
		p, err := loader.ProfileFor(name, "http://127.0.0.1:1/ds")
		if err != nil {
			t.Fatal(err)
		}
		_, err = loader.Open(p, loader.Options{Upload: loader.UploadStream})
		if wantErr := !p.Caps.GraphStore; (err != nil) != wantErr {
			t.Errorf("%s: Open with UploadStream: err = %v; want error %v", name, err, wantErr)
		}
		if got, want := p.Quirks.StreamPut, name == "fuseki"; got != want {
			t.Errorf("%s: StreamPut = %v; want %v", name, got, want)
		}
	}
	for _, tt := range []struct {
		in   string
		want loader.UploadMode
		ok   bool
	}{{"auto", loader.UploadAuto, true}, {"batches", loader.UploadBatches, true}, {"stream", loader.UploadStream, true}, {"gzip", 0, false}} {
		got, err := loader.ParseUploadMode(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseUploadMode(%q) = %v, %v", tt.in, got, err)
		}
		if tt.ok && got.String() != tt.in {
			t.Errorf("%v.String() = %q", got, got.String())
		}
	}
}

// TestStreamConcurrentLoads: streamed loads of one graph started together
// each succeed or fail with ErrLocked, one at least succeeds, and the graph
// is then one load's triples, never a mix. (While one PUT runs, the
// other's lock waits for Fuseki's single write transaction, so both may
// succeed, one after the other.)
func TestStreamConcurrentLoads(t *testing.T) {
	const n = 8000
	base := storeURL(t, fusekiStore)
	ctx := context.Background()
	s := openStore(t, "fuseki", base, loader.Options{Upload: loader.UploadStream, BatchSize: 2000})
	g := runGraph("stream-concurrent")
	t.Cleanup(func() { _ = s.Drop(context.Background(), g) })
	for round := range 3 {
		if !loadTogether(ctx, t, s, g, n, round) {
			t.FailNow()
		}
	}
}

// TestStreamBrokenOff: Fuseki takes a PUT body whose connection drops for
// the whole body, at any byte, and commits it if it parses (the control
// below proves that on the running server). So a streamed load that fails
// or is cancelled after some pieces went out must end its body in what
// cannot parse: the old graph stays, with no triple of the new one.
func TestStreamBrokenOff(t *testing.T) {
	const oldN, newN = 2_000, 60_000 // newN: about 40 pieces of 256 KB
	base := storeURL(t, fusekiStore)
	ctx := context.Background()
	s := openStore(t, "fuseki", base, loader.Options{Upload: loader.UploadStream})
	g := runGraph("stream-broken")
	t.Cleanup(func() { _ = s.Drop(context.Background(), g) })
	reset := func(t *testing.T) {
		t.Helper()
		if _, err := replaceN(ctx, s, g, oldN, "old"); err != nil {
			t.Fatal(err)
		}
	}
	kept := func(t *testing.T) {
		t.Helper()
		mustCount(t, s, g, oldN)
		if ok, err := has(ctx, s.Client(), g, storetest.Triple(1, "new")); err != nil || ok {
			t.Errorf("a triple of the broken-off upload is in the graph: %v %v", ok, err)
		}
	}

	t.Run("Control", func(t *testing.T) {
		reset(t)
		// A raw PUT of 100 whole triples whose connection then closes,
		// without the final chunk.
		c, err := net.Dial("tcp", hostOf(t, base))
		if err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(base + "/data")
		var body strings.Builder
		for i := range 100 {
			fmt.Fprintf(&body, "<urn:x:%d> <urn:x:p> \"new\" .\n", i)
		}
		fmt.Fprintf(c, "PUT %s?graph=%s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/n-triples\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n",
			u.Path, url.QueryEscape(g), u.Host, body.Len(), body.String())
		c.(*net.TCPConn).CloseWrite()
		_, _ = io.Copy(io.Discard, c) // the answer, or the close
		c.Close()
		if n, err := s.Count(ctx, g); err != nil || n != 100 {
			t.Errorf("after a PUT broken off between triples the graph has %d triples (%v); want the 100 sent: "+
				"this Fuseki no longer commits such a body, so UploadStream's documentation is out of date", n, err)
		}
	})
	for _, at := range []int{1, 20_000, 45_000} {
		t.Run(fmt.Sprintf("FillFailsAfter%d", at), func(t *testing.T) {
			reset(t)
			errFill := errors.New("fill failed")
			_, err := s.ReplaceGraph(ctx, g, func(w rdf.Writer) error {
				if err := storetest.Write(w, at, "new"); err != nil {
					return err
				}
				return errFill
			})
			if !errors.Is(err, errFill) {
				t.Errorf("err = %v; want errFill", err)
			}
			kept(t)
		})
	}
	t.Run("Canceled", func(t *testing.T) {
		reset(t)
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		_, err := s.ReplaceGraph(cctx, g, func(w rdf.Writer) error {
			for i := range newN {
				if i == newN/2 {
					cancel()
				}
				if err := w.WriteTriple(storetest.Triple(i, "new")); err != nil {
					return err
				}
			}
			return nil
		})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v; want context.Canceled", err)
		}
		kept(t)
	})
	// And a load that goes through after all that.
	if _, err := replaceN(ctx, s, g, newN, "new"); err != nil {
		t.Fatal(err)
	}
	mustCount(t, s, g, newN)
}

// TestInPlaceStreamOxigraph: on Oxigraph a load in place is one streamed
// POST to the bulk path (Quirks.StreamBulk). It leaves the same triples as
// batches, replaces what the graph held, and a fill that fails after many
// pieces went out leaves the graph empty: the body ends in what cannot
// parse, and Oxigraph's bulk loader adds nothing before the whole body has
// parsed.
func TestInPlaceStreamOxigraph(t *testing.T) {
	const oldN, n = 5_000, 30_000 // n: about 20 pieces of 256 KB
	base := storeURL(t, realStores[0])
	ctx := context.Background()
	streamed := openStore(t, "oxigraph", base, loader.Options{})
	batched := openStore(t, "oxigraph", base, loader.Options{Upload: loader.UploadBatches, BatchSize: 4_000})
	ga, gb := runGraph("inplace-batched"), runGraph("inplace-streamed")
	t.Cleanup(func() { _ = batched.Drop(context.Background(), ga); _ = batched.Drop(context.Background(), gb) })
	write := func(n int, variant string) func(rdf.Writer) error {
		return func(w rdf.Writer) error { return storetest.Write(w, n, variant) }
	}
	if _, err := streamed.LoadInPlace(ctx, gb, write(oldN, "old")); err != nil {
		t.Fatal(err)
	}
	mustCount(t, streamed, gb, oldN)
	for _, c := range []struct {
		s *loader.SPARQLStore
		g string
	}{{batched, ga}, {streamed, gb}} {
		if got, err := c.s.LoadInPlace(ctx, c.g, write(n, "")); err != nil || got != n {
			t.Fatalf("load %s in place: %d, %v; want %d", c.g, got, err, n)
		}
	}
	storetest.SameGraphs(t, streamed, ga, gb)
	mustCount(t, streamed, gb, n)

	boom := errors.New("boom")
	_, err := streamed.LoadInPlace(ctx, gb, func(w rdf.Writer) error {
		if err := storetest.Write(w, n, "new"); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "empty or incomplete") {
		t.Fatalf("LoadInPlace = %v; want boom, saying the graph is empty or incomplete", err)
	}
	mustCount(t, streamed, gb, 0)
}
