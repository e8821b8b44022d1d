package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Targets from the issues.
const (
	targetSpeedup = 30      // kgrag at least this many times faster than rdflib
	targetRSSMB   = 500     // kgrag peak RSS on the synthetic dataset
	targetTurtle  = 3000000 // Turtle encoder triples/s on one core
	targetStore   = 1.5     // kgrag store upload at most this many times the bulk loader
)

// microResult is the micro step's figures; a Note says why a part did not
// run.
type microResult struct {
	TurtleTPS   num    `json:"turtle_encoder_triples_per_s"`
	NTriplesTPS num    `json:"ntriples_encoder_triples_per_s"`
	EncoderNote string `json:"encoder_note,omitempty"`
	OpenNote    string `json:"graphrag_open_note,omitempty"`
	SnapNote    string `json:"snapshot_open_note,omitempty"`
}

// goBench runs `go test ARGS` with stdout in RUN/NAME.txt and stderr in
// RUN/NAME.err; "" when it passed, else "failed: " and the output's last
// lines.
func (b *bench) goBench(ctx context.Context, name string, env []string, args ...string) (string, error) {
	out, errf := b.runFile(name+".txt"), b.runFile(name+".err")
	u, err := b.exec(ctx, cmdSpec{env: env, stdout: out, stderr: errf}, "go", append([]string{"test", "-run", "^$"}, args...)...)
	if err != nil {
		return "", err
	}
	if u.RC != 0 {
		return "failed: " + tail(3, " ", 200, out, errf), nil
	}
	return "", nil
}

func (b *bench) micro(ctx context.Context) (string, any, error) {
	count := strconv.Itoa(b.cfg.Count)
	synth, err := b.synthSet(ctx)
	if err != nil {
		return "", nil, err
	}
	var r microResult
	b.logf("go test -bench (rdfenc encoders, -cpu 1, -count %s)", count)
	if r.EncoderNote, err = b.goBench(ctx, "micro-loader", []string{"GOMAXPROCS=1"},
		"-bench", "Encoder$", "-benchmem", "-count", count, "-cpu", "1", "./rdfenc/"); err != nil {
		return "", nil, err
	}
	c := b.cfg
	if c.Entities == 100000 && c.Relationships == 300000 && c.TextUnits == 20000 && c.Communities == 5000 && c.Seed == 1 {
		b.logf("go test -bench OpenSynthetic (graphrag, -count %s)", count)
		if r.OpenNote, err = b.goBench(ctx, "micro-graphrag", []string{"KGRAG_BENCH_SYNTH_DIR=" + synth},
			"-bench", "OpenSynthetic$", "-benchmem", "-count", count, "./graphrag/"); err != nil {
			return "", nil, err
		}
	} else {
		r.OpenNote = "not run: BenchmarkOpenSynthetic expects the default synthetic sizes and seed 1 (this run uses a smaller dataset)"
	}
	b.logf("go test -bench Open (internal/snapshot: graph.snap mapped against tables built in memory, -count %s)", count)
	if r.SnapNote, err = b.goBench(ctx, "micro-snapshot", nil,
		"-bench", "^BenchmarkOpen$", "-benchmem", "-count", count, "./internal/snapshot/"); err != nil {
		return "", nil, err
	}
	bs, bsErr := b.benchstat(ctx)

	var sb strings.Builder
	sb.WriteString("## 2. Micro-benchmarks\n\n")
	if r.EncoderNote != "" {
		sb.WriteString("Encoders: " + r.EncoderNote + "\n")
	} else {
		tt := benchMedian(b.runFile("micro-loader.txt"), "BenchmarkTurtleEncoder", "triples/s")
		nt := benchMedian(b.runFile("micro-loader.txt"), "BenchmarkNTriplesEncoder", "triples/s")
		r.TurtleTPS, r.NTriplesTPS = num(tt), num(nt)
		sb.WriteString(table([]string{"benchmark", "median triples/s (one core)", "target", ""}, [][]string{
			{"TurtleEncoder", fmtInt(tt), ">= " + fmtInt(targetTurtle), verdict(tt, ge, targetTurtle)},
			{"NTriplesEncoder", fmtInt(nt), "", ""},
		}))
	}
	for _, n := range []struct{ what, note string }{{"graphrag.Open", r.OpenNote}, {"snapshot.Open", r.SnapNote}} {
		if n.note != "" {
			fmt.Fprintf(&sb, "\n%s: %s\n", n.what, n.note)
		}
	}
	sb.WriteString("\n")
	if bsErr != nil {
		fmt.Fprintf(&sb, "benchstat: not run: could not install golang.org/x/perf/cmd/benchstat; raw output in %s/micro-*.txt\n", b.rel(b.runDir))
	} else {
		sb.WriteString("```\n")
		var parts []string
		for _, p := range []struct{ file, note string }{
			{"micro-loader.txt", r.EncoderNote}, {"micro-graphrag.txt", r.OpenNote}, {"micro-snapshot.txt", r.SnapNote},
		} {
			if p.note == "" {
				parts = append(parts, b.benchstatOf(ctx, bs, b.runFile(p.file)))
			}
		}
		sb.WriteString(strings.Join(parts, "\n\n") + "\n```\n")
	}
	fmt.Fprintf(&sb, "\nCommands:\n\n```\n"+
		"GOMAXPROCS=1 go test -run '^$' -bench 'Encoder$' -benchmem -count %[1]s -cpu 1 ./rdfenc/ > loader.txt\n"+
		"KGRAG_BENCH_SYNTH_DIR=%[2]s go test -run '^$' -bench 'OpenSynthetic$' -benchmem -count %[1]s ./graphrag/ > graphrag.txt\n"+
		"benchstat loader.txt; benchstat graphrag.txt\n```\n\n", count, synth)
	return sb.String(), r, nil
}
