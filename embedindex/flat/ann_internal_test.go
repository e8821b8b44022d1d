package flat

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/internal/synth"
)

// annIndex builds a graph over n clustered vectors in memory, once per
// size, for benchmarks.
func annIndex(b *testing.B, n, dim int) *Index {
	key := fmt.Sprint(n, "x", dim)
	if ix, ok := annCache[key]; ok {
		return ix
	}
	vs := synth.Vectors(1, n, dim)
	v := make([]float32, 0, n*dim)
	ids := make([]string, n)
	for i, x := range vs {
		v = append(v, normalised(x)...)
		ids[i] = fmt.Sprintf("entity-%07d", i)
	}
	t0 := time.Now()
	g, rep, err := BuildOptions{ANN: ANNOn}.build(context.Background(), v, dim, ids)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%s: graph built in %v, recall@10 %.4f at ef %d (tuned in %v)", key, time.Since(t0), rep.Recall, rep.Ef, rep.Measure)
	ix := &Index{info: embedindex.Info{Dim: dim, Count: n}, vecs: v, ids: newIDTable(ids), workers: 1, g: g, ef: g.ef}
	annCache[key] = ix
	return ix
}

var annCache = map[string]*Index{}

// BenchmarkHNSWSearch measures one k=10 query through the graph at the
// efSearch the build chose; compare BenchmarkFlatSearch for the scan.
func BenchmarkHNSWSearch(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		for _, dim := range []int{384, 768} {
			b.Run(fmt.Sprintf("%dk-x%d", n/1000, dim), func(b *testing.B) {
				ix := annIndex(b, n, dim)
				// Queries are stored vectors with noise of half their
				// norm, as the build's recall queries are.
				rng := rand.New(rand.NewPCG(7, 7))
				qs := make([][]float32, 256)
				for i := range qs {
					qs[i] = make([]float32, dim)
					for j, x := range ix.vecs[rng.IntN(n)*dim:][:dim] {
						qs[i][j] = x + float32(rng.NormFloat64()*0.5/math.Sqrt(float64(dim)))
					}
				}
				ctx := context.Background()
				i := 0
				for b.Loop() {
					if _, err := ix.Search(ctx, qs[i%len(qs)], 10); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}

func TestDotMatchesPortable(t *testing.T) {
	for _, n := range []int{1, 7, 8, 31, 32, 33, 384, 768, 1536, 1001} {
		vs := synth.Vectors(uint64(n), 2, n)
		var ref float64
		for i := range vs[0] {
			ref += float64(vs[0][i]) * float64(vs[1][i])
		}
		for name, got := range map[string]float32{"dot": dot(vs[0], vs[1]), "dotGo": dotGo(vs[0], vs[1])} {
			if d := math.Abs(float64(got) - ref); d > 1e-4*math.Max(1, math.Abs(ref)) {
				t.Errorf("%s(n=%d) = %g; float64 reference %g", name, n, got, ref)
			}
		}
	}
}
