package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/indexer/indexertest"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
)

// chatCall is one chat request a chatGate saw: the hash of its model and
// messages, and which indexing prompt it was (indexertest.Kind).
type chatCall struct{ key, kind string }

// chatGate stands in front of a scripted llmtest server and lets the first
// limit chat requests through (all when limit < 0). Later ones are held,
// unanswered, until the client hangs up: a kgrag killed while they wait
// had them in flight. The gate records which requests were answered, so a
// test can tell what a resumed run asks again.
type chatGate struct {
	next    http.Handler
	limit   int
	release chan struct{} // closed when the test ends

	mu       sync.Mutex
	admitted int
	answered []chatCall
	held     []chatCall
}

// startGate serves a scripted model (indexertest.Script) with a latency
// per chat call behind a chatGate of limit, until the test ends.
func startGate(t *testing.T, limit int) (*chatGate, string) {
	t.Helper()
	srv := llmtest.New(llmtest.Config{Latency: 10 * time.Millisecond})
	indexertest.Script(srv)
	g := &chatGate{next: srv, limit: limit, release: make(chan struct{})}
	hs := httptest.NewServer(g)
	t.Cleanup(hs.Close)
	t.Cleanup(func() { close(g.release) }) // runs first: frees held handlers
	return g, hs.URL + "/v1"
}

func (g *chatGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		g.next.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	c := decodeCall(body)
	g.mu.Lock()
	if g.limit >= 0 && g.admitted >= g.limit {
		g.held = append(g.held, c)
		g.mu.Unlock()
		select {
		case <-r.Context().Done():
		case <-g.release:
		}
		return
	}
	g.admitted++
	g.mu.Unlock()
	g.next.ServeHTTP(w, r)
	g.mu.Lock()
	g.answered = append(g.answered, c)
	g.mu.Unlock()
}

// decodeCall hashes a chat request body's model and messages, as they
// were sent, and classifies it.
func decodeCall(body []byte) chatCall {
	var req struct {
		Model    string            `json:"model"`
		Messages json.RawMessage   `json:"messages"`
		Decoded  []llmtest.Message `json:"-"`
	}
	_ = json.Unmarshal(body, &req)
	_ = json.Unmarshal(req.Messages, &req.Decoded)
	h := sha256.New()
	h.Write([]byte(req.Model))
	h.Write([]byte{0})
	h.Write(req.Messages)
	return chatCall{key: hex.EncodeToString(h.Sum(nil)), kind: indexertest.Kind(llmtest.Request{Messages: req.Decoded})}
}

// calls returns the answered and the held calls so far.
func (g *chatGate) calls() (answered, held []chatCall) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.answered), slices.Clone(g.held)
}

