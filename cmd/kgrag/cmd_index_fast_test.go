package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/test"
)

// TestIndexFastNoModel indexes the whole of A Christmas Carol with
// --method fast --reports none while --llm-url points at a closed port:
// the run needs no model server. The output then goes through kgrag load
// (Turtle) and kgrag ask --context-only, with the test embedder only.
func TestIndexFastNoModel(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "output")
	_, stderr, code := runKgrag(t, "index", "--input", test.SourceText(t), "--output", out,
		"--method", "fast", "--reports", "none", "--llm-url", "http://127.0.0.1:1/v1")
	if code != 0 {
		t.Fatalf("index: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"noun graph", "0 reports", "no model calls"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("index stderr lacks %q:\n%s", want, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, defaultIndexCache)); err == nil {
		t.Error("a run that calls no model made a reply cache")
	}

	ttl := filepath.Join(dir, "carol.ttl")
	if _, stderr, code := runKgrag(t, "load", "-q", "--input", out, "--turtle", ttl); code != 0 {
		t.Fatalf("load: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(ttl)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`gr:title "BOB CRATCHIT"`, `gr:type "NOUN PHRASE"`, "a gr:Community", "a gr:Chunk"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("Turtle lacks %s", want)
		}
	}

	srv := llmtest.Start(t, llmtest.Config{Dim: 64})
	llmArgs := []string{"--llm-url", srv.URL(), "--embed-model", "e"}
	if _, stderr, code := runKgrag(t, append([]string{"embed", "-q", "--input", out}, llmArgs...)...); code != 0 {
		t.Fatalf("embed: exit %d: %s", code, stderr)
	}
	ctx, stderr, code := runKgrag(t, append(append([]string{"ask", "--input", out, "--context-only", "--top-k-entities", "3"}, llmArgs...),
		"What does Bob Cratchit eat with Tiny Tim?")...)
	if code != 0 {
		t.Fatalf("ask: exit %d: %s", code, stderr)
	}
	if srv.Count("/chat/completions") != 0 {
		t.Errorf("%d chat calls; --context-only makes none", srv.Count("/chat/completions"))
	}
	for _, want := range []string{"-----Entities-----", "BOB CRATCHIT", "-----Sources-----"} {
		if !strings.Contains(ctx, want) {
			t.Errorf("context lacks %q:\n%.2000s", want, ctx)
		}
	}
}

// TestIndexFastEmptyInput: a folder whose only file holds no text is
// refused with the folder named.
func TestIndexFastEmptyInput(t *testing.T) {
	in := t.TempDir()
	if err := os.WriteFile(filepath.Join(in, "empty.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runKgrag(t, "index", "--input", in, "--output", filepath.Join(t.TempDir(), "out"), "--method", "fast", "--reports", "none")
	if code != 1 || !strings.Contains(stderr, in) || !strings.Contains(stderr, "no text to index") {
		t.Errorf("exit %d, stderr %q; want 1 naming %s and 'no text to index'", code, stderr, in)
	}
}
