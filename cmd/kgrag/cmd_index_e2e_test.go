package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/indexer/indexertest"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/test"
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

// TestIndexRealModel indexes the first two chunks of A Christmas Carol
// with the real chat model scripts/models.sh serves (Gemma 3 270M, a
// pretrained base model behind llama.cpp's server, on CPU), converts the
// output to Turtle with kgrag load and has Jena riot and Oxigraph parse
// it. The extraction is not judged: this model rarely writes the record
// format, and a run in which it names no entity still writes a graph of
// the documents and their text units. What it extracted is logged.
func TestIndexRealModel(t *testing.T) {
	url, chatModel, _ := modelServer(t)
	dir := t.TempDir()
	out, ttl := filepath.Join(dir, "output"), filepath.Join(dir, "g.ttl")
	// 650 words are about 900 tokens: two chunks of 600 with 100 of
	// overlap, each prompt inside the server's 2048-token context with
	// room for the reply. The model writes on until --max-tokens stops it
	// (150: enough for a few records, at ~15 tokens/s here).
	start := time.Now()
	_, stderr, code := runKgrag(t, "index", "--input", indexertest.CarolInput(t, 650), "--output", out,
		"--llm-url", url, "--chat-model", chatModel, "--chunk-size", "600", "--chunk-overlap", "100",
		"--max-gleanings", "0", "--concurrency", "1", "--max-tokens", "150")
	elapsed := time.Since(start)
	if code != 0 {
		t.Fatalf("kgrag index with %s: exit %d after %s: %s", chatModel, code, elapsed.Round(time.Second), stderr)
	}
	ds, err := graphrag.Open(t.Context(), out)
	if err != nil {
		t.Fatalf("graphrag.Open: %v", err)
	}
	if len(ds.Documents) != 1 || len(ds.TextUnits) != 2 {
		t.Errorf("%d documents, %d text units; want 1 and 2", len(ds.Documents), len(ds.TextUnits))
	}
	var titles []string
	for _, e := range ds.Entities {
		titles = append(titles, e.Title)
	}
	reports := 0
	for _, c := range ds.Communities {
		if c.Report != nil {
			reports++
		}
	}
	t.Logf("%s indexed 2 chunks in %s: %d entities %q, %d relationships, %d communities, %d reports\n%s",
		chatModel, elapsed.Round(100*time.Millisecond), len(ds.Entities), titles, len(ds.Relationships), len(ds.Communities), reports, stderr)

	if _, stderr, code := runKgrag(t, "load", "-q", "--input", out, "--turtle", ttl); code != 0 {
		t.Fatalf("kgrag load --turtle: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(ttl)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "a gr:Chunk"); n != len(ds.TextUnits) {
		t.Errorf("Turtle has %d gr:Chunk; want one per text unit (%d)", n, len(ds.TextUnits))
	}
	externalTools(t)
	if out, err := exec.Command("bash", filepath.Join(test.RepoRoot(t), "scripts", "validate-rdf.sh"), ttl).CombinedOutput(); err != nil {
		t.Fatalf("validate-rdf.sh: %v\n%s", err, out)
	}
}

// TestIndexNothingFound: a model that names no entity in any text unit
// still gives an output of the documents and text units, which loads.
func TestIndexNothingFound(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{})
	srv.Reply("", "<|COMPLETE|>")
	out := filepath.Join(t.TempDir(), "output")
	input := indexertest.CarolInput(t, 600)
	stdout, stderr, code := runKgrag(t, "index", "--input", input, "--output", out, "--llm-url", srv.URL(), "--chat-model", "m",
		"--chunk-size", "300", "--max-gleanings", "0")
	if code != 0 || !strings.Contains(stderr, " 0 entities") || !strings.Contains(stderr, "warning: the model named no entity") {
		t.Fatalf("kgrag index: exit %d, stdout %q, stderr %q; want 0 and a summary of 0 entities", code, stdout, stderr)
	}
	ds, err := graphrag.Open(t.Context(), out)
	if err != nil {
		t.Fatal(err)
	}
	if calls := srv.Count("/chat/completions"); len(ds.TextUnits) != calls || len(ds.Entities) != 0 || len(ds.Documents) != 1 {
		t.Errorf("%d documents, %d text units, %d entities after %d calls; want 1, one unit a call, 0",
			len(ds.Documents), len(ds.TextUnits), len(ds.Entities), calls)
	}
	if _, stderr, code := runKgrag(t, "load", "-q", "--input", out, "--turtle", filepath.Join(t.TempDir(), "g.ttl")); code != 0 {
		t.Errorf("kgrag load: exit %d: %s", code, stderr)
	}
}

