package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/loader"
	"github.com/kgrag/kgrag/ontology"
	"github.com/kgrag/kgrag/sparqlq"
)

// testStores lists the real stores of the test run: profile name and the
// KGRAG_TEST_* variable scripts/services.sh sets.
func testStores() []struct{ profile, env string } {
	return []struct{ profile, env string }{
		{"oxigraph", "OXIGRAPH"},
		{"fuseki", "FUSEKI"},
		{"virtuoso", "VIRTUOSO"},
	}
}

// oracleCounts runs scripts/oracle/counts.py, which counts instances per
// class from the parquet files with pyarrow alone.
func oracleCounts(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	m, _ := oracle(t, dir)
	return m
}

// oracleLeftOut is what counts.py leaves out of each table by the
// documented rule: {"malformed": n, "depends": m}.
func oracleLeftOut(t *testing.T, dir string) map[string]map[string]int {
	t.Helper()
	_, left := oracle(t, dir)
	return left
}

// oracle runs counts.py once for both.
func oracle(t *testing.T, dir string) (map[string]int64, map[string]map[string]int) {
	t.Helper()
	script := filepath.Join(test.RepoRoot(t), "scripts", "oracle", "counts.py")
	out, err := exec.Command("python3", script, dir).Output()
	if err != nil {
		test.SkipOrFail(t, "python3 with pyarrow is needed for the oracle: %v", err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(out, &raw); err != nil {
		t.Fatalf("oracle output %q: %v", out, err)
	}
	m := map[string]int64{}
	var left map[string]map[string]int
	for k, v := range raw {
		var err error
		if k == "left_out" {
			err = json.Unmarshal(v, &left)
		} else {
			var n int64
			err = json.Unmarshal(v, &n)
			m[k] = n
		}
		if err != nil {
			t.Fatalf("oracle output %q: %s: %v", out, k, err)
		}
	}
	return m, left
}

// classCounts asks the store how many instances of each gr: class graph
// holds; "Entity" counts resolved entities and "UnresolvedEntity" the rest.
func classCounts(ctx context.Context, t *testing.T, c *sparqlq.Client, graph string) map[string]int64 {
	t.Helper()
	q := fmt.Sprintf(`PREFIX gr: <%s>
SELECT ?class (COUNT(DISTINCT ?s) AS ?n) WHERE {
  GRAPH <%s> {
    ?s a ?c .
    OPTIONAL { ?s gr:unresolved ?u }
    BIND(IF(BOUND(?u), gr:UnresolvedEntity, ?c) AS ?class)
  }
} GROUP BY ?class`, ontology.NS, graph)
	res, err := c.Select(ctx, q)
	if err != nil {
		t.Fatalf("count classes: %v", err)
	}
	got := map[string]int64{}
	for _, row := range res.Bindings {
		n, err := row["n"].Int()
		if err != nil {
			t.Fatal(err)
		}
		got[strings.TrimPrefix(row["class"].Value, ontology.NS)] = n
	}
	return got
}

func openTestStore(t *testing.T, profile, url string) *loader.SPARQLStore {
	t.Helper()
	p, err := loader.ProfileFor(profile, url)
	if err != nil {
		t.Fatal(err)
	}
	st, err := loader.Open(p, loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestLoadStores loads every sample into every real store and checks, per
// class, that the store holds as many instances as the parquet files have
// rows (by the pyarrow oracle), that the total is what load reported, and
// that a reload, atomic or in place, leaves the same counts.
func TestLoadStores(t *testing.T) {
	samples := test.GraphRAGSamples(t)
	for _, s := range testStores() {
		t.Run(s.profile, func(t *testing.T) {
			url := test.Service(t, s.env)
			st := openTestStore(t, s.profile, url)
			for _, v := range test.Samples() {
				t.Run(v, func(t *testing.T) {
					ctx := context.Background()
					dir := filepath.Join(samples, v)
					want := oracleCounts(t, dir)
					for k, n := range want {
						if n == 0 {
							delete(want, k)
						}
					}
					graph := "http://kgrag.test/load/" + v
					// Two atomic replacements, then one in place.
					for round := 1; round <= 3; round++ {
						term, _, errb := testTerminal()
						opts := loadOptions{input: dir, base: "http://kgrag.test/" + v + "/", quiet: false,
							store: storeOptions{url: url, graph: graph, storeType: s.profile, authScheme: "basic",
								batchSize: 2000, retries: 2, timeout: loader.DefaultTimeout, inPlace: round == 3}}
						if err := runLoad(ctx, opts, term); err != nil {
							t.Fatalf("load round %d: %v", round, err)
						}
						got := classCounts(ctx, t, st.Client(), graph)
						if fmt.Sprint(got) != fmt.Sprint(want) {
							t.Errorf("round %d: instances per class = %v; want %v (pyarrow)", round, got, want)
						}
						total, err := st.Count(ctx, graph)
						if err != nil {
							t.Fatal(err)
						}
						if !strings.Contains(errb.String(), fmt.Sprintf("wrote %d triples", total)) {
							t.Errorf("round %d: store holds %d triples; load reported %q", round, total, errb.String())
						}
					}
				})
			}
		})
	}
}

// TestLoadStoreBadInput: bad input leaves the store's graph as it was.
func TestLoadStoreBadInput(t *testing.T) {
	samples := test.GraphRAGSamples(t)
	url := test.Service(t, "OXIGRAPH")
	st := openTestStore(t, "oxigraph", url)
	ctx := context.Background()
	graph := "http://kgrag.test/bad-input"
	good := loadOptions{input: filepath.Join(samples, "v2.5.0"), base: defaultBase, quiet: true,
		store: storeOptions{url: url, graph: graph, storeType: "oxigraph", authScheme: "basic", batchSize: 1000, timeout: loader.DefaultTimeout}}
	term, _, _ := testTerminal()
	if err := runLoad(ctx, good, term); err != nil {
		t.Fatal(err)
	}
	before, err := st.Count(ctx, graph)
	if err != nil || before == 0 {
		t.Fatalf("count after good load = %d, %v", before, err)
	}
	broken := copySample(t, filepath.Join(samples, "v3"))
	b, err := os.ReadFile(filepath.Join(broken, "relationships.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(broken, "relationships.parquet"), b[:len(b)-100], 0o644); err != nil {
		t.Fatal(err)
	}
	bad := good
	bad.input = broken
	err = runLoad(ctx, bad, term)
	if err == nil || !strings.Contains(err.Error(), "relationships.parquet") {
		t.Fatalf("load of a truncated file: %v; want an error naming relationships.parquet", err)
	}
	after, err := st.Count(ctx, graph)
	if err != nil || after != before {
		t.Errorf("graph holds %d triples after the failed load (err %v); want %d as before", after, err, before)
	}
	graphs, err := st.Graphs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range graphs {
		// Other packages' tests share the store: look at this graph's only.
		if strings.HasPrefix(g, graph+"#") && strings.Contains(g, loader.TempGraphMarker) {
			t.Errorf("temporary graph %s left in the store", g)
		}
	}
}

// slowStore is a proxy in front of the store at base that holds each batch
// 300 ms, so that a test can stop a load mid-upload; it returns the
// store's URL through the proxy.
func slowStore(base string) (string, *httptest.Server) {
	target, _ := url.Parse(base)
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	px := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.ContentLength > 5000 {
			time.Sleep(300 * time.Millisecond)
		}
		rp.ServeHTTP(w, r)
	}))
	return strings.Replace(base, target.Host, strings.TrimPrefix(px.URL, "http://"), 1), px
}

// waitTempGraph waits until a load of graph has put triples into its
// temporary graph: it is then mid-upload, whatever the machine's speed.
func waitTempGraph(t *testing.T, st *loader.SPARQLStore, graph string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		gs, err := st.Graphs(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range gs {
			if strings.HasPrefix(g, graph) && strings.Contains(g, loader.TempGraphMarker) {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no temporary graph of %s appeared within 60s", graph)
}

// TestLoadKilled: kgrag load killed (SIGKILL) mid-upload leaves its
// temporary graph and its lock. The next load says another load holds the
// graph, and does nothing; with --break-lock it loads, naming the
// temporary graph it dropped, and leaves none. A proxy in front of the
// store slows each batch, so that the kill lands mid-upload.
func TestLoadKilled(t *testing.T) {
	for _, st := range testStores() {
		t.Run(st.profile, func(t *testing.T) {
			base := test.Service(t, st.env)
			slow, px := slowStore(base)
			input := filepath.Join(test.GraphRAGSamples(t), "v3")
			graph := fmt.Sprintf("http://kgrag.test/killed/%d/%s", time.Now().UnixNano(), st.profile)
			args := func(store string, extra ...string) []string {
				// Batches into a temporary graph, also on Oxigraph, whose
				// default takes no temporary graph (TestBoundedFillStopped).
				return append([]string{"load", "-q", "--input", input, "--store", store, "--store-type", st.profile,
					"--graph", graph, "--batch-size", "500", "--upload", "batches"}, extra...)
			}
			direct := openTestStore(t, st.profile, base)
			t.Cleanup(func() { _ = direct.Drop(context.Background(), graph) })

			cmd := exec.Command(os.Args[0], args(slow)...)
			cmd.Env = append(os.Environ(), "KGRAG_TEST_RUN_MAIN=1")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitTempGraph(t, direct, graph)
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()
			// Let the requests the killed load left in the proxy reach the
			// store (or fail) before looking: a killed client's request
			// may still land, which the next load's clean-up then catches.
			px.Close()
			temps := func() []string {
				gs, err := direct.Graphs(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				var out []string
				for _, g := range gs {
					if strings.HasPrefix(g, graph) && strings.Contains(g, loader.TempGraphMarker) {
						out = append(out, g)
					}
				}
				return out
			}
			left := temps()
			if len(left) != 1 {
				t.Fatalf("after the kill: temporary graphs %v; want the killed load's one (was the kill mid-upload?)", left)
			}

			_, stderr, code := runKgrag(t, args(base)...)
			if code == 0 || !strings.Contains(stderr, "another load of this graph is running") || !strings.Contains(stderr, "--break-lock") && !strings.Contains(stderr, "abandoned") {
				t.Errorf("load after the kill: exit %d, %q; want a failure naming the other load's lock", code, stderr)
			}
			_, stderr, code = runKgrag(t, args(base, "--break-lock")...)
			if code != 0 || !strings.Contains(stderr, "dropped 1 temporary graphs that earlier loads") || !strings.Contains(stderr, left[0]) {
				t.Errorf("load --break-lock: exit %d, %q; want success naming %s", code, stderr, left[0])
			}
			if l := temps(); len(l) != 0 {
				t.Errorf("temporary graphs left after the load: %v", l)
			}
			n, err := direct.Count(context.Background(), graph)
			if err != nil || n < 29000 {
				t.Errorf("graph holds %d triples (%v); want the v3 sample", n, err)
			}
		})
	}
}

// TestLoadInterrupted: kgrag load interrupted (SIGINT, as Ctrl-C sends)
// mid-upload exits 130, and what it says of the temporary graph is what
// the store holds: "temporary graph dropped" only when none is left.
func TestLoadInterrupted(t *testing.T) {
	for _, st := range testStores() {
		t.Run(st.profile, func(t *testing.T) {
			base := test.Service(t, st.env)
			slow, px := slowStore(base)
			defer px.Close()
			graph := fmt.Sprintf("http://kgrag.test/interrupted/%d/%s", time.Now().UnixNano(), st.profile)
			direct := openTestStore(t, st.profile, base)
			t.Cleanup(func() { _ = direct.Drop(context.Background(), graph) })
			cmd := exec.Command(os.Args[0], "load", "-q", "--input", filepath.Join(test.GraphRAGSamples(t), "v3"), "--store", slow,
				"--store-type", st.profile, "--graph", graph, "--batch-size", "500", "--upload", "batches")
			cmd.Env = append(os.Environ(), "KGRAG_TEST_RUN_MAIN=1")
			var errb strings.Builder
			cmd.Stderr = &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitTempGraph(t, direct, graph)
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
				t.Errorf("exit %d; want %d: %s", code, exitInterrupted, errb.String())
			}
			gs, err := direct.Graphs(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var left []string
			for _, g := range gs {
				if strings.HasPrefix(g, graph) {
					left = append(left, g)
				}
			}
			said := errb.String()
			switch {
			case strings.Contains(said, "temporary graph dropped") && len(left) > 0:
				t.Errorf("it said the temporary graph was dropped, but the store holds %v: %s", left, said)
			case !strings.Contains(said, "temporary graph dropped") && !strings.Contains(said, "the next load of this graph drops"):
				t.Errorf("stderr %q says nothing of the temporary graph", said)
			}
			t.Logf("%s; left: %v", said, left)
		})
	}
}
