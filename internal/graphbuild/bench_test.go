package graphbuild_test

import (
	"testing"

	"github.com/kgrag/kgrag/internal/graphbuild"
)

// BenchmarkMergeFinalize merges and finalizes 100k extraction records
// (12,500 text units of up to 8 entities and 8 relationships, 20,000
// titles), the graph of a corpus of about 10 MB of text.
func BenchmarkMergeFinalize(b *testing.B) {
	exts := generate(7, genConfig{units: 12500, maxRecords: 8, titles: 20000, orphans: 500, descs: 2000})
	records := 0
	for _, x := range exts {
		records += len(x.Entities) + len(x.Relationships)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		g := graphbuild.Merge(exts)
		es, rs := graphbuild.Finalize(g)
		if len(es) == 0 || len(rs) == 0 {
			b.Fatal("empty graph")
		}
	}
	b.ReportMetric(float64(records), "records/op")
}
