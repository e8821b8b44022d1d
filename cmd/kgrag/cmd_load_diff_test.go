package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kgrag/kgrag/internal/indexer/indexertest"
	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/loader"
	"github.com/kgrag/kgrag/loader/storetest"
	"github.com/kgrag/kgrag/ontology"
)

// TestLoadDiffAcrossUpdates follows A Christmas Carol's five staves as a
// folder changes (staves 1-3, stave 4 added, a sentence of stave 2 edited,
// stave 1 deleted), indexing with the scripted model over the same output
// each time. After each step the output is loaded into Oxigraph and Fuseki
// with --diff, and without it into a second graph: the store must find the
// two graphs equal, triple for triple. Then a load is killed while its
// difference is on its way, someone else writes into the graph, and each
// time the graph must still end up equal to a full load.
func TestLoadDiffAcrossUpdates(t *testing.T) {
	book := test.ChristmasCarol(t)
	staves, err := indexertest.SplitStaves(book)
	if err != nil {
		t.Fatal(err)
	}
	steps, err := indexertest.UpdateSteps(staves)
	if err != nil {
		t.Fatal(err)
	}
	stores := []struct {
		profile, url string
		st           *loader.SPARQLStore
	}{
		{profile: "oxigraph", url: test.Service(t, "OXIGRAPH")},
		{profile: "fuseki", url: test.Service(t, "FUSEKI")},
	}
	run := fmt.Sprintf("%d", time.Now().UnixNano())
	graph := func(p, name string) string { return "http://kgrag.test/diff/" + run + "/" + p + "/" + name }
	for i := range stores {
		stores[i].st = openTestStore(t, stores[i].profile, stores[i].url)
		s := stores[i]
		t.Cleanup(func() {
			_ = s.st.Drop(context.Background(), graph(s.profile, "live"))
			_ = s.st.Drop(context.Background(), graph(s.profile, "full"))
		})
	}
	srv, _ := indexertest.Model(t)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "input"), filepath.Join(dir, "output")
	ctx := context.Background()
	load := func(t *testing.T, profile, url, g string, diff bool) string {
		t.Helper()
		term, _, errb := testTerminal()
		opts := loadOptions{input: out, base: "http://kgrag.test/carol/",
			store: storeOptions{url: url, graph: g, storeType: profile, authScheme: "basic",
				batchSize: 5000, retries: 2, timeout: loader.DefaultTimeout, diff: diff, diffMax: 0.5}}
		if err := runLoad(ctx, opts, term); err != nil {
			t.Fatalf("load (diff %v): %v\n%s", diff, err, errb)
		}
		return errb.String()
	}
	index := func(t *testing.T, step indexertest.Step, out string) {
		t.Helper()
		if err := indexertest.WriteFolder(in, step.Files); err != nil {
			t.Fatal(err)
		}
		var errb bytes.Buffer
		if err := runIndex(ctx, indexRunOptions{
			input: in, output: out, cache: filepath.Join(dir, "cache"), chatModel: "m",
			concurrency: 2, chunkSize: 1200, overlap: 100, maxGleanings: 1, entityTypes: "person,geo,event",
			quiet: true, llm: llmOptions{url: srv.URL()},
		}, terminal{out: &bytes.Buffer{}, err: &errb}); err != nil {
			t.Fatalf("%s: index: %v\n%s", step.Name, err, errb.String())
		}
	}
	for k, step := range steps {
		index(t, step, out)
		for _, s := range stores {
			said := load(t, s.profile, s.url, graph(s.profile, "live"), true)
			load(t, s.profile, s.url, graph(s.profile, "full"), false)
			t.Logf("%s, %s: %s", step.Name, s.profile, strings.TrimSpace(said))
			want := "sent a difference"
			if k == 0 {
				want = "no record of an earlier diff load"
			}
			if !strings.Contains(said, want) {
				t.Errorf("%s, %s: load --diff said %q; want %q", step.Name, s.profile, said, want)
			}
			storetest.SameGraphs(t, s.st, graph(s.profile, "live"), graph(s.profile, "full"))
		}
	}

	// Provenance of a kgrag index: the documents' paths and the run's
	// model and prompts come from the run record beside the tables.
	for _, s := range stores {
		res, err := s.st.Client().Select(ctx, fmt.Sprintf(`PREFIX gr: <%s>
SELECT ?path (COUNT(DISTINCT ?e) AS ?entities) ?model (COUNT(DISTINCT ?prompt) AS ?prompts) WHERE { GRAPH <%s> {
  ?run a gr:IndexRun ; gr:tool "kgrag" ; gr:chat_model ?model ; gr:used_prompt ?prompt ; <http://www.w3.org/ns/prov#used> ?doc .
  ?doc gr:source_path ?path .
  ?e a gr:Entity ; <http://www.w3.org/ns/prov#wasDerivedFrom> ?doc ; <http://www.w3.org/ns/prov#wasGeneratedBy> ?run .
} } GROUP BY ?path ?model ORDER BY ?path`, ontology.NS, graph(s.profile, "live")))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, b := range res.Bindings {
			got = append(got, fmt.Sprintf("%s %s %s", b["path"].Value, b["model"].Value, b["prompts"].Value))
		}
		want := []string{"stave-2.txt m 5", "stave-3.txt m 5", "stave-4.txt m 5"}
		if !slices.Equal(got, want) {
			t.Errorf("%s: documents of the run's entities %q; want %q", s.profile, got, want)
		}
	}

	// The folder as it was before stave 1 went, for a load to kill.
	before := filepath.Join(dir, "before")
	index(t, steps[len(steps)-2], before)
	for _, s := range stores {
		t.Run(s.profile, func(t *testing.T) {
			live, full := graph(s.profile, "live"), graph(s.profile, "full")
			// Someone else writes into the graph: detected, replaced.
			if err := s.st.Client().Update(ctx, fmt.Sprintf(
				`INSERT DATA { GRAPH <%s> { <http://kgrag.test/carol/x> <http://www.w3.org/2000/01/rdf-schema#label> "not kgrag's" } }`, live)); err != nil {
				t.Fatal(err)
			}
			if said := load(t, s.profile, s.url, live, true); !strings.Contains(said, "changed by someone else") {
				t.Errorf("after an outside change: %q; want it detected", said)
			}
			storetest.SameGraphs(t, s.st, live, full)

			// A load killed while its difference is on the way leaves
			// the graph as it was.
			killedDiffLoad(t, s.profile, s.url, s.st, before, out, live, full)
		})
	}
}

