package main

import (
	"github.com/urfave/cli/v3"
)

// basicFlags are the flags of --mode basic.
func basicFlags(o *askOptions) []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "top-k-text-units", Category: "basic search (--mode basic)", Value: o.basic.K, Destination: &o.basic.K,
			Usage: "text units taken from the text units' vector index (kgrag embed --tables text_units)"},
	}
}
