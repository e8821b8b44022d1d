package loader_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/loader"
	"github.com/kgrag/kgrag/loader/storetest"
	"github.com/kgrag/kgrag/rdf"
	"github.com/kgrag/kgrag/sparqlq"
)

// Integration tests against real stores. scripts/services.sh up starts them
// and writes the variables; without them these tests skip, unless
// KGRAG_TEST_DISALLOW_SKIP=1 (CI), where a missing store fails the run.

// env is the service name of test.Service: KGRAG_TEST_<env> holds the URL.
type realStore struct {
	name, env, profile string
}

var realStores = []realStore{
	{"oxigraph", "OXIGRAPH", "oxigraph"},
	{"fuseki", "FUSEKI", "fuseki"},
	{"virtuoso", "VIRTUOSO", "virtuoso"},
}

// storeURL returns the base URL of a real store or skips (fails in CI).
func storeURL(t *testing.T, rs realStore) string {
	t.Helper()
	return test.Service(t, rs.env)
}

// forEachStore runs f as a subtest per real store.
func forEachStore(t *testing.T, f func(t *testing.T, rs realStore, base string)) {
	for _, rs := range realStores {
		t.Run(rs.name, func(t *testing.T) { f(t, rs, storeURL(t, rs)) })
	}
}

// storeTimeout bounds each request of these tests: the longest takes
// about a minute on a busy machine, and a store that stops answering must
// fail its test, with the retries logged, well before go test's own
// timeout ends the whole package with a goroutine dump.
const storeTimeout = 3 * time.Minute

