package reports_test

import (
	"testing"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/reports"
	"github.com/kgrag/kgrag/internal/synth"
)

// BenchmarkNewBuilder times the local contexts of every community (the
// part of report writing that is not the model) on the v3 sample and on a
// synthetic graph of 10k entities and 500 communities.
func BenchmarkNewBuilder(b *testing.B) {
	e := enc(b)
	for _, bc := range []struct {
		name string
		ds   *graphrag.Dataset
	}{
		{"v3", sample(b, "v3")},
		{"synth10k", synth.Generate(1, synth.Sizes{Entities: 10_000, Relationships: 30_000, TextUnits: 2_000, Communities: 500})},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := reports.NewBuilder(bc.ds, e, reports.DefaultMaxInputTokens); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
