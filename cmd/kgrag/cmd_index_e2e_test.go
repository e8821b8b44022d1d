package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/internal/indexer/indexertest"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
)

// TestIndexThenAsk indexes a piece of A Christmas Carol with the scripted
// model, embeds the output and asks questions over it, local and global
// (other llmtest servers play the answering model and the embedder).
// The context each search sent must hold what the index wrote: the
// entities the scripted model extracted and the title of the reports it
// wrote.
func TestIndexThenAsk(t *testing.T) {
	out := indexCarol(t, 2000)

	srv := globalServer(t)
	index := t.TempDir()
	term, _, _ := testTerminal()
	if err := runEmbed(t.Context(), embedTestOptions(out, index, srv.URL(), askEmbedModel), term); err != nil {
		t.Fatalf("runEmbed: %v", err)
	}
	f := askFixture{input: out, index: index, srv: srv}
	const question = "Who is Scrooge and whom does he deal with?"

	t.Run("context-only", func(t *testing.T) {
		srv.Reset()
		opts := f.options(question)
		opts.contextOnly = true
		term, stdout, _ := testTerminal()
		if err := runAsk(t.Context(), opts, term); err != nil {
			t.Fatal(err)
		}
		checkIndexedContext(t, stdout.String())
		if n := srv.Count("/chat/completions"); n != 0 {
			t.Errorf("--context-only made %d chat requests; want 0", n)
		}
	})

	t.Run("local", func(t *testing.T) {
		// A server of its own: the global one takes the local context's
		// Reports table for a map call. Its embeddings are the same.
		local := llmtest.Start(t, llmtest.Config{})
		const answer = "Scrooge deals with Marley [Data: Entities (0, 1)]."
		local.Enqueue(answer)
		opts := f.options(question)
		opts.llm.url = local.URL()
		term, stdout, _ := testTerminal()
		if err := runAsk(t.Context(), opts, term); err != nil {
			t.Fatal(err)
		}
		reqs := chatRequests(local)
		if len(reqs) != 1 {
			t.Fatalf("%d chat requests; want 1", len(reqs))
		}
		if !strings.Contains(stdout.String(), answer) {
			t.Errorf("stdout %q; want the server's answer %q", stdout, answer)
		}
		checkIndexedContext(t, reqs[0].Messages[0].Content)
	})

	t.Run("global", func(t *testing.T) {
		srv.Reset()
		stdout, stderr, code := runKgrag(t, "ask", "--mode", "global", "--input", out, "--llm-url", srv.URL(),
			"--chat-model", "test-chat", "--json", question)
		if code != 0 {
			t.Fatalf("kgrag ask --mode global: exit %d: %s", code, stderr)
		}
		var res struct {
			Answer string `json:"answer"`
			Global struct {
				Reports  int `json:"reports"`
				LLMCalls int `json:"llm_calls"`
			} `json:"global"`
		}
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatalf("kgrag ask --json: %v in %q", err, stdout)
		}
		reqs := chatRequests(srv)
		if !strings.Contains(res.Answer, "redemption") || res.Global.Reports == 0 || res.Global.LLMCalls != len(reqs) {
			t.Errorf("answer %q from %d reports in %d calls; want the reduce reply, reports, %d calls as the server counted",
				res.Answer, res.Global.Reports, res.Global.LLMCalls, len(reqs))
		}
		maps := 0
		for _, r := range reqs {
			if sys := r.Messages[0].Content; strings.Contains(sys, "---Reports---") {
				maps++
				if !strings.Contains(sys, indexertest.ReportTitle) {
					t.Errorf("map call's reports lack the indexed report %q:\n%.600s", indexertest.ReportTitle, sys)
				}
			}
		}
		if maps == 0 || maps != len(reqs)-1 {
			t.Errorf("%d map calls of %d chat requests; want all but the reduce call", maps, len(reqs))
		}
	})
}

// indexCarol indexes the first words of A Christmas Carol with the
// scripted model (indexertest) and returns the output folder.
func indexCarol(t *testing.T, words int) string {
	t.Helper()
	srv, out := llmtest.Start(t, llmtest.Config{}), filepath.Join(t.TempDir(), "output")
	indexertest.Script(srv)
	opts := indexRunOptions{input: indexertest.CarolInput(t, words), output: out, chatModel: "m", concurrency: 3,
		chunkSize: 300, overlap: 30, entityTypes: "person,geo,event", quiet: true, llm: llmOptions{url: srv.URL()}}
	term, _, errb := testTerminal()
	if err := runIndex(t.Context(), opts, term); err != nil {
		t.Fatalf("runIndex: %v\n%s", err, errb)
	}
	return out
}

// checkIndexedContext checks that a local search context holds entities
// the scripted model extracted and the report it wrote.
func checkIndexedContext(t *testing.T, text string) {
	t.Helper()
	for _, want := range []string{"-----Entities-----", "SCROOGE", "MARLEY", "-----Reports-----", indexertest.ReportTitle, "-----Sources-----"} {
		if !strings.Contains(text, want) {
			t.Errorf("context lacks %q:\n%.1500s", want, text)
		}
	}
}

// chatRequests returns the chat requests srv received.
func chatRequests(srv *llmtest.Server) []llmtest.Request {
	var out []llmtest.Request
	for _, r := range srv.Requests() {
		if strings.HasSuffix(r.Path, "/chat/completions") {
			out = append(out, r)
		}
	}
	return out
}