func openStore(t *testing.T, profile, base string, o loader.Options) *loader.SPARQLStore {
	t.Helper()
	if o.Timeout == 0 {
		o.Timeout = storeTimeout
	}
	if o.Retries == 0 {
		o.Retries = 2
	}
	p, err := loader.ProfileFor(profile, base)
	if err != nil {
		t.Fatal(err)
	}
	s, err := loader.Open(p, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// runGraph returns a graph IRI unique to this test run.
func runGraph(name string) string {
	return fmt.Sprintf("http://kgrag.test/it/%x/%s", rand.Uint64(), name)
}

func sparqlTerm(t rdf.Term) string {
	switch t.Kind {
	case rdf.KindIRI:
		return "<" + t.Value + ">"
	case rdf.KindLiteral:
		s := sparqlq.Literal(t.Value)
		switch {
		case t.Lang != "":
			return s + "@" + t.Lang
		case t.Datatype != "" && t.Datatype != rdf.XSDString:
			return s + "^^<" + t.Datatype + ">"
		}
		return s
	}
	return "[]"
}

func has(ctx context.Context, c *sparqlq.Client, graph string, tr rdf.Triple) (bool, error) {
	return c.Ask(ctx, fmt.Sprintf("ASK { GRAPH <%s> { %s %s %s } }",
		graph, sparqlTerm(tr.S), sparqlTerm(tr.P), sparqlTerm(tr.O)))
}

// tempGraphs lists the temporary graphs left for graph.
func tempGraphs(t *testing.T, s loader.Store, graph string) []string {
	t.Helper()
	gs, err := s.Graphs(context.Background())
	if err != nil {
		t.Fatalf("Graphs: %v", err)
	}
	var out []string
	for _, g := range gs {
		if strings.HasPrefix(g, graph) && strings.Contains(g, loader.TempGraphMarker) {
			out = append(out, g)
		}
	}
	return out
}

func replaceN(ctx context.Context, s loader.Store, graph string, n int, variant string) (int64, error) {
	return s.ReplaceGraph(ctx, graph, func(w rdf.Writer) error { return storetest.Write(w, n, variant) })
}

func mustCount(t *testing.T, s loader.Store, graph string, want int) {
	t.Helper()
	got, err := s.Count(context.Background(), graph)
	if err != nil {
		t.Fatalf("Count(%s): %v", graph, err)
	}
	if got != int64(want) {
		t.Errorf("Count(%s) = %d; want %d", graph, got, want)
	}
}

func TestStoreSuite(t *testing.T) {
	forEachStore(t, func(t *testing.T, rs realStore, base string) {
		s := openStore(t, rs.profile, base, loader.Options{BatchSize: 700})
		storetest.Suite(t, storetest.Config{
			New:     func(*testing.T) loader.Store { return s },
			Triples: 2000,
			Has: func(ctx context.Context, g string, tr rdf.Triple) (bool, error) {
				return has(ctx, s.Client(), g, tr)
			},
		})
	})
}

// TestUpload100k loads 100k tricky triples, checks the count and samples,
// reloads them and reports throughput.
func TestUpload100k(t *testing.T) {
	const n = 100_000
	forEachStore(t, func(t *testing.T, rs realStore, base string) {
		var progress atomic.Int64
		s := openStore(t, rs.profile, base, loader.Options{Counter: loader.CounterFunc(func(k int64) { progress.Add(k) }),
			Logger: slog.New(slog.NewTextHandler(tlog{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		ctx := context.Background()
		g := runGraph("big")
		t.Cleanup(func() { _ = s.Drop(context.Background(), g) })
		for round := range 2 {
			start := time.Now()
			got, err := replaceN(ctx, s, g, n, "")
			d := time.Since(start)
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			if got != n {
				t.Errorf("round %d: wrote %d; want %d", round, got, n)
			}
			t.Logf("%s round %d: %d triples in %v = %.0f triples/s (batch %d)",
				rs.name, round, n, d.Round(time.Millisecond), float64(n)/d.Seconds(), loader.DefaultBatchSize)
			mustCount(t, s, g, n)
		}
		if p := progress.Load(); p != 2*n {
			t.Errorf("progress = %d; want %d", p, 2*n)
		}
		for _, i := range []int{0, 1, 2, 3, 4, 5, 6, 7, 10, 13, 21, 29, 37, 45, 53, 61, 69, 77, 85, 93, 99_999} {
			tr := storetest.Triple(i, "")
			if ok, err := has(ctx, s.Client(), g, tr); err != nil || !ok {
				t.Errorf("triple %d (%s) missing: %v, %v", i, sparqlTerm(tr.O), ok, err)
			}
		}
		if tg := tempGraphs(t, s, g); len(tg) > 0 {
			t.Errorf("temporary graphs left: %v", tg)
		}
	})
}

// tlog writes slog lines to the test log.
type tlog struct{ t *testing.T }

func (w tlog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// TestReplaceVisibility checks atomicity from a reader's side: while a
// replacement commits, concurrent COUNTs see the old size or the new one,
// never anything between.
func TestReplaceVisibility(t *testing.T) {
	const oldN, newN = 30_000, 60_000
	forEachStore(t, func(t *testing.T, rs realStore, base string) {
		s := openStore(t, rs.profile, base, loader.Options{})
		ctx := context.Background()
		g := runGraph("vis")
		t.Cleanup(func() { _ = s.Drop(context.Background(), g) })
		if _, err := replaceN(ctx, s, g, oldN, "old"); err != nil {
			t.Fatal(err)
		}
		w := watchCounts(ctx, s, g, 2)
		if _, err := replaceN(ctx, s, g, newN, "new"); err != nil {
			t.Fatal(err)
		}
		// Let the readers go on until one has read after the commit: under
		// load a Virtuoso COUNT can take seconds.
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline) && !w.saw(newN); {
			time.Sleep(50 * time.Millisecond)
		}
		seen := w.stop()
		t.Logf("%s: counts seen during replace: %v", rs.name, seen)
		for c, n := range seen {
			if c == oldN || c == newN {
				continue
			}
			// Virtuoso readers are read-committed: a COUNT overlapping the
			// commit may mix the graphs, but never beyond them.
			if s.Profile().Quirks.ReadCommitted && c > 0 && c < oldN+newN {
				t.Logf("%d reads saw %d triples while the swap committed (read committed)", n, c)
				continue
			}
			t.Errorf("a reader saw %d triples; want %d or %d only", c, oldN, newN)
		}
		if seen[newN] == 0 {
			t.Errorf("no reader saw the new graph")
		}
	})
}

// cutProxy forwards TCP to target; once armed, it cuts the connection that
// carries the cutAt-th byte from client to server (only that one).
type cutProxy struct {
	ln      net.Listener
	target  string
	cutAt   atomic.Int64 // bytes from arming; 0 = off
	fwd     atomic.Int64
	cuts    atomic.Int32
	cutOnce atomic.Bool
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

func (p *cutProxy) arm(n int64) { p.fwd.Store(0); p.cutAt.Store(n) }

func (p *cutProxy) serve(c net.Conn) {
	defer c.Close()
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer s.Close()
	go func() { _, _ = io.Copy(c, s); c.Close() }()
	buf := make([]byte, 32<<10)
	for {
		k, err := c.Read(buf)
		if k > 0 {
			total := p.fwd.Add(int64(k))
			if at := p.cutAt.Load(); at > 0 && total >= at && p.cutOnce.CompareAndSwap(false, true) {
				// Forward part of it, then reset both sides mid-request.
				_, _ = s.Write(buf[:k/2])
				p.cuts.Add(1)
				if tc, ok := c.(*net.TCPConn); ok {
					_ = tc.SetLinger(0)
				}
				return
			}
			if _, werr := s.Write(buf[:k]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *cutProxy) base(t *testing.T, storeBase string) string {
	u, err := url.Parse(storeBase)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = p.ln.Addr().String()
	return u.String()
}

func hostOf(t *testing.T, base string) string {
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// TestFailureConnectionCut: the connection drops mid-batch. Without retries
// the upload fails and the old graph stays; with retries it completes.
func TestFailureConnectionCut(t *testing.T) {
	const oldN, newN = 5_000, 40_000
	forEachStore(t, func(t *testing.T, rs realStore, base string) {
		ctx := context.Background()
		direct := openStore(t, rs.profile, base, loader.Options{})
		px := newCutProxy(t, hostOf(t, base))
		viaBase := px.base(t, base)
		g := runGraph("cut")
		t.Cleanup(func() { _ = direct.Drop(context.Background(), g) })
		if _, err := replaceN(ctx, direct, g, oldN, "old"); err != nil {
			t.Fatal(err)
		}
		sample := storetest.Triple(3, "old")

		t.Run("NoRetry", func(t *testing.T) {
			s := openStore(t, rs.profile, viaBase, loader.Options{BatchSize: 10_000, Retries: -1, Upload: loader.UploadBatches})
			px.cutOnce.Store(false)
			px.arm(2_500_000) // inside the second or third batch
			_, err := replaceN(ctx, s, g, newN, "new")
			if err == nil {
				t.Fatalf("no error although the proxy cut a connection (%d cuts)", px.cuts.Load())
			}
			t.Logf("error: %v", err)
			var le *loader.Error
			if !errors.As(err, &le) || !strings.Contains(le.Hint, "previous graph is unchanged") {
				t.Errorf("err = %v; want *loader.Error saying the previous graph is unchanged", err)
			}
			mustCount(t, direct, g, oldN)
			if ok, err := has(ctx, direct.Client(), g, sample); err != nil || !ok {
				t.Errorf("sample triple gone: %v %v", ok, err)
			}
			if tg := tempGraphs(t, direct, g); len(tg) > 0 {
				t.Errorf("temporary graphs left: %v", tg)
			}
		})
		t.Run("Retry", func(t *testing.T) {
			s := openStore(t, rs.profile, viaBase, loader.Options{BatchSize: 10_000, RetryBackoff: 10 * time.Millisecond, Upload: loader.UploadBatches})
			px.cutOnce.Store(false)
			px.arm(2_500_000)
			if _, err := replaceN(ctx, s, g, newN, "new"); err != nil {
				t.Fatalf("with retries: %v", err)
			}
			if px.cuts.Load() < 2 {
				t.Errorf("proxy cut %d connections; want 2 (one per subtest)", px.cuts.Load())
			}
			mustCount(t, direct, g, newN)
			if tg := tempGraphs(t, direct, g); len(tg) > 0 {
				t.Errorf("temporary graphs left: %v", tg)
			}
		})
	})
}

// failProxy is an HTTP reverse proxy that answers 503 to the k-th batch
// request (a GSP POST or PUT, or an INSERT DATA update), times times.
type failProxy struct {
	srv     *httptest.Server
	k       int
	times   int
	batches atomic.Int32
	failed  atomic.Int32
}

func newFailProxy(t *testing.T, storeBase string, k, times int) *failProxy {
	target, err := url.Parse(storeBase)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	fp := &failProxy{k: k, times: times}
	fp.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		isBatch := (r.Method == http.MethodPost || r.Method == http.MethodPut) && strings.Contains(r.URL.RawQuery, "graph=") ||
			r.Method == http.MethodPost && r.ContentLength > 100_000
		if isBatch {
			n := int(fp.batches.Add(1))
			// Retries of batch k arrive as the next requests.
			if n >= k && int(fp.failed.Load()) < times {
				fp.failed.Add(1)
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Retry-After", "0")
				http.Error(w, "injected outage", http.StatusServiceUnavailable)
				return
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(fp.srv.Close)
	return fp
}

func (fp *failProxy) base(t *testing.T, storeBase string) string {
	u, _ := url.Parse(storeBase)
	p, _ := url.Parse(fp.srv.URL)
	u.Host = p.Host
	return u.String()
}

// TestFailure503: the k-th batch gets 503. Once is retried; always fails
// the upload with the status, keeping the old graph and no temp graph.
func TestFailure503(t *testing.T) {
	const oldN, newN = 5_000, 40_000
	tests := []struct {
		name    string
		times   int
		wantErr bool
	}{
		{"Once", 1, false},
		{"Always", 1000, true},
	}
	forEachStore(t, func(t *testing.T, rs realStore, base string) {
		ctx := context.Background()
		direct := openStore(t, rs.profile, base, loader.Options{})
		g := runGraph("503")
		t.Cleanup(func() { _ = direct.Drop(context.Background(), g) })
		if _, err := replaceN(ctx, direct, g, oldN, "old"); err != nil {
			t.Fatal(err)
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				fp := newFailProxy(t, base, 3, tt.times)
				s := openStore(t, rs.profile, fp.base(t, base),
					loader.Options{BatchSize: 10_000, Retries: 3, RetryBackoff: 5 * time.Millisecond, Upload: loader.UploadBatches})
				_, err := replaceN(ctx, s, g, newN, "new")
				if fp.failed.Load() == 0 {
					t.Fatalf("proxy saw %d batches and failed none", fp.batches.Load())
				}
				if !tt.wantErr {
					if err != nil {
						t.Fatalf("after one 503: %v", err)
					}
					mustCount(t, direct, g, newN)
					// Back to the old data for the next case.
					if _, err := replaceN(ctx, direct, g, oldN, "old"); err != nil {
						t.Fatal(err)
					}
					return
				}
				var se *sparqlq.StatusError
				if !errors.As(err, &se) || se.StatusCode != http.StatusServiceUnavailable {
					t.Fatalf("err = %v; want a 503 *sparqlq.StatusError", err)
				}
				t.Logf("error: %v", err)
				if msg := err.Error(); !strings.Contains(msg, "batch 3") || !strings.Contains(msg, "HTTP 503") ||
					!strings.Contains(msg, "previous graph is unchanged") || !strings.Contains(msg, "temporary graph dropped") {
					t.Errorf("error %q does not say batch, status and outcome", msg)
				}
				mustCount(t, direct, g, oldN)
				if ok, err := has(ctx, direct.Client(), g, storetest.Triple(3, "old")); err != nil || !ok {
					t.Errorf("sample triple gone: %v %v", ok, err)
				}
				if tg := tempGraphs(t, direct, g); len(tg) > 0 {
					t.Errorf("temporary graphs left: %v", tg)
				}
			})
		}
	})
}

// TestUnreachable: nothing listens; the error says so and Unreachable holds.
func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	for _, profile := range []string{"oxigraph", "fuseki", "virtuoso", "generic-gsp"} {
		base := "http://" + addr
		if profile == "fuseki" {
			base += "/ds"
		}
		s := openStore(t, profile, base, loader.Options{Retries: 1, RetryBackoff: time.Millisecond})
		_, err := replaceN(context.Background(), s, "http://kgrag.test/g", 10, "")
		if err == nil || !loader.Unreachable(err) || !strings.Contains(err.Error(), "store unreachable at http://"+addr) {
			t.Errorf("%s: err = %v; want unreachable naming %s", profile, err, addr)
		}
	}
}

// TestServerStoppedMidUpload stops a private Oxigraph (persistent) while
// batches are being sent, then restarts it and checks the old graph.
func TestServerStoppedMidUpload(t *testing.T) {
	storeURL(t, realStores[0]) // needs oxigraph available
	if runtime.GOOS != "linux" {
		t.Skip("uses scripts/oxigraph.sh")
	}
	port, sh := privateServer(t, "oxigraph")
	base := "http://127.0.0.1:" + port
	ctx := context.Background()
	direct := openStore(t, "oxigraph", base, loader.Options{})
	g := runGraph("stopped")
	if _, err := replaceN(ctx, direct, g, 5_000, "old"); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	s := openStore(t, "oxigraph", base, loader.Options{BatchSize: 5_000, Retries: 2, RetryBackoff: 50 * time.Millisecond,
		Upload: loader.UploadBatches, Counter: loader.CounterFunc(func(int64) { once.Do(func() { sh("stop") }) })})
	_, err := replaceN(ctx, s, g, 60_000, "new")
	if err == nil {
		t.Fatal("no error although the server stopped")
	}
	t.Logf("error: %v", err)
	if !loader.Unreachable(err) || !strings.Contains(err.Error(), "store unreachable at "+base) {
		t.Errorf("error does not say the store is unreachable: %v", err)
	}
	if !strings.Contains(err.Error(), "could not be dropped") {
		t.Errorf("error does not say the temporary graph may remain: %v", err)
	}
	sh("start")
	mustCount(t, direct, g, 5_000)
	if ok, err := has(ctx, direct.Client(), g, storetest.Triple(3, "old")); err != nil || !ok {
		t.Errorf("sample triple gone after restart: %v %v", ok, err)
	}
	// Clean-up was impossible while the server was down; the leftover
	// batches sit in a temporary graph that the next user can drop.
	left, err := direct.DropTempGraphs(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("temporary graphs dropped after restart: %v", left)
	if len(left) != 1 {
		t.Errorf("DropTempGraphs dropped %d graphs; want the 1 left by the failed upload", len(left))
	}
	mustCount(t, direct, g, 5_000)
	if tg := tempGraphs(t, direct, g); len(tg) > 0 {
		t.Errorf("temporary graphs left after DropTempGraphs: %v", tg)
	}
}

// privateServer starts a store of its own by scripts/NAME.sh on a free
// port with its data in a temporary directory, stopped at cleanup. sh runs
// the script with a command (start, stop) for it.
func privateServer(t *testing.T, name string) (port string, sh func(cmd string)) {
	t.Helper()
	script, _ := filepath.Abs("../scripts/" + name + ".sh")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port = strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	dir := t.TempDir()
	sh = func(cmd string) {
		t.Helper()
		c := exec.Command(script, cmd, "--port", port, "--dir", dir)
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("%s.sh %s: %v\n%s", name, cmd, err, out)
		}
	}
	sh("start")
	t.Cleanup(func() { sh("stop") })
	return port, sh
}

// TestBatchSizes measures throughput per batch size. Opt in with
// KGRAG_BENCH_BATCH=1; it takes minutes.
func TestBatchSizes(t *testing.T) {
	if os.Getenv("KGRAG_BENCH_BATCH") != "1" {
		t.Skip("set KGRAG_BENCH_BATCH=1 to measure batch sizes")
	}
	const n = 100_000
	forEachStore(t, func(t *testing.T, rs realStore, base string) {
		g := runGraph("bench")
		for _, bs := range []int{2_000, 10_000, 25_000, 50_000, 100_000} {
			s := openStore(t, rs.profile, base, loader.Options{BatchSize: bs})
			best := time.Duration(1 << 62)
			for range 2 {
				start := time.Now()
				if _, err := replaceN(context.Background(), s, g, n, ""); err != nil {
					t.Fatal(err)
				}
				best = min(best, time.Since(start))
			}
			t.Logf("%s batch %6d: best %v = %.0f triples/s", rs.name, bs, best.Round(time.Millisecond), n/best.Seconds())
			_ = s.Drop(context.Background(), g)
		}
	})
}

// TestVirtuosoDigest loads through /sparql-graph-crud-auth and /sparql-auth
// with digest credentials (user kgrag/kgrag, made by scripts/virtuoso.sh),
// and checks that a wrong password gets 401 without showing it.
func TestVirtuosoDigest(t *testing.T) {
	base := storeURL(t, realStores[2])
	ctx := context.Background()
	s := openStore(t, "virtuoso", base, loader.Options{Auth: sparqlq.DigestAuth("kgrag", "kgrag"), BatchSize: 2_000})
	g := runGraph("digest")
	t.Cleanup(func() { _ = s.Drop(context.Background(), g) })
	if _, err := replaceN(ctx, s, g, 5_000, ""); err != nil {
		t.Fatalf("ReplaceGraph with digest: %v", err)
	}
	mustCount(t, s, g, 5_000)
	bad := openStore(t, "virtuoso", base, loader.Options{Auth: sparqlq.DigestAuth("kgrag", "not-the-password"), Retries: -1})
	_, err := bad.Count(ctx, g)
	var se *sparqlq.StatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong password: err = %v; want 401", err)
	}
	if strings.Contains(err.Error(), "not-the-password") {
		t.Errorf("error shows the password: %v", err)
	}
	// Without credentials the -auth endpoint refuses.
	anon, err := sparqlq.New(sparqlq.Config{QueryURL: base + "/sparql-auth"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := anon.Ask(ctx, "ASK {}"); !errors.As(err, &se) || se.StatusCode != http.StatusUnauthorized {
		t.Errorf("anonymous /sparql-auth: err = %v; want 401", err)
	}
}

// TestInsertDataMode runs the suite with the Graph Store Protocol turned off,
// so batches travel as INSERT DATA updates (the generic-update path).
func TestInsertDataMode(t *testing.T) {
	forEachStore(t, func(t *testing.T, rs realStore, base string) {
		p, err := loader.ProfileFor(rs.profile, base)
		if err != nil {
			t.Fatal(err)
		}
		p.Caps.GraphStore = false
		p.GraphStoreURL = ""
		p.Quirks.DropByGSP = false
		s, err := loader.Open(p, loader.Options{BatchSize: 700})
		if err != nil {
			t.Fatal(err)
		}
		storetest.Suite(t, storetest.Config{
			New:     func(*testing.T) loader.Store { return s },
			Triples: 2000,
			Has: func(ctx context.Context, g string, tr rdf.Triple) (bool, error) {
				return has(ctx, s.Client(), g, tr)
			},
		})
	})
}

// countWatcher counts a graph from readers in the background, as real
// readers would, and tallies what they saw.
type countWatcher struct {
	mu   sync.Mutex
	seen map[int64]int
	done chan struct{}
	wg   sync.WaitGroup
}

// watchCounts starts readers that count graph until stop.
func watchCounts(ctx context.Context, s *loader.SPARQLStore, graph string, readers int) *countWatcher {
	w := &countWatcher{seen: map[int64]int{}, done: make(chan struct{})}
	for range readers {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			for {
				select {
				case <-w.done:
					return
				default:
				}
				start := time.Now()
				c, err := s.Count(ctx, graph)
				took := time.Since(start)
				if err == nil {
					w.mu.Lock()
					w.seen[c]++
					w.mu.Unlock()
				}
				// A pause between reads, as real readers leave, and the
				// longer the slower the store answers: readers keeping a
				// loaded Virtuoso busy most of the time kept its MOVE
				// from committing within its 120 s limit (SR171), once
				// even with 10 ms pauses.
				time.Sleep(max(10*time.Millisecond, 2*took))
			}
		}()
	}
	return w
}

// saw reports whether a reader has seen count c.
func (w *countWatcher) saw(c int64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seen[c] > 0
}

// stop ends the readers and returns what they saw: count -> times.
func (w *countWatcher) stop() map[int64]int {
	close(w.done)
	w.wg.Wait()
	return w.seen
}
