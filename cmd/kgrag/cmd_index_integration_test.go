package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kgrag/kgrag/internal/indexer/indexertest"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/test"
)

// TestIndexLoadEmbed runs kgrag index --load --embed into a real Oxigraph:
// the store then holds as many instances per class as the written tables
// have rows (by the pyarrow oracle), the vector index holds an entry per
// entity, and a second run, from the cache, keeps the index folder that
// the output folder holds.
func TestIndexLoadEmbed(t *testing.T) {
	url := test.Service(t, "OXIGRAPH")
	st := openTestStore(t, "oxigraph", url)
	srv := llmtest.Start(t, llmtest.Config{})
	indexertest.Script(srv)
	dir := t.TempDir()
	out := filepath.Join(dir, "output")
	graph := "http://kgrag.test/index/carol"
	input := indexertest.CarolInput(t, 1500)
	args := []string{"index", "--input", input, "--output", out, "--chat-model", "m", "--embed-model", "e",
		"--llm-url", srv.URL(), "--chunk-size", "300", "--chunk-overlap", "30", "--claims",
		"--load", "--store", url, "--store-type", "oxigraph", "--graph", graph, "--embed", "--quiet"}
	if _, stderr, code := runKgrag(t, args...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := oracleCounts(t, out)
	for k, n := range want {
		if n == 0 {
			delete(want, k)
		}
	}
	t.Logf("oracle counts %v", want)
	got := classCounts(context.Background(), t, st.Client(), graph)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("instances per class = %v; want %v (pyarrow)", got, want)
	}
	vec := filepath.Join(out, defaultIndexDir)
	entries, err := os.ReadDir(vec)
	if err != nil || len(entries) == 0 {
		t.Fatalf("vector index %s: %v, %d files", vec, err, len(entries))
	}
	if n := srv.Count("/embeddings"); n == 0 {
		t.Error("--embed asked for no embedding")
	}

	// Again: nothing is asked of the chat model, and the index survives
	// the output folder's replacement.
	srv.Reset()
	if _, stderr, code := runKgrag(t, args...); code != 0 {
		t.Fatalf("second run: exit %d: %s", code, stderr)
	}
	if n := srv.Count("/chat/completions"); n != 0 {
		t.Errorf("second run made %d chat calls", n)
	}
	if again, err := os.ReadDir(vec); err != nil || len(again) != len(entries) {
		t.Errorf("vector index after the second run: %v, %d files (first run %d)", err, len(again), len(entries))
	}
}
