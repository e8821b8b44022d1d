package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kgrag/kgrag/internal/test"
)

// askE2E is the part of `kgrag ask --json` this test reads.
type askE2E struct {
	Answer  *string `json:"answer"`
	Context *struct {
		Tokens  int `json:"tokens"`
		Records struct {
			Entities []struct {
				Title string `json:"title"`
			} `json:"entities"`
		} `json:"records"`
	} `json:"context"`
	Timings map[string]float64 `json:"timings_ms"`
}

// TestAskRealModels embeds the v3 sample with a real sentence embedding
// model (all-MiniLM-L6-v2) and answers questions with a real chat model
// (Gemma 3 270M), both behind llama.cpp's OpenAI-compatible server that
// scripts/models.sh starts. Each question paraphrases what one entity's
// description says (in the comments), so the embedder must find it by
// meaning; the tiny model's wording is not judged, only that it answers.
func TestAskRealModels(t *testing.T) {
	url, chatModel, embedModel := modelServer(t)
	input, index := realCarolIndex(t, url, embedModel)
	server := []string{"--llm-url", url, "--embed-model", embedModel}

	// ask runs kgrag ask --json. A small context keeps the 270M model's
	// prompt, and so the answer time on 2 cores, short.
	ask := func(t *testing.T, question string) askE2E {
		t.Helper()
		args := append([]string{"ask", "--input", input, "--index", index, "--chat-model", chatModel,
			"--max-context-tokens", "1000", "--max-tokens", "64", "--json"}, server...)
		stdout, stderr, code := runKgrag(t, append(args, question)...)
		if code != 0 {
			t.Fatalf("kgrag ask %q: exit %d: %s", question, code, stderr)
		}
		var res askE2E
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatalf("kgrag ask --json: %v in %q", err, stdout)
		}
		if res.Answer == nil || strings.TrimSpace(*res.Answer) == "" {
			t.Fatalf("kgrag ask %q: empty answer", question)
		}
		if res.Context == nil {
			t.Fatalf("kgrag ask %q: no context in %s", question, stdout)
		}
		return res
	}

	tests := []struct {
		question string
		want     string // an entity title the context must hold
		answer   string // a word the answer must hold ("" when the 270M model is not reliable)
		repeat   bool   // ask twice: at temperature 0 the answers must be equal
	}{
		// Which name this one gives depends on the build's arithmetic: a
		// native build named Rackham, the portable AVX2 build of
		// scripts/models.sh names Dickens.
		{"Who drew the pictures for this edition of the book?", "ARTHUR RACKHAM", "", false},        // "the illustrator"
		{"Which of Bob Cratchit's children is ill and uses a crutch?", "TIM CRATCHIT", "Tim", true}, // "physically disabled"
		{"Who was Scrooge's dead business partner?", "GHOST OF JACOB MARLEY", "", false},            // "deceased business partner"
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			res := ask(t, tt.question)
			var titles []string
			for _, e := range res.Context.Records.Entities {
				titles = append(titles, e.Title)
			}
			if !slices.Contains(titles, tt.want) {
				t.Errorf("kgrag ask %q: context entities %q; want %q among them", tt.question, titles, tt.want)
			}
			for _, phase := range []string{"embed", "knn", "retrieval", "llm", "total"} {
				if res.Timings[phase] <= 0 {
					t.Errorf("kgrag ask %q: timings_ms[%q] = %v; want > 0", tt.question, phase, res.Timings[phase])
				}
			}
			answer := *res.Answer
			// At temperature 0 the model answers this from the context,
			// and the same way each time; random words, or another answer
			// to the same question, mean sampling is broken (as when a
			// "zero" temperature reached llama.cpp as 1e-45).
			if tt.answer != "" && !strings.Contains(answer, tt.answer) {
				t.Errorf("kgrag ask %q: answer %q; want it to name %s", tt.question, answer, tt.answer)
			}
			if tt.repeat {
				if again := *ask(t, tt.question).Answer; again != answer {
					t.Errorf("kgrag ask %q twice at temperature 0: %q, then %q; want the same answer", tt.question, answer, again)
				}
			}
			t.Logf("Q: %s\nentities: %s\nA: %s\ntimings_ms: %v", tt.question, strings.Join(titles, "; "), answer, res.Timings)
		})
	}
}

// modelServer returns the base URL and the chat and embedding model names
// of the server scripts/models.sh runs (test.Models: skipped or failed
// when unset, failed with the server's log when it has died). One server
// answers both: kgrag ask embeds the question at the --llm-url it chats
// with.
func modelServer(t *testing.T) (url, chatModel, embedModel string) {
	t.Helper()
	m := test.Models(t)
	return m.URL, m.ChatModel, m.EmbedModel
}

// carolIndex is the v3 sample's entities, text units and reports embedded
// by the real embedder, made once per test binary for the tests that
// search it: ~100 s of the model server's time on 2 cores each time
// otherwise. TestMain removes dir.
var carolIndex struct {
	once   sync.Once
	dir    string
	done   bool // false after once: the embedding failed
	stderr string
}

