package graphrag_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/test"
	"github.com/parquet-go/parquet-go"
)

// openers read an output whole (Open) and in windows of a few rows, which
// must hand over the same rows and fail with the same errors.
var openers = []struct {
	name string
	open func(context.Context, string) (*graphrag.Dataset, error)
}{
	{"whole", graphrag.Open},
	{"windows=7", func(ctx context.Context, dir string) (*graphrag.Dataset, error) {
		return graphrag.OpenWindows(ctx, dir, 7)
	}},
	{"windows=1", func(ctx context.Context, dir string) (*graphrag.Dataset, error) {
		return graphrag.OpenWindows(ctx, dir, 1)
	}},
}

// rechunk copies the output in src, rewriting every parquet file with row
// groups of rgRows rows and pages of about pageBytes bytes (the samples
// have one row group and, mostly, one page per column), so that windows
// end inside row groups and pages, and page and row group ends fall inside
// lists.
func rechunk(t *testing.T, src string, rgRows int64, pageBytes int) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		if !strings.HasSuffix(p, ".parquet") {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(out, b, 0o644)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		st, _ := in.Stat()
		pf, err := parquet.OpenFile(in, st.Size())
		if err != nil {
			return err
		}
		f, err := os.Create(out)
		if err != nil {
			return err
		}
		defer f.Close()
		w := parquet.NewWriter(f, pf.Schema(), parquet.MaxRowsPerRowGroup(rgRows), parquet.PageBufferSize(pageBytes))
		for _, rg := range pf.RowGroups() {
			rows := rg.Rows()
			_, err := parquet.CopyRows(w, rows)
			rows.Close()
			if err != nil {
				return err
			}
		}
		return w.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestWindowsMatchWhole: every sample read in windows of 1, 7 and 64 rows
// and of the automatic size, as found and rewritten with row groups of 13
// rows and pages of ~1 KB, hands over the rows, notes and counts of the
// whole read of the sample as found.
func TestWindowsMatchWhole(t *testing.T) {
	ctx := context.Background()
	ignore := cmp.Options{
		cmpopts.IgnoreFields(graphrag.Dataset{}, "Dir"),
		cmpopts.IgnoreFields(graphrag.Table{}, "Path"),
		cmpopts.EquateEmpty(),
	}
	for _, v := range test.Samples() {
		dir := sample(t, v)
		want, err := graphrag.Open(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		re := rechunk(t, dir, 13, 1024)
		for _, in := range []struct{ name, dir string }{{"found", dir}, {"rechunked", re}} {
			for _, rows := range []int{1, 7, 64, 0} {
				t.Run(fmt.Sprintf("%s/%s/rows=%d", v, in.name, rows), func(t *testing.T) {
					got, err := graphrag.OpenWindows(ctx, in.dir, rows)
					if err != nil {
						t.Fatal(err)
					}
					for i := range got.Notes {
						got.Notes[i] = strings.ReplaceAll(got.Notes[i], in.dir, dir)
					}
					if !same(want, got) {
						t.Errorf("windows of %d rows of %s (-whole +windows):\n%s", rows, in.name, cmp.Diff(want, got, ignore))
					}
				})
			}
			if in.name == "rechunked" {
				got, err := graphrag.Open(ctx, in.dir)
				if err != nil {
					t.Fatal(err)
				}
				for i := range got.Notes {
					got.Notes[i] = strings.ReplaceAll(got.Notes[i], in.dir, dir)
				}
				if !same(want, got) {
					t.Errorf("%s rechunked read whole (-found +rechunked):\n%s", v, cmp.Diff(want, got, ignore))
				}
			}
		}
	}
}

// same reports whether two reads of one output hand over the same rows,
// notes and counts, wherever the files were (cmp.Diff, which explains a
// difference, is slow on the 0.3 sample's embeddings).
func same(a, b *graphrag.Dataset) bool {
	x, y := *a, *b
	x.Dir, y.Dir = "", ""
	x.Tables, y.Tables = slices.Clone(x.Tables), slices.Clone(y.Tables)
	for i := range x.Tables {
		x.Tables[i].Path = ""
	}
	for i := range y.Tables {
		y.Tables[i].Path = ""
	}
	return reflect.DeepEqual(x, y)
}
