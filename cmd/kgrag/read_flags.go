package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/urfave/cli/v3"
)

// readOptions say what reading a GraphRAG output does with malformed rows
// (a null or empty id, entity title, relationship end or community
// number). The zero value is the default: leave them out while they are
// at most 1% of their table.
type readOptions struct {
	strict bool
	maxBad string // a graphrag.Limit as written: "1%", "20"; "" for the default
}

// defaultMaxBad is --max-bad-rows's default.
const defaultMaxBad = "1%"

// readFlags are the flags of every command that reads a GraphRAG output.
func readFlags(o *readOptions) []cli.Flag {
	const cat = "input"
	return []cli.Flag{
		&cli.BoolFlag{Name: "strict", Category: cat, Destination: &o.strict, Sources: cli.EnvVars("KGRAG_STRICT"),
			Usage: "fail at the first malformed row (null or empty id, title, relationship end or community number), naming its file, column and row (exit 3), instead of leaving it out"},
		&cli.StringFlag{Name: "max-bad-rows", Category: cat, Value: defaultMaxBad, Destination: &o.maxBad, Sources: cli.EnvVars("KGRAG_MAX_BAD_ROWS"),
			Usage: "most malformed rows one table may hold before the output counts as broken (exit 3): a `SHARE` of its rows, rounded up (1%), or a number of rows (20)"},
	}
}

// policy is what the flags ask of the reader.
func (o readOptions) policy() (graphrag.Policy, error) {
	p := graphrag.Policy{Strict: o.strict}
	s := o.maxBad
	if s == "" {
		s = defaultMaxBad
	}
	lim, err := graphrag.ParseLimit(s)
	if err != nil {
		return p, usagef("--max-bad-rows 1%", "--max-bad-rows: %v", err)
	}
	p.MaxBad = lim
	return p, nil
}

// leftOutSummary says in one line how many rows the reader left out of an
// output and why, or "" when it left out none: the line load, embed and
// ask print under their own.
func leftOutSummary(left []graphrag.LeftOut, dir string) string {
	var malformed, depend, values int
	var why, vals []string
	table, vtable := "", ""
	for _, l := range left {
		switch {
		case l.Refs > 0:
			continue
		case l.Values > 0:
			values += l.Values
			w := fmt.Sprintf("%d %s", l.Values, l.Column)
			if l.Table != vtable {
				w = l.Table + ": " + w
				vtable = l.Table
			}
			vals = append(vals, w)
			continue
		case l.Malformed():
			malformed += l.Rows
		default:
			depend += l.Rows
		}
		w := fmt.Sprintf("%d %s", l.Rows, l.Why())
		if l.Table != table {
			w = l.Table + ": " + w
			table = l.Table
		}
		why = append(why, w)
	}
	var parts []string
	if malformed+depend > 0 {
		parts = append(parts, fmt.Sprintf("left out %d malformed %s and %d that named them (%s)",
			malformed, plural(malformed, "row", "rows"), depend, strings.Join(why, ", ")))
	}
	if values > 0 {
		parts = append(parts, fmt.Sprintf("read %d %s that %s not integers as missing (%s)",
			values, plural(values, "value", "values"), plural(values, "is", "are"), strings.Join(vals, ", ")))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("%s: 'kgrag inspect %s' lists them; --strict refuses such input", strings.Join(parts, "; "), dir)
}

// printLeftOut prints leftOutSummary under a command's own summary.
func printLeftOut(w io.Writer, left []graphrag.LeftOut, dir string) {
	if s := leftOutSummary(left, dir); s != "" {
		fmt.Fprintf(w, "  %s\n", s)
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
