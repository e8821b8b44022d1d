package graphrag_test

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kgrag/kgrag/graphrag"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// copySample copies a sample's files into a new folder, for a test to
// damage.
func copySample(t *testing.T, name string) string {
	t.Helper()
	src := sample(t, name)
	dst := t.TempDir()
	files, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(src, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, f.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// claimRows rewrites the footer of the parquet file at path so that it
// claims rows rows in the file and in its first row group.
func claimRows(t *testing.T, path string, rows int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := int(binary.LittleEndian.Uint32(b[len(b)-8:]))
	start := len(b) - 8 - n
	var md format.FileMetaData
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), b[start:len(b)-8], &md); err != nil {
		t.Fatal(err)
	}
	md.NumRows = rows
	md.RowGroups[0].NumRows = rows
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
	if err != nil {
		t.Fatal(err)
	}
	out := append(append([]byte(nil), b[:start]...), footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	out = append(out, "PAR1"...)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestOpenCraftedFooter: a footer claiming 2^40 rows is refused with an
// error naming the file, before any column is read into memory (which
// ended in Go's fatal "out of memory").
func TestOpenCraftedFooter(t *testing.T) {
	dir := copySample(t, "v3")
	path := filepath.Join(dir, "entities.parquet")
	claimRows(t, path, 1<<40)
	_, err := graphrag.Open(context.Background(), dir)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "1099511627776 rows") {
		t.Fatalf("Open with a footer of 2^40 rows: %v; want an error naming %s and the rows claimed", err, path)
	}
	// The same rewrite with the true count reads as before: the test
	// damages only the count.
	claimRows(t, path, 529)
	if _, err := graphrag.Open(context.Background(), dir); err != nil {
		t.Fatalf("Open after restoring the count: %v", err)
	}
}

// TestOpenNotRegular: a named pipe or a folder where a table should be is
// refused at once, naming it; a pipe no longer blocks the open.
func TestOpenNotRegular(t *testing.T) {
	tests := []struct {
		name string
		make func(path string) error
		want string
	}{
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o644) }, "a named pipe"},
		{"directory", func(p string) error { return os.Mkdir(p, 0o755) }, "a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copySample(t, "v3")
			path := filepath.Join(dir, "relationships.parquet")
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := tt.make(path); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := graphrag.Open(context.Background(), dir)
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("Open: %v; want an error naming %s as %s", err, path, tt.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Open blocked on the table")
			}
		})
	}
}

// writeV3 writes the v3 sample, changed by edit, into a new folder in the
// 3.x layout: a fixture of an output as found, for a test to read back.
// The placeholders Open made are not rows, so edit does not see them.
func writeV3(t *testing.T, edit func(ds *graphrag.Dataset)) string {
	t.Helper()
	ds, err := graphrag.Open(context.Background(), sample(t, "v3"))
	if err != nil {
		t.Fatal(err)
	}
	ds.Entities = slices.DeleteFunc(ds.Entities, func(e graphrag.Entity) bool { return e.Placeholder })
	edit(ds)
	dir := t.TempDir()
	if err := graphrag.Write3x(context.Background(), dir, ds); err != nil {
		t.Fatal(err)
	}
	return dir
}

// emptyKeys are damages of one key cell each, with where they are.
var emptyKeys = []struct {
	name, table, file, column string
	row                       int
	damage                    func(ds *graphrag.Dataset)
}{
	{"entity id", graphrag.TableEntities, "entities.parquet", "id", 7, func(ds *graphrag.Dataset) { ds.Entities[7].ID = "" }},
	{"entity title", graphrag.TableEntities, "entities.parquet", "title", 3, func(ds *graphrag.Dataset) { ds.Entities[3].Title = "" }},
	{"entity title blank", graphrag.TableEntities, "entities.parquet", "title", 4, func(ds *graphrag.Dataset) { ds.Entities[4].Title = " \t" }},
	{"relationship source", graphrag.TableRelationships, "relationships.parquet", "source", 5, func(ds *graphrag.Dataset) { ds.Relationships[5].Source = "" }},
	{"relationship target", graphrag.TableRelationships, "relationships.parquet", "target", 2, func(ds *graphrag.Dataset) { ds.Relationships[2].Target = "" }},
	{"relationship id", graphrag.TableRelationships, "relationships.parquet", "id", 9, func(ds *graphrag.Dataset) { ds.Relationships[9].ID = "" }},
	{"text unit id", graphrag.TableTextUnits, "text_units.parquet", "id", 4, func(ds *graphrag.Dataset) { ds.TextUnits[4].ID = "" }},
	{"claim id", graphrag.TableCovariates, "covariates.parquet", "id", 11, func(ds *graphrag.Dataset) { ds.Covariates[11].ID = "" }},
}

