package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/embedindex/flat"
	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/embedtext"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/test"
)

// v3Entities is the number of entities the v3 sample's entities table
// holds (placeholders excluded).
const v3Entities = 529

func embedTestOptions(input, index, url, model string) embedOptions {
	return embedOptions{
		input: input, index: index, batchSize: 50, concurrency: 3, quiet: true, snapshot: true,
		llm: llmOptions{url: url, embedModel: model, retries: 0},
	}
}

func TestEmbed(t *testing.T) {
	in := filepath.Join(test.GraphRAGSamples(t), "v3")
	srv := llmtest.Start(t, llmtest.Config{Dim: 48})
	index := t.TempDir()
	opts := embedTestOptions(in, index, srv.URL(), "nomic-embed-text")

	term, out, errb := testTerminal()
	if err := runEmbed(t.Context(), opts, term); err != nil {
		t.Fatal(err)
	}
	if out.Len() != 0 {
		t.Errorf("embed wrote %q to stdout; want nothing", out)
	}
	path := filepath.Join(index, entityIndexFile)
	idx, err := flat.Open(t.Context(), path, flat.Options{})
	if err != nil {
		t.Fatal(err)
	}
	info := idx.Info()
	if info.Count != v3Entities || info.Dim != srv.Dim("nomic-embed-text") || info.Model != "nomic-embed-text" {
		t.Errorf("index info = %+v; want %d vectors of dimension %d from nomic-embed-text", info, v3Entities, srv.Dim("nomic-embed-text"))
	}
	wantLine := "embedded 529 entities, 0 from cache; model nomic-embed-text, dimension 48; index " + path
	if !strings.Contains(errb.String(), wantLine) {
		t.Errorf("stderr = %q; want it to contain %q", errb, wantLine)
	}
	if n := srv.MaxInFlight(); n > opts.concurrency {
		t.Errorf("%d requests in flight; want at most %d", n, opts.concurrency)
	}

	// Each entity's own text finds it first.
	ds, err := graphrag.Open(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, e := range ds.Entities {
		if e.Placeholder || checked == 5 {
			continue
		}
		checked++
		hits, err := idx.Search(t.Context(), llmtest.Embed("nomic-embed-text", embedtext.Entity(e), 48), 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 1 || hits[0].Score < 0.999 {
			t.Errorf("Search(text of %s) = %+v; want the entity itself", e.ID, hits)
		}
	}

	// A second run is answered from the cache.
	srv.Reset()
	term, _, errb = testTerminal()
	if err := runEmbed(t.Context(), opts, term); err != nil {
		t.Fatal(err)
	}
	if n := srv.Count("/embeddings"); n != 0 {
		t.Errorf("second run made %d embedding requests; want 0", n)
	}
	if want := "embedded 0 entities, 529 from cache"; !strings.Contains(errb.String(), want) {
		t.Errorf("second run: stderr = %q; want it to contain %q", errb, want)
	}
	if idx, err := flat.Open(t.Context(), path, flat.Options{}); err != nil || idx.Info().Count != v3Entities {
		t.Errorf("second run: index %v, err %v; want %d vectors", idx, err, v3Entities)
	}
}

func TestEmbedDefaultIndex(t *testing.T) {
	opts := embedOptions{input: "out", batchSize: 1, concurrency: 1, llm: llmOptions{url: "http://x/v1", embedModel: "m"}}
	if err := opts.validate(); err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join("out", "kgrag-index"); opts.index != want {
		t.Errorf("default index = %q; want %q", opts.index, want)
	}
}

func TestEmbedModelNotFound(t *testing.T) {
	in := filepath.Join(test.GraphRAGSamples(t), "v3")
	srv := llmtest.Start(t, llmtest.Config{Models: []string{"nomic-embed-text"}})
	term, _, _ := testTerminal()
	err := runEmbed(t.Context(), embedTestOptions(in, t.TempDir(), srv.URL(), "no-such-model"), term)
	if err == nil {
		t.Fatal("embed with an unknown model: no error")
	}
	if !strings.Contains(err.Error(), `"no-such-model"`) || !strings.Contains(err.Error(), "--embed-model") {
		t.Errorf("error = %q; want it to name the model and --embed-model", err)
	}
	if code := exitCode(t.Context(), err); code != exitFailure {
		t.Errorf("exit code = %d; want %d", code, exitFailure)
	}
}

func TestEmbedUsage(t *testing.T) {
	tests := []struct {
		name string
		opts embedOptions
		want string
	}{
		{"no input", embedOptions{batchSize: 1, concurrency: 1, llm: llmOptions{url: "http://x/v1", embedModel: "m"}}, "--input is required"},
		{"zero batch", embedOptions{input: "x", concurrency: 1, llm: llmOptions{url: "http://x/v1", embedModel: "m"}}, "--batch-size"},
		{"zero concurrency", embedOptions{input: "x", batchSize: 1, llm: llmOptions{url: "http://x/v1", embedModel: "m"}}, "--concurrency"},
		{"no model", embedOptions{input: "x", batchSize: 1, concurrency: 1, llm: llmOptions{url: "http://x/v1"}}, "--embed-model"},
		{"bad url", embedOptions{input: "x", batchSize: 1, concurrency: 1, llm: llmOptions{url: "ftp://x", embedModel: "m"}}, "--llm-url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			term, _, _ := testTerminal()
			err := runEmbed(t.Context(), tt.opts, term)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("runEmbed: %v; want an error containing %q", err, tt.want)
			}
			if code := exitCode(t.Context(), err); code != exitUsage {
				t.Errorf("exit code = %d; want %d", code, exitUsage)
			}
		})
	}
}

