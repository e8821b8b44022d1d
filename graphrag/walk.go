package graphrag

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
	"sync"

	"github.com/parquet-go/parquet-go"
)

// Visitor receives a GraphRAG output one table at a time from Walk. Each
// non-nil callback is called exactly once (once per window with Windows),
// in field order, after the one
// before it has returned, with the rows of its table in file order (nil
// when the table is absent and nothing stands in for it): the first row
// of each id, as a later row with the same id is left out and counted in
// Dataset.Duplicates. The rows are
// complete as Open fills them: placeholders end Entities, relationship and
// claim ends are resolved, Entity.Communities, derived TextUnit.EntityIDs
// and community Children, members and Weight are set, and reports are
// merged into Communities.
//
// The slice belongs to the callback: Walk keeps no reference to it once the
// callback returns, so a callback that does not keep it lets it be freed
// before the next table is read. A nil callback skips its table: only the
// columns the other tables need from it are read, so errors in the rest of
// it go unnoticed. An error returned by a callback stops the walk and is
// returned by Walk as it is.
type Visitor struct {
	Documents     func(context.Context, []Document) error
	TextUnits     func(context.Context, []TextUnit) error
	Entities      func(context.Context, []Entity) error
	Relationships func(context.Context, []Relationship) error
	// Communities are the communities table merged with the reports table.
	Communities func(context.Context, []Community) error
	Covariates  func(context.Context, []Covariate) error

	// Windows hands each table over in windows of rows, in row order,
	// rather than whole, so that no table is ever held in memory: each
	// non-nil callback is then called once per window (at least once, as
	// above), with rows complete as above, and the next window is read
	// while the callback runs. The rows of one window may still be in use
	// when the next is handed over (they are the callback's). What ties
	// the tables together is read whole first (see NewWalker); so are the
	// community reports, which GraphRAG writes deepest level first rather
	// than in the communities' order, once the first window of
	// communities has been read. Placeholders end the last window of
	// Entities, report-only communities the last of Communities. A bad row
	// fails the walk with the error of the first window holding one, after
	// the windows before it were handed over.
	Windows bool
	// WindowRows caps the rows of a window when Windows is set; 0 sizes
	// windows by the table's bytes per row (about windowBytes of column
	// data, at most maxWindowRows rows). Tests set a few rows, so that
	// windows end inside pages and row groups.
	WindowRows int

	// OmitReportJSON leaves the reports' full_content_json unread
	// (CommunityReport.FullContentJSON stays ""): it repeats full_content
	// as JSON, a third of the reports' bytes, and a caller that does not
	// use it (the RDF mapping) need not decode it.
	OmitReportJSON bool
}

// Walk reads the GraphRAG output in dir one table at a time and hands each
// to v, so that a caller that maps or writes a table and lets it go needs
// memory for the largest table, not for the whole dataset (Open holds it
// all). It is NewWalker, Walker.Walk and Close in one call; the returned
// Dataset is Walker.Dataset.
func Walk(ctx context.Context, dir string, v Visitor) (*Dataset, error) {
	return walkWith(ctx, dir, v, DefaultPolicy())
}

func walkWith(ctx context.Context, dir string, v Visitor, p Policy) (*Dataset, error) {
	w, err := NewWalkerWith(ctx, dir, p)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	if err := w.Walk(ctx, v); err != nil {
		return nil, err
	}
	return w.Dataset(), nil
}

// Walker is a GraphRAG output opened for one walk: its release is known
// and its link pass is done, so that an unreadable input fails before the
// caller starts writing anywhere. A Walker is not safe for concurrent use;
// the caller closes it.
type Walker struct {
	w    *walker
	lk   *links
	done bool
}

// NewWalker finds dir and detects the release as Open does, then runs the
// link pass: it reads only the columns that tie tables together (entity
// ids, titles and text units; relationship and claim ends; community
// numbers, parents and members; create_final_nodes for releases <= 0.4).
// The links it keeps (titles to ids, memberships, weights) are small next to
// the tables and are dropped as the tables that need them are handed over.
// It also finds every malformed row, so that DefaultPolicy decides before
// anything is handed over. Errors are those of Open.
func NewWalker(ctx context.Context, dir string) (*Walker, error) {
	return NewWalkerWith(ctx, dir, DefaultPolicy())
}

