package main

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/kgrag/kgrag/internal/indexer/indexertest"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
)

// model is the project's OpenAI-compatible test server on 127.0.0.1,
// scripted by indexertest.Script as the index tests script it, with the
// time requests spend in its handler added up as they come, so that the
// time kgrag itself takes can be told from the model's.
type model struct {
	srv  *llmtest.Server
	http *httptest.Server

	mu sync.Mutex
	// inside counts the requests in the handler; since is when the
	// count last went from 0 to 1.
	inside int
	since  time.Time
	// busy is the time at least one request was in the handler (closed
	// stretches only); handlers adds up each request's time there.
	busy, handlers time.Duration
}

// startModel starts a server that sleeps latency before every chat answer.
func startModel(latency time.Duration) *model {
	m := &model{srv: llmtest.New(llmtest.Config{Latency: latency})}
	indexertest.Script(m.srv)
	m.http = httptest.NewServer(http.HandlerFunc(m.serve))
	return m
}

func (m *model) serve(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	start := time.Now()
	if m.inside == 0 {
		m.since = start
	}
	m.inside++
	m.mu.Unlock()
	m.srv.ServeHTTP(w, r)
	m.mu.Lock()
	end := time.Now()
	m.inside--
	m.handlers += end.Sub(start)
	if m.inside == 0 {
		m.busy += end.Sub(m.since)
	}
	m.mu.Unlock()
}

func (m *model) close() { m.http.Close() }

// url is the base URL for llm.Config.
func (m *model) url() string { return m.http.URL + "/v1" }

// served is what the server saw between two calls of take.
type served struct {
	requests       []llmtest.Request
	busy, handlers time.Duration
}

// take returns what the server saw since the last take and forgets it.
// The client has a reply once its last bytes are written, which may be
// before the handler returns: take first waits (up to 5 s) for every
// request to leave the handler.
func (m *model) take() served {
	for wait := time.Now(); ; time.Sleep(50 * time.Microsecond) {
		m.mu.Lock()
		if m.inside == 0 || time.Since(wait) > 5*time.Second {
			break
		}
		m.mu.Unlock()
	}
	s := served{requests: m.srv.Requests(), busy: m.busy, handlers: m.handlers}
	m.busy, m.handlers = 0, 0
	m.mu.Unlock()
	m.srv.Reset()
	return s
}
