package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kgrag/kgrag/internal/test"
)

// benchLoad runs kgrag load --turtle (or --ntriples) on dir b.N times and
// reports triples/s of the whole conversion in the process.
func benchLoad(b *testing.B, dir string, ntriples bool) {
	out := filepath.Join(b.TempDir(), "g")
	opts := loadOptions{input: dir, base: defaultBase}
	if ntriples {
		opts.ntriples = out
	} else {
		opts.turtle = out
	}
	var triples int64
	b.ReportAllocs()
	for b.Loop() {
		term, _, errb := testTerminal()
		if err := runLoad(context.Background(), opts, term); err != nil {
			b.Fatal(err)
		}
		if _, err := fmt.Sscanf(errb.String(), "kgrag: wrote %d triples", &triples); err != nil {
			b.Fatalf("no count in %q: %v", errb, err)
		}
	}
	b.ReportMetric(float64(triples)*float64(b.N)/b.Elapsed().Seconds(), "triples/s")
}

func BenchmarkLoadSample(b *testing.B) {
	dir := filepath.Join(test.GraphRAGSamples(b), "v3")
	b.Run("turtle", func(b *testing.B) { benchLoad(b, dir, false) })
	b.Run("ntriples", func(b *testing.B) { benchLoad(b, dir, true) })
}

func BenchmarkLoadSynthetic(b *testing.B) {
	dir := os.Getenv("KGRAG_BENCH_SYNTH_DIR")
	if dir == "" {
		b.Skip("KGRAG_BENCH_SYNTH_DIR names a kgrag-synth dataset")
	}
	b.Run("turtle", func(b *testing.B) { benchLoad(b, dir, false) })
	b.Run("ntriples", func(b *testing.B) { benchLoad(b, dir, true) })
}
