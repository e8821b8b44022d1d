package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kgrag/kgrag/internal/chunk"
	"github.com/kgrag/kgrag/internal/indexer"
	"github.com/kgrag/kgrag/internal/indexer/indexertest"
	"github.com/kgrag/kgrag/internal/test"
)

// BenchmarkIndexInstant runs the whole pipeline (indexer.Run as `kgrag
// index` runs it: GraphRAG's chunking, concurrency 4, a cache of replies
// in a fresh folder) on A Christmas Carol against the test server
// answering at once. Per text unit it reports the run's wall time
// (ms/unit) and the part of it during which no request was inside the
// server's handler (kgrag-ms/unit: kgrag, its HTTP client and the
// loopback, never the model); kgrag-ms/op is that part per run. The
// issue's target is kgrag's time under 5 ms per chunk.
//
// Sub-benchmarks index the whole book and its first 8,000 words, so that
// the cost per unit can be told from the cost per run (the difference of
// kgrag-ms/op over the difference of units), each with the cache of
// replies (cache=on, as kgrag index runs) and without it (cache=off), to
// tell the cache's cost.
//
//	go test -run '^$' -bench IndexInstant -benchtime 3x -count 6 ./bench/index
func BenchmarkIndexInstant(b *testing.B) {
	book := test.ChristmasCarol(b)
	def := chunk.DefaultOptions()
	for _, words := range []int{0, 8000} {
		text := indexertest.FirstWords(book, words)
		for _, noCache := range []bool{false, true} {
			cache := "on"
			if noCache {
				cache = "off"
			}
			name := fmt.Sprintf("words=%d/cache=%s", len(strings.Fields(text)), cache)
			s := setup{text: text, concurrency: indexer.DefaultOptions().Concurrency, size: def.Size, overlap: def.Overlap, noCache: noCache}
			b.Run(name, func(b *testing.B) { benchInstant(b, s) })
		}
	}
}

func benchInstant(b *testing.B, s setup) {
	m := startModel(0)
	defer m.close()
	client, err := newClient(m)
	if err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(b.TempDir(), "run")
	var wall, busy time.Duration
	var units, calls, n int64
	for b.Loop() {
		r, err := index(context.Background(), m, client, s, dir)
		if err != nil {
			b.Fatal(err)
		}
		wall += r.wall
		busy += r.busy
		units += int64(r.sum.TextUnits)
		calls += r.calls()
		n++
	}
	u := float64(units)
	b.ReportMetric(ms(wall)/u, "ms/unit")
	b.ReportMetric(ms(wall-busy)/u, "kgrag-ms/unit")
	b.ReportMetric(ms(wall-busy)/float64(n), "kgrag-ms/op")
	b.ReportMetric(u/float64(n), "units")
	b.ReportMetric(float64(calls)/float64(n), "calls/op")
}

// BenchmarkIndexFast runs `kgrag index --method fast --reports none`
// (indexer.Run, no model) on the whole of A Christmas Carol: noun
// phrases, co-occurrence, pruning, Leiden and the parquet output. It
// reports text units per second (units/s) and the units of a run; the
// issue's target is the book in under a second (ms/op < 1000).
//
//	go test -run '^$' -bench IndexFast -benchtime 5x -count 6 ./bench/index
func BenchmarkIndexFast(b *testing.B) {
	in := test.SourceText(b)
	out := filepath.Join(b.TempDir(), "output")
	var units int
	start := time.Now()
	for b.Loop() {
		opts := indexer.DefaultOptions()
		opts.Input, opts.Output = in, out
		opts.Method, opts.NoReports = indexer.MethodFast, true
		sum, err := indexer.Run(context.Background(), nil, opts)
		if err != nil {
			b.Fatal(err)
		}
		units = sum.TextUnits
	}
	secs := time.Since(start).Seconds()
	b.ReportMetric(float64(units), "units")
	b.ReportMetric(float64(units)*float64(b.N)/secs, "units/s")
}
