package embedindex_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
)

// BenchmarkEmbedThroughput is the client-side cost of an embedding run
// (JSON both ways, batching, HTTP) against llmtest, whose own embedding
// work is included: a floor under what a real model adds.
func BenchmarkEmbedThroughput(b *testing.B) {
	for _, dim := range []int{384, 768} {
		for _, conc := range []int{1, 2, 4} {
			b.Run(fmt.Sprintf("d%d-c%d", dim, conc), func(b *testing.B) {
				srv := httptest.NewServer(llmtest.New(llmtest.Config{Dim: dim}))
				defer srv.Close()
				c, err := llm.New(llm.Config{BaseURL: srv.URL + "/v1", EmbedModel: "m", HTTPClient: srv.Client()})
				if err != nil {
					b.Fatal(err)
				}
				batcher := embedindex.NewBatcher(c.Embedder(), embedindex.BatchOptions{Size: 64, Concurrency: conc})
				in := texts(2048, "bench")
				b.ResetTimer()
				for b.Loop() {
					if _, err := batcher.Embed(context.Background(), in); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(in)*b.N)/b.Elapsed().Seconds(), "texts/s")
			})
		}
	}
}