// NewWalkerWith is NewWalker under policy p: the rows the link pass
// leaves out are in Dataset.LeftOut, unless p makes them an error (see
// Policy.Check).
func NewWalkerWith(ctx context.Context, dir string, p Policy) (*Walker, error) {
	w, err := openTables(ctx, dir)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		w.close()
		return nil, err
	}
	lk, err := w.link(ctx)
	if err == nil {
		err = w.judge(ctx, p)
	}
	if err != nil {
		w.close()
		return nil, err
	}
	return &Walker{w: w, lk: lk}, nil
}

// judge lists what the link pass left out in the Dataset and its notes,
// and applies p to it.
func (w *walker) judge(ctx context.Context, p Policy) error {
	left, err := w.q.leftOut(ctx, w.tables)
	if err != nil {
		return err
	}
	rows := map[string]int64{}
	for n, t := range w.tables {
		rows[n] = t.rows
	}
	if err := p.Check(left, rows); err != nil {
		return err
	}
	w.ds.LeftOut = left
	for _, l := range left {
		w.ds.Notes = append(w.ds.Notes, l.String())
	}
	return nil
}

// Dataset returns what describes the output (Dir, Release, Tables, Absent,
// Notes and the placeholder counts), complete once NewWalker has returned;
// its row slices are nil.
func (w *Walker) Dataset() *Dataset { return w.w.ds }

// Walk reads each table (whole, or a window at a time with v.Windows),
// completes its rows from the links and hands them to v, in Visitor order. It can be called once; it checks ctx between
// tables and while reading. Errors are those of Open, or a callback's error
// as returned.
func (w *Walker) Walk(ctx context.Context, v Visitor) error {
	if w.done {
		return errors.New("graphrag: walk: a Walker walks once")
	}
	w.done = true
	steps := []func(context.Context, *links, Visitor) error{
		w.w.documents, w.w.textUnits, w.w.entities, w.w.relationships, w.w.communities, w.w.covariates,
	}
	for _, step := range steps {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := step(ctx, w.lk, v); err != nil {
			return err
		}
	}
	w.lk = nil
	// The references dropped while the text units were handed over.
	for _, r := range []struct {
		column, cause string
		n             int
	}{{"entity_ids", CauseLeftOutEntity, w.w.tuEntityRefs}, {"relationship_ids", CauseLeftOutRelationship, w.w.tuRelRefs}} {
		if r.n > 0 {
			l := LeftOut{Table: TableTextUnits, Path: w.w.tables[TableTextUnits].path, Column: r.column, Cause: r.cause, Refs: r.n}
			w.w.ds.LeftOut = append(w.w.ds.LeftOut, l)
			w.w.ds.Notes = append(w.w.ds.Notes, l.String())
		}
	}
	return nil
}

// Close closes the table files. It is safe to call more than once.
func (w *Walker) Close() error {
	if w.w != nil {
		w.w.close()
		w.w.tables = nil
	}
	return nil
}

// walker holds the opened tables of one Walk and which optional columns
// they have, since some fix-ups apply only when one is missing.
type walker struct {
	ds     *Dataset // metadata only
	tables map[string]*table

	haveChildren     bool // communities or reports carry `children`
	haveParent       bool
	haveTextUnitEnts bool // text_units carry entity_ids

	// q is what the link pass left out; tuEntityRefs and tuRelRefs count
	// the references to left-out rows that the walk drops from text units.
	q                       *quarantine
	tuEntityRefs, tuRelRefs int
}

func (w *walker) close() {
	for _, t := range w.tables {
		t.close()
	}
}

// windowBytes is about how many bytes of column data (uncompressed) a
// window of an automatically sized window holds: a few windows are in
// flight at once (one read, one handed over, one being mapped).
const windowBytes = 8 << 20

