package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kgrag/kgrag/internal/llm/llmtest"
)

// model is the project's OpenAI-compatible test server on 127.0.0.1,
// scripted to answer global search's calls as a well-behaved model would
// (valid JSON, a few points per batch), with every request's time inside
// the server's handler recorded, so that the time kgrag itself adds can be
// told from the model's.
type model struct {
	srv  *llmtest.Server
	http *httptest.Server

	mu    sync.Mutex
	spans []span
	// inside counts the requests in the handler.
	inside int
	// community maps a report's full content to its community, for
	// rating prompts (set with rateReports).
	community map[string]string
}

// span is one request's time in the server's handler.
type span struct{ start, end time.Time }

// startModel starts a server that sleeps latency before every chat answer.
func startModel(latency time.Duration) *model {
	m := &model{srv: llmtest.New(llmtest.Config{Latency: latency})}
	m.srv.Respond(m.reply)
	m.http = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		m.inside++
		m.mu.Unlock()
		start := time.Now()
		m.srv.ServeHTTP(w, r)
		end := time.Now()
		m.mu.Lock()
		m.spans = append(m.spans, span{start, end})
		m.inside--
		m.mu.Unlock()
	}))
	return m
}

func (m *model) close() { m.http.Close() }

// url is the base URL for llm.Config.
func (m *model) url() string { return m.http.URL + "/v1" }

// reset forgets the requests and spans recorded so far (the server keeps
// every request, prompts included: thousands of 50 kB prompts otherwise).
func (m *model) reset() {
	m.srv.Reset()
	m.mu.Lock()
	m.spans = nil
	m.mu.Unlock()
}

// busy returns how long, between from and to, at least one request was in
// the server's handler (the union of the spans), the sum of the spans, and
// how many there were. The client has a reply once its last bytes are
// written, which may be before the handler returns: busy first waits for
// every request to leave the handler.
func (m *model) busy(from, to time.Time) (union, sum time.Duration, n int) {
	var spans []span
	for wait := time.Now(); ; time.Sleep(50 * time.Microsecond) {
		m.mu.Lock()
		if m.inside == 0 || time.Since(wait) > 5*time.Second {
			spans = slices.Clone(m.spans)
			m.mu.Unlock()
			break
		}
		m.mu.Unlock()
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

// rateReports tells the server which community each report of d up to
// level belongs to, by its text, for rating prompts.
func (m *model) rateReports(ctx context.Context, d *dataset, level int64) error {
	reports, err := d.src.CommunityReports(ctx, level)
	if err != nil {
		return err
	}
	community := make(map[string]string, len(reports))
	for _, r := range reports {
		community[r.FullContent] = r.ID
	}
	m.mu.Lock()
	m.community = community
	m.mu.Unlock()
	return nil
}

// Markers of the three prompts (prompts/templates/global_*.tmpl).
const (
	mapMarker    = "---Reports---"
	rateMarker   = "---Report---"
	reduceMarker = "---Analysts' points---"
)

var (
	rowRE    = regexp.MustCompile(`(?m)^(\d+)\|`)
	citeRE   = regexp.MustCompile(`Reports \((\d+)\)`)
	filler   = strings.Repeat("It ties the people, places and events of the report together and says why they matter. ", 4)
	answerTx = strings.Repeat("The reports describe how the communities of the corpus relate, who leads them and what changed over time. ", 12)
)

// reply answers a map call with up to five points (one per report, the
// first rows of the batch, scores 0-100 from a hash of question and
// report, so a few are dropped as 0), a rating call by rule, a reduce call
// with a 200-word answer citing the best points' reports, and anything
// else (the round-trip probe) with "pong".
func (m *model) reply(r llmtest.Request) (string, bool) {
	if len(r.Messages) < 2 {
		return "pong", true
	}
	sys, q := r.Messages[0].Content, r.Messages[len(r.Messages)-1].Content
	switch {
	case strings.Contains(sys, mapMarker):
		_, table, _ := strings.Cut(sys, mapMarker)
		var pts []string
		for _, row := range rowRE.FindAllStringSubmatch(table, 5) {
			pts = append(pts, fmt.Sprintf(`{"description": "Report %s bears on the question. %s[Data: Reports (%s)]", "score": %d}`,
				row[1], filler, row[1], hash(q, row[1])%101))
		}
		return `{"points": [` + strings.Join(pts, ", ") + `]}`, true
	case strings.Contains(sys, rateMarker):
		_, after, _ := strings.Cut(sys, rateMarker+"\n\n")
		report, _, _ := strings.Cut(after, "\n\n---End of report---")
		m.mu.Lock()
		c, ok := m.community[report]
		m.mu.Unlock()
		if !ok {
			// Not JSON: ask fails on it, rather than measure a descent
			// the rule did not steer (a changed prompt, say).
			return "no such report", true
		}
		return fmt.Sprintf(`{"reason": "by rule", "rating": %d}`, rating(c)), true
	case strings.Contains(sys, reduceMarker):
		var ids []string
		for _, c := range citeRE.FindAllStringSubmatch(sys, 5) {
			ids = append(ids, c[1])
		}
		return "## Answer\n\n" + answerTx + "[Data: Reports (" + strings.Join(ids, ", ") + ")]", true
	}
	return "pong", true
}

// rating is the rule of the dynamic selection run: two communities in
// three are relevant (rating 2), the rest not (0).
func rating(community string) int {
	if hash("rate", community)%3 == 0 {
		return 0
	}
	return 2
}

func hash(a, b string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(a))
	h.Write([]byte{0})
	h.Write([]byte(b))
	return h.Sum32()
}
