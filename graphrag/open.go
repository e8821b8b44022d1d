package graphrag

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// fileName returns the file that holds logical table name in the short
// (>= 2.0) or long (create_final_*, < 2.0) naming.
func fileName(name string, long bool) string {
	if long {
		return "create_final_" + name + ".parquet"
	}
	return name + ".parquet"
}

// hasTables reports whether dir holds any GraphRAG table file, and in which
// naming. Short names win when both are present (a 2.x run over an old dir).
func hasTables(dir string) (found, long bool) {
	for _, long := range []bool{false, true} {
		for _, n := range tableNames() {
			if fi, err := os.Stat(filepath.Join(dir, fileName(n, long))); err == nil && fi.Mode().IsRegular() {
				return true, long
			}
		}
	}
	return false, false
}

// layout is where a dataset's tables live.
type layout struct {
	dir   string
	long  bool
	notes []string
}

// resolve finds the table directory below dir. It accepts the table
// directory itself, a project root whose GraphRAG settings name the output
// folder (settingsOutput), a timestamp dir (holding artifacts/, 0.2-0.4), a project root
// (holding output/), or an output dir of timestamped runs, where the newest
// run (timestamps sort as text) is chosen.
func resolve(dir string) (layout, error) { return resolveIn(dir, true) }

// resolveIn is resolve, reading the settings file only when settings is
// set: the folder a settings file names is not searched for another.
func resolveIn(dir string, settings bool) (layout, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return layout{}, &Error{Op: "open", Path: dir, Row: -1, Err: unwrapPath(err)}
	}
	if !fi.IsDir() {
		return layout{}, &Error{Op: "open", Path: dir, Row: -1, Err: errors.New("not a directory")}
	}
	if ok, long := hasTables(dir); ok {
		return layout{dir: dir, long: long}, nil
	}
	// A project folder: its settings say where the output went.
	if settings {
		if l, ok, err := fromSettings(dir); err != nil || ok {
			return l, err
		}
	}
	if d := filepath.Join(dir, "artifacts"); isDir(d) {
		if ok, long := hasTables(d); ok {
			return layout{dir: d, long: long}, nil
		}
	}
	out := filepath.Join(dir, "output")
	if isDir(out) {
		if ok, long := hasTables(out); ok {
			return layout{dir: out, long: long}, nil
		}
	} else {
		out = dir // dir may itself be an output dir of timestamped runs
	}
	var runs []string
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		a := filepath.Join(out, e.Name(), "artifacts")
		if ok, _ := hasTables(a); e.IsDir() && ok {
			runs = append(runs, e.Name())
		}
	}
	if len(runs) > 0 {
		sort.Strings(runs)
		newest := runs[len(runs)-1]
		d := filepath.Join(out, newest, "artifacts")
		_, long := hasTables(d)
		l := layout{dir: d, long: long}
		l.notes = append(l.notes, fmt.Sprintf("read run %s, the newest of %d in %s", newest, len(runs), out))
		return l, nil
	}
	var want []string
	for _, long := range []bool{false, true} {
		for _, n := range tableNames() {
			want = append(want, fileName(n, long))
		}
	}
	return layout{}, &Error{Op: "open", Path: dir, Row: -1, Err: fmt.Errorf(
		"%w: looked for %s in %s, the output folder its settings.yaml names, its artifacts/ and output/ subdirectories and output/<timestamp>/artifacts",
		ErrNoTables, strings.Join(want, ", "), dir)}
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// Open reads the GraphRAG output in dir into a normalised Dataset, the
// whole of it in memory; Walk hands it over one table at a time instead.
//
// dir may be the directory holding the parquet files or, for the 0.2
// layout, the project root, its output dir, a timestamp dir or the artifacts
// dir. Open detects the release from file and column names, reads every
// table it finds (listing the rest in Dataset.Absent), resolves relationship
// ends to entity ids (creating placeholder entities for ends the entities
// table lacks), merges community reports into communities and computes
// community weights.
//
// Errors are *Error values naming the file and column; their causes satisfy
// errors.Is for ErrNoTables, ErrMissingColumn, ErrColumnType, ErrRowCount and
// the os errors (fs.ErrNotExist for a missing dir).
func Open(ctx context.Context, dir string) (*Dataset, error) {
	return open(ctx, dir, Visitor{}, DefaultPolicy())
}

// OpenWith is Open under policy p: what it does with malformed rows
// (Open leaves them out under DefaultPolicy; see Dataset.LeftOut).
func OpenWith(ctx context.Context, dir string, p Policy) (*Dataset, error) {
	return open(ctx, dir, Visitor{}, p)
}

// open is Open collecting what a walk with v's window settings hands over
// (tests read with small windows, to check they change nothing).
func open(ctx context.Context, dir string, v Visitor, p Policy) (*Dataset, error) {
	var rows Dataset
	v.Documents = func(_ context.Context, w []Document) error { rows.Documents = collect(rows.Documents, w); return nil }
	v.TextUnits = func(_ context.Context, w []TextUnit) error { rows.TextUnits = collect(rows.TextUnits, w); return nil }
	v.Entities = func(_ context.Context, w []Entity) error { rows.Entities = collect(rows.Entities, w); return nil }
	v.Relationships = func(_ context.Context, w []Relationship) error {
		rows.Relationships = collect(rows.Relationships, w)
		return nil
	}
	v.Communities = func(_ context.Context, w []Community) error {
		rows.Communities = collect(rows.Communities, w)
		return nil
	}
	v.Covariates = func(_ context.Context, w []Covariate) error {
		rows.Covariates = collect(rows.Covariates, w)
		return nil
	}
	ds, err := walkWith(ctx, dir, v, p)
	if err != nil {
		return nil, err
	}
	ds.Documents, ds.TextUnits, ds.Entities = rows.Documents, rows.TextUnits, rows.Entities
	ds.Relationships, ds.Communities, ds.Covariates = rows.Relationships, rows.Communities, rows.Covariates
	return ds, nil
}

