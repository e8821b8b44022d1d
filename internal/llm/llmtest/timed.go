package llmtest

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"time"
)

// Timed serves a Server on 127.0.0.1 and records every request's time
// inside its handler, so that a benchmark can tell the time a client adds
// to a search from the model's: the wall time minus the time at least one
// request was in the server (Busy).
type Timed struct {
	*Server
	http *httptest.Server

	mu     sync.Mutex
	spans  []span
	inside int // requests in the handler
}

// span is one request's time in the handler.
type span struct{ start, end time.Time }

// StartTimed serves s; Close stops it.
func StartTimed(s *Server) *Timed {
	t := &Timed{Server: s}
	t.http = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.mu.Lock()
		t.inside++
		t.mu.Unlock()
		start := time.Now()
		s.ServeHTTP(w, r)
		end := time.Now()
		t.mu.Lock()
		t.spans = append(t.spans, span{start, end})
		t.inside--
		t.mu.Unlock()
	}))
	return t
}

// Close stops the server.
func (t *Timed) Close() { t.http.Close() }

// URL is the base URL for llm.Config, ending in /v1.
func (t *Timed) URL() string { return t.http.URL + "/v1" }

// Reset forgets the requests (the Server's Reset) and the spans recorded
// so far: a server keeps every request, prompts included.
func (t *Timed) Reset() {
	t.Server.Reset()
	t.mu.Lock()
	t.spans = nil
	t.mu.Unlock()
}

// Busy returns how long, between from and to, at least one request was in
// the handler (the union of the spans), the sum of the spans, and how many
// there were. A client has its reply once the last bytes are written,
// which may be before the handler returns: Busy first waits (up to 5 s)
// for every request to leave the handler.
func (t *Timed) Busy(from, to time.Time) (union, sum time.Duration, n int) {
	var spans []span
	for wait := time.Now(); ; time.Sleep(50 * time.Microsecond) {
		t.mu.Lock()
		if t.inside == 0 || time.Since(wait) > 5*time.Second {
			spans = slices.Clone(t.spans)
			t.mu.Unlock()
			break
		}
		t.mu.Unlock()
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start.Compare(b.start) })
	var end time.Time
	for _, s := range spans {
		if s.end.Before(from) || s.start.After(to) {
			continue
		}
		n++
		st, en := later(s.start, from), earlier(s.end, to)
		sum += en.Sub(st)
		switch {
		case !en.After(end):
		case st.After(end):
			union += en.Sub(st)
			end = en
		default:
			union += en.Sub(end)
			end = en
		}
	}
	return union, sum, n
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
