package leiden_test

import (
	"context"
	"testing"

	"github.com/kgrag/kgrag/internal/leiden"
	"github.com/kgrag/kgrag/internal/leiden/leidentest"
)

// synthetic100k is the benchmark and comparison graph,
// leidentest.Benchmark100k.
func synthetic100k(tb testing.TB) planted { return plantedSpec(tb, leidentest.Benchmark100k) }

func benchGraphs(b *testing.B) map[string]*leiden.Graph {
	v3, _ := sampleGraph(b, "v3")
	return map[string]*leiden.Graph{"v3": v3, "100k": synthetic100k(b).g}
}

func BenchmarkLeiden(b *testing.B) {
	for _, name := range []string{"v3", "100k"} {
		g := benchGraphs(b)[name]
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := leiden.Leiden(context.Background(), g, leiden.Options{Seed: 0xDEADBEEF}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkHierarchical(b *testing.B) {
	for _, name := range []string{"v3", "100k"} {
		g := benchGraphs(b)[name]
		for _, trials := range []int{1, 5} {
			b.Run(name+"/trials="+itoa(trials), func(b *testing.B) {
				for b.Loop() {
					if _, err := leiden.Hierarchical(context.Background(), g, leiden.HierOptions{Seed: 0xDEADBEEF, Trials: trials}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