// collect appends a window to the rows before it; the first is kept as it
// is (a whole table is one window).
func collect[T any](all, w []T) []T {
	if all == nil {
		return w
	}
	return append(all, w...)
}

// openTables resolves dir, opens the footer of every table file present
// and detects the release. The caller closes the walker.
func openTables(ctx context.Context, dir string) (*walker, error) {
	l, err := resolve(dir)
	if err != nil {
		return nil, err
	}
	run, err := ReadRun(l.dir)
	if err != nil {
		return nil, err
	}
	w := &walker{ds: &Dataset{Dir: l.dir, Notes: l.notes, Run: run}, tables: map[string]*table{}}
	ds, tables := w.ds, w.tables
	names := tableNames()
	if l.long {
		names = append(names, TableNodes)
	}
	for _, n := range names {
		p := filepath.Join(l.dir, fileName(n, l.long))
		if _, err := os.Stat(p); err != nil {
			if n != TableNodes {
				ds.Absent = append(ds.Absent, n)
			}
			continue
		}
		t, err := openTable(n, p)
		if err != nil {
			w.close()
			return nil, err
		}
		tables[n] = t
	}
	ds.Release, err = detect(ctx, l, tables)
	if err != nil {
		w.close()
		return nil, err
	}
	if ds.Release == Release04 && tables[TableEntities].has("description_embedding") {
		ds.Notes = append(ds.Notes, "entities.description_embedding is present but holds no vector (0.4 keeps them in LanceDB): read as 0.4; kgrag embed embeds the descriptions")
	}
	if ds.Release.long() {
		// Releases without communities.entity_ids need the nodes table for
		// membership; those whose entities have no degree, for degree.
		degree := tables[TableEntities] != nil && !tables[TableEntities].has("degree") &&
			tables[TableNodes] != nil && tables[TableNodes].has("degree")
		if !ds.Release.nodeMembership() {
			if t := tables[TableNodes]; t != nil && !degree {
				t.close()
				delete(tables, TableNodes)
			}
		} else if tables[TableNodes] == nil {
			ds.Absent = append(ds.Absent, TableNodes)
			ds.Notes = append(ds.Notes, "create_final_nodes.parquet is missing: communities have no members")
		}
	}
	for _, n := range append(tableNames(), TableNodes) {
		if t := tables[n]; t != nil {
			ds.Tables = append(ds.Tables, Table{Name: n, Path: t.path, Rows: t.rows})
		}
	}
	has := func(name, col string) bool {
		t := tables[name]
		return t != nil && t.has(col)
	}
	w.haveChildren = has(TableCommunities, "children") || has(TableCommunityReports, "children")
	w.haveParent = has(TableCommunities, "parent") || has(TableCommunityReports, "parent")
	w.haveTextUnitEnts = has(TableTextUnits, "entity_ids")
	return w, nil
}

// long reports whether the release names its files create_final_*.
func (r Release) long() bool {
	switch r {
	case Release03, Release04, Release05, Release1:
		return true
	}
	return false
}

// nodeMembership reports whether community membership is only recorded in
// create_final_nodes (releases <= 0.4 have no communities.entity_ids).
func (r Release) nodeMembership() bool {
	return r == Release03 || r == Release04
}

// detect names the release from the files and columns present, and from
// the data where a column alone does not tell: never from the folder the
// files are in (0.2, 0.3 and 0.4 all wrote output/<timestamp>/artifacts):
//   - short names: 3.x when text_units has document_id (or documents has
//     raw_data), else 2.x;
//   - long names, entities with name: 0.2-0.3 when description_embedding
//     holds vectors, else 0.4 (which keeps the column, empty);
//   - long names, entities with title: 1.x when communities (or reports) have
//     parent, else 0.5-0.9.
func detect(ctx context.Context, l layout, tables map[string]*table) (Release, error) {
	has := func(name, col string) bool {
		t := tables[name]
		return t != nil && t.has(col)
	}
	if !l.long {
		if has(TableTextUnits, "document_id") || (tables[TableTextUnits] == nil && has(TableDocuments, "raw_data")) {
			return Release3, nil
		}
		return Release2, nil
	}
	switch {
	case has(TableEntities, "name") && !has(TableEntities, "title"):
		vectors, err := tables[TableEntities].hasValues(ctx, "description_embedding")
		if err != nil {
			return ReleaseUnknown, err
		}
		if vectors {
			return Release03, nil
		}
		return Release04, nil
	case has(TableCommunities, "parent") || has(TableCommunityReports, "parent"):
		return Release1, nil
	case has(TableEntities, "title"):
		return Release05, nil
	case has(TableCommunities, "entity_ids"):
		return Release05, nil
	case has(TableCommunities, "raw_community") || has(TableCommunityReports, "rank_explanation") && !has(TableCommunityReports, "human_readable_id"):
		return Release04, nil
	}
	return Release1, nil
}

// Files resolves dir as Open does and returns the table directory and
// every file Open would look at there, present or not: the table files
// in both namings and the run record. A cache of what Open read is still
// valid while none of these files is added, removed or changed.
func Files(dir string) (tableDir string, files []string, err error) {
	l, err := resolve(dir)
	if err != nil {
		return "", nil, err
	}
	for _, long := range []bool{false, true} {
		for _, n := range append(tableNames(), TableNodes) {
			files = append(files, filepath.Join(l.dir, fileName(n, long)))
		}
	}
	return l.dir, append(files, filepath.Join(l.dir, RunFile)), nil
}
