package llmtest_test

import (
	"strings"
	"testing"

	"github.com/kgrag/kgrag/internal/llm/llmtest"
)

func dot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func TestEmbedProperties(t *testing.T) {
	a := llmtest.Embed("m", "Alice the cryptographer", 64)
	b := llmtest.Embed("m", "alice, a cryptographer!", 64)
	c := llmtest.Embed("m", "weather over the harbour", 64)
	if n := dot(a, a); n < 0.999 || n > 1.001 {
		t.Errorf("|Embed|^2 = %v; want 1", n)
	}
	if dot(a, b) <= dot(a, c) {
		t.Errorf("texts sharing words (%.3f) should be closer than unrelated texts (%.3f)", dot(a, b), dot(a, c))
	}
	if again := llmtest.Embed("m", "Alice the cryptographer", 64); dot(a, again) < 0.9999 {
		t.Error("Embed is not deterministic")
	}
	if other := llmtest.Embed("m2", "Alice the cryptographer", 64); dot(a, other) > 0.9 {
		t.Error("different models should give different vectors")
	}
	if e1, e2 := llmtest.Embed("m", "", 8), llmtest.Embed("m", "!!", 8); dot(e1, e2) > 0.999 {
		t.Error("texts without words should still differ by content")
	}
}

func TestChunks(t *testing.T) {
	for _, s := range []string{"", "one", "one two", " lead and  double  spaces ", "a\nb"} {
		if got := strings.Join(llmtest.Chunks(s), ""); got != s {
			t.Errorf("Join(Chunks(%q)) = %q; want it back", s, got)
		}
	}
}

func TestDims(t *testing.T) {
	srv := llmtest.New(llmtest.Config{Dim: 8, Dims: map[string]int{"big": 32}})
	if srv.Dim("big") != 32 || srv.Dim("other") != 8 {
		t.Errorf("Dim(big), Dim(other) = %d, %d; want 32, 8", srv.Dim("big"), srv.Dim("other"))
	}
}
