package graphrag_test

import (
	"context"
	"os"
	"testing"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/synth"
)

// BenchmarkOpenSynthetic opens the default synthetic 3.x dataset (100k
// entities, 300k relationships, 20k text units, 5k communities), generated
// and written once. KGRAG_BENCH_SYNTH_DIR names a dataset written before by
// kgrag-synth with default sizes instead, so that the process's peak memory
// measures Open alone.
func BenchmarkOpenSynthetic(b *testing.B) {
	ctx := context.Background()
	dir := os.Getenv("KGRAG_BENCH_SYNTH_DIR")
	if dir == "" {
		dir = b.TempDir()
		if err := graphrag.Write3x(ctx, dir, synth.Generate(1, synth.DefaultSizes())); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		ds, err := graphrag.Open(ctx, dir)
		if err != nil {
			b.Fatal(err)
		}
		if len(ds.Entities) != 100_000 {
			b.Fatalf("entities = %d; want 100000", len(ds.Entities))
		}
	}
}
