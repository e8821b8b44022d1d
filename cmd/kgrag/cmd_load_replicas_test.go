package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/loader"
)

// fusekiCopies are the two Fuseki servers of scripts/fuseki-replicas.sh.
type fusekiCopies struct{ *scriptNodes }

func newFusekiCopies(t *testing.T) *fusekiCopies {
	t.Helper()
	return &fusekiCopies{newScriptNodes(t, "FUSEKI_REPLICAS", "fuseki-replicas.sh", 2)}
}

// graphOf reads graph from the store at u as sorted N-Triples lines,
// through the Graph Store Protocol: what the copy holds, read without
// kgrag's reader.
func graphOf(t *testing.T, u, graph string) []string {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, u+"/data?graph="+url.QueryEscape(graph), nil)
	req.Header.Set("Accept", "application/n-triples")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil // no such graph: empty
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET graph <%s> of %s: %s %v", graph, u, resp.Status, err)
	}
	var lines []string
	for l := range strings.SplitSeq(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	sort.Strings(lines)
	return lines
}

// dropAfter drops graphs from every copy when the test ends.
func (c *fusekiCopies) dropAfter(t *testing.T, graphs ...string) {
	t.Cleanup(func() {
		for _, u := range c.urls {
			if sc, _, err := storeClient(storeOptions{url: u, storeType: "fuseki"}); err == nil {
				for _, g := range graphs {
					_ = sc.Update(context.Background(), "DROP SILENT GRAPH <"+g+">")
				}
			}
		}
	})
}

// stampOf is the load record the copy at u holds for graph.
func stampOf(ctx context.Context, u, graph string) (string, error) {
	c, _, err := storeClient(storeOptions{url: u, storeType: "fuseki"})
	if err != nil {
		return "", err
	}
	return loader.Stamp(ctx, c, graph)
}

// killingProxy forwards to target and has copy n killed when the
// request carrying the after-th large body (a batch of the load) comes.
func killingProxy(t *testing.T, copies *fusekiCopies, n int, target string, after int32) (string, *atomic.Bool) {
	t.Helper()
	tu, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: tu.Scheme, Host: tu.Host})
	var batches atomic.Int32
	killed := &atomic.Bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > 32<<10 && batches.Add(1) == after && killed.CompareAndSwap(false, true) {
			copies.kill(t, n)
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + tu.Path, killed
}