// killedDiffLoad runs `kgrag load --diff` of another output (before) into
// live, in a process of its own, through a proxy that holds the update
// carrying the difference, and kills the process there. live must still
// equal full; and a load of out with --break-lock (the killed load's lock
// stands) must find the graph unchanged, record included.
func killedDiffLoad(t *testing.T, profile, storeURL string, st *loader.SPARQLStore, before, out, live, full string) {
	t.Helper()
	held := make(chan struct{})
	var once sync.Once
	target, _ := url.Parse(storeURL)
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	px := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			if bytes.Contains(body, []byte("DELETE+DATA")) || bytes.Contains(body, []byte("DELETE DATA")) {
				once.Do(func() { close(held) })
				<-r.Context().Done() // until the client is gone; never forwarded
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
		}
		rp.ServeHTTP(w, r)
	}))
	defer px.Close()
	via := strings.Replace(storeURL, target.Host, strings.TrimPrefix(px.URL, "http://"), 1)
	args := func(store, input string, extra ...string) []string {
		return append([]string{"load", "--input", input, "--store", store, "--store-type", profile,
			"--graph", live, "--diff", "--base", "http://kgrag.test/carol/"}, extra...)
	}
	cmd := exec.Command(os.Args[0], args(via, before, "--diff-max", "0.5")...)
	tmp := t.TempDir() // the killed load's temporary files
	cmd.Env = append(os.Environ(), "KGRAG_TEST_RUN_MAIN=1", "TMPDIR="+tmp)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("the diff load's update never reached the proxy")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	storetest.SameGraphs(t, st, live, full)
	if left, _ := filepath.Glob(filepath.Join(tmp, "kgrag-diff-*")); len(left) > 0 {
		t.Errorf("the killed load left its spool of the graph read back: %v", left)
	}

	_, stderr, code := runKgrag(t, args(storeURL, out, "--break-lock")...)
	if code != 0 || !strings.Contains(stderr, "already held these") {
		t.Errorf("load after the kill: exit %d, %q; want the graph found unchanged", code, stderr)
	}
	storetest.SameGraphs(t, st, live, full)
}
