package graphrag

import (
	"context"
	"errors"
	"slices"
)

// Visitor receives a GraphRAG output one table at a time from Walk. Each
// non-nil callback is called exactly once, in field order, after the one
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
	w, err := NewWalker(ctx, dir)
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
// Errors are those of Open.
func NewWalker(ctx context.Context, dir string) (*Walker, error) {
	w, err := openTables(ctx, dir)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		w.close()
		return nil, err
	}
	lk, err := w.link(ctx)
	if err != nil {
		w.close()
		return nil, err
	}
	return &Walker{w: w, lk: lk}, nil
}

// Dataset returns what describes the output (Dir, Release, Tables, Absent,
// Notes and the placeholder counts), complete once NewWalker has returned;
// its row slices are nil.
func (w *Walker) Dataset() *Dataset { return w.w.ds }

// Walk reads each table whole, completes its rows from the links and hands
// it to v, in Visitor order. It can be called once; it checks ctx between
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
}

func (w *walker) close() {
	for _, t := range w.tables {
		t.close()
	}
}

// readTable reads the named table with read, or returns nil rows when the
// table is absent.
func readTable[T any](ctx context.Context, w *walker, name string, read func(context.Context, *table) ([]T, error)) ([]T, error) {
	t := w.tables[name]
	if t == nil {
		return nil, nil
	}
	return read(ctx, t)
}

func (w *walker) documents(ctx context.Context, _ *links, v Visitor) error {
	if v.Documents == nil {
		return nil
	}
	rows, err := readTable(ctx, w, TableDocuments, readDocuments)
	if err != nil {
		return err
	}
	rows, d := dedupe(rows, func(r *Document) string { return r.ID })
	w.noteDuplicates(TableDocuments, d)
	return v.Documents(ctx, rows)
}

func (w *walker) textUnits(ctx context.Context, lk *links, v Visitor) error {
	derived := lk.tuEntities
	lk.tuEntities = nil
	if v.TextUnits == nil {
		return nil
	}
	rows, err := readTable(ctx, w, TableTextUnits, readTextUnits)
	if err != nil {
		return err
	}
	rows, d := dedupe(rows, func(r *TextUnit) string { return r.ID })
	w.noteDuplicates(TableTextUnits, d)
	if derived != nil {
		for i := range rows {
			rows[i].EntityIDs = append(rows[i].EntityIDs, derived[rows[i].ID]...)
		}
	}
	return v.TextUnits(ctx, rows)
}

func (w *walker) entities(ctx context.Context, lk *links, v Visitor) error {
	placeholders, member, degree := lk.placeholders, lk.member, lk.degree
	lk.placeholders, lk.member, lk.degree = nil, nil, nil
	if v.Entities == nil {
		return nil
	}
	rows, err := readTable(ctx, w, TableEntities, readEntities)
	if err != nil {
		return err
	}
	rows, d := dedupe(rows, func(r *Entity) string { return r.ID })
	w.noteDuplicates(TableEntities, d)
	rows = append(rows, placeholders...)
	for i := range rows {
		e := &rows[i]
		e.Communities = member[e.ID]
		if degree != nil && !e.HasDegree && !e.Placeholder {
			e.Degree, e.HasDegree = degree[e.Title], true
		}
	}
	return v.Entities(ctx, rows)
}

func (w *walker) relationships(ctx context.Context, lk *links, v Visitor) error {
	if v.Relationships == nil {
		return nil
	}
	rows, err := readTable(ctx, w, TableRelationships, readRelationships)
	if err != nil {
		return err
	}
	rows, d := dedupe(rows, func(r *Relationship) string { return r.ID })
	w.noteDuplicates(TableRelationships, d)
	for i := range rows {
		r := &rows[i]
		r.SourceID, r.TargetID = lk.byTitle[r.Source], lk.byTitle[r.Target]
	}
	return v.Relationships(ctx, rows)
}

func (w *walker) communities(ctx context.Context, lk *links, v Visitor) error {
	comms := lk.comms
	lk.comms = nil
	if v.Communities == nil {
		return nil
	}
	rows, err := readTable(ctx, w, TableCommunities, readCommunities)
	if err != nil {
		return err
	}
	reps, err := readTable(ctx, w, TableCommunityReports, func(ctx context.Context, t *table) ([]reportRow, error) {
		return readReports(ctx, t, v.OmitReportJSON)
	})
	if err != nil {
		return err
	}
	rows = mergeReports(rows, reps)
	reps = nil
	kept := rows[:0]
	for i := range rows {
		c, l := rows[i], &comms[i]
		if l.none {
			continue
		}
		c.EntityIDs, c.Parent, c.Weight = l.entityIDs, l.parent, l.weight
		if lk.deriveChildren {
			c.Children = l.children
		}
		c.Children = slices.DeleteFunc(c.Children, noCommunity)
		kept = append(kept, c)
	}
	return v.Communities(ctx, kept)
}

func (w *walker) covariates(ctx context.Context, lk *links, v Visitor) error {
	byTitle := lk.byTitle
	lk.byTitle = nil
	if v.Covariates == nil {
		return nil
	}
	rows, err := readTable(ctx, w, TableCovariates, readCovariates)
	if err != nil {
		return err
	}
	rows, d := dedupe(rows, func(r *Covariate) string { return r.ID })
	w.noteDuplicates(TableCovariates, d)
	for i := range rows {
		c := &rows[i]
		if claimEnd(c.SubjectID) {
			c.SubjectEntityID = byTitle[c.SubjectID]
		}
		if claimEnd(c.ObjectID) {
			c.ObjectEntityID = byTitle[c.ObjectID]
		}
	}
	return v.Covariates(ctx, rows)
}