// TestIndexRealModelReports runs the stages after extraction with the real
// chat model: a proxy in front of it answers the extraction calls from
// indexertest's script (Gemma 3 270M, a base model, does not write the
// record format, and neither did SmolLM2 135M Instruct when tried) and
// forwards every other call, the description summaries and the community
// reports, to the model as kgrag sent it. The reports go out in JSON mode
// with a schema, which llama.cpp's server enforces, so each community
// must get a report with a title however small the model.
func TestIndexRealModelReports(t *testing.T) {
	url, chatModel, _ := modelServer(t)
	var mu sync.Mutex
	forwarded := map[string]int{}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var req llmtest.Request
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		kind := indexertest.Kind(req)
		if kind == indexertest.KindExtraction || kind == indexertest.KindGleaning {
			reply, _ := indexertest.Reply(req)
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{
				"id": "scripted", "object": "chat.completion", "model": chatModel,
				"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
					"message": map[string]string{"role": "assistant", "content": reply}}},
			})
			return
		}
		mu.Lock()
		forwarded[kind]++
		mu.Unlock()
		resp, err := http.Post(strings.TrimSuffix(url, "/")+strings.TrimPrefix(r.URL.Path, "/v1"), "application/json", bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	defer proxy.Close()

	out := filepath.Join(t.TempDir(), "output")
	start := time.Now()
	_, stderr, code := runKgrag(t, "index", "--input", indexertest.CarolInput(t, 650), "--output", out,
		"--llm-url", proxy.URL+"/v1", "--chat-model", chatModel, "--chunk-size", "600", "--chunk-overlap", "100",
		"--max-gleanings", "0", "--concurrency", "1", "--max-tokens", "400", "--report-max-length", "40")
	elapsed := time.Since(start)
	if code != 0 {
		t.Fatalf("kgrag index: exit %d after %s: %s", code, elapsed.Round(time.Second), stderr)
	}
	ds, err := graphrag.Open(t.Context(), out)
	if err != nil {
		t.Fatal(err)
	}
	if forwarded[indexertest.KindSummary] == 0 || forwarded[indexertest.KindReport] == 0 || len(ds.Communities) == 0 {
		t.Fatalf("forwarded %v, %d communities; want summaries and reports from the model", forwarded, len(ds.Communities))
	}
	for _, c := range ds.Communities {
		if c.Report == nil || strings.TrimSpace(c.Report.Title) == "" || c.Report.Title == indexertest.ReportTitle {
			t.Errorf("community %s: report %+v; want one the model wrote, with a title", c.HumanReadableID, c.Report)
			continue
		}
		t.Logf("community %s: %q, rating %v, %d findings", c.HumanReadableID, c.Report.Title, c.Report.Rank, len(c.Report.Findings))
	}
	var summaries []string
	for _, e := range ds.Entities {
		if len(e.TextUnitIDs) > 1 {
			summaries = append(summaries, e.Title+": "+e.Description)
		}
	}
	t.Logf("%s wrote %v in %s; summaries:\n%s\n%s", chatModel, forwarded, elapsed.Round(100*time.Millisecond),
		strings.Join(summaries, "\n"), stderr)
	if _, stderr, code := runKgrag(t, "load", "-q", "--input", out, "--turtle", filepath.Join(t.TempDir(), "g.ttl")); code != 0 {
		t.Errorf("kgrag load: exit %d: %s", code, stderr)
	}
}
