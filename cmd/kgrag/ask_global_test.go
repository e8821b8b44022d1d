package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/prompts"
)

// globalServer answers map calls with one point per report of the batch
// (score from the report id) and the reduce call with a cited answer.
func globalServer(t *testing.T) *llmtest.Server {
	srv := llmtest.Start(t, llmtest.Config{})
	globalScript(srv)
	return srv
}

// globalScript makes srv answer global search's map calls with a point
// per report and its reduce call with a fixed answer.
func globalScript(srv *llmtest.Server) {
	row := regexp.MustCompile(`(?m)^(\d+)\|`)
	srv.Respond(func(r llmtest.Request) (string, bool) {
		sys := r.Messages[0].Content
		switch {
		case strings.Contains(sys, "---Reports---"):
			var pts []string
			for _, m := range row.FindAllStringSubmatch(sys, -1) {
				n, _ := strconv.Atoi(m[1])
				pts = append(pts, fmt.Sprintf(`{"description": "Report %s [Data: Reports (%s)]", "score": %d}`, m[1], m[1], n%90+5))
			}
			return `{"points": [` + strings.Join(pts, ",") + `]}`, true
		case strings.Contains(sys, "---Analysts' points---"):
			return "The story is about redemption [Data: Reports (1, 4)].", true
		}
		return "", false
	})
}

// TestAskGlobalJSON runs `kgrag ask --mode global --json` as a user would
// and checks the JSON against the requests the server received.
func TestAskGlobalJSON(t *testing.T) {
	srv := globalServer(t)
	in := filepath.Join(test.GraphRAGSamples(t), "v3")
	stdout, stderr, code := runKgrag(t, "ask", "--mode", "global", "--input", in, "--llm-url", srv.URL(), "--chat-model", "test-chat",
		"--community-level", "1", "--max-context-tokens", "4000", "--concurrency", "3", "--json", "What is the story about?")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r struct {
		Mode    string             `json:"mode"`
		Answer  string             `json:"answer"`
		Timings map[string]float64 `json:"timings_ms"`
		Global  struct {
			Level   int64 `json:"community_level"`
			Reports int   `json:"reports"`
			Batches []struct {
				ReportIDs     []string `json:"report_ids"`
				ContextTokens int      `json:"context_tokens"`
				PromptTokens  int      `json:"prompt_tokens"`
				Parse         string   `json:"parse"`
				Points        []struct {
					Description string `json:"description"`
					Score       int    `json:"score"`
				} `json:"points"`
			} `json:"batches"`
			MapParse struct{ Valid, Repaired, Unusable int } `json:"map_parse"`
			Points   int                                     `json:"points"`
			Reduce   *struct {
				Points []struct{ Batch, Score int } `json:"points"`
			} `json:"reduce"`
			LLMCalls     int      `json:"llm_calls"`
			PromptTokens int      `json:"prompt_tokens"`
			Cited        []string `json:"cited_reports"`
		} `json:"global"`
	}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	checkRecordFields(t, []byte(stdout))
	g := r.Global
	maps := 0
	for _, req := range srv.Requests() {
		if strings.Contains(req.Messages[0].Content, "---Reports---") {
			maps++
		}
	}
	if r.Mode != "global" || r.Answer == "" || g.Level != 1 || len(g.Batches) != maps || g.LLMCalls != maps+1 {
		t.Errorf("mode %q, answer %q, level %d, %d batches, %d calls; server saw %d map calls", r.Mode, r.Answer, g.Level, len(g.Batches), g.LLMCalls, maps)
	}
	ids, points, prompt := 0, 0, 0
	for _, b := range g.Batches {
		ids += len(b.ReportIDs)
		points += len(b.Points)
		prompt += b.PromptTokens
		if b.ContextTokens > 4000 || b.Parse != "valid" || len(b.Points) != len(b.ReportIDs) {
			t.Errorf("batch: %d context tokens, parse %q, %d points for %d reports", b.ContextTokens, b.Parse, len(b.Points), len(b.ReportIDs))
		}
	}
	if ids != g.Reports || points != g.Points || g.MapParse.Valid != maps || g.Reduce == nil || len(g.Reduce.Points) == 0 {
		t.Errorf("%d report ids of %d reports, %d points (says %d), parse %+v, reduce %v", ids, g.Reports, points, g.Points, g.MapParse, g.Reduce)
	}
	if g.PromptTokens <= prompt || len(g.Cited) != 2 {
		t.Errorf("prompt tokens %d (map alone %d), cited %v", g.PromptTokens, prompt, g.Cited)
	}
	for _, p := range []string{"open", "reports", "batch", "map", "reduce", "total"} {
		if _, ok := r.Timings[p]; !ok {
			t.Errorf("timings_ms lacks %q: %v", p, r.Timings)
		}
	}
}