// TestReplicasFaults loads two Fuseki copies of one store through kgrag
// (--store A,B) and takes each away under work: the copy a load writes
// to, mid-load; the copy kgrag serve reads from, while 8 clients ask.
// After each, every copy holds one edition whole (its triples read back
// by the Graph Store Protocol and compared), load --diff sends a copy
// that missed a load only its difference, and every answer comes from
// one edition, with the graph_version of that edition.
func TestReplicasFaults(t *testing.T) {
	copies := newFusekiCopies(t)
	f := newAskFixture(t)
	graph := fmt.Sprintf("http://example.org/kgrag-replicas-test/%d", rand.Uint32())
	copies.dropAfter(t, graph)
	both := strings.Join(copies.urls, ",")
	load := func(input, stores string, extra ...string) (string, int) {
		t.Helper()
		args := append([]string{"load", "--input", input, "--store", stores, "--store-type", "fuseki", "--graph", graph, "--store-retries", "1"}, extra...)
		_, stderr, code := runKgrag(t, args...)
		return stderr, code
	}

	// Edition 2: every entity description changed.
	ds, err := graphrag.Open(t.Context(), f.input)
	if err != nil {
		t.Fatal(err)
	}
	described := 0 // entities whose description the graph holds
	for i := range ds.Entities {
		ds.Entities[i].Description += v2Mark
		if !ds.Entities[i].Placeholder {
			described++
		}
	}
	ed2 := filepath.Join(t.TempDir(), "output")
	if err := graphrag.Write3x(t.Context(), ed2, ds); err != nil {
		t.Fatal(err)
	}

	// Edition 1 on both copies, alike.
	if stderr, code := load(f.input, both, "--diff"); code != 0 {
		t.Fatalf("load of edition 1: exit %d: %s", code, stderr)
	}
	g1 := graphOf(t, copies.urls[0], graph)
	if g := graphOf(t, copies.urls[1], graph); !slices.Equal(g, g1) || len(g1) == 0 {
		t.Fatalf("the copies differ after a load into both: %d and %d triples", len(g1), len(g))
	}
	stamp1, _ := stampOf(t.Context(), copies.urls[0], graph)

	t.Run("copy killed mid-load", func(t *testing.T) {
		// Copy 2, reached through a proxy that kills it at the load's
		// third batch: copy 1 takes the load, copy 2 dies under it. A
		// --diff whose change is over --diff-max replaces the graph by
		// batches and records it, as every load into copies should.
		second, killed := killingProxy(t, copies, 2, copies.urls[1], 3)
		stderr, code := load(ed2, copies.urls[0]+","+second, "--diff", "--diff-max", "0.01", "--batch-size", "2000")
		if !killed.Load() {
			t.Fatalf("the load never reached its third batch to copy 2 (exit %d): %s", code, stderr)
		}
		if code == 0 {
			t.Fatalf("the load succeeded with copy 2 killed under it: %s", stderr)
		}
		for _, want := range []string{"loaded 1 of 2 copies", copies.urls[0], strings.TrimPrefix(second, "http://"), "holds the graph it held before"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("the failed load's message does not say %q:\n%s", want, stderr)
			}
		}
		g2 := graphOf(t, copies.urls[0], graph)
		if len(g2) == 0 || slices.Equal(g2, g1) || strings.Count(strings.Join(g2, "\n"), v2Mark) != described {
			t.Fatalf("copy 1 does not hold edition 2 whole after the load (%d triples, %d marked descriptions of %d)",
				len(g2), strings.Count(strings.Join(g2, "\n"), v2Mark), described)
		}
		copies.restart(t, 2)
		if g := graphOf(t, copies.urls[1], graph); !slices.Equal(g, g1) {
			t.Fatalf("copy 2 killed mid-load holds %d triples after its restart, not edition 1's %d", len(g), len(g1))
		}
		if st, err := stampOf(t.Context(), copies.urls[1], graph); err != nil || st != stamp1 {
			t.Fatalf("copy 2's load record is %q (%v), want edition 1's %q", st, err, stamp1)
		}
	})
	if t.Failed() {
		return
	}

	t.Run("copy killed under questions", func(t *testing.T) {
		// Copy 1 holds edition 2, copy 2 edition 1: serve reads copy 1
		// until it dies, then copy 2. No answer may mix them.
		proc := startServeProc(t, "--store", both, "--store-type", "fuseki", "--graph", graph,
			"--index", f.index, "--llm-url", f.srv.URL(), "--embed-model", askEmbedModel, "--chat-model", "test-chat")
		for deadline := time.Now().Add(60 * time.Second); proc.version() == 0; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("serve not ready in 60 s:\n%s", proc.out)
			}
		}
		questions := askQuestions(t, f)
		var (
			mu       sync.Mutex
			failures []string
			mixed    int
			versions = map[int]map[uint64]bool{1: {}, 2: {}}
			editions = map[int]int{}
		)
		ctx, stop := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		for c := range 8 {
			wg.Go(func() {
				for i := 0; ctx.Err() == nil; i++ {
					r, err := proc.ask(ctx, questions[(c+i)%len(questions)])
					if ctx.Err() != nil {
						return
					}
					mu.Lock()
					switch e := r.edition(); {
					case err != nil:
						failures = append(failures, err.Error())
					case e == 0:
						mixed++
					default:
						editions[e]++
						versions[e][r.GraphVersion] = true
					}
					mu.Unlock()
				}
			})
		}
		// Until enough answers came from each side of the kill, as fast as
		// the machine allows.
		answered := func(edition, n int) {
			t.Helper()
			for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				mu.Lock()
				got := editions[edition]
				mu.Unlock()
				if got >= n {
					return
				}
				if time.Now().After(deadline) {
					t.Errorf("only %d answers from edition %d in 60 s", got, edition)
					return
				}
			}
		}
		answered(2, 8)
		copies.kill(t, 1)
		answered(1, 16)
		stop()
		wg.Wait()
		t.Logf("8 clients, copy 1 killed under them: editions answered %v, %d failed, %d mixed", editions, len(failures), mixed)
		if len(failures) > 0 {
			t.Errorf("%d questions failed when copy 1 died; first: %s", len(failures), failures[0])
		}
		if mixed > 0 {
			t.Errorf("%d answers mix the two editions", mixed)
		}
		if editions[1] == 0 || editions[2] == 0 {
			t.Errorf("editions answered %v: want edition 2 (copy 1) before the kill and edition 1 (copy 2) after", editions)
		}
		// One graph_version per edition, and none shared.
		for v := range versions[1] {
			if versions[2][v] {
				t.Errorf("graph_version %d answered from both editions", v)
			}
		}
		copies.restart(t, 1)
	})
	if t.Failed() {
		return
	}

	t.Run("copies converge", func(t *testing.T) {
		// The killed load's lock stands in copy 2 for loader.LockStale:
		// no load runs now, so break it.
		stderr, code := load(ed2, both, "--diff", "--break-lock")
		if code != 0 {
			t.Fatalf("load --diff after the faults: exit %d: %s", code, stderr)
		}
		_, afterCopy2, _ := strings.Cut(stderr, "copy 2 of 2")
		afterCopy1, _, _ := strings.Cut(stderr, "copy 2 of 2")
		if !strings.Contains(afterCopy1, "already held") {
			t.Errorf("copy 1 held edition 2 already, but load --diff did not say it sent nothing:\n%s", stderr)
		}
		// Each changed description is one triple out and one in.
		n := described
		if want := fmt.Sprintf("sent a difference of %d triples deleted and %d inserted", n, n); !strings.Contains(afterCopy2, want) {
			t.Errorf("copy 2 was not sent only its difference (%s):\n%s", want, stderr)
		}
		g := graphOf(t, copies.urls[0], graph)
		if g2 := graphOf(t, copies.urls[1], graph); !slices.Equal(g, g2) {
			t.Fatalf("the copies differ after load --diff: %d and %d triples", len(g), len(g2))
		}
		s1, _ := stampOf(t.Context(), copies.urls[0], graph)
		s2, _ := stampOf(t.Context(), copies.urls[1], graph)
		if s1 != s2 || s1 == stamp1 || s1 == "" {
			t.Errorf("load records after convergence: %q and %q (edition 1's %q)", s1, s2, stamp1)
		}
	})
}

