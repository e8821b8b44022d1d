package extraction_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/internal/extraction"
	"github.com/kgrag/kgrag/internal/llm"
)

// BenchmarkExtract measures the extractor's own cost per text unit (a
// text of about 1200 tokens, GraphRAG's default gleaning round, replies
// of 20 records each) with an instant in-process model: prompt rendering,
// token counting and parsing, everything but the model and HTTP.
func BenchmarkExtract(b *testing.B) {
	text := strings.Repeat(carolText+" ", 30)
	var records []string
	for i := range 10 {
		records = append(records, ent(fmt.Sprintf("PERSON %d", i), "PERSON", "Someone the passage names, with a description of a sentence or two."),
			rel("EBENEZER SCROOGE", fmt.Sprintf("PERSON %d", i), "How the two are linked, in a sentence.", i+1))
	}
	answer := reply(records...)
	m := &fakeModel{answer: func(int, []llm.Message) (string, error) { return answer, nil }}
	x := extractor(b, m, extraction.DefaultOptions())
	b.Logf("text %d tokens", encoder(b).Count(text))
	b.ReportAllocs()
	for b.Loop() {
		m.calls = m.calls[:0]
		res, err := x.Extract(context.Background(), extraction.Unit{ID: "u", Text: text})
		if err != nil || res.Graph.Entities != 20 {
			b.Fatalf("err %v, %d entities", err, res.Graph.Entities)
		}
	}
}