// TestOpenEmptyKeysStrict: under a strict policy a null or empty id,
// entity title or relationship end fails the read, naming the file, the
// column and the row, as kgrag did before it left such rows out.
func TestOpenEmptyKeysStrict(t *testing.T) {
	strict := graphrag.Policy{Strict: true}
	for _, tt := range emptyKeys {
		dir := writeV3(t, tt.damage)
		for _, o := range policyOpeners(strict) {
			t.Run(tt.name+"/"+o.name, func(t *testing.T) {
				_, err := o.open(context.Background(), dir)
				var ge *graphrag.Error
				if !errors.As(err, &ge) || !errors.Is(err, graphrag.ErrEmptyKey) {
					t.Fatalf("Open: %v; want an ErrEmptyKey *graphrag.Error", err)
				}
				if filepath.Base(ge.Path) != tt.file || ge.Field != tt.column || ge.Row != int64(tt.row) {
					t.Errorf("error at %s, column %q, row %d; want %s, %q, %d (%v)", ge.Path, ge.Field, ge.Row, tt.file, tt.column, tt.row, err)
				}
			})
		}
	}
}

// TestOpenEmptyKeysLeftOut: by default the same row is left out, the rest
// of its table is read, and Dataset.LeftOut names the table, the column,
// the cause and the row with its fields.
func TestOpenEmptyKeysLeftOut(t *testing.T) {
	clean, err := graphrag.Open(context.Background(), sample(t, "v3"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range emptyKeys {
		dir := writeV3(t, tt.damage)
		for _, o := range policyOpeners(graphrag.DefaultPolicy()) {
			t.Run(tt.name+"/"+o.name, func(t *testing.T) {
				ds, err := o.open(context.Background(), dir)
				if err != nil {
					t.Fatalf("Open: %v; want the row left out", err)
				}
				var malformed []graphrag.LeftOut
				for _, l := range ds.LeftOut {
					if l.Malformed() {
						malformed = append(malformed, l)
					}
				}
				if len(malformed) != 1 {
					t.Fatalf("malformed rows reported: %+v; want one entry", malformed)
				}
				l := malformed[0]
				if l.Table != tt.table || l.Column != tt.column || l.Cause != graphrag.CauseBlank || l.Rows != 1 ||
					filepath.Base(l.Path) != tt.file || len(l.Examples) != 1 || l.Examples[0].Row != int64(tt.row) {
					t.Errorf("LeftOut = %+v; want 1 row of %s (%s), column %q, row %d", l, tt.table, tt.file, tt.column, tt.row)
				}
				if len(l.Examples) > 0 && len(l.Examples[0].Fields) < 3 {
					t.Errorf("example %s shows %d fields; want the row's fields", l.Examples[0], len(l.Examples[0].Fields))
				}
				if !slices.ContainsFunc(ds.Notes, func(n string) bool { return strings.Contains(n, l.String()) }) {
					t.Errorf("notes %q lack %q", ds.Notes, l.String())
				}
				left := 0
				for _, l := range ds.LeftOut {
					if l.Table == tt.table {
						left += l.Rows
					}
				}
				got, want := ds.Summary().Rows[tt.table], clean.Summary().Rows[tt.table]-left
				// Entities: less the placeholders that relationships now
				// need where a title was blanked (a title no entity has).
				if tt.table == graphrag.TableEntities {
					got -= ds.Placeholders - clean.Placeholders
				}
				if got != want {
					t.Errorf("%s: %d rows; want %d (%d less the %d left out)", tt.table, got, want, want+left, left)
				}
			})
		}
	}
}

// policyOpeners are the openers under policy p.
func policyOpeners(p graphrag.Policy) []struct {
	name string
	open func(context.Context, string) (*graphrag.Dataset, error)
} {
	return []struct {
		name string
		open func(context.Context, string) (*graphrag.Dataset, error)
	}{
		{"whole", func(ctx context.Context, dir string) (*graphrag.Dataset, error) {
			return graphrag.OpenWith(ctx, dir, p)
		}},
		{"windows=7", func(ctx context.Context, dir string) (*graphrag.Dataset, error) {
			return graphrag.OpenWindowsWith(ctx, dir, 7, p)
		}},
		{"windows=1", func(ctx context.Context, dir string) (*graphrag.Dataset, error) {
			return graphrag.OpenWindowsWith(ctx, dir, 1, p)
		}},
	}
}

// TestOpenNoCommunity: GraphRAG's community -1 ("in no community"), with
// a report and members, is left out: no community, report or membership
// comes of it, and a note says so.
func TestOpenNoCommunity(t *testing.T) {
	var want int
	var rep graphrag.CommunityReport
	dir := writeV3(t, func(ds *graphrag.Dataset) {
		want = len(ds.Communities)
		none := ds.Communities[0]
		none.ID, none.Community, none.HumanReadableID, none.Level, none.Parent, none.Children = "c-none", "-1", "-1", 0, "", nil
		none.EntityIDs = []string{ds.Entities[0].ID, ds.Entities[1].ID}
		rep = *none.Report
		rep.ID, rep.Title, rep.Community, rep.HumanReadableID = "r-none", "Entities in no community", "-1", "-1"
		none.Report = &rep
		ds.Communities = append(ds.Communities, none)
	})
	for _, o := range openers {
		t.Run(o.name, func(t *testing.T) {
			got, err := o.open(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Communities) != want {
				t.Errorf("%d communities; want %d (the -1 one left out)", len(got.Communities), want)
			}
			for _, c := range got.Communities {
				if c.Community == "-1" || c.Report != nil && c.Report.Title == rep.Title {
					t.Errorf("community %s (%v) read; want -1 left out", c.Community, c.Report)
				}
			}
			for _, e := range got.Entities {
				if slices.Contains(e.Communities, "-1") {
					t.Errorf("entity %s is in community -1", e.Title)
				}
			}
			if !strings.Contains(strings.Join(got.Notes, "\n"), "numbered -1") {
				t.Errorf("Notes = %q; want one saying community -1 was left out", got.Notes)
			}
		})
	}
}

// TestOpenUpdateTables: tables as `graphrag update` merges them, with rows
// that repeat an id (identical, or with another title) and community
// members the entities table lacks. The first row of each id is kept, the
// rest counted by table with an example, and the dangling members left out
// and counted: no id is handed over twice.
func TestOpenUpdateTables(t *testing.T) {
	var doc graphrag.Document
	var ent graphrag.Entity
	dir := writeV3(t, func(ds *graphrag.Dataset) {
		doc = ds.Documents[0]
		doc.Title, doc.HumanReadableID = "renamed.txt", "7"
		ds.Documents = append(ds.Documents, doc)
		ds.TextUnits = append(ds.TextUnits, ds.TextUnits[3], ds.TextUnits[5])
		ent = ds.Entities[10]
		ent.Description = "another description from the update run"
		ds.Entities = append(ds.Entities, ent)
		ds.Relationships = append(ds.Relationships, ds.Relationships[0])
		ds.Communities[0].EntityIDs = append(ds.Communities[0].EntityIDs, "no-such-entity-1", "no-such-entity-2")
	})
	for _, o := range openers {
		t.Run(o.name, func(t *testing.T) {
			got, err := o.open(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]graphrag.Duplicates{
				graphrag.TableDocuments:     {Different: 1, Example: `id "` + doc.ID + `": HumanReadableID, Title differ`},
				graphrag.TableTextUnits:     {Same: 2},
				graphrag.TableEntities:      {Different: 1, Example: `id "` + ent.ID + `": Description differ`},
				graphrag.TableRelationships: {Same: 1},
			}
			if d := cmp.Diff(want, got.Duplicates); d != "" {
				t.Errorf("Duplicates (-want +got):\n%s", d)
			}
			if got.DanglingMembers != 2 {
				t.Errorf("DanglingMembers = %d; want 2", got.DanglingMembers)
			}
			if len(got.Documents) != 1 || got.Documents[0].Title == "renamed.txt" || len(got.TextUnits) != 42 || len(got.Relationships) != 978 {
				t.Errorf("%d documents (title %q), %d text units, %d relationships; want the first rows only: 1, 42, 978",
					len(got.Documents), got.Documents[0].Title, len(got.TextUnits), len(got.Relationships))
			}
			seen := map[string]bool{}
			for _, e := range got.Entities {
				if seen[e.ID] {
					t.Errorf("entity %s handed over twice", e.ID)
				}
				seen[e.ID] = true
				if e.ID == ent.ID && e.Description == ent.Description {
					t.Errorf("entity %s: the later row's description was kept", e.ID)
				}
			}
			for _, c := range got.Communities {
				if slices.Contains(c.EntityIDs, "no-such-entity-1") {
					t.Errorf("community %s keeps a member the entities table lacks", c.Community)
				}
			}
			notes := strings.Join(got.Notes, "\n")
			for _, w := range []string{"documents: 1 rows repeat the id", "text_units: 2 rows", "2 community memberships name an entity id"} {
				if !strings.Contains(notes, w) {
					t.Errorf("Notes = %q; want one saying %q", got.Notes, w)
				}
			}
		})
	}
}
