package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kgrag/kgrag/embedindex/flat"
	"github.com/kgrag/kgrag/embedindex/location"
	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/embedtext"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/test"
)

// TestEmbedTables: --tables all writes one index per table, each holding
// the ids of its table's rows that have text, with vectors of the text
// GraphRAG embeds; a second run sends nothing (the cache), and a bad
// table name is a usage error.
func TestEmbedTables(t *testing.T) {
	in := filepath.Join(test.GraphRAGSamples(t), "v3")
	ds, err := graphrag.Open(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.Start(t, llmtest.Config{Dim: askDim})
	index := t.TempDir()
	args := []string{"embed", "-q", "--input", in, "--index", index, "--llm-url", srv.URL(), "--embed-model", askEmbedModel, "--tables", "all"}
	if _, stderr, code := runKgrag(t, args...); code != 0 {
		t.Fatalf("kgrag embed --tables all: exit %d: %s", code, stderr)
	}
	texts := map[string]map[string]string{tableEntities: {}, tableTextUnits: {}, tableReports: {}}
	for _, e := range ds.Entities {
		if !e.Placeholder {
			texts[tableEntities][e.ID] = embedtext.Entity(e)
		}
	}
	for _, u := range ds.TextUnits {
		texts[tableTextUnits][u.ID] = u.Text
	}
	for _, c := range ds.Communities {
		if c.Report != nil {
			texts[tableReports][c.Community] = c.Report.FullContent
		}
	}
	for table, want := range texts {
		idx, err := flat.Open(t.Context(), filepath.Join(index, location.File(table)), flat.Options{})
		if err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		ids := idx.IDs()
		if len(ids) != len(want) {
			t.Errorf("%s: %d vectors; the table has %d rows with text", table, len(ids), len(want))
		}
		// Each row's own text finds it first.
		for _, id := range ids[:min(5, len(ids))] {
			text, ok := want[id]
			if !ok {
				t.Errorf("%s: index holds %q, not a row of the table", table, id)
				continue
			}
			hits, err := idx.Search(t.Context(), llmtest.Embed(askEmbedModel, text, askDim), 1)
			if err != nil || len(hits) != 1 || hits[0].ID != id || hits[0].Score < 0.999 {
				t.Errorf("%s: %q's text finds %v (%v); want itself", table, id, hits, err)
			}
		}
	}
	srv.Reset()
	if _, stderr, code := runKgrag(t, args...); code != 0 || srv.Count("/embeddings") != 0 {
		t.Errorf("second run: exit %d, %d embedding requests; want 0 and none (all cached): %s", code, srv.Count("/embeddings"), stderr)
	}
	_, stderr, code := runKgrag(t, "embed", "--input", in, "--index", index, "--llm-url", srv.URL(), "--tables", "entities,chunks")
	if code != exitUsage || !strings.Contains(stderr, `unknown table "chunks"`) {
		t.Errorf("--tables entities,chunks: exit %d, %q; want usage error naming the table", code, stderr)
	}
}

// driftScript answers kgrag's DRIFT calls: JSON with two follow-ups per
// primer fold and one per follow-up, numbered so that each is new. before,
// when not nil, sees each chat request first.
func driftScript(srv *llmtest.Server, before func(llmtest.Request)) {
	var mu sync.Mutex
	n := 0
	srv.Respond(func(r llmtest.Request) (string, bool) {
		if len(r.Messages) == 0 {
			return "", false
		}
		if before != nil {
			before(r)
		}
		mu.Lock()
		defer mu.Unlock()
		first := r.Messages[0].Content
		switch {
		case strings.HasPrefix(first, "Write a hypothetical answer"):
			return "# Scrooge and the ghosts\n\nThe ghosts show Scrooge his life.", true
		case strings.Contains(first, "---Reports---"):
			n++
			return fmt.Sprintf(`{"intermediate_answer": "Primer %d", "score": 60, "follow_up_queries": ["Who is Fred %d?", "Who is Belle %d?"]}`, n, n, n), true
		case strings.Contains(first, "The larger question is"):
			n++
			return fmt.Sprintf(`{"response": "Step answer %d [Data: Sources (1)]", "score": 50, "follow_up_queries": ["What does Marley want %d?"]}`, n, n), true
		case strings.Contains(first, "---Research---"):
			return "The ghosts change Scrooge [Data: Sources (1)].", true
		case strings.Contains(first, "---Passages---"):
			return "Bob Cratchit is Scrooge's clerk [Data: Sources (2)].", true
		}
		return "", false
	})
}

// TestAskBasicAndDrift runs kgrag ask --mode basic and --mode drift with
// a scripted model on the v3 sample, as a user would: the indexes from
// kgrag embed --tables all, the answer on stdout or in --json, --plan, and
// --max-llm-calls.
func TestAskBasicAndDrift(t *testing.T) {
	in := filepath.Join(test.GraphRAGSamples(t), "v3")
	srv := llmtest.Start(t, llmtest.Config{Dim: askDim})
	index := t.TempDir()
	llmArgs := []string{"--llm-url", srv.URL(), "--embed-model", askEmbedModel, "--chat-model", "test-chat", "--llm-retries", "0"}
	if _, stderr, code := runKgrag(t, "embed", "-q", "--input", in, "--index", index, "--tables", "all", "--llm-url", srv.URL(), "--embed-model", askEmbedModel); code != 0 {
		t.Fatalf("kgrag embed: exit %d: %s", code, stderr)
	}
	driftScript(srv, nil)
	ask := func(args ...string) (string, string, int) {
		srv.Reset()
		return runKgrag(t, append(append([]string{"ask", "-q", "--input", in, "--index", index}, llmArgs...), args...)...)
	}
	const q = "Who is Scrooge's clerk?"

	t.Run("basic", func(t *testing.T) {
		stdout, stderr, code := ask("--mode", "basic", "--json", q)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var res askResult
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatal(err)
		}
		checkRecordFields(t, []byte(stdout))
		reqs := chatRequests(srv)
		if res.Answer == nil || *res.Answer != "Bob Cratchit is Scrooge's clerk [Data: Sources (2)]." || len(reqs) != 1 {
			t.Fatalf("answer %v after %d calls; want the scripted one, in one call", res.Answer, len(reqs))
		}
		if sys := reqs[0].Messages[0].Content; !strings.Contains(sys, res.Context.Text) || reqs[0].Messages[1].Content != q {
			t.Errorf("the answer call lacks the context or the question")
		}
		if len(res.Context.Records.Sources) == 0 || len(res.Context.Records.Entities) != 0 || len(res.Neighbours) != 10 {
			t.Errorf("context %d sources, %d entities from %d neighbours; want sources only from 10", len(res.Context.Records.Sources), len(res.Context.Records.Entities), len(res.Neighbours))
		}
		hits := map[string]bool{}
		for _, h := range res.Neighbours {
			hits[h.ID] = true
		}
		var hrids []string
		for _, s := range res.Context.Records.Sources {
			if !hits[s.TextUnitID] {
				t.Errorf("source %s is not among the text units nearest the question", s.TextUnitID)
			}
			hrids = append(hrids, s.ID)
		}
		if !sortedNumeric(hrids) {
			t.Errorf("sources %v are not in table order", hrids)
		}
	})

	t.Run("drift", func(t *testing.T) {
		stdout, stderr, code := ask("--mode", "drift", "--json", "--max-llm-calls", "12", q)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var res struct {
			Answer *string `json:"answer"`
			Drift  struct {
				LLMCalls int `json:"llm_calls"`
				Actions  []struct {
					Query    string `json:"query"`
					Answered bool   `json:"answered"`
				} `json:"actions"`
				Edges  []struct{ Source, Target int } `json:"edges"`
				Capped bool                           `json:"capped_by_max_llm_calls"`
			} `json:"drift"`
		}
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatal(err)
		}
		checkRecordFields(t, []byte(stdout))
		calls := len(chatRequests(srv))
		if res.Answer == nil || *res.Answer != "The ghosts change Scrooge [Data: Sources (1)]." || calls != 12 || res.Drift.LLMCalls != 12 || !res.Drift.Capped {
			t.Errorf("answer %v, %d calls made, llm_calls %d, capped %v; want the reduce's answer, 12, 12, true", res.Answer, calls, res.Drift.LLMCalls, res.Drift.Capped)
		}
		if len(res.Drift.Actions) < 11 || res.Drift.Actions[0].Query != q || !strings.HasPrefix(res.Drift.Actions[1].Query, "Who is Fred ") {
			t.Errorf("actions %+v; want the question, then the primer's follow-ups", res.Drift.Actions)
		}
		if len(res.Drift.Edges) != len(res.Drift.Actions)-1 {
			t.Errorf("%d edges for %d actions; want one per follow-up asked", len(res.Drift.Edges), len(res.Drift.Actions))
		}
	})

	t.Run("drift plan", func(t *testing.T) {
		stdout, stderr, code := ask("--mode", "drift", "--plan", q)
		if code != 0 || !strings.Contains(stdout, "7 to 67 model calls") || len(chatRequests(srv)) != 0 {
			t.Errorf("--plan: exit %d, %d calls, stdout %q, stderr %q; want 7 to 67 calls planned and none made", code, len(chatRequests(srv)), stdout, stderr)
		}
	})

	t.Run("drift limit too low", func(t *testing.T) {
		_, stderr, code := ask("--mode", "drift", "--max-llm-calls", "5", q)
		if code != exitUsage || !strings.Contains(stderr, "--max-llm-calls 5 is too low") || !strings.Contains(stderr, "Try: --max-llm-calls 7") || len(chatRequests(srv)) != 0 {
			t.Errorf("exit %d, %d calls, %q; want a usage error before any call", code, len(chatRequests(srv)), stderr)
		}
	})

	// The model fails mid-search: the first follow-up's call queues f for
	// the next n chat calls (no retries).
	midSearch := func(f llmtest.Failure, n int) {
		failed := false
		driftScript(srv, func(r llmtest.Request) {
			if strings.Contains(r.Messages[0].Content, "The larger question is") && !failed {
				failed = true
				srv.FailN(n, f)
			}
		})
	}
	t.Run("drift follow-ups fail", func(t *testing.T) {
		midSearch(llmtest.Failure{Path: "/chat/completions", Status: 500}, 3)
		defer driftScript(srv, nil)
		stdout, stderr, code := ask("--mode", "drift", "--drift-depth", "1", "--concurrency", "1", q)
		if code != 0 || !strings.Contains(stdout, "The ghosts change Scrooge") || !strings.Contains(stderr, "3 of 17 model calls failed and were skipped") {
			t.Errorf("exit %d, stdout %q, stderr %q; want the answer, and 3 of 17 calls (1 + 5 + 10 + 1) failed", code, stdout, stderr)
		}
	})
	t.Run("drift model gone", func(t *testing.T) {
		midSearch(llmtest.Failure{Path: "/chat/completions", Drop: true}, 1000)
		defer driftScript(srv, nil)
		_, stderr, code := ask("--mode", "drift", "--concurrency", "1", q)
		if code != exitModelDown || !strings.Contains(stderr, "follow-ups, round 1") {
			t.Errorf("exit %d, stderr %q; want %d (model down) naming the round", code, stderr, exitModelDown)
		}
	})

	t.Run("basic without its index", func(t *testing.T) {
		empty := t.TempDir()
		if err := os.Rename(filepath.Join(index, location.File(tableTextUnits)), filepath.Join(empty, "moved.vec")); err != nil {
			t.Fatal(err)
		}
		defer os.Rename(filepath.Join(empty, "moved.vec"), filepath.Join(index, location.File(tableTextUnits)))
		_, stderr, code := ask("--mode", "basic", q)
		if code != exitFailure || !strings.Contains(stderr, "kgrag embed --input DIR --tables text_units") {
			t.Errorf("exit %d, %q; want 1 naming kgrag embed --tables text_units", code, stderr)
		}
	})
}

// sortedNumeric says ids, all integers, are in ascending order.
func sortedNumeric(ids []string) bool {
	prev := -1
	for _, id := range ids {
		var n int
		if _, err := fmt.Sscan(id, &n); err != nil || n < prev {
			return false
		}
		prev = n
	}
	return true
}
