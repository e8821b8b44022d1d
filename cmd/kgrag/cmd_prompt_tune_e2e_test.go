package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/indexer/indexertest"
	"github.com/kgrag/kgrag/internal/prompttune"
	"github.com/kgrag/kgrag/prompts"
)

// TestPromptTuneRealModel tunes prompts on a piece of A Christmas Carol
// with the real small chat model (Gemma 3 270M behind llama.cpp's server,
// scripts/models.sh) and indexes two chunks with them. The tuning must
// write a folder kgrag index opens, whatever the model answered (its
// unusable replies fall back to defaults, with warnings), and the
// extraction with the tuned prompt must be usable by the small model: each
// prompt, with its chunk, fits the model's 2048-token context (no text
// unit fails extraction), and every reply is read. Whether the model then
// names entities is logged, not asserted: Gemma 3 270M is a base model
// that names none with kgrag's built-in prompt either
// (TestIndexRealModel), and it named none with the tuned one when tried.
// The replies are bounded by --max-tokens (100: what is read from them is
// a phrase or a list, and the model writes at ~15 tokens/s here) and the
// prompts by --sample-tokens and --max-prompt-tokens; the model calls and
// the wall time are logged.
func TestPromptTuneRealModel(t *testing.T) {
	url, chatModel, _ := modelServer(t)
	input := indexertest.CarolInput(t, 650)
	dir := filepath.Join(t.TempDir(), "prompts")
	start := time.Now()
	_, stderr, code := runKgrag(t, "prompt-tune", "--input", input, "--output", dir, "--llm-url", url, "--chat-model", chatModel,
		"--limit", "3", "--chunk-size", "300", "--chunk-overlap", "30", "--max-tokens", "100", "--sample-tokens", "400",
		"--examples", "2", "--example-tokens", "120", "--max-prompt-tokens", "900")
	tuneTime := time.Since(start)
	if code != 0 {
		t.Fatalf("kgrag prompt-tune: exit %d after %s: %s", code, tuneTime.Round(time.Second), stderr)
	}
	if _, err := prompts.Open(dir); err != nil {
		t.Fatalf("the prompts written do not open: %v", err)
	}
	man, err := prompttune.ReadManifest(dir)
	if err != nil || man == nil {
		t.Fatalf("ReadManifest: %v", err)
	}
	if man.Domain == "" || man.Language == "" || man.Persona == "" || len(man.EntityTypes) == 0 || man.Calls < 7 {
		t.Errorf("manifest %+v; want every finding filled (model or default) after at least 7 calls", man)
	}
	b, _ := json.MarshalIndent(man, "", "  ")
	t.Logf("prompt-tune with %s: %d model calls in %s\n%s\n%s", chatModel, man.Calls, tuneTime.Round(100*time.Millisecond), b, stderr)

	out := filepath.Join(t.TempDir(), "output")
	start = time.Now()
	_, stderr, code = runKgrag(t, "index", "--input", input, "--output", out, "--prompts", dir,
		"--llm-url", url, "--chat-model", chatModel, "--chunk-size", "600", "--chunk-overlap", "100",
		"--max-gleanings", "0", "--concurrency", "1", "--max-tokens", "120")
	if code != 0 {
		t.Fatalf("kgrag index --prompts: exit %d: %s", code, stderr)
	}
	ds, err := graphrag.Open(t.Context(), out)
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, e := range ds.Entities {
		titles = append(titles, e.Title)
	}
	t.Logf("kgrag index --prompts: %d text units, %d entities %q in %s\n%s", len(ds.TextUnits), len(ds.Entities), titles,
		time.Since(start).Round(100*time.Millisecond), stderr)
	if len(ds.TextUnits) != 2 || !strings.Contains(stderr, "(0 text units failed extraction)") {
		extract, _ := os.ReadFile(filepath.Join(dir, "index_extract.tmpl"))
		t.Errorf("%d text units, stderr %q: want 2, none failing extraction with the tuned prompt; the prompt:\n%s", len(ds.TextUnits), stderr, extract)
	}
	if len(ds.Entities) == 0 {
		t.Logf("%s named no entity with the tuned prompt (nor does it with the built-in one)", chatModel)
	}
}