// TestReplicatedByStore: with --replicated-by store a load goes to the
// first copy that answers, and once it has sent anything never moves to
// another (which may not hold its batches yet).
func TestReplicatedByStore(t *testing.T) {
	copies := newFusekiCopies(t)
	in := filepath.Join(test.GraphRAGSamples(t), "v3")
	graph := fmt.Sprintf("http://example.org/kgrag-replicated-by-test/%d", rand.Uint32())
	copies.dropAfter(t, graph)
	load := func(stores string) (string, int) {
		t.Helper()
		_, stderr, code := runKgrag(t, "load", "--input", in, "--store", stores, "--store-type", "fuseki", "--graph", graph,
			"--replicated-by", "store", "--store-retries", "1", "--batch-size", "2000", "--break-lock")
		return stderr, code
	}
	size := func(u string) int { return len(graphOf(t, u, graph)) }

	t.Run("first copy down", func(t *testing.T) {
		copies.kill(t, 1)
		stderr, code := load(strings.Join(copies.urls, ","))
		if code != 0 {
			t.Fatalf("exit %d with copy 2 up: %s", code, stderr)
		}
		if !strings.Contains(stderr, "loading through "+copies.urls[1]) || !strings.Contains(stderr, copies.urls[0]) {
			t.Errorf("the load does not say it went to copy 2 for want of copy 1:\n%s", stderr)
		}
		copies.restart(t, 1)
		if n1, n2 := size(copies.urls[0]), size(copies.urls[1]); n1 != 0 || n2 == 0 {
			t.Fatalf("copy 1 holds %d triples and copy 2 %d; want the load on copy 2 alone", n1, n2)
		}
	})
	t.Run("copy dies mid-load", func(t *testing.T) {
		before := graphOf(t, copies.urls[1], graph)
		first, killed := killingProxy(t, copies, 1, copies.urls[0], 3)
		stderr, code := load(first + "," + copies.urls[1])
		if !killed.Load() || code == 0 {
			t.Fatalf("killed %v, exit %d: want the load to fail with copy 1 killed under it: %s", killed.Load(), code, stderr)
		}
		copies.restart(t, 1)
		if n := size(copies.urls[0]); n != 0 {
			t.Errorf("copy 1, killed mid-load, holds %d triples of the graph; want none (the swap never ran)", n)
		}
		if g := graphOf(t, copies.urls[1], graph); !slices.Equal(g, before) {
			t.Errorf("the load moved to copy 2 after sending to copy 1: it holds %d triples, had %d", len(g), len(before))
		}
	})
}