// realCarolIndex returns the v3 sample and its index (carolIndex), made
// at the first call with the embedder at url.
func realCarolIndex(t *testing.T, url, embedModel string) (input, index string) {
	t.Helper()
	input = filepath.Join(test.GraphRAGSamples(t), "v3")
	carolIndex.once.Do(func() {
		dir, err := os.MkdirTemp("", "kgrag-test-carol-index-")
		if err != nil {
			carolIndex.stderr = err.Error()
			return
		}
		carolIndex.dir = dir
		_, stderr, code := runKgrag(t, "embed", "-q", "--input", input, "--index", dir, "--tables", "all",
			"--llm-url", url, "--embed-model", embedModel)
		carolIndex.stderr = fmt.Sprintf("exit %d: %s", code, stderr)
		carolIndex.done = code == 0
	})
	if !carolIndex.done {
		t.Fatalf("kgrag embed --tables all (the v3 sample, shared by the real-model tests): %s", carolIndex.stderr)
	}
	return input, carolIndex.dir
}

// TestAskGlobalRealModel runs global search on the v3 sample with the real
// chat model (Gemma 3 270M behind llama.cpp's server, scripts/models.sh).
// The map calls go out in JSON mode with a schema, which the server turns
// into a grammar, so even this tiny model's replies must come back usable
// (valid or repaired: it runs into --max-tokens and writes raw line breaks
// in strings); none may fail. Root-level report summaries in small
// batches keep the prompts inside the model's 2048-token context and the
// test to about a minute on 2 cores. The model's judgement is not tested:
// at 270M parameters it is poor, as the logged transcript shows.
func TestAskGlobalRealModel(t *testing.T) {
	url, chatModel, _ := modelServer(t)
	input := filepath.Join(test.GraphRAGSamples(t), "v3")
	const question = "What are the main themes of the story?"
	fc := newFormatCounter(t, url)
	stdout, stderr, code := runKgrag(t, "ask", "--mode", "global", "--input", input, "--llm-url", fc.srv.URL+"/v1", "--chat-model", chatModel,
		"--community-level", "0", "--report-summaries", "--max-context-tokens", "1200", "--reduce-context-tokens", "800",
		"--max-tokens", "160", "--concurrency", "1", "--json", question)
	if code != 0 {
		t.Fatalf("kgrag ask --mode global: exit %d: %s", code, stderr)
	}
	var res struct {
		Answer  *string            `json:"answer"`
		Timings map[string]float64 `json:"timings_ms"`
		Global  struct {
			Reports int `json:"reports"`
			Batches []struct {
				ReportIDs []string `json:"report_ids"`
				Parse     string   `json:"parse"`
				Fixes     []string `json:"fixes"`
				Reply     string   `json:"reply"`
				Error     string   `json:"error"`
				Millis    float64  `json:"ms"`
				Points    []struct {
					Description string `json:"description"`
					Score       int    `json:"score"`
				} `json:"points"`
			} `json:"batches"`
			MapParse  map[string]int `json:"map_parse"`
			MapFailed int            `json:"map_failed"`
			NoData    bool           `json:"no_data"`
			LLMCalls  int            `json:"llm_calls"`
		} `json:"global"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("kgrag ask --json: %v in %q", err, stdout)
	}
	g := res.Global
	if res.Answer == nil || strings.TrimSpace(*res.Answer) == "" || g.MapFailed != 0 || g.Reports != 23 || len(g.Batches) < 2 {
		t.Fatalf("answer %v, %d reports, %d batches, %d failed", res.Answer, g.Reports, len(g.Batches), g.MapFailed)
	}
	want := len(g.Batches) + 1
	if g.NoData {
		want--
	}
	if g.LLMCalls != want || g.MapParse["unusable"] != 0 {
		t.Errorf("%d calls (want %d), parse %v; want every map reply usable in JSON mode", g.LLMCalls, want, g.MapParse)
	}
	// The map calls ask for JSON in the format the server takes: llama.cpp's
	// Python server refuses json_schema (tried once) and takes json_object.
	formats := fc.take()
	if formats["json_object"] < len(g.Batches) || formats["json_schema"] > 1 {
		t.Errorf("requests by response_format %v; want json_object on each of the %d map calls, json_schema tried once at most", formats, len(g.Batches))
	}
	var log strings.Builder
	fmt.Fprintf(&log, "Q: %s\nrequests by response_format: %v\n", question, formats)
	for i, b := range g.Batches {
		fmt.Fprintf(&log, "map %d (reports %s): %s %v in %.1fs, %d points", i+1, strings.Join(b.ReportIDs, ","), b.Parse, b.Fixes, b.Millis/1000, len(b.Points))
		for _, p := range b.Points {
			fmt.Fprintf(&log, "\n    %3d  %.100s", p.Score, p.Description)
		}
		log.WriteString("\n")
	}
	fmt.Fprintf(&log, "A: %s\ntimings_ms: %v", *res.Answer, res.Timings)
	t.Log(log.String())
}
