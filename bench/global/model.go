package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/kgrag/kgrag/internal/llm/llmtest"
)

// model is the project's OpenAI-compatible test server on 127.0.0.1
// (llmtest.Timed: every request's time inside the server is recorded, so
// that the time kgrag itself adds can be told from the model's), scripted
// to answer global search's calls as a well-behaved model would (valid
// JSON, a few points per batch).
type model struct {
	*llmtest.Timed

	mu sync.Mutex
	// community maps a report's full content to its community, for
	// rating prompts (set with rateReports).
	community map[string]string
}

// startModel starts a server that sleeps latency before every chat answer.
func startModel(latency time.Duration) *model {
	srv := llmtest.New(llmtest.Config{Latency: latency})
	m := &model{Timed: llmtest.StartTimed(srv)}
	srv.Respond(m.reply)
	return m
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
