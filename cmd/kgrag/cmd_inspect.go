package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/urfave/cli/v3"
)

type inspectOptions struct {
	dir      string
	jsonMode bool
	read     readOptions
}

func newInspectCommand(term terminal) *cli.Command {
	o := &inspectOptions{}
	return &cli.Command{
		Name:      "inspect",
		Usage:     "show what GraphRAG wrote in a folder: release, tables, rows, what is missing",
		ArgsUsage: "DIR",
		Description: `Reads every GraphRAG table in DIR and reports the release it was written by
(detected from the file and column names), each table's file and row count,
the tables that are absent (covariates are optional in GraphRAG), and the
fix-ups 'kgrag load' will make: relationships whose source or target is not
in the entities table keep an entity with just its title, and malformed
rows (a null or empty id, title, relationship end or community number) are
left out with what names them, each listed with its file, row and fields.

DIR may be the folder holding the .parquet files, or (for GraphRAG 0.2) the
project folder with output/<timestamp>/artifacts.

   kgrag inspect ./ragtest/output
   kgrag inspect --json ./ragtest/output | jq .release
` + exitStatusHelp,
		Flags: append([]cli.Flag{
			&cli.BoolFlag{Name: "json", Destination: &o.jsonMode, Usage: "print the report as JSON"},
		}, readFlags(&o.read)...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 1 {
				return usagef("kgrag inspect ./output", "inspect takes one folder, got %d arguments", cmd.Args().Len())
			}
			o.dir = cmd.Args().First()
			return runInspect(ctx, *o, term)
		},
	}
}

// inspectReport is the JSON form of `kgrag inspect`.
type inspectReport struct {
	Dir     string         `json:"dir"`
	Release string         `json:"release"`
	Tables  []inspectTable `json:"tables"`
	Absent  []string       `json:"absent"`
	Notes   []string       `json:"notes,omitempty"`
	Fixups  inspectFixups  `json:"fixups"`
	// LeftOut lists the malformed rows left out, what named them, and
	// the references to them dropped; empty for a sound output.
	LeftOut []graphrag.LeftOut `json:"left_out"`
	Records map[string]int     `json:"records"`
}

type inspectTable struct {
	Name string `json:"name"`
	File string `json:"file"`
	Rows int64  `json:"rows"`
}

type inspectFixups struct {
	UnresolvedEntities       int `json:"unresolved_entities"`
	RelationshipsWithUnknown int `json:"relationships_with_unknown_end"`
	ClaimsWithUnknown        int `json:"claims_with_unknown_entity"`
}

func runInspect(ctx context.Context, opts inspectOptions, term terminal) error {
	pol, err := opts.read.policy()
	if err != nil {
		return err
	}
	ds, err := graphrag.OpenWith(ctx, opts.dir, pol)
	if err != nil {
		return err
	}
	s := ds.Summary()
	rep := inspectReport{
		Dir:     s.Dir,
		Release: string(s.Release),
		Absent:  s.Absent,
		Notes:   s.Notes,
		Fixups: inspectFixups{
			UnresolvedEntities:       s.Placeholders,
			RelationshipsWithUnknown: s.PlaceholderRelationships,
			ClaimsWithUnknown:        s.PlaceholderCovariates,
		},
		Records: s.Rows,
		LeftOut: s.LeftOut,
	}
	if rep.LeftOut == nil {
		rep.LeftOut = []graphrag.LeftOut{}
	}
	if rep.Absent == nil {
		rep.Absent = []string{}
	}
	for _, t := range s.Tables {
		rep.Tables = append(rep.Tables, inspectTable{Name: t.Name, File: t.Path, Rows: t.Rows})
	}
	if opts.jsonMode {
		enc := json.NewEncoder(term.out)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}

	w := term.out
	fmt.Fprintf(w, "GraphRAG release: %s\n", rep.Release)
	fmt.Fprintf(w, "directory:        %s\n", rep.Dir)
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "note:             %s\n", n)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TABLE\tROWS\tFILE")
	for _, t := range rep.Tables {
		fmt.Fprintf(tw, "%s\t%d\t%s\n", t.Name, t.Rows, t.File)
	}
	for _, a := range rep.Absent {
		fmt.Fprintf(tw, "%s\t-\tabsent\n", a)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if rep.Fixups.UnresolvedEntities > 0 {
		fmt.Fprintf(w, "%d relationships and %d claims name %d entities that the entities table does not hold;\n"+
			"load keeps them all, each unknown entity with just its title (gr:unresolved true).\n",
			rep.Fixups.RelationshipsWithUnknown, rep.Fixups.ClaimsWithUnknown, rep.Fixups.UnresolvedEntities)
	} else {
		fmt.Fprintln(w, "every entity that relationships and claims name is in the entities table.")
	}
	if n := ds.LeftOutRows(); n > 0 {
		fmt.Fprintf(w, "%d malformed rows and rows naming them are left out (the notes above list them, with the first rows);\n"+
			"--strict refuses such an output, --max-bad-rows sets how many a table may hold.\n", n)
	}
	values := 0
	for _, l := range ds.LeftOut {
		values += l.Values
	}
	if values > 0 {
		fmt.Fprintf(w, "%d values of integer columns are not integers and are read as missing (the notes above list them);\n"+
			"--strict refuses such an output.\n", values)
	}
	return nil
}