func TestEmbedExitCodes(t *testing.T) {
	in := filepath.Join(test.GraphRAGSamples(t), "v3")
	t.Setenv("KGRAG_LLM_KEY", "sk-secret-from-env")
	_, stderr, code := runKgrag(t, "embed", "-q", "--input", in, "--index", t.TempDir(),
		"--llm-url", "http://127.0.0.1:1/v1", "--llm-retries", "0")
	if code != exitModelDown {
		t.Errorf("embed with the server down: exit %d; want %d (stderr %q)", code, exitModelDown, stderr)
	}
	for _, want := range []string{"http://127.0.0.1:1/v1", "--llm-url"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q lacks %q", stderr, want)
		}
	}
	if strings.Contains(stderr, "sk-secret-from-env") {
		t.Errorf("stderr shows the API key: %q", stderr)
	}
}

// TestEmbedInterrupted checks that an interrupted run saves the vectors it
// got, so the next run sends only the rest.
func TestEmbedInterrupted(t *testing.T) {
	in := filepath.Join(test.GraphRAGSamples(t), "v3")
	model := llmtest.New(llmtest.Config{})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var embeds atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/embeddings") && embeds.Add(1) == 5 {
			cancel() // after the first chunk of 4 requests
		}
		model.ServeHTTP(w, r)
	}))
	defer srv.Close()
	index := t.TempDir()
	opts := embedTestOptions(in, index, srv.URL+"/v1", "nomic-embed-text")
	opts.concurrency = 1 // chunks of 200 texts, 4 requests each
	// A window given: no probe of it, whose requests would be counted.
	opts.llm.embedWindow = 100000

	term, _, _ := testTerminal()
	err := runEmbed(ctx, opts, term)
	if code := exitCode(ctx, err); code != exitInterrupted {
		t.Fatalf("interrupted run: exit %d, err %v; want %d", code, err, exitInterrupted)
	}
	if _, err := os.Stat(filepath.Join(index, entityIndexFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("interrupted run left an index (stat: %v)", err)
	}

	embeds.Store(0)
	term, _, errb := testTerminal()
	if err := runEmbed(t.Context(), opts, term); err != nil {
		t.Fatal(err)
	}
	if want := "embedded 329 entities, 200 from cache"; !strings.Contains(errb.String(), want) {
		t.Errorf("run after the interruption: stderr %q; want it to contain %q", errb, want)
	}
}

