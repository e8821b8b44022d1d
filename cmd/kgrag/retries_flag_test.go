package main

import (
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kgrag/kgrag/internal/indexer/indexertest"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/test"
)

// countingStore is a proxy in front of a real store that, while failing is
// set, answers 503 to every upload (a POST to the Graph Store endpoint) and
// counts the attempts at each body: the first body to fail is sent once
// and then once per retry.
type countingStore struct {
	URL      string
	failing  bool
	mu       sync.Mutex
	attempts map[[32]byte]int
}

func newCountingStore(t *testing.T, base string, failing bool) *countingStore {
	t.Helper()
	target, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	cs := &countingStore{failing: failing, attempts: map[[32]byte]int{}}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	px := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/store") {
			rp.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		cs.mu.Lock()
		cs.attempts[sha256.Sum256(body)]++
		cs.mu.Unlock()
		if cs.failing {
			http.Error(w, "unavailable (test)", http.StatusServiceUnavailable)
			return
		}
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		r.ContentLength = int64(len(body))
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(px.Close)
	cs.URL = strings.Replace(base, target.Host, strings.TrimPrefix(px.URL, "http://"), 1)
	return cs
}

// maxAttempts is the most times one upload body was sent.
func (cs *countingStore) maxAttempts() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	m := 0
	for _, n := range cs.attempts {
		m = max(m, n)
	}
	return m
}

// maxLLMAttempts is the most times the model server got one request body
// at a path ending in suffix.
func maxLLMAttempts(srv *llmtest.Server, suffix string) int {
	seen := map[string]int{}
	m := 0
	for _, r := range srv.Requests() {
		if !strings.HasSuffix(r.Path, suffix) {
			continue
		}
		k := fmt.Sprint(r.Inputs, r.Messages)
		seen[k]++
		m = max(m, seen[k])
	}
	return m
}

// TestRetriesReachTheirClient: --store-retries reaches only the store and
// --llm-retries only the model server, in load, load --embed and index
// --load, counted at a store proxy that fails every upload and at a test
// server that fails every request of one kind: the first request to fail
// is sent 1 + its client's retries times, whatever the other flag says.
// The deprecated --retries keeps its old meaning in load (the store's) and
// embed (the model server's), with a warning, and is refused in index,
// where it used to set both.
func TestRetriesReachTheirClient(t *testing.T) {
	base := test.Service(t, "OXIGRAPH")
	input := filepath.Join(test.GraphRAGSamples(t), "v3")
	graph := "http://kgrag.test/retries"
	carol := indexertest.CarolInput(t, 200)
	fast := []string{"--llm-max-backoff", "50ms"}
	tests := []struct {
		name      string
		storeFail bool   // the store proxy fails every upload
		llmFail   string // the model server fails every request at this path
		args      func(store, llm string) []string
		wantStore int // most attempts at one upload; 0: not checked
		wantLLM   int // most attempts at one model request; 0: not checked
		wantErr   string
	}{
		{"load store", true, "", func(s, _ string) []string {
			return []string{"load", "-q", "--input", input, "--store", s, "--store-type", "oxigraph", "--graph", graph, "--store-retries", "2"}
		}, 3, 0, ""},
		{"load --embed store", true, "", func(s, l string) []string {
			return append([]string{"load", "-q", "--input", input, "--store", s, "--store-type", "oxigraph", "--graph", graph, "--embed",
				"--index", t.TempDir(), "--llm-url", l, "--embed-model", askEmbedModel, "--store-retries", "1", "--llm-retries", "4"}, fast...)
		}, 2, 0, ""},
		{"load --embed model", false, "/embeddings", func(s, l string) []string {
			return append([]string{"load", "-q", "--input", input, "--store", s, "--store-type", "oxigraph", "--graph", graph, "--embed",
				"--index", t.TempDir(), "--llm-url", l, "--embed-model", askEmbedModel, "--store-retries", "4", "--llm-retries", "1"}, fast...)
		}, 0, 2, ""},
		{"index --load store", true, "", func(s, l string) []string {
			return append([]string{"index", "--input", carol, "--output", filepath.Join(t.TempDir(), "out"), "--chat-model", "m", "--embed-model", "e",
				"--llm-url", l, "--quiet", "--load", "--store", s, "--store-type", "oxigraph", "--graph", graph,
				"--store-retries", "1", "--llm-retries", "3"}, fast...)
		}, 2, 0, ""},
		{"index --load model", false, "/chat/completions", func(s, l string) []string {
			return append([]string{"index", "--input", carol, "--output", filepath.Join(t.TempDir(), "out"), "--chat-model", "m", "--embed-model", "e",
				"--llm-url", l, "--quiet", "--load", "--store", s, "--store-type", "oxigraph", "--graph", graph,
				"--store-retries", "4", "--llm-retries", "2"}, fast...)
		}, 0, 3, ""},
		{"load --retries (deprecated)", true, "", func(s, _ string) []string {
			return []string{"load", "-q", "--input", input, "--store", s, "--store-type", "oxigraph", "--graph", graph, "--retries", "1"}
		}, 2, 0, "use --store-retries"},
		{"embed --retries (deprecated)", false, "/embeddings", func(_, l string) []string {
			return append([]string{"embed", "-q", "--input", input, "--index", t.TempDir(), "--llm-url", l, "--embed-model", askEmbedModel,
				"--retries", "2"}, fast...)
		}, 0, 3, "use --llm-retries"},
		{"index --retries (ambiguous)", false, "", func(s, l string) []string {
			return []string{"index", "--input", carol, "--output", filepath.Join(t.TempDir(), "out"), "--chat-model", "m",
				"--llm-url", l, "--load", "--store", s, "--store-type", "oxigraph", "--graph", graph, "--retries", "2"}
		}, 0, 0, "--retries is ambiguous in kgrag index"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A graph of its own, empty: the first load of a graph goes to
			// the bulk path (/store) on Oxigraph, which the proxy counts.
			graph = fmt.Sprintf("http://kgrag.test/retries/%d/%d", time.Now().UnixNano(), i)
			cs := newCountingStore(t, base, tt.storeFail)
			srv := llmtest.Start(t, llmtest.Config{Dim: askDim})
			indexertest.Script(srv)
			if tt.llmFail != "" {
				srv.FailN(1000, llmtest.Failure{Path: tt.llmFail, Status: http.StatusServiceUnavailable})
			}
			_, stderr, code := runKgrag(t, tt.args(cs.URL, srv.URL())...)
			if tt.wantErr != "" && !strings.Contains(stderr, tt.wantErr) {
				t.Errorf("stderr lacks %q:\n%s", tt.wantErr, stderr)
			}
			if code == 0 {
				t.Errorf("exit 0; want a failure\n%s", stderr)
			}
			if tt.wantStore > 0 {
				if got := cs.maxAttempts(); got != tt.wantStore {
					t.Errorf("the store got an upload %d times; want %d (1 + --store-retries)\n%s", got, tt.wantStore, stderr)
				}
			}
			if tt.wantLLM > 0 {
				if got := maxLLMAttempts(srv, tt.llmFail); got != tt.wantLLM {
					t.Errorf("the model server got a request %d times; want %d (1 + --llm-retries)\n%s", got, tt.wantLLM, stderr)
				}
			}
			if tt.wantStore == 0 && tt.wantLLM == 0 {
				if n := cs.maxAttempts(); n > 0 || srv.Count("") > 0 {
					t.Errorf("refused, yet the store got uploads (%d at most of one) and the model server %d requests", n, srv.Count(""))
				}
			}
		})
	}
}
