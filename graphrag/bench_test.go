package graphrag_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"

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
	dir := synthDir(b)
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

// BenchmarkWalkSynthetic walks the same dataset table by table, letting
// each table go, as `kgrag load` does; compare with BenchmarkOpenSynthetic.
func BenchmarkWalkSynthetic(b *testing.B) {
	ctx := context.Background()
	dir := synthDir(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		entities := 0
		_, err := graphrag.Walk(ctx, dir, graphrag.Visitor{
			Documents:     func(context.Context, []graphrag.Document) error { return nil },
			TextUnits:     func(context.Context, []graphrag.TextUnit) error { return nil },
			Entities:      func(_ context.Context, es []graphrag.Entity) error { entities = len(es); return nil },
			Relationships: func(context.Context, []graphrag.Relationship) error { return nil },
			Communities:   func(context.Context, []graphrag.Community) error { return nil },
			Covariates:    func(context.Context, []graphrag.Covariate) error { return nil },
		})
		if err != nil {
			b.Fatal(err)
		}
		if entities != 100_000 {
			b.Fatalf("entities = %d; want 100000", entities)
		}
	}
}

func synthDir(b *testing.B) string {
	b.Helper()
	if dir := os.Getenv("KGRAG_BENCH_SYNTH_DIR"); dir != "" {
		return dir
	}
	dir := b.TempDir()
	if err := graphrag.Write3x(context.Background(), dir, synth.Generate(1, synth.DefaultSizes())); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkRowMapsSynthetic is the alternative Open does not take: reading
// every table of the same dataset row by row into map[string]any, the one
// row API of parquet-go that reads all GraphRAG files, without even
// building the model. Compare its time and allocations with
// BenchmarkOpenSynthetic.
func BenchmarkRowMapsSynthetic(b *testing.B) {
	dir := synthDir(b)
	files, err := filepath.Glob(filepath.Join(dir, "*.parquet"))
	if err != nil || len(files) == 0 {
		b.Fatalf("no parquet files in %s: %v", dir, err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rows := 0
		for _, name := range files {
			f, err := os.Open(name)
			if err != nil {
				b.Fatal(err)
			}
			r := parquet.NewReader(f)
			for {
				row := map[string]any{}
				if err := r.Read(&row); err == io.EOF {
					break
				} else if err != nil {
					b.Fatal(err)
				}
				rows++
			}
			r.Close()
			f.Close()
		}
		if rows == 0 {
			b.Fatal("no rows")
		}
	}
}