// TestEmbedHelpHidesKey checks that --help shows no API key from the
// environment or a key file.
func TestEmbedHelpHidesKey(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte("sk-from-file"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KGRAG_LLM_KEY", "sk-from-env")
	t.Setenv("KGRAG_LLM_KEY_FILE", keyFile)
	var out bytes.Buffer
	if err := newApp(strings.NewReader(""), &out, &out).Run(t.Context(), []string{"kgrag", "embed", "--help"}); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); strings.Contains(s, "sk-from-") || !strings.Contains(s, "11   the model server could not be reached") {
		t.Errorf("embed --help shows a key or lacks exit status 11:\n%s", s)
	}
}

// TestEmbedReuse writes the index from the 0.3.4 sample's own
// description_embedding column, without a model server, and checks it
// against the vectors pyarrow reads from the parquet file.
func TestEmbedReuse(t *testing.T) {
	in := filepath.Join(test.GraphRAGSamples(t), "v0.3.4")
	index := t.TempDir()
	opts := embedTestOptions(in, index, "http://127.0.0.1:1/v1", "text-embedding-3-small")
	opts.reuse, opts.modelSet = true, true
	term, _, errb := testTerminal()
	if err := runEmbed(t.Context(), opts, term); err != nil {
		t.Fatal(err)
	}
	idx, err := flat.Open(t.Context(), filepath.Join(index, entityIndexFile), flat.Options{})
	if err != nil {
		t.Fatal(err)
	}
	script := `import json, sys, pyarrow.parquet as pq
t = pq.read_table(sys.argv[1], columns=["id", "description_embedding"]).to_pylist()
print(json.dumps({"n": len(t), "rows": t[:5]}))`
	out, err := exec.Command("python3", "-c", script, filepath.Join(in, "create_final_entities.parquet")).Output()
	if err != nil {
		test.SkipOrFail(t, "python3 with pyarrow is needed for the oracle: %v", err)
	}
	var want struct {
		N    int
		Rows []struct {
			ID                   string    `json:"id"`
			DescriptionEmbedding []float64 `json:"description_embedding"`
		}
	}
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	info := idx.Info()
	if info.Count != want.N || info.Model != "text-embedding-3-small" || info.Dim != len(want.Rows[0].DescriptionEmbedding) {
		t.Errorf("index info = %+v; want %d vectors of dimension %d from text-embedding-3-small", info, want.N, len(want.Rows[0].DescriptionEmbedding))
	}
	for _, r := range want.Rows {
		q := make([]float32, len(r.DescriptionEmbedding))
		for i, x := range r.DescriptionEmbedding {
			q[i] = float32(x)
		}
		hits, err := idx.Search(t.Context(), q, 1)
		if err != nil || len(hits) != 1 || hits[0].ID != r.ID || hits[0].Score < 0.9999 {
			t.Errorf("Search(embedding of %s) = %+v, %v; want the entity itself", r.ID, hits, err)
		}
	}
	if !strings.Contains(errb.String(), fmt.Sprintf("reused %d description_embedding vectors", want.N)) {
		t.Errorf("stderr = %q; want the reuse summary", errb)
	}

	// A release without the column, and a missing model name, are refused.
	v3 := embedTestOptions(filepath.Join(test.GraphRAGSamples(t), "v3"), t.TempDir(), "http://127.0.0.1:1/v1", "m")
	v3.reuse, v3.modelSet = true, true
	if err := runEmbed(t.Context(), v3, term); err == nil || !strings.Contains(err.Error(), "no description_embedding") ||
		!strings.Contains(err.Error(), "leave out --reuse-embeddings") || exitCode(t.Context(), err) != exitUsage {
		t.Errorf("reuse on 3.x: err = %v (exit %d); want a usage error saying the output has no description_embedding and what to do",
			err, exitCode(t.Context(), err))
	}
	opts.modelSet = false
	if err := runEmbed(t.Context(), opts, term); err == nil || !strings.Contains(err.Error(), "--embed-model") {
		t.Errorf("reuse without --embed-model: err = %v; want a usage error naming --embed-model", err)
	}
}

