package flat

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kgrag/kgrag/embedindex"
)

// memIndex builds an index in memory, skipping the file, for benchmarks.
func memIndex(n, dim, workers int) *Index {
	rng := rand.New(rand.NewPCG(uint64(n), uint64(dim)))
	vecs := make([]float32, n*dim)
	for i := range vecs {
		vecs[i] = float32(rng.NormFloat64())
	}
	for r := range n {
		copy(vecs[r*dim:], normalised(vecs[r*dim:(r+1)*dim]))
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("entity-%07d", i)
	}
	return &Index{info: embedindex.Info{Dim: dim, Count: n, Metric: embedindex.MetricCosine}, vecs: vecs, ids: newIDTable(ids), workers: workers}
}

// BenchmarkFlatSearch measures one k=10 query; "w1" is one core, "w2"
// splits the scan over two goroutines.
func BenchmarkFlatSearch(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		for _, dim := range []int{384, 768} {
			for _, workers := range []int{1, 2} {
				b.Run(fmt.Sprintf("%dk-x%d-w%d", n/1000, dim, workers), func(b *testing.B) {
					idx := memIndex(n, dim, workers)
					q := idx.vecs[:dim]
					ctx := context.Background()
					b.SetBytes(int64(n * dim * 4))
					b.ResetTimer()
					for b.Loop() {
						if _, err := idx.Search(ctx, q, 10); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

func BenchmarkDot(b *testing.B) {
	x, y := make([]float32, 768), make([]float32, 768)
	for i := range x {
		x[i], y[i] = float32(i), float32(768-i)
	}
	var s float32
	for b.Loop() {
		s += dot(x, y)
	}
	_ = s
}