// TestAskGlobalPlanAndContext: --plan and --context-only call no model,
// and agree with each other and with a real run on the number of calls.
func TestAskGlobalPlanAndContext(t *testing.T) {
	srv := globalServer(t)
	in := filepath.Join(test.GraphRAGSamples(t), "v3")
	base := []string{"ask", "--mode", "global", "--input", in, "--llm-url", srv.URL(), "--chat-model", "test-chat",
		"--community-level", "2", "--max-context-tokens", "5000"}
	q := "What are the themes?"

	plan, stderr, code := runKgrag(t, append(base, "--plan", q)...)
	if code != 0 {
		t.Fatalf("--plan: exit %d: %s", code, stderr)
	}
	ctxOut, stderr, code := runKgrag(t, append(base, "--context-only", q)...)
	if code != 0 {
		t.Fatalf("--context-only: exit %d: %s", code, stderr)
	}
	if n := srv.Count(""); n != 0 {
		t.Fatalf("%d requests to the model server; want none", n)
	}
	batches := strings.Count(ctxOut, "===== map batch ")
	m := regexp.MustCompile(`map calls:\s+(\d+)`).FindStringSubmatch(plan)
	total := regexp.MustCompile(`total:\s+(\d+) model calls`).FindStringSubmatch(plan)
	if m == nil || total == nil || m[1] != strconv.Itoa(batches) || total[1] != strconv.Itoa(batches+1) || batches < 2 {
		t.Fatalf("plan says %v map / %v total calls, context-only prints %d batches:\n%s", m, total, batches, plan)
	}

	if _, stderr, code := runKgrag(t, append(base, "-q", q)...); code != 0 {
		t.Fatalf("ask: exit %d: %s", code, stderr)
	}
	if got := srv.Count("/chat/completions"); got != batches+1 {
		t.Errorf("the question took %d calls; the plan said %d", got, batches+1)
	}

	// The limit refuses the question before any call.
	srv.Reset()
	_, stderr, code = runKgrag(t, append(base, "--max-llm-calls", strconv.Itoa(batches), q)...)
	if code != exitUsage || !strings.Contains(stderr, fmt.Sprintf("needs %d model calls", batches+1)) || srv.Count("") != 0 {
		t.Errorf("--max-llm-calls %d: exit %d, %d requests, stderr %q; want exit 2 before any call", batches, code, srv.Count(""), stderr)
	}
}

// TestAskGlobalWarnings: a map call that keeps failing, and an empty
// reply, are skipped, a reply in prose is taken as one point; the answer
// still comes, and stderr says what was left out or done instead. When nothing scores, the canned answer comes without a
// reduce call.
func TestAskGlobalWarnings(t *testing.T) {
	srv := globalServer(t)
	in := filepath.Join(test.GraphRAGSamples(t), "v3")
	base := []string{"ask", "--mode", "global", "--input", in, "--llm-url", srv.URL(), "--chat-model", "test-chat",
		"--community-level", "0", "--max-context-tokens", "3000", "--concurrency", "1", "--llm-retries", "1"}
	srv.FailN(2, llmtest.Failure{Path: "/chat/completions", Status: 500}) // the first batch, both attempts
	var maps atomic.Int64
	srv.Respond(func(r llmtest.Request) (string, bool) {
		sys := r.Messages[0].Content
		if strings.Contains(sys, "---Analysts' points---") {
			return "About redemption [Data: Reports (3, 999)].", true
		}
		if strings.Contains(sys, "---Reports---") && maps.Add(1) <= 2 { // the next two batches
			return []string{"", "Sorry, I cannot help with that."}[maps.Load()-1], true
		}
		return `{"points": [{"description": "x [Data: Reports (3)]", "score": 50}]}`, true
	})
	stdout, stderr, code := runKgrag(t, append(base, "What is it about?")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "redemption") {
		t.Errorf("stdout %q; want the answer", stdout)
	}
	for _, want := range []string{"warning: 1 of ", "map calls failed and were skipped",
		"degraded: global: 1 of ", "map replies held no JSON points: each was taken whole as one point scored 50",
		"map replies held no usable JSON and were skipped",
		"cites reports that were not given to the model"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}

	srv.Reset()
	srv.Respond(func(r llmtest.Request) (string, bool) {
		return `{"points": [{"description": "nothing", "score": 0}]}`, true
	})
	stdout, stderr, code = runKgrag(t, append(base, "What is the capital of France?")...)
	if code != 0 || strings.TrimSpace(stdout) != prompts.NoDataAnswer {
		t.Errorf("exit %d, stdout %q; want the no-data answer (stderr %s)", code, stdout, stderr)
	}
	for _, r := range srv.Requests() {
		if strings.Contains(r.Messages[0].Content, "---Analysts' points---") {
			t.Errorf("a reduce call was made with no point scored")
		}
	}
}
