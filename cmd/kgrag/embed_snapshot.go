package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/internal/snapshot"
)

// writeSnapshot writes the graph snapshot of ds into the index folder.
func writeSnapshot(ctx context.Context, opts embedOptions, ds *graphrag.Dataset, files []snapshot.FileStat, term terminal) error {
	t := time.Now()
	path := filepath.Join(opts.index, snapshot.File)
	if err := os.MkdirAll(opts.index, 0o755); err != nil {
		return fmt.Errorf("embed: create index folder: %w", err)
	}
	if err := snapshot.WriteFile(ctx, path, ds, files); err != nil {
		return fmt.Errorf("embed: %w", err)
	}
	if !opts.quiet {
		size := "?"
		if fi, err := os.Stat(path); err == nil {
			size = fmt.Sprintf("%.1f MB", float64(fi.Size())/1e6)
		}
		fmt.Fprintf(term.err, "wrote graph snapshot %s (%d entities, %d relationships, %s) in %s\n",
			path, len(ds.Entities), len(ds.Relationships), size, time.Since(t).Round(time.Millisecond))
	}
	return nil
}

// snapshotPath is where kgrag embed wrote the snapshot of the graph ask
// reads: in the flat index's folder (--index, a folder or its
// entities.vec), or in --input's kgrag-index when the vectors are in
// Elasticsearch.
func snapshotPath(opts askOptions) string {
	switch p := opts.index.path; {
	case p == "":
		return filepath.Join(opts.input, defaultIndexDir, snapshot.File)
	case isDir(p):
		return filepath.Join(p, snapshot.File)
	default:
		return filepath.Join(filepath.Dir(p), snapshot.File)
	}
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// snapshotStatus says how ask will read --input: kgrag doctor's words.
func snapshotStatus(opts askOptions) (detail, fix string) {
	path := snapshotPath(opts)
	g, err := snapshot.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "from its parquet tables (no " + path + ": kgrag embed writes it, and ask then opens large graphs in milliseconds)", ""
		}
		return fmt.Sprintf("from its parquet tables: %v", err), "rerun kgrag embed --input " + opts.input
	}
	defer g.Close()
	if err := g.Check(opts.input); err != nil {
		return fmt.Sprintf("from its parquet tables: %v", err), "rerun kgrag embed --input " + opts.input
	}
	m := g.Meta()
	return fmt.Sprintf("through %s (current: %d entities, %d relationships)", path, m.Entities, m.Relationships), ""
}

// slowOpen is how long reading the tables may take before ask suggests
// the snapshot.
const slowOpen = 2 * time.Second

// openMemory opens --input: the snapshot kgrag embed wrote when it is
// current, else the parquet tables. A stale or damaged snapshot is a
// warning, not an error: the tables are the truth. What the reader left
// out of the tables (recorded in the snapshot) is judged by --strict and
// --max-bad-rows either way, and returned.
func openMemory(ctx context.Context, opts askOptions, warn io.Writer) (retrieval.Source, []graphrag.LeftOut, error) {
	pol, err := opts.read.policy()
	if err != nil {
		return nil, nil, err
	}
	path := snapshotPath(opts)
	g, err := snapshot.Open(path)
	switch {
	case err == nil:
		if err = g.Check(opts.input); err == nil {
			m := g.Meta()
			if err := pol.Check(m.LeftOut, m.TableRows); err != nil {
				g.Close()
				return nil, nil, err
			}
			noteLeftOut(opts, m.LeftOut, warn)
			return retrieval.NewGraphSource(g), m.LeftOut, nil
		}
		g.Close()
		if errors.Is(err, snapshot.ErrStale) {
			fmt.Fprintf(warn, "warning: %v; reading the parquet tables instead (kgrag embed --input %s rebuilds it)\n", err, opts.input)
		}
	case !errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(warn, "warning: %v; reading the parquet tables instead\n", err)
	}
	t := time.Now()
	ds, err := graphrag.OpenWith(ctx, opts.input, pol)
	if err != nil {
		return nil, nil, err
	}
	src := retrieval.NewMemorySource(ds)
	if d := time.Since(t); d > slowOpen {
		fmt.Fprintf(warn, "note: reading %s took %s; kgrag embed writes %s, which opens in milliseconds\n",
			opts.input, d.Round(100*time.Millisecond), path)
	}
	noteLeftOut(opts, ds.LeftOut, warn)
	return src, ds.LeftOut, nil
}

// noteLeftOut says on warn what the reader left out of --input.
func noteLeftOut(opts askOptions, left []graphrag.LeftOut, warn io.Writer) {
	if s := leftOutSummary(left, opts.input); s != "" && !opts.quiet {
		fmt.Fprintf(warn, "note: %s\n", s)
	}
}
