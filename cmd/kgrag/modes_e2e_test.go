package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/kgrag/kgrag/internal/engine"
	"github.com/kgrag/kgrag/internal/mode"
)

// formatCounter is a reverse proxy in front of a model server that counts
// the chat requests by the response_format type they ask for ("" for
// none): what kgrag sent, seen on the wire.
type formatCounter struct {
	mu     sync.Mutex
	counts map[string]int
	srv    *httptest.Server
}

func newFormatCounter(t *testing.T, target string) *formatCounter {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	fc := &formatCounter{counts: map[string]int{}}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	fc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/chat/completions") {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var req struct {
				ResponseFormat *struct{ Type string } `json:"response_format"`
			}
			_ = json.Unmarshal(body, &req)
			typ := ""
			if req.ResponseFormat != nil {
				typ = req.ResponseFormat.Type
			}
			fc.mu.Lock()
			fc.counts[typ]++
			fc.mu.Unlock()
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(fc.srv.Close)
	return fc
}

// take returns the counts so far and starts again.
func (fc *formatCounter) take() map[string]int {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	c := fc.counts
	fc.counts = map[string]int{}
	return c
}

// TestModesSmallModel asks in every mode the real small chat model the
// tests run (Gemma 3 270M behind llama-cpp-python's server) on the v3
// sample, with --profile small and budgets inside its 2048-token context,
// through a proxy that counts the response_format each request asks for.
// Each mode completes with an answer or exits 11 (the documented upstream
// error); the modes that parse replies ask for JSON in the format the
// server takes (json_object: it refuses json_schema). Global search runs
// in TestAskGlobalRealModel (its dozen map calls take minutes here).
// The transcript, with each mode's degraded notes, is logged.
func TestModesSmallModel(t *testing.T) {
	url, chatModel, embedModel := modelServer(t)
	input, index := realCarolIndex(t, url, embedModel)
	fc := newFormatCounter(t, url)
	parses := map[string]bool{mode.Drift: true, mode.GraphOfThoughts: true}
	const q = "Who is Scrooge's clerk?"
	for _, m := range engine.Modes() {
		if m.Name == mode.Global {
			continue
		}
		t.Run(m.Name, func(t *testing.T) {
			fc.take()
			stdout, stderr, code := runKgrag(t, "ask", "--profile", "small", "--mode", m.Name, "--input", input, "--index", index,
				"--llm-url", fc.srv.URL+"/v1", "--chat-model", chatModel, "--embed-model", embedModel,
				"--max-context-tokens", "1000", "--max-tokens", "96", "--drift-k-followups", "2", "--drift-primer-folds", "2",
				"--concurrency", "1", "--json", q)
			counts := fc.take()
			if code != 0 && code != exitModelDown {
				t.Fatalf("exit %d; want an answer or exit 11: %s", code, stderr)
			}
			var res askResult
			if code == 0 {
				if err := json.Unmarshal([]byte(stdout), &res); err != nil {
					t.Fatal(err)
				}
				if res.Answer == nil || strings.TrimSpace(*res.Answer) == "" {
					t.Errorf("no answer: %s", stdout)
				}
			}
			if parses[m.Name] && counts["json_object"] == 0 {
				t.Errorf("requests by response_format %v; want json_object on the calls whose replies are parsed", counts)
			}
			if counts["json_schema"] > 1 {
				t.Errorf("requests by response_format %v; want json_schema tried once at most, then remembered", counts)
			}
			answer := ""
			if res.Answer != nil {
				answer = *res.Answer
			}
			t.Logf("mode %s: exit %d, response_format %v, degraded %q\nA: %.300s\nstderr: %.300s", m.Name, code, counts, res.Degraded, answer, stderr)
		})
	}
}
