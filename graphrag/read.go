package graphrag

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"runtime"
	"sync"

	"github.com/parquet-go/parquet-go"
)

// cols reads columns of one table in lockstep, a window of rows at a time
// (see cursor): each window's columns are read concurrently (one goroutine
// per core: decoding is CPU-bound), each into the destination its method
// is given, so that reading a window at a time still uses every core.
// Every column gets its own fork of the table (see table.fork). window
// returns the error of the first column, in call order, that failed, so
// that a window with a bad column reports the same error however the reads
// interleave. The caller closes a cols (wait does).
type cols struct {
	ctx    context.Context
	t      *table
	reads  []colReader // in call order
	failed bool        // a required column is missing: read no more
	// lo is the first row of the window being read, for the readers
	// that fill table-sized slices (str, ints, ...).
	lo int64
	// serial reads the next window's columns one after the other: the
	// first window of a table read in windows loads each column chunk's
	// dictionary, which for a column of distinct ids can be hundreds of
	// megabytes while it is decoded; one at a time, they do not add up.
	serial bool
}

func newCols(ctx context.Context, t *table) *cols {
	return &cols{ctx: ctx, t: t}
}

// add reads r with the other columns of the table; nil (an optional
// column the table lacks) reads nothing.
func (c *cols) add(r colReader) {
	if r == nil {
		return
	}
	if c.failed {
		r.close()
		return
	}
	c.reads = append(c.reads, r)
}

// fail records err for the current position in call order.
func (c *cols) fail(err error) {
	c.reads = append(c.reads, errCol{err})
	c.failed = true
}

