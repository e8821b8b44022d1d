// Command run is kgrag's benchmark harness: it measures kgrag side by side
// with its peers, step by step, and writes one JSON result per step and a
// Markdown report. `make bench` runs every step; one step runs alone with
//
//	make bench STEPS=leiden
//	go run ./bench/run -steps leiden
//
// Each step runs external programs: bin/kgrag, `go test -bench` with benchstat, the bench/* drivers, the
// Python peers (through scripts/*-py.sh venvs) and the SPARQL stores
// (through scripts/{oxigraph,fuseki,virtuoso}.sh, on their own ports and
// directories under -out, never the test services' ones). Wall time, CPU
// time and peak RSS of a process come from its rusage.
//
// A peer that cannot run (tool missing, server does not start, load fails)
// is reported as "not run: REASON" or "failed: REASON" and the run goes on.
// The synthetic dataset is made once by kgrag-synth and cached under
// OUT/data keyed by its sizes and seed; only the steps that need it make it.
// The report goes to stdout and to OUT/report.md, each step's figures to
// OUT/STEP.json; raw outputs and logs stay in OUT/run/.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.As(err, new(usageError)):
		fmt.Fprintf(os.Stderr, "bench: %v\nTry: go run ./bench/run -help\n", err)
		os.Exit(2)
	case ctx.Err() != nil:
		fmt.Fprintln(os.Stderr, "bench: interrupted")
		os.Exit(130)
	default:
		fmt.Fprintf(os.Stderr, "bench: error: %v\n", err)
		os.Exit(1)
	}
}

type usageError struct{ error }

const exitStatus = `
EXIT STATUS
  0    the report was written (missed targets and peers that did not run
       are in the report)
  1    the harness itself failed (kgrag missing, dataset could not be made,
       kgrag's own conversion failed)
  2    usage error
  130  interrupted
`

// run parses args, runs the steps asked for and writes the report.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseConfig(args, stderr)
	if err != nil {
		return err
	}
	b, err := newBench(cfg, stderr)
	if err != nil {
		return err
	}
	defer b.stopServers()
	return b.runSteps(ctx, stdout)
}

// parseConfig reads the flags; each defaults to its BENCH_* variable, then
// to its documented default.
func parseConfig(args []string, stderr io.Writer) (config, error) {
	cfg, err := configFromEnv(os.LookupEnv)
	if err != nil {
		return cfg, usageError{err}
	}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	steps := strings.Join(cfg.Steps, ",")
	fs.StringVar(&steps, "steps", steps, "comma- or space-separated `steps` to run; they run in the order of the list above (env BENCH_STEPS)")
	fs.StringVar(&cfg.Out, "out", cfg.Out, "cache and report `dir`ectory (env BENCH_DIR)")
	fs.StringVar(&cfg.Kgrag, "kgrag", cfg.Kgrag, "the kgrag `binary`, built when missing (env KGRAG)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, `Usage: go run ./bench/run [-steps STEPS] [-out DIR]   (make bench [STEPS=...])

Runs kgrag's benchmarks and prints a Markdown report; each step also writes
DIR/STEP.json. Steps, in order: %s.
One step alone: go run ./bench/run -steps leiden (or make bench STEPS=leiden).

Flags:
`, strings.Join(allSteps(), " "))
		fs.PrintDefaults()
		fmt.Fprint(stderr, envHelp+exitStatus)
	}
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	asked := strings.Fields(strings.ReplaceAll(steps, ",", " "))
	for _, s := range asked {
		if stepByName(s) == nil {
			return cfg, usageError{fmt.Errorf("unknown step %q (steps: %s)", s, strings.Join(allSteps(), " "))}
		}
	}
	// Steps run in their fixed order whatever the order asked: the stores
	// step keeps a bulk load for the retrieval step.
	cfg.Steps = slices.DeleteFunc(allSteps(), func(s string) bool { return !slices.Contains(asked, s) })
	return cfg, nil
}
