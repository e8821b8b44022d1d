package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kgrag/kgrag/internal/test"
)

// benchFormats runs benchLoad in both formats, on every core and serially
// (the path GOMAXPROCS=1 takes), for benchstat to set side by side.
func benchFormats(b *testing.B, dir string) {
	for _, format := range []string{"turtle", "ntriples"} {
		for _, serial := range []bool{false, true} {
			name := format + "/concurrent"
			if serial {
				name = format + "/serial"
			}
			b.Run(name, func(b *testing.B) { benchLoad(b, dir, format == "ntriples", serial) })
		}
	}
}

// benchLoad runs kgrag load --turtle (or --ntriples) on dir b.N times and
// reports triples/s of the whole conversion in the process.
func benchLoad(b *testing.B, dir string, ntriples, serial bool) {
	out := filepath.Join(b.TempDir(), "g")
	opts := loadOptions{input: dir, base: defaultBase, serial: serial}
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

// BenchmarkLoadSample converts the real 3.x sample, as `kgrag load` does
// (less the process start): compare its triples/s with the encoders'
// (rdfenc BenchmarkTurtleEncoder).
func BenchmarkLoadSample(b *testing.B) {
	dir := filepath.Join(test.GraphRAGSamples(b), "v3")
	benchFormats(b, dir)
}

// BenchmarkLoadSynthetic converts the kgrag-synth set that
// KGRAG_BENCH_SYNTH_DIR names.
func BenchmarkLoadSynthetic(b *testing.B) {
	dir := os.Getenv("KGRAG_BENCH_SYNTH_DIR")
	if dir == "" {
		b.Skip("KGRAG_BENCH_SYNTH_DIR names a kgrag-synth dataset")
	}
	benchFormats(b, dir)
}
