package retrieval_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/internal/tokens"
)

// BenchmarkBatches packs the v3 sample's reports up to level 2 into map
// batches with GraphRAG's defaults (bench/global times the same beside
// GraphRAG's build_context). "cold" builds each op on a fresh tokens.Encoder, as
// one kgrag ask process does; "warm" reuses one, whose memo then holds
// every report line's count.
func BenchmarkBatches(b *testing.B) {
	ctx := context.Background()
	ds, err := graphrag.Open(ctx, filepath.Join(test.GraphRAGSamples(b), "v3"))
	if err != nil {
		b.Fatal(err)
	}
	p := retrieval.DefaultGlobalParams()
	all, err := retrieval.NewMemoryBackend(ds).CommunityReports(ctx, p.CommunityLevel)
	if err != nil {
		b.Fatal(err)
	}
	// check fails the benchmark if the batches lose a report or break the
	// budget: a fast wrong answer is no result.
	check := func(batches []retrieval.Batch) {
		n := 0
		for _, bt := range batches {
			n += len(bt.Reports)
			if bt.Tokens > p.MaxContextTokens {
				b.Fatalf("batch of %d tokens; budget %d", bt.Tokens, p.MaxContextTokens)
			}
		}
		if n != len(all) {
			b.Fatalf("%d reports in the batches; want %d", n, len(all))
		}
	}
	for _, cold := range []bool{true, false} {
		name := "warm"
		if cold {
			name = "cold"
		}
		b.Run(name, func(b *testing.B) {
			enc, err := tokens.NewEncoder(p.Encoding)
			if err != nil {
				b.Fatal(err)
			}
			var batches []retrieval.Batch
			for b.Loop() {
				if cold {
					b.StopTimer()
					if enc, err = tokens.NewEncoder(p.Encoding); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				gb, err := retrieval.NewGlobalBuilder(p, enc)
				if err != nil {
					b.Fatal(err)
				}
				batches = gb.Batches(all)
			}
			check(batches)
			b.ReportMetric(float64(len(all)), "reports/op")
			b.ReportMetric(float64(len(batches)), "batches/op")
		})
	}
}