// maxWindowRows bounds an automatically sized window.
const maxWindowRows = 16 << 10

// windowRows returns how many rows of t each window holds for v: every row
// unless v.Windows.
func windowRows(v Visitor, t *table) int64 {
	if !v.Windows || t.rows == 0 {
		return max(t.rows, 1)
	}
	if v.WindowRows > 0 {
		return int64(v.WindowRows)
	}
	var size int64
	for _, rg := range t.pf.Metadata().RowGroups {
		size += rg.TotalByteSize
	}
	perRow := max(1, size/t.rows)
	return min(max(1, windowBytes/perRow), maxWindowRows)
}

// tableWalk is how one table is walked: its reader, the id that
// duplicate rows repeat (nil for none), how a window's rows are completed
// from the links (lo is the table row of rows[0]; nil for as read) and
// the rows that end the table (nil for none).
type tableWalk[T any] struct {
	name   string
	reader func(context.Context, *table) *rowReader[T]
	id     func(*T) string
	fix    func(ctx context.Context, lo int64, rows []T) ([]T, error)
	tail   func(ctx context.Context) ([]T, error)
	// skip are the rows the link pass left out (nil for none): they go
	// before duplicates are looked for, so that a kept row is never taken
	// for the repeat of a left-out one. fix then no longer sees rows at
	// lo+i, so only tables without skip may use lo.
	skip map[int64]bool
}

// window is one window read ahead, or the error that stopped the reading.
type window[T any] struct {
	rows []T
	err  error
}

// walkTable reads one table as tw says and hands it to fn: whole, or in
// windows with v.Windows, each read while fn handles the one before. An
// absent table is handed over as its tail alone (nil when it has none).
func walkTable[T any](ctx context.Context, w *walker, v Visitor, tw tableWalk[T], fn func(context.Context, []T) error) error {
	t := w.tables[tw.name]
	if t == nil {
		var rows []T
		if tw.tail != nil {
			var err error
			if rows, err = tw.tail(ctx); err != nil {
				return err
			}
		}
		return fn(ctx, rows)
	}
	size := windowRows(v, t)
	var dd *deduper[T]
	if tw.id != nil && size < t.rows {
		plan, err := dupPlan(ctx, t)
		if err != nil {
			return err
		}
		dd = &deduper[T]{plan: plan, id: tw.id}
	}
	r := tw.reader(ctx, t)
	defer r.close()
	next := func(ctx context.Context, lo int64) ([]T, error) {
		hi := min(lo+size, t.rows)
		r.c.serial = lo == 0 && hi < t.rows
		rows, err := r.window(ctx, lo, hi)
		if err != nil {
			return nil, err
		}
		last := hi == t.rows
		if last {
			if err := r.end(ctx); err != nil {
				return nil, err
			}
		}
		rows, nums := skipRows(lo, rows, tw.skip)
		switch {
		case tw.id == nil:
		case dd == nil:
			var d Duplicates
			rows, d = dedupe(rows, tw.id)
			w.noteDuplicates(tw.name, d)
		default:
			rows = dd.window(lo, nums, rows)
			if last {
				w.noteDuplicates(tw.name, dd.d)
			}
		}
		if tw.fix != nil {
			if rows, err = tw.fix(ctx, lo, rows); err != nil {
				return nil, err
			}
		}
		if last && tw.tail != nil {
			more, err := tw.tail(ctx)
			if err != nil {
				return nil, err
			}
			rows = append(rows, more...)
		}
		return rows, nil
	}
	if size >= t.rows {
		rows, err := next(ctx, 0)
		if err != nil {
			return err
		}
		return fn(ctx, rows)
	}
	// Read ahead: the next window is read while fn handles this one.
	rctx, cancel := context.WithCancel(ctx)
	ch := make(chan window[T], 1)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(ch)
		for lo := int64(0); lo < t.rows; lo += size {
			rows, err := next(rctx, lo)
			select {
			case ch <- window[T]{rows, err}:
			case <-rctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	})
	defer func() {
		cancel()
		wg.Wait() // the reader is done with the table before it is closed
	}()
	for win := range ch {
		if win.err != nil {
			return win.err
		}
		if err := fn(ctx, win.rows); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// dupPlan reads the id column of t and returns, by row, the hash of the
// rows whose id hash another row shares: the only rows that may repeat an
// id, so that a table read in windows is deduplicated as a whole one is
// while only those rows are kept aside (see deduper). nil when no two
// rows share a hash.
func dupPlan(ctx context.Context, t *table) (map[int64]uint64, error) {
	hashes := make([]uint64, t.rows)
	seed := maphash.MakeSeed()
	c := newCols(ctx, t)
	if field, err := t.require("id"); err != nil {
		c.fail(err)
	} else {
		c.add(t.scalar(field, isBytesOrNumber(), func(i int, v parquet.Value) error {
			if k := v.Kind(); k == parquet.ByteArray || k == parquet.FixedLenByteArray {
				hashes[c.lo+int64(i)] = maphash.Bytes(seed, v.ByteArray())
			} else {
				hashes[c.lo+int64(i)] = maphash.String(seed, textOf(v))
			}
			return nil
		}))
	}
	if err := c.wait(); err != nil {
		return nil, err
	}
	sorted := slices.Clone(hashes)
	slices.Sort(sorted)
	var shared map[uint64]bool
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			if shared == nil {
				shared = map[uint64]bool{}
			}
			shared[sorted[i]] = true
		}
	}
	if shared == nil {
		return nil, nil
	}
	plan := map[int64]uint64{}
	for r, h := range hashes {
		if shared[h] {
			plan[int64(r)] = h
		}
	}
	return plan, nil
}

