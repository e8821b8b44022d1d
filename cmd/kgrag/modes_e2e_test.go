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

// TestModesDefaultFlagsSmallWindow: with no flag that sizes anything, the
// modes that make one or two calls answer through Gemma 3 270M served
// with a 2,048-token window (llama-cpp-python, which says nothing of its
// window and ends the stream of a prompt over it): the first prompt of the
// run is refused and names the window, every later one fits it, and the
// cut of the 12,000-token budget is said. (Global and DRIFT search make
// tens of calls at this window with default flags: bounded, but minutes
// each on 2 cores; TestModesSmallModel runs them with the small profile.)
func TestModesDefaultFlagsSmallWindow(t *testing.T) {
	url, chatModel, embedModel := modelServer(t)
	input, index := realCarolIndex(t, url, embedModel)
	for _, m := range []string{mode.Local, mode.Basic, mode.SPARQLTemplates, mode.Subgraph, mode.GraphOfThoughts} {
		t.Run(m, func(t *testing.T) {
			stdout, stderr, code := runKgrag(t, "ask", "--mode", m, "--input", input, "--index", index,
				"--llm-url", url, "--chat-model", chatModel, "--embed-model", embedModel, "--json", "Who is Scrooge's clerk?")
			if code != 0 {
				t.Fatalf("exit %d; want an answer: %s", code, stderr)
			}
			var res askResult
			if err := json.Unmarshal([]byte(stdout), &res); err != nil {
				t.Fatal(err)
			}
			if res.Answer == nil || strings.TrimSpace(*res.Answer) == "" {
				t.Errorf("no answer: %s", stdout)
			}
			cut := false
			for _, d := range res.Degraded {
				cut = cut || strings.Contains(d, "cut from 12000") && strings.Contains(d, "window of 2048 tokens")
			}
			if !cut {
				t.Errorf("degraded %q; want the 12000-token budget cut to the 2048-token window", res.Degraded)
			}
			if res.Usage != nil && res.Usage.Prompt+res.Usage.Completion > 2048 {
				t.Errorf("the server counted %d prompt and %d answer tokens: over its 2048-token window", res.Usage.Prompt, res.Usage.Completion)
			}
			t.Logf("%s: usage %+v, degraded %q\nA: %.200s", m, res.Usage, res.Degraded, *res.Answer)
		})
	}
}
