package leiden_test

import (
	"context"
	"testing"

	"github.com/kgrag/kgrag/internal/leiden"
)

// synthetic100k is the benchmark and comparison graph: 100k nodes, 300k
// edge draws (about 293k distinct edges) in planted communities of 16 to
// 1024 nodes, a quarter of the draws leaving the community.
func synthetic100k(tb testing.TB) planted {
	return newPlanted(tb, 1, 100_000, 300_000, 16, 1024, 0.25)
}

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
