// Command diffload writes a copy of a GraphRAG output with a fraction of
// its entities and relationships changed, for `make bench` to time
// `kgrag load --diff` of a small change against a full load (issue 13).
//
// Every k-th entity gets a revised description and every k-th relationship
// a revised description and weight, k = 1/fraction; ids stay, so the
// change is what a re-index that touched those records would give. With
// -fraction 0 it writes the output unchanged through the same writer, so
// that the base and the changed copy differ only in what was changed.
//
//	go run ./bench/diffload -in SYNTH -out BASE -fraction 0
//	go run ./bench/diffload -in SYNTH -out CHANGED -fraction 0.01
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"

	"github.com/kgrag/kgrag/graphrag"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "diffload:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	in := flag.String("in", "", "GraphRAG output `DIR` to read")
	out := flag.String("out", "", "`DIR` to write the copy to")
	fraction := flag.Float64("fraction", 0.01, "share of entities and of relationships to change")
	flag.Parse()
	if *in == "" || *out == "" {
		return errors.New("-in and -out are required")
	}
	if *fraction < 0 || *fraction > 1 {
		return fmt.Errorf("-fraction %g is not in [0, 1]", *fraction)
	}
	ds, err := graphrag.Open(ctx, *in)
	if err != nil {
		return err
	}
	var ents, rels int
	if *fraction > 0 {
		k := int(math.Round(1 / *fraction))
		for i := range ds.Entities {
			if i%k == 0 && !ds.Entities[i].Placeholder {
				ds.Entities[i].Description += " (revised)"
				ents++
			}
		}
		for i := range ds.Relationships {
			if i%k == 0 {
				r := &ds.Relationships[i]
				r.Description += " (revised)"
				r.Weight++
				r.HasWeight = true
				rels++
			}
		}
	}
	if err := graphrag.Write3x(ctx, *out, ds); err != nil {
		return err
	}
	fmt.Printf("changed %d of %d entities and %d of %d relationships\n", ents, len(ds.Entities), rels, len(ds.Relationships))
	return nil
}