// deduper is dedupe across the windows of one table: the rows a dupPlan
// names are compared with the earlier rows of their hash, of which it
// keeps a copy (as read, before any completion), so that a row repeating
// an earlier id is left out and counted as dedupe does.
type deduper[T any] struct {
	plan map[int64]uint64
	kept map[uint64][]T
	id   func(*T) string
	d    Duplicates
}

// skipRows leaves the rows in skip out of a window of rows starting at
// table row lo, and returns the table row of each row left (nil when none
// was left out: row i is then lo+i).
func skipRows[T any](lo int64, rows []T, skip map[int64]bool) ([]T, []int64) {
	if len(skip) == 0 {
		return rows, nil
	}
	nums := make([]int64, 0, len(rows))
	out := rows[:0]
	for i := range rows {
		if r := lo + int64(i); !skip[r] {
			out = append(out, rows[i])
			nums = append(nums, r)
		}
	}
	clear(rows[len(out):])
	return out, nums
}

// window leaves out of rows (whose table rows are nums, or lo on when
// nums is nil) those repeating an earlier row's id.
func (dd *deduper[T]) window(lo int64, nums []int64, rows []T) []T {
	if len(dd.plan) == 0 {
		return rows
	}
	if dd.kept == nil {
		dd.kept = map[uint64][]T{}
	}
	out := rows[:0]
	for i := range rows {
		row := lo + int64(i)
		if nums != nil {
			row = nums[i]
		}
		h, ok := dd.plan[row]
		if !ok {
			out = append(out, rows[i])
			continue
		}
		r := rows[i]
		k := dd.id(&r)
		first := -1
		for j := range dd.kept[h] {
			if dd.id(&dd.kept[h][j]) == k {
				first = j
				break
			}
		}
		if first < 0 {
			dd.kept[h] = append(dd.kept[h], r)
			out = append(out, r)
			continue
		}
		if fields := differ(&dd.kept[h][first], &r); len(fields) == 0 {
			dd.d.Same++
		} else {
			dd.d.Different++
			if dd.d.Example == "" {
				dd.d.Example = fmt.Sprintf("id %q: %s differ", k, strings.Join(fields, ", "))
			}
		}
	}
	clear(rows[len(out):])
	return out
}

func (w *walker) documents(ctx context.Context, _ *links, v Visitor) error {
	if v.Documents == nil {
		return nil
	}
	return walkTable(ctx, w, v, tableWalk[Document]{name: TableDocuments, reader: documentsReader,
		id: func(r *Document) string { return r.ID }, skip: w.q.rows(TableDocuments)}, v.Documents)
}