// cacheEntries counts the replies stored in an llmcache folder (one
// KEY.json each) and lists any other file found there, such as the
// temporary file of an unfinished write.
func cacheEntries(t *testing.T, dir string) (n int, other []string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.HasSuffix(d.Name(), ".json") && !strings.HasPrefix(d.Name(), ".") {
			n++
		} else {
			other = append(other, p)
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return n, other
}

// kindCounts counts calls per indexertest kind.
func kindCounts(cs []chatCall) map[string]int {
	m := map[string]int{}
	for _, c := range cs {
		m[c.kind]++
	}
	return m
}

// indexArgs are the arguments of a kgrag index run against url.
func indexArgs(input, output, cache, url string) []string {
	return []string{"index", "-q", "--input", input, "--output", output, "--cache", cache, "--llm-url", url,
		"--chat-model", "m", "--concurrency", "3", "--chunk-size", "300", "--chunk-overlap", "30",
		"--max-gleanings", "1", "--entity-types", "person,geo,event", "--llm-retries", "0"}
}

// TestIndexResumeAfterKill kills a `kgrag index` process (SIGKILL, no
// chance to clean up) once it has been answered a given number of model
// calls, part way through extraction and part way through the reports,
// then runs it again with the same cache. The second run must ask the
// model nothing the first was answered: between them the two runs make
// exactly the calls of a clean run, and write the same tables. The calls
// are counted by the test's server, not by kgrag.
func TestIndexResumeAfterKill(t *testing.T) {
	input := indexertest.CarolInput(t, 2000)

	// The clean run, with an empty cache: the calls a run needs.
	clean, url := startGate(t, -1)
	cleanOut := filepath.Join(t.TempDir(), "output")
	start := time.Now()
	if _, stderr, code := runKgrag(t, indexArgs(input, cleanOut, filepath.Join(t.TempDir(), "cache"), url)...); code != 0 {
		t.Fatalf("clean kgrag index: exit %d: %s", code, stderr)
	}
	cleanCalls, _ := clean.calls()
	want := kindCounts(cleanCalls)
	t.Logf("clean run: %d calls %v in %s", len(cleanCalls), want, time.Since(start).Round(time.Millisecond))
	if want[indexertest.KindReport] < 2 {
		t.Fatalf("the clean run made %d report calls; the test needs at least 2 to stop between them", want[indexertest.KindReport])
	}
	extraction := want[indexertest.KindExtraction] + want[indexertest.KindGleaning]
	ref := openSorted(t, cleanOut)

	tests := []struct {
		name  string
		limit int    // calls answered before the kill
		stage string // the kind of the last call answered
	}{
		{"mid-extraction", extraction / 2, ""},
		{"mid-reports", extraction + want[indexertest.KindSummary] + 1, indexertest.KindReport},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			outDir := filepath.Join(dir, "out")
			output, cache := filepath.Join(outDir, "output"), filepath.Join(dir, "cache")

			// Run 1: killed once the limit is answered and stored.
			g1, url1 := startGate(t, tt.limit)
			start := time.Now()
			stderr := killAfter(t, g1, tt.limit, cache, indexArgs(input, output, cache, url1))
			answered, held := g1.calls()
			killed := time.Since(start)
			if tt.stage != "" && answered[len(answered)-1].kind != tt.stage {
				t.Errorf("last call before the kill was %s; want %s", answered[len(answered)-1].kind, tt.stage)
			}
			if names := dirNames(t, outDir); len(names) > 0 {
				t.Errorf("the killed run left %q in %s; want nothing (no output, no temporary folder)", names, outDir)
			}
			if _, other := cacheEntries(t, cache); len(other) > 0 {
				t.Errorf("the killed run left files other than cache entries: %q", other)
			}

			// A run killed while it writes the tables leaves its temporary
			// folder beside the output (the write stage is too short to
			// kill it in, so one is made here): the next run removes it.
			leftover := filepath.Join(outDir, ".output.tmp-2718281828")
			if err := os.MkdirAll(leftover, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(leftover, "entities.parquet"), []byte("PAR1"), 0o644); err != nil {
				t.Fatal(err)
			}

			// Run 2: to the end, with the same cache.
			g2, url2 := startGate(t, -1)
			start = time.Now()
			if _, stderr2, code := runKgrag(t, indexArgs(input, output, cache, url2)...); code != 0 {
				t.Fatalf("resumed kgrag index: exit %d: %s\n(killed run: %s)", code, stderr2, stderr)
			}
			resumed, _ := g2.calls()
			t.Logf("killed after %d answered and %d held calls (%v) in %s; resumed with %d calls (%v) in %s",
				len(answered), len(held), kindCounts(answered), killed.Round(time.Millisecond),
				len(resumed), kindCounts(resumed), time.Since(start).Round(time.Millisecond))

			// (a) Nothing answered in run 1 is asked again; what was held
			// (in flight at the kill) may be, and must be, asked again.
			paid := map[string]bool{}
			for _, c := range answered {
				paid[c.key] = true
			}
			var repeated, lost []chatCall
			again := callSet(resumed)
			for _, c := range resumed {
				if paid[c.key] {
					repeated = append(repeated, c)
				}
			}
			for _, c := range held {
				if !again[c.key] {
					lost = append(lost, c)
				}
			}
			if len(repeated) > 0 || len(lost) > 0 {
				t.Errorf("resumed run asked again %d calls the killed run was answered (%v); of the %d in flight at the kill, %d were not asked again (%v)",
					len(repeated), kindCounts(repeated), len(held), len(lost), kindCounts(lost))
			}
			// (b) The two runs together make the clean run's calls, no
			// more and no other.
			if diff := cmp.Diff(callKeys(cleanCalls), callKeys(append(answered, resumed...))); diff != "" {
				t.Errorf("killed + resumed calls differ from the clean run's (-clean +both):\n%s", diff)
			}
			if names := dirNames(t, outDir); !slices.Equal(names, []string{"output"}) {
				t.Errorf("beside the output after the resumed run: %q; want only output", names)
			}
			// (c) The same tables.
			if diff := cmp.Diff(ref, openSorted(t, output), datasetCmp...); diff != "" {
				t.Errorf("resumed output differs from the clean run's (-clean +resumed):\n%s", diff)
			}
		})
	}
}

