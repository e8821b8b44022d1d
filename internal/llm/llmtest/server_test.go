package llmtest_test

import (
	"encoding/json"
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

// TestProse: with Config.Prose a reply keeps its words and loses every
// character of JSON and of GraphRAG's delimited records, whatever was
// asked.
func TestProse(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{Prose: true})
	srv.Enqueue(`{"points": [{"description": "Scrooge is a miser", "score": 80}]}`, `("entity"<|>SCROOGE<|>PERSON)##`, "")
	c := srv.Client()
	for _, want := range []string{"points : description : Scrooge is a miser , score : 80.", "entity SCROOGE PERSON.", "I could not find that in the text."} {
		resp, err := c.Post(srv.URL()+"/chat/completions", "application/json",
			strings.NewReader(`{"model": "m", "messages": [{"role": "user", "content": "q"}], "response_format": {"type": "json_object"}}`))
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Choices []struct{ Message struct{ Content string } }
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil || len(body.Choices) != 1 || body.Choices[0].Message.Content != want {
			t.Errorf("reply %+v (%v); want %q", body, err, want)
		}
	}
}