// window reads rows [lo, hi) of every column and returns the first error
// in call order.
func (c *cols) window(ctx context.Context, lo, hi int64) error {
	c.lo = lo
	errs := make([]error, len(c.reads))
	procs := max(1, runtime.GOMAXPROCS(0))
	if len(c.reads) == 1 || procs == 1 || c.serial {
		for i, r := range c.reads {
			if errs[i] = r.read(ctx, lo, hi); errs[i] != nil {
				break
			}
		}
	} else {
		sem := make(chan struct{}, procs)
		var wg sync.WaitGroup
		for i, r := range c.reads {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				errs[i] = r.read(ctx, lo, hi)
			})
		}
		wg.Wait()
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// end checks, after the last window, that no column holds more values
// than the table has rows.
func (c *cols) end(ctx context.Context) error {
	for _, r := range c.reads {
		if err := r.end(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (c *cols) close() {
	for _, r := range c.reads {
		r.close()
	}
	c.reads = nil
}

// wait reads every row of every column, checks that none is left and
// closes the columns: the whole table as one window.
func (c *cols) wait() error {
	defer c.close()
	if err := c.window(c.ctx, 0, c.t.rows); err != nil {
		return err
	}
	return c.end(c.ctx)
}

// The slice readers fill one entry per row of the table (for the link
// pass, which reads a table whole); they leave a column the table lacks
// nil.

func (c *cols) str(dst *[]string, names ...string) { c.strNum(dst, false, names...) }

func (c *cols) strNum(dst *[]string, num bool, names ...string) {
	field := c.t.first(names...)
	if field == "" {
		return
	}
	*dst = make([]string, c.t.rows)
	c.add(c.t.strCol(field, num, func(i int, s string) { (*dst)[c.lo+int64(i)] = s }))
}

// req reads a required text column: the first of names present.
func (c *cols) req(dst *[]string, num bool, names ...string) {
	field, err := c.t.require(names...)
	if err != nil {
		c.fail(err)
		return
	}
	*dst = make([]string, c.t.rows)
	c.add(c.t.strCol(field, num, func(i int, s string) { (*dst)[c.lo+int64(i)] = s }))
}

// ints reads an integer column; ok may be nil when the caller needs no
// presence flags.
func (c *cols) ints(dst *[]int64, ok *[]bool, names ...string) {
	field := c.t.first(names...)
	if field == "" {
		return
	}
	*dst = make([]int64, c.t.rows)
	var present []bool
	if ok != nil {
		present = make([]bool, c.t.rows)
		*ok = present
	}
	c.add(c.t.intCol(field, func(i int, n int64) {
		r := c.lo + int64(i)
		(*dst)[r] = n
		if present != nil {
			present[r] = true
		}
	}))
}

func (c *cols) list(dst *[][]string, num bool, names ...string) {
	field := c.t.first(names...)
	if field == "" {
		return
	}
	*dst = make([][]string, c.t.rows)
	c.add(c.t.strListCol(field, num, func(i int, l []string) { (*dst)[c.lo+int64(i)] = l }))
}

// The each* methods read a column into the rows of a window through set,
// which is called for every row that holds a value (a non-empty list), with
// its row in the window, from the column's goroutine. Each set must write
// a field of its own, so that the columns of a table can fill the same
// rows concurrently.

// eachStr reads an optional text column (numbers as text with num).
func (c *cols) eachStr(set func(int, string), num bool, names ...string) {
	if field := c.t.first(names...); field != "" {
		c.add(c.t.strCol(field, num, set))
	}
}

// eachReq reads a required text column: the first of names present.
func (c *cols) eachReq(set func(int, string), num bool, names ...string) {
	field, err := c.t.require(names...)
	if err != nil {
		c.fail(err)
		return
	}
	c.add(c.t.strCol(field, num, set))
}

func (c *cols) eachInt(set func(int, int64), names ...string) {
	c.add(c.t.intCol(c.t.first(names...), set))
}

func (c *cols) eachFloat(set func(int, float64), names ...string) {
	c.add(c.t.floatCol(c.t.first(names...), set))
}

func (c *cols) eachList(set func(int, []string), num bool, names ...string) {
	c.add(c.t.strListCol(c.t.first(names...), num, set))
}

// at returns s[i] or the zero value when the column was absent (nil).
func at[T any](s []T, i int) T {
	if s == nil {
		var z T
		return z
	}
	return s[i]
}

// rowReader reads the rows of one table a window at a time: its columns
// fill rows, a fresh slice per window, and check validates a window once
// every column is read.
type rowReader[T any] struct {
	c     *cols
	rows  []T
	start func(n int) // before a window of n rows is read
	check func(lo int64, rows []T) error
}

// window reads rows [lo, hi). The slice returned is the caller's.
func (r *rowReader[T]) window(ctx context.Context, lo, hi int64) ([]T, error) {
	r.rows = make([]T, hi-lo)
	rows := r.rows
	if r.start != nil {
		r.start(len(rows))
	}
	if err := r.c.window(ctx, lo, hi); err != nil {
		return nil, err
	}
	r.rows = nil
	if r.check != nil {
		if err := r.check(lo, rows); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

func (r *rowReader[T]) end(ctx context.Context) error { return r.c.end(ctx) }
func (r *rowReader[T]) close()                        { r.c.close() }

// readAll reads a table whole with a rowReader: one window.
func readAll[T any](ctx context.Context, t *table, newReader func(context.Context, *table) *rowReader[T]) ([]T, error) {
	r := newReader(ctx, t)
	defer r.close()
	rows, err := r.window(ctx, 0, t.rows)
	if err != nil {
		return nil, err
	}
	return rows, r.end(ctx)
}

func documentsReader(ctx context.Context, t *table) *rowReader[Document] {
	r := &rowReader[Document]{c: newCols(ctx, t)}
	c := r.c
	c.eachReq(func(i int, s string) { r.rows[i].ID = s }, true, "id")
	c.eachStr(func(i int, s string) { r.rows[i].HumanReadableID = s }, true, "human_readable_id")
	c.eachStr(func(i int, s string) { r.rows[i].Title = s }, false, "title")
	c.eachStr(func(i int, s string) { r.rows[i].Text = s }, false, "text", "raw_content")
	c.eachList(func(i int, l []string) { r.rows[i].TextUnitIDs = l }, false, "text_unit_ids", "text_units")
	c.eachStr(func(i int, s string) { r.rows[i].CreationDate = s }, false, "creation_date")
	c.add(t.jsonCol(t.first("metadata", "raw_data", "attributes"), func(i int, s string) { r.rows[i].Metadata = s }))
	return r
}

func textUnitsReader(ctx context.Context, t *table) *rowReader[TextUnit] {
	r := &rowReader[TextUnit]{c: newCols(ctx, t)}
	c := r.c
	var doc []string // the window's document_id, for 3.x
	c.eachReq(func(i int, s string) { r.rows[i].ID = s }, true, "id")
	c.eachStr(func(i int, s string) { r.rows[i].HumanReadableID = s }, true, "human_readable_id")
	c.eachStr(func(i int, s string) { r.rows[i].Text = s }, false, "text", "chunk")
	c.eachInt(func(i int, n int64) { r.rows[i].NTokens, r.rows[i].HasNTokens = n, true }, "n_tokens")
	c.eachList(func(i int, l []string) { r.rows[i].DocumentIDs = l }, false, "document_ids")
	hasDoc := t.has("document_id")
	if hasDoc {
		c.add(t.strCol("document_id", false, func(i int, s string) { doc[i] = s }))
		r.start = func(n int) { doc = make([]string, n) }
	}
	c.eachList(func(i int, l []string) { r.rows[i].EntityIDs = l }, false, "entity_ids")
	c.eachList(func(i int, l []string) { r.rows[i].RelationshipIDs = l }, false, "relationship_ids")
	c.eachList(func(i int, l []string) { r.rows[i].CovariateIDs = l }, false, "covariate_ids")
	r.check = func(_ int64, rows []TextUnit) error {
		for i := range rows {
			if d := at(doc, i); d != "" && rows[i].DocumentIDs == nil {
				rows[i].DocumentIDs = []string{d}
			}
		}
		doc = nil
		return nil
	}
	return r
}

// entitiesReader and relationshipsReader, the tables with the most rows,
// are read in the windows of a Walk (see Visitor.Windows): the rows are
// filled directly from the columns, with no column-sized slice beside them.
func entitiesReader(ctx context.Context, t *table) *rowReader[Entity] {
	r := &rowReader[Entity]{c: newCols(ctx, t)}
	c := r.c
	c.eachReq(func(i int, s string) { r.rows[i].ID = s }, true, "id")
	c.eachStr(func(i int, s string) { r.rows[i].HumanReadableID = s }, true, "human_readable_id")
	c.eachReq(func(i int, s string) { r.rows[i].Title = s }, false, "title", "name")
	c.eachStr(func(i int, s string) { r.rows[i].Type = s }, false, "type")
	c.eachStr(func(i int, s string) { r.rows[i].Description = s }, false, "description")
	c.eachList(func(i int, l []string) { r.rows[i].TextUnitIDs = l }, false, "text_unit_ids")
	c.eachInt(func(i int, n int64) { r.rows[i].Frequency, r.rows[i].HasFrequency = n, true }, "frequency")
	c.eachInt(func(i int, n int64) { r.rows[i].Degree, r.rows[i].HasDegree = n, true }, "degree")
	c.add(t.floatListCol(t.first("description_embedding"), func(i int, f float64) {
		r.rows[i].DescriptionEmbedding = append(r.rows[i].DescriptionEmbedding, f)
	}))
	return r
}

func relationshipsReader(ctx context.Context, t *table) *rowReader[Relationship] {
	r := &rowReader[Relationship]{c: newCols(ctx, t)}
	c := r.c
	c.eachReq(func(i int, s string) { r.rows[i].ID = s }, true, "id")
	c.eachStr(func(i int, s string) { r.rows[i].HumanReadableID = s }, true, "human_readable_id")
	c.eachReq(func(i int, s string) { r.rows[i].Source = s }, false, "source")
	c.eachReq(func(i int, s string) { r.rows[i].Target = s }, false, "target")
	c.eachStr(func(i int, s string) { r.rows[i].Description = s }, false, "description")
	c.eachFloat(func(i int, f float64) { r.rows[i].Weight, r.rows[i].HasWeight = f, true }, "weight")
	c.eachInt(func(i int, n int64) { r.rows[i].Rank, r.rows[i].HasRank = n, true }, "combined_degree", "rank")
	c.eachList(func(i int, l []string) { r.rows[i].TextUnitIDs = l }, false, "text_unit_ids")
	return r
}

// parentText turns GraphRAG's parent number into kgrag's: -1 (and NULL)
// mean a root, stored as "".
func parentText(v int64, ok bool) string {
	if !ok || v < 0 {
		return ""
	}
	return fmt.Sprint(v)
}

// communitiesReader reads the communities table. entity_ids is left out
// (EntityIDs stay nil): the link pass has read it already and Walk hands
// its lists over rather than reading the column twice.
func communitiesReader(ctx context.Context, t *table) *rowReader[Community] {
	r := &rowReader[Community]{c: newCols(ctx, t)}
	c := r.c
	// <= 0.4 keep the Leiden number in `id` (string); later in `community`.
	c.eachReq(func(i int, s string) { r.rows[i].Community = s }, true, "community", "id")
	c.eachStr(func(i int, s string) { r.rows[i].ID = s }, true, "id")
	c.eachStr(func(i int, s string) { r.rows[i].HumanReadableID = s }, true, "human_readable_id")
	c.eachInt(func(i int, n int64) { r.rows[i].Level = n }, "level")
	c.eachInt(func(i int, n int64) { r.rows[i].Parent = parentText(n, true) }, "parent")
	c.eachList(func(i int, l []string) { r.rows[i].Children = l }, true, "children")
	c.eachStr(func(i int, s string) { r.rows[i].Title = s }, false, "title")
	c.eachList(func(i int, l []string) { r.rows[i].RelationshipIDs = l }, false, "relationship_ids")
	c.eachList(func(i int, l []string) { r.rows[i].TextUnitIDs = l }, false, "text_unit_ids")
	c.eachStr(func(i int, s string) { r.rows[i].Period = s }, false, "period")
	c.eachInt(func(i int, n int64) { r.rows[i].Size, r.rows[i].HasSize = n, true }, "size")
	r.check = func(_ int64, rows []Community) error {
		for i := range rows {
			if rows[i].ID == "" {
				rows[i].ID = rows[i].Community
			}
		}
		return nil
	}
	return r
}

// reportRow is one row of the reports table with the columns a report-only
// community takes from it.
type reportRow struct {
	report   *CommunityReport
	parent   string
	children []string
}

func reportsReader(omitJSON bool) func(ctx context.Context, t *table) *rowReader[reportRow] {
	return func(ctx context.Context, t *table) *rowReader[reportRow] {
		r := &rowReader[reportRow]{c: newCols(ctx, t)}
		c := r.c
		var reps []CommunityReport // the window's, one allocation
		rep := func(i int) *CommunityReport { return &reps[i] }
		r.start = func(n int) { reps = make([]CommunityReport, n) }
		c.eachReq(func(i int, s string) { rep(i).Community = s }, true, "community")
		c.eachStr(func(i int, s string) { rep(i).ID = s }, true, "id")
		c.eachStr(func(i int, s string) { rep(i).HumanReadableID = s }, true, "human_readable_id")
		c.eachInt(func(i int, n int64) { rep(i).Level = n }, "level")
		c.eachInt(func(i int, n int64) { r.rows[i].parent = parentText(n, true) }, "parent")
		c.eachList(func(i int, l []string) { r.rows[i].children = l }, true, "children")
		c.eachStr(func(i int, s string) { rep(i).Title = s }, false, "title")
		c.eachStr(func(i int, s string) { rep(i).Summary = s }, false, "summary")
		c.eachStr(func(i int, s string) { rep(i).FullContent = s }, false, "full_content")
		if !omitJSON {
			c.eachStr(func(i int, s string) { rep(i).FullContentJSON = s }, false, "full_content_json")
		}
		c.eachFloat(func(i int, f float64) { rep(i).Rank, rep(i).HasRank = f, true }, "rank")
		c.eachStr(func(i int, s string) { rep(i).RankExplanation = s }, false, "rating_explanation", "rank_explanation")
		c.eachStr(func(i int, s string) { rep(i).Period = s }, false, "period")
		c.eachInt(func(i int, n int64) { rep(i).Size, rep(i).HasSize = n, true }, "size")
		c.add(t.findingsCol(t.first("findings"), func(i int, f []Finding) { rep(i).Findings = f }))
		r.check = func(_ int64, rows []reportRow) error {
			for i := range rows {
				rows[i].report = &reps[i]
			}
			reps = nil
			return nil
		}
		return r
	}
}

// placeReports decides where each report goes, given the Leiden numbers of
// the community rows and of the report rows: place[i] is the index of report
// i's community in the merged list, which is the community rows followed by
// one community per report whose number no row has (in report order), or -1
// for a second report of the same community (the first is kept) and for
// the report rows left out (nil for none). The link pass and the walk both
// merge by it, so they agree on the order.
func placeReports(comms, reports []string, left map[int64]bool) (place []int, dups []string) {
	index := make(map[string]int, len(comms)+len(reports))
	for i, c := range comms {
		if _, dup := index[c]; !dup {
			index[c] = i
		}
	}
	has := make([]bool, len(comms), len(comms)+len(reports))
	place = make([]int, len(reports))
	for i, c := range reports {
		if left[int64(i)] {
			place[i] = -1
			continue
		}
		j, ok := index[c]
		switch {
		case !ok:
			j = len(has)
			index[c] = j
			has = append(has, true)
		case has[j]:
			dups = append(dups, c)
			j = -1
		default:
			has[j] = true
		}
		place[i] = j
	}
	return place, dups
}

// reportOnly returns the community that a report without a community row
// still describes.
func reportOnly(rr reportRow) Community {
	rep := rr.report
	return Community{
		ID:        rep.Community,
		Community: rep.Community,
		Level:     rep.Level,
		Parent:    rr.parent,
		Children:  rr.children,
		Title:     rep.Title,
		Period:    rep.Period,
		Size:      rep.Size,
		HasSize:   rep.HasSize,
		Report:    rep,
	}
}

func covariatesReader(ctx context.Context, t *table) *rowReader[Covariate] {
	r := &rowReader[Covariate]{c: newCols(ctx, t)}
	c := r.c
	c.eachReq(func(i int, s string) { r.rows[i].ID = s }, true, "id")
	c.eachStr(func(i int, s string) { r.rows[i].HumanReadableID = s }, true, "human_readable_id")
	c.eachStr(func(i int, s string) { r.rows[i].CovariateType = s }, false, "covariate_type")
	c.eachStr(func(i int, s string) { r.rows[i].Type = s }, false, "type")
	c.eachStr(func(i int, s string) { r.rows[i].Description = s }, false, "description")
	c.eachStr(func(i int, s string) { r.rows[i].SubjectID = s }, false, "subject_id")
	c.eachStr(func(i int, s string) { r.rows[i].ObjectID = s }, false, "object_id")
	c.eachStr(func(i int, s string) { r.rows[i].Status = s }, false, "status")
	c.eachStr(func(i int, s string) { r.rows[i].StartDate = s }, false, "start_date")
	c.eachStr(func(i int, s string) { r.rows[i].EndDate = s }, false, "end_date")
	c.eachStr(func(i int, s string) { r.rows[i].SourceText = s }, false, "source_text")
	c.eachStr(func(i int, s string) { r.rows[i].TextUnitID = s }, false, "text_unit_id")
	return r
}

// jsonCol reads a metadata-like column as text: strings as they are, NULL
// columns as "", and nested values (pandas dicts become structs or maps) as
// JSON with sorted keys. Nested values go through parquet-go's row reader,
// which is slow but only ever meets the documents table.
func (t *table) jsonCol(field string, set func(i int, s string)) colReader {
	if field == "" {
		return nil
	}
	c := t.pf.Root().Column(field)
	if c.Leaf() {
		if isNullType(c) {
			return nil
		}
		if bytesKind(c) {
			return t.strCol(field, false, set)
		}
	}
	return &jsonRows{t: t, field: field, set: set}
}

// jsonRows reads one nested column row by row.
type jsonRows struct {
	t     *table
	field string
	rd    *parquet.Reader
	set   func(i int, s string)
}

func (j *jsonRows) read(ctx context.Context, lo, hi int64) error {
	if j.rd == nil {
		j.rd = parquet.NewReader(j.t.pf)
	}
	for r := lo; r < hi; r++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		row := map[string]any{}
		if err := j.rd.Read(&row); err != nil {
			if err == io.EOF {
				return j.t.err(j.field, r, ErrRowCount)
			}
			return j.t.err(j.field, r, err)
		}
		v, ok := row[j.field]
		if !ok || v == nil {
			continue
		}
		b, err := json.Marshal(jsonable(v))
		if err != nil {
			return j.t.err(j.field, r, err)
		}
		j.set(int(r-lo), string(b))
	}
	return nil
}

func (j *jsonRows) end(context.Context) error { return nil }

func (j *jsonRows) close() {
	if j.rd != nil {
		j.rd.Close()
		j.rd = nil
	}
}

// jsonable turns the byte slices that parquet-go's row reader returns for
// strings into strings, so that JSON shows text rather than base64.
func jsonable(v any) any {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = jsonable(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = jsonable(e)
		}
		return s
	case float64:
		// NaN is pandas' null in a struct field whose rows differ; JSON
		// has no NaN nor infinity, and pandas' own to_json writes null.
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
	case float32:
		if f := float64(x); math.IsNaN(f) || math.IsInf(f, 0) {
			return nil
		}
	}
	return v
}
