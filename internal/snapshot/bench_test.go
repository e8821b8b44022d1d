package snapshot_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/internal/snapshot"
	"github.com/kgrag/kgrag/internal/synth"
)

// BenchmarkOpen times what a kgrag ask process pays for the graph before
// its first lookup, against building the same tables from the dataset in
// memory (the path without a snapshot, after the parquet read): a 20k
// entity synthetic set (DefaultSizes / 5).
func BenchmarkOpen(b *testing.B) {
	sz := synth.DefaultSizes()
	sz.Entities, sz.Relationships, sz.TextUnits, sz.Communities = sz.Entities/5, sz.Relationships/5, sz.TextUnits/5, sz.Communities/5 // KEEP
	ds := synth.Generate(1, sz)
	path := filepath.Join(b.TempDir(), snapshot.File)
	if err := snapshot.WriteFile(context.Background(), path, ds, nil); err != nil {
		b.Fatal(err)
	}
	id := ds.Entities[len(ds.Entities)/2].ID
	lookup := func(b *testing.B, src retrieval.Backend) {
		if rs, err := src.Relationships(context.Background(), []string{id}); err != nil || len(rs) == 0 {
			b.Fatalf("relationships of %s: %d, %v", id, len(rs), err)
		}
	}
	b.Run("mapped", func(b *testing.B) {
		for b.Loop() {
			g, err := snapshot.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			lookup(b, retrieval.NewGraphSource(g))
			g.Close()
		}
	})
	b.Run("built", func(b *testing.B) {
		for b.Loop() {
			lookup(b, retrieval.NewMemorySource(ds))
		}
	})
}