func (w *walker) textUnits(ctx context.Context, lk *links, v Visitor) error {
	derived := lk.tuEntities
	lk.tuEntities = nil
	if v.TextUnits == nil {
		return nil
	}
	leftEnts, leftRels := w.q.leftEntityIDs, w.q.leftRelIDs
	return walkTable(ctx, w, v, tableWalk[TextUnit]{name: TableTextUnits, reader: textUnitsReader,
		id:   func(r *TextUnit) string { return r.ID },
		skip: w.q.rows(TableTextUnits),
		fix: func(_ context.Context, _ int64, rows []TextUnit) ([]TextUnit, error) {
			if derived != nil {
				for i := range rows {
					rows[i].EntityIDs = append(rows[i].EntityIDs, derived[rows[i].ID]...)
				}
			}
			for i := range rows {
				u := &rows[i]
				u.EntityIDs, w.tuEntityRefs = dropRefs(u.EntityIDs, leftEnts, w.tuEntityRefs)
				u.RelationshipIDs, w.tuRelRefs = dropRefs(u.RelationshipIDs, leftRels, w.tuRelRefs)
			}
			return rows, nil
		}}, v.TextUnits)
}

func (w *walker) entities(ctx context.Context, lk *links, v Visitor) error {
	placeholders, degree, entIndex := lk.placeholders, lk.degree, lk.entIndex
	off, member := lk.memberOff, lk.memberComm
	lk.placeholders, lk.degree, lk.entIndex, lk.memberOff, lk.memberComm = nil, nil, nil, nil, nil
	if v.Entities == nil {
		return nil
	}
	comms := lk.comms
	complete := func(rows []Entity) {
		// One backing array for the window's community lists.
		var flat []string
		for i := range rows {
			e := &rows[i]
			x, ok := entIndex[e.ID]
			if !ok || off[x] == off[x+1] {
				continue
			}
			start := len(flat)
			for _, ci := range member[off[x]:off[x+1]] {
				flat = append(flat, comms[ci].community)
			}
			e.Communities = flat[start:len(flat):len(flat)]
		}
		for i := range rows {
			e := &rows[i]
			if degree != nil && !e.HasDegree && !e.Placeholder {
				e.Degree, e.HasDegree = degree[e.Title], true
			}
		}
	}
	return walkTable(ctx, w, v, tableWalk[Entity]{name: TableEntities, reader: entitiesReader,
		id:   func(r *Entity) string { return r.ID },
		skip: w.q.rows(TableEntities),
		fix: func(_ context.Context, _ int64, rows []Entity) ([]Entity, error) {
			complete(rows)
			return rows, nil
		},
		tail: func(context.Context) ([]Entity, error) {
			rows := slices.Clone(placeholders)
			complete(rows)
			return rows, nil
		}}, v.Entities)
}

func (w *walker) relationships(ctx context.Context, lk *links, v Visitor) error {
	if v.Relationships == nil {
		return nil
	}
	return walkTable(ctx, w, v, tableWalk[Relationship]{name: TableRelationships, reader: relationshipsReader,
		id:   func(r *Relationship) string { return r.ID },
		skip: w.q.rows(TableRelationships),
		fix: func(_ context.Context, _ int64, rows []Relationship) ([]Relationship, error) {
			for i := range rows {
				r := &rows[i]
				r.SourceID, r.TargetID = lk.byTitle[r.Source], lk.byTitle[r.Target]
			}
			return rows, nil
		}}, v.Relationships)
}

