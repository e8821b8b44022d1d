package graphrag_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/parquet-go/parquet-go"

	"github.com/kgrag/kgrag/graphrag"
)

// modelDiff compares the model content of two Datasets (not where they were
// read from).
func modelDiff(a, b *graphrag.Dataset) string {
	strip := func(d *graphrag.Dataset) graphrag.Dataset {
		c := *d
		c.Dir, c.Tables, c.Absent, c.Notes = "", nil, nil, nil
		return c
	}
	return cmp.Diff(strip(a), strip(b), cmpopts.EquateEmpty())
}

func TestWrite3xRoundTrip(t *testing.T) {
	for _, v := range []string{"v3", "v2.5.0", "v1.0.1"} {
		t.Run(v, func(t *testing.T) {
			ctx := context.Background()
			want, err := graphrag.Open(ctx, sample(t, v))
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := graphrag.Write3x(ctx, dir, want); err != nil {
				t.Fatal(err)
			}
			got, err := graphrag.Open(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			if got.Release != graphrag.Release3 {
				t.Errorf("Release = %q; want %q", got.Release, graphrag.Release3)
			}
			want.Release = got.Release
			if d := modelDiff(got, want); d != "" {
				t.Errorf("Open(Write3x(ds)) differs (-got +want):\n%s", d)
			}
			leftovers, _ := filepath.Glob(filepath.Join(dir, ".*tmp*"))
			if len(leftovers) != 0 {
				t.Errorf("temp files left: %v", leftovers)
			}
		})
	}
}

// TestWrite3xPyarrow checks that pyarrow reads what Write3x writes, with
// GraphRAG 3.x's column names and types.
func TestWrite3xPyarrow(t *testing.T) {
	py := pyarrow(t)
	ctx := context.Background()
	ds, err := graphrag.Open(ctx, sample(t, "v3"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := graphrag.Write3x(ctx, dir, ds); err != nil {
		t.Fatal(err)
	}
	const script = `
import sys, pyarrow.parquet as pq
for name in sys.argv[2:]:
    t = pq.read_table(sys.argv[1] + "/" + name + ".parquet")
    cols = ", ".join(f.name + ":" + str(f.type).replace("element: ", "") for f in t.schema)
    print(name, t.num_rows, cols)
`
	tables := []string{"documents", "text_units", "entities", "relationships", "communities", "community_reports", "covariates"}
	out, err := exec.Command(py, append([]string{"-c", script, dir}, tables...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("pyarrow: %v\n%s", err, out)
	}
	want := []string{
		"documents 1 id:string, human_readable_id:int64, title:string, text:string, text_unit_ids:list<string>, creation_date:string, raw_data:string",
		"text_units 42 id:string, human_readable_id:int64, text:string, n_tokens:int64, document_id:string, entity_ids:list<string>, relationship_ids:list<string>, covariate_ids:list<string>",
		"entities 529 id:string, human_readable_id:int64, title:string, type:string, description:string, text_unit_ids:list<string>, frequency:int64, degree:int64",
		"relationships 978 id:string, human_readable_id:int64, source:string, target:string, description:string, weight:double, combined_degree:int64, text_unit_ids:list<string>",
		"communities 122 id:string, human_readable_id:int64, community:int64, level:int64, parent:int64, children:list<int64>, title:string, entity_ids:list<string>, relationship_ids:list<string>, text_unit_ids:list<string>, period:string, size:int64",
		"community_reports 122 id:string, human_readable_id:int64, community:int64, level:int64, parent:int64, children:list<int64>, title:string, summary:string, full_content:string, rank:double, rating_explanation:string, findings:list<struct<explanation: string, summary: string>>, full_content_json:string, period:string, size:int64",
		"covariates 406 id:string, human_readable_id:int64, covariate_type:string, type:string, description:string, subject_id:string, object_id:string, status:string, start_date:string, end_date:string, source_text:string, text_unit_id:string",
	}
	got := strings.Split(strings.TrimSpace(string(out)), "\n")
	if d := cmp.Diff(got, want); d != "" {
		t.Errorf("pyarrow schemas differ (-got +want):\n%s", d)
	}
}

func TestWrite3xErrorLeavesNothing(t *testing.T) {
	ds := &graphrag.Dataset{
		Entities:    []graphrag.Entity{{ID: "e1", Title: "A"}},
		Communities: []graphrag.Community{{ID: "c", Community: "not-a-number"}},
	}
	dir := t.TempDir()
	err := graphrag.Write3x(context.Background(), dir, ds)
	var e *graphrag.Error
	if !errors.As(err, &e) || !errors.Is(err, graphrag.ErrValue) {
		t.Fatalf("Write3x error = %v; want *Error wrapping ErrValue", err)
	}
	if e.Field != "community" || !strings.HasSuffix(e.Path, "communities.parquet") {
		t.Errorf("error names %q column %q; want communities.parquet column community", e.Path, e.Field)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		var names []string
		for _, en := range entries {
			names = append(names, en.Name())
		}
		t.Errorf("dir after failed write holds %v; want nothing", names)
	}
}

// TestWrite3xPagesBounded: communities of thousands of ids each are written
// in pages near parquet-go's page buffer, not one page per 64 rows (5 MB
// here), since a reader reading in windows holds a page whole.
func TestWrite3xPagesBounded(t *testing.T) {
	const perCommunity = 2000 // ids of 36 bytes: about 80 KB a row
	ds := &graphrag.Dataset{}
	for i := range 200 {
		ids := make([]string, perCommunity)
		for j := range ids {
			ids[j] = fmt.Sprintf("%08d-0000-0000-0000-%012d", i, j)
		}
		ds.Communities = append(ds.Communities, graphrag.Community{
			ID: fmt.Sprintf("c%d", i), HumanReadableID: strconv.Itoa(i), Community: strconv.Itoa(i),
			Parent: "-1", Title: fmt.Sprintf("Community %d", i), EntityIDs: ids})
	}
	dir := t.TempDir()
	if err := graphrag.Write3x(context.Background(), dir, ds); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "communities.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	leaf, ok := pf.Schema().Lookup("entity_ids", "list", "element")
	if !ok {
		t.Fatal("no entity_ids.list.element column")
	}
	var pages, values int64
	for _, rg := range pf.RowGroups() {
		pr := rg.ColumnChunks()[leaf.ColumnIndex].Pages()
		for {
			p, err := pr.ReadPage()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			pages++
			values += p.NumValues()
			// At most a batch (256 KB and one row) on what parquet-go
			// had buffered below its 256 KB page buffer.
			if p.Size() > 1<<20 {
				t.Errorf("page %d: %d KB of %d rows", pages, p.Size()>>10, p.NumRows())
			}
			parquet.Release(p)
		}
		pr.Close()
	}
	if want := int64(200 * perCommunity); values != want {
		t.Errorf("%d values in %d pages, want %d", values, pages, want)
	}
}