// TestEmbedElasticsearchDown: with --index-url naming a node that does not
// answer, embed exits with the store-down status and names the flag, after
// keeping what it embedded in the cache.
func TestEmbedElasticsearchDown(t *testing.T) {
	in := filepath.Join(test.GraphRAGSamples(t), "v3")
	srv := llmtest.Start(t, llmtest.Config{Dim: 8})
	index := t.TempDir()
	t.Setenv("KGRAG_INDEX_PASSWORD", "es-secret")
	_, stderr, code := runKgrag(t, "embed", "-q", "--input", in, "--index", index, "--llm-url", srv.URL(),
		"--index-url", "http://elastic@127.0.0.1:1", "--index-user", "elastic")
	if code != exitStoreDown {
		t.Errorf("embed with Elasticsearch down: exit %d; want %d (stderr %q)", code, exitStoreDown, stderr)
	}
	for _, want := range []string{"127.0.0.1:1", "--index-url"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q lacks %q", stderr, want)
		}
	}
	if strings.Contains(stderr, "es-secret") {
		t.Errorf("stderr shows the password: %q", stderr)
	}
	if _, err := os.Stat(filepath.Join(index, embedindex.CacheFile)); err != nil {
		t.Errorf("the embeddings cache was not kept: %v", err)
	}
}

// TestEmbedMaxBackoff: --llm-max-backoff reaches the client. A server that
// asks for a 1 s wait (Retry-After) is waited for under the default limit,
// and fails the run, with the hint naming the flag, under a limit of 500ms.
func TestEmbedMaxBackoff(t *testing.T) {
	input := filepath.Join(test.GraphRAGSamples(t), "v3")
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"default waits", nil, 0, ""},
		{"limit below the wait", []string{"--llm-max-backoff", "500ms"}, 1, "longer than the 500ms limit; retry later or raise --llm-max-backoff"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.Start(t, llmtest.Config{Dim: 8})
			srv.FailN(1, llmtest.Failure{Path: "/embeddings", Status: http.StatusTooManyRequests, RetryAfter: "1"})
			args := append([]string{"embed", "-q", "--input", input, "--index", t.TempDir(), "--llm-url", srv.URL(), "--embed-model", "m"}, tt.args...)
			_, stderr, code := runKgrag(t, args...)
			if code != tt.wantCode || !strings.Contains(stderr, tt.wantErr) {
				t.Errorf("kgrag embed %v: exit %d, stderr %q; want exit %d and %q", tt.args, code, stderr, tt.wantCode, tt.wantErr)
			}
		})
	}
}

// TestEmbedFailureLeavesNoFolder: an embed that fails before it cached a
// vector does not leave an empty kgrag-index folder in the input.
func TestEmbedFailureLeavesNoFolder(t *testing.T) {
	src := filepath.Join(test.GraphRAGSamples(t), "v3")
	in := t.TempDir()
	files, _ := os.ReadDir(src)
	for _, f := range files {
		if err := os.Symlink(filepath.Join(src, f.Name()), filepath.Join(in, f.Name())); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, code := runKgrag(t, "embed", "-q", "--input", in, "--llm-url", "http://127.0.0.1:1/v1", "--llm-retries", "0"); code == 0 {
		t.Fatal("embed against a server that is down succeeded")
	}
	if _, err := os.Stat(filepath.Join(in, defaultIndexDir)); err == nil {
		t.Errorf("the failed embed left %s/%s behind", in, defaultIndexDir)
	}
}