// killAfter starts kgrag with args and SIGKILLs it once g has answered
// limit calls and the cache holds their replies (so that what is killed is
// the run, not a reply on its way to disk). It returns kgrag's stderr.
func killAfter(t *testing.T, g *chatGate, limit int, cache string, args []string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "KGRAG_TEST_RUN_MAIN=1")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	deadline := time.After(30 * time.Second)
	for {
		answered, _ := g.calls()
		distinct := len(callSet(answered))
		if n, _ := cacheEntries(t, cache); len(answered) == limit && n == distinct {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("kgrag index ended (%v) before it was killed, after %d calls: %s", err, len(answered), errb.String())
		case <-deadline:
			n, _ := cacheEntries(t, cache)
			t.Fatalf("after 30s: %d calls answered (want %d), %d cached (want %d): %s", len(answered), limit, n, distinct, errb.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-exited
	return errb.String()
}

// dirNames lists dir's entries; none when it does not exist.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func callSet(cs []chatCall) map[string]bool {
	m := make(map[string]bool, len(cs))
	for _, c := range cs {
		m[c.key] = true
	}
	return m
}

// callKeys lists the calls as "kind key", sorted, so that two runs' calls
// compare as multisets.
func callKeys(cs []chatCall) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.kind + " " + c.key
	}
	slices.Sort(out)
	return out
}

// openSorted reads an output with graphrag.Open, rows in id order.
func openSorted(t *testing.T, dir string) *graphrag.Dataset {
	t.Helper()
	ds, err := graphrag.Open(context.Background(), dir)
	if err != nil {
		t.Fatalf("graphrag.Open %s: %v", dir, err)
	}
	slices.SortFunc(ds.Entities, func(a, b graphrag.Entity) int { return strings.Compare(a.ID, b.ID) })
	slices.SortFunc(ds.Relationships, func(a, b graphrag.Relationship) int { return strings.Compare(a.ID, b.ID) })
	slices.SortFunc(ds.Communities, func(a, b graphrag.Community) int { return strings.Compare(a.ID, b.ID) })
	return ds
}

// datasetCmp compares two outputs' rows: not where they were read from,
// nor the period (the date of the run).
var datasetCmp = []cmp.Option{
	cmpopts.IgnoreFields(graphrag.Dataset{}, "Dir", "Tables"),
	cmpopts.IgnoreFields(graphrag.Community{}, "Period"),
	cmpopts.IgnoreFields(graphrag.CommunityReport{}, "Period"),
	cmpopts.IgnoreFields(graphrag.Run{}, "Started", "Ended"), // when each run ran
	cmpopts.EquateEmpty(),
}
