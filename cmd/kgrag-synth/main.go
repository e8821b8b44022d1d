// Command kgrag-synth writes a synthetic GraphRAG 3.x dataset (see package
// synth) as parquet, for benchmarks of kgrag against data larger than the
// real samples.
//
//	kgrag-synth -out /tmp/synth -seed 1 -entities 100000
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/synth"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "kgrag-synth:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	def := synth.DefaultSizes()
	fs := flag.NewFlagSet("kgrag-synth", flag.ContinueOnError)
	out := fs.String("out", "", "directory to write the parquet files to (required)")
	seed := fs.Int64("seed", 1, "random seed; the same seed and sizes give the same files")
	var s synth.Sizes
	fs.IntVar(&s.Entities, "entities", def.Entities, "number of entities")
	fs.IntVar(&s.Relationships, "relationships", def.Relationships, "number of relationships")
	fs.IntVar(&s.TextUnits, "text-units", def.TextUnits, "number of text units")
	fs.IntVar(&s.Communities, "communities", def.Communities, "number of communities (three levels)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		fs.Usage()
		return fmt.Errorf("-out is required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ds := synth.Generate(*seed, s)
	if err := graphrag.Write3x(ctx, *out, ds); err != nil {
		return err
	}
	fmt.Printf("wrote %d documents, %d text units, %d entities, %d relationships, %d communities, %d covariates to %s\n",
		len(ds.Documents), len(ds.TextUnits), len(ds.Entities), len(ds.Relationships), len(ds.Communities), len(ds.Covariates), *out)
	return nil
}