// TestReplicasMessages: a load into copies that are all down names each,
// without the credentials in their URLs, and exits 10.
func TestReplicasMessages(t *testing.T) {
	in := filepath.Join(test.GraphRAGSamples(t), "v3")
	dead := []string{"http://kg:s3cret-one@127.0.0.1:1/ds", "http://kg:s3cret-two@127.0.0.1:2/ds"}
	for _, by := range []string{replicatedByKgrag, replicatedByStore} {
		t.Run(by, func(t *testing.T) {
			_, stderr, code := runKgrag(t, "load", "--input", in, "--store", strings.Join(dead, ","), "--store-type", "fuseki",
				"--graph", "http://example.org/g", "--replicated-by", by, "--store-retries", "0")
			if code != exitStoreDown {
				t.Errorf("exit %d, want %d: %s", code, exitStoreDown, stderr)
			}
			for _, want := range []string{"127.0.0.1:1/ds", "127.0.0.1:2/ds"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("the message does not name %s:\n%s", want, stderr)
				}
			}
			if strings.Contains(stderr, "s3cret") {
				t.Errorf("the message shows a password:\n%s", stderr)
			}
		})
	}
}

// TestReplicasLag measures what copies cost: the time from a load's
// commit on one copy to its visibility on the other (kgrag loads them at
// once), over repeated small diffs, and a load's time into both copies
// against one, in one run. Both copies must show every load and hold
// the same graph at the end.
func TestReplicasLag(t *testing.T) {
	copies := newFusekiCopies(t)
	in := filepath.Join(test.GraphRAGSamples(t), "v3")
	base := fmt.Sprintf("http://example.org/kgrag-replicas-lag/%d", rand.Uint32())
	single, graph := base+"/single", base+"/copies"
	copies.dropAfter(t, base+"/warm", single+"/0", single+"/1", single+"/2", graph+"/0", graph+"/1", graph)
	both := strings.Join(copies.urls, ",")
	load := func(input, stores, g string) time.Duration {
		t.Helper()
		t0 := time.Now()
		if _, stderr, code := runKgrag(t, "load", "-q", "--diff", "--input", input, "--store", stores, "--store-type", "fuseki", "--graph", g); code != 0 {
			t.Fatalf("load into %s: exit %d: %s", stores, code, stderr)
		}
		return time.Since(t0)
	}
	// The first load of a graph, into one copy and into both, in turns
	// after a load that warms both JVMs; the median of three each.
	load(in, both, base+"/warm")
	var one, two []time.Duration
	for r := range 3 {
		one = append(one, load(in, copies.urls[0], fmt.Sprintf("%s/%d", single, r)))
		g := graph
		if r < 2 {
			g = fmt.Sprintf("%s/%d", graph, r)
		}
		two = append(two, load(in, both, g))
	}
	slices.Sort(one)
	slices.Sort(two)
	t.Logf("first load of the v3 sample (33,260 triples), median of 3: one Fuseki %v, two copies %v: ratio %.2f",
		one[1].Round(time.Millisecond), two[1].Round(time.Millisecond), two[1].Seconds()/one[1].Seconds())

	ds, err := graphrag.Open(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	const rounds = 10
	var lags []time.Duration
	for i := range rounds {
		// A small change: one entity's description.
		e := &ds.Entities[i]
		e.Description += fmt.Sprintf(" [revision %d]", i+1)
		out := filepath.Join(t.TempDir(), "output")
		if err := graphrag.Write3x(t.Context(), out, ds); err != nil {
			t.Fatal(err)
		}
		before, err := stampOf(t.Context(), copies.urls[1], graph)
		if err != nil || before == "" {
			t.Fatalf("copy 2 has no load record (%v)", err)
		}
		// Each copy's record, polled while the load runs: the moment it
		// changes is the moment a reader of that copy sees the new graph.
		seen := make([]time.Time, 2)
		ctx, stop := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		for c, u := range copies.urls {
			wg.Go(func() {
				for ctx.Err() == nil {
					if st, err := stampOf(ctx, u, graph); err == nil && st != before {
						seen[c] = time.Now()
						return
					}
					time.Sleep(2 * time.Millisecond)
				}
			})
		}
		load(out, both, graph)
		deadline := time.AfterFunc(10*time.Second, stop)
		wg.Wait()
		deadline.Stop()
		stop()
		if seen[0].IsZero() || seen[1].IsZero() {
			t.Fatalf("round %d: a copy never showed the new load (seen at %v)", i+1, seen)
		}
		// The copies load at once: the lag is from the first commit seen
		// to the last.
		lags = append(lags, max(seen[1].Sub(seen[0]), seen[0].Sub(seen[1])))
	}
	s1, _ := stampOf(t.Context(), copies.urls[0], graph)
	s2, _ := stampOf(t.Context(), copies.urls[1], graph)
	if s1 != s2 || !slices.Equal(graphOf(t, copies.urls[0], graph), graphOf(t, copies.urls[1], graph)) {
		t.Fatalf("the copies differ after %d loads", rounds)
	}
	slices.Sort(lags)
	p := func(q float64) time.Duration { return lags[int(q*float64(len(lags)-1)+0.5)].Round(time.Millisecond) }
	t.Logf("commit on one copy to visibility on the other over %d one-entity diffs: p50 %v, p95 %v (min %v, max %v)",
		rounds, p(0.5), p(0.95), lags[0].Round(time.Millisecond), lags[len(lags)-1].Round(time.Millisecond))
}

// TestStoreCopiesValidate: what --store A,B and --replicated-by accept.
func TestStoreCopiesValidate(t *testing.T) {
	tests := []struct {
		name, url, kind, by string
		wantKind            string
		wantErr             string
		wantEndpoints       int
	}{
		{"two Fusekis", "http://a:3030/ds, http://b:3030/ds", "", "", "fuseki", "", 2},
		{"repeated", "http://a:3030/ds,http://a:3030/ds,", "", "", "fuseki", "", 1},
		{"two kinds", "http://a:3030/ds,http://b:7878", "", "", "", "copies of one store are of one kind", 0},
		{"kind given", "http://a:9999/ds,http://b:9998/ds", "fuseki", "store", "fuseki", "", 2},
		{"unknown second", "http://a:3030/ds,http://b:1234/x", "", "", "", "cannot tell what kind of store http://b:1234/x", 0},
		{"commas only", ",", "", "", "", "--store names no URL", 0},
		{"bad replicated-by", "http://a:3030/ds,http://b:3030/ds", "", "raft", "", "--replicated-by must be kgrag or store", 0},
		{"not a URL", "http://a:3030/ds,ftp://b/ds", "fuseki", "", "", "not an http(s) URL", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := storeOptions{url: tt.url, storeType: tt.kind, replicatedBy: tt.by, graph: "http://example.org/g", authScheme: "basic", batchSize: 1}
			err := o.validate()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want one with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.storeType != tt.wantKind || len(o.endpoints()) != tt.wantEndpoints {
				t.Errorf("kind %q, %d endpoints; want %q, %d", o.storeType, len(o.endpoints()), tt.wantKind, tt.wantEndpoints)
			}
		})
	}
}