// communities hands over the communities merged with their reports. The
// reports are read whole once the first window of communities has been
// read (as a whole read had it: a bad community row is reported ahead of
// a bad report): GraphRAG writes them deepest level first, not in the
// communities' order, so no window of reports lines up with one of
// communities.
func (w *walker) communities(ctx context.Context, lk *links, v Visitor) error {
	comms := lk.comms
	lk.comms = nil
	if v.Communities == nil {
		return nil
	}
	var nrows int64 // community rows; the rest of comms are report-only
	if t := w.tables[TableCommunities]; t != nil {
		nrows = t.rows
	}
	var (
		loaded bool
		reps   []reportRow
		repOf  []int32 // by community row: its report, or -1
		only   []int32 // the reports without a community row, in merged order
	)
	load := func(ctx context.Context) error {
		if loaded {
			return nil
		}
		loaded = true
		t := w.tables[TableCommunityReports]
		if t == nil {
			return nil
		}
		var err error
		if reps, err = readAll(ctx, t, reportsReader(v.OmitReportJSON)); err != nil {
			return err
		}
		nums := make([]string, nrows)
		for i := range nums {
			nums[i] = comms[i].community
		}
		repNums := make([]string, len(reps))
		for i := range reps {
			repNums[i] = reps[i].report.Community
		}
		place, _ := placeReports(nums, repNums, w.q.rows(TableCommunityReports))
		repOf = make([]int32, nrows)
		for i := range repOf {
			repOf[i] = -1
		}
		for i, j := range place {
			switch {
			case j < 0:
			case int64(j) < nrows:
				repOf[j] = int32(i)
			default:
				only = append(only, int32(i))
			}
		}
		return nil
	}
	// complete sets what the links know of community m (in merged order);
	// false for GraphRAG's "no community", which is left out.
	complete := func(m int64, c *Community) bool {
		l := &comms[m]
		if l.none || l.left {
			return false
		}
		c.EntityIDs, c.Parent, c.Weight = l.entityIDs, l.parent, l.weight
		if lk.deriveChildren {
			c.Children = l.children
		}
		c.Children = slices.DeleteFunc(c.Children, noCommunity)
		return true
	}
	return walkTable(ctx, w, v, tableWalk[Community]{name: TableCommunities, reader: communitiesReader,
		fix: func(ctx context.Context, lo int64, rows []Community) ([]Community, error) {
			if err := load(ctx); err != nil {
				return nil, err
			}
			kept := rows[:0]
			for i := range rows {
				m := lo + int64(i)
				c := rows[i]
				if repOf != nil && repOf[m] >= 0 {
					c.Report = reps[repOf[m]].report
				}
				if complete(m, &c) {
					kept = append(kept, c)
				}
			}
			clear(rows[len(kept):])
			return kept, nil
		},
		tail: func(ctx context.Context) ([]Community, error) {
			if err := load(ctx); err != nil {
				return nil, err
			}
			var rows []Community
			for k, i := range only {
				c := reportOnly(reps[i])
				if complete(nrows+int64(k), &c) {
					rows = append(rows, c)
				}
			}
			reps, repOf = nil, nil
			return rows, nil
		}}, v.Communities)
}

func (w *walker) covariates(ctx context.Context, lk *links, v Visitor) error {
	byTitle := lk.byTitle
	lk.byTitle = nil
	if v.Covariates == nil {
		return nil
	}
	return walkTable(ctx, w, v, tableWalk[Covariate]{name: TableCovariates, reader: covariatesReader,
		id:   func(r *Covariate) string { return r.ID },
		skip: w.q.rows(TableCovariates),
		fix: func(_ context.Context, _ int64, rows []Covariate) ([]Covariate, error) {
			for i := range rows {
				c := &rows[i]
				if claimEnd(c.SubjectID) {
					c.SubjectEntityID = byTitle[c.SubjectID]
				}
				if claimEnd(c.ObjectID) {
					c.ObjectEntityID = byTitle[c.ObjectID]
				}
			}
			return rows, nil
		}}, v.Covariates)
}

// dropRefs takes the ids in left out of a row's list, adding how many to
// n. The list may share its backing array with other rows' lists; it is
// only changed within its own length.
func dropRefs(ids []string, left map[string]bool, n int) ([]string, int) {
	if len(left) == 0 {
		return ids, n
	}
	before := len(ids)
	ids = slices.DeleteFunc(ids, func(id string) bool { return left[id] })
	return ids, n + before - len(ids)
}
