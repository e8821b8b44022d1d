package graphrag

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/parquet-go/parquet-go"
)

// cols reads the columns of one table concurrently (one goroutine per
// core: decoding is CPU-bound), each into the destination its method is
// given, so that reading a table at a time still uses every core. Every
// read gets its own fork of the table (see table.fork). wait returns the
// error of the first column, in call order, that failed, so that a table
// with a bad column reports the same error however the reads interleave.
type cols struct {
	ctx    context.Context
	t      *table
	sem    chan struct{}
	wg     sync.WaitGroup
	errs   []*error // one per call, in call order; each goroutine sets its own
	failed bool     // a required column is missing: read no more
}

func newCols(ctx context.Context, t *table) *cols {
	return &cols{ctx: ctx, t: t, sem: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))}
}

// do runs read concurrently with the other reads of the table.
func (c *cols) do(read func(ctx context.Context, t *table) error) {
	if c.failed {
		return
	}
	err := new(error)
	c.errs = append(c.errs, err)
	c.wg.Add(1)
	c.sem <- struct{}{}
	go func() {
		defer c.wg.Done()
		defer func() { <-c.sem }()
		*err = read(c.ctx, c.t.fork())
	}()
}

// fail records err for the current position in call order.
func (c *cols) fail(err error) {
	c.errs = append(c.errs, &err)
	c.failed = true
}

// wait waits for every read and returns the first error in call order.
func (c *cols) wait() error {
	c.wg.Wait()
	for _, err := range c.errs {
		if *err != nil {
			return *err
		}
	}
	return nil
}

func (c *cols) str(dst *[]string, names ...string) { c.strNum(dst, false, names...) }

func (c *cols) strNum(dst *[]string, num bool, names ...string) {
	field := c.t.first(names...)
	c.do(func(ctx context.Context, t *table) (err error) {
		*dst, err = t.strOpt(ctx, field, num)
		return err
	})
}

// req reads a required text column: the first of names present.
func (c *cols) req(dst *[]string, num bool, names ...string) {
	field, err := c.t.require(names...)
	if err != nil {
		c.fail(err)
		return
	}
	c.do(func(ctx context.Context, t *table) (err error) {
		*dst, err = t.str(ctx, field, num)
		return err
	})
}

// ints reads an integer column; ok may be nil when the caller needs no
// presence flags.
func (c *cols) ints(dst *[]int64, ok *[]bool, names ...string) {
	field := c.t.first(names...)
	c.do(func(ctx context.Context, t *table) error {
		v, present, err := t.ints(ctx, field)
		*dst = v
		if ok != nil {
			*ok = present
		}
		return err
	})
}

func (c *cols) floats(dst *[]float64, ok *[]bool, names ...string) {
	field := c.t.first(names...)
	c.do(func(ctx context.Context, t *table) (err error) {
		*dst, *ok, err = t.floats(ctx, field)
		return err
	})
}

func (c *cols) list(dst *[][]string, num bool, names ...string) {
	field := c.t.first(names...)
	c.do(func(ctx context.Context, t *table) (err error) {
		*dst, err = t.strList(ctx, field, num)
		return err
	})
}

// The each* methods read a column into the rows through set, which is
// called for every row that holds a value (a non-empty list), from the
// column's goroutine. Each set must write a field of its own, so that the
// columns of a table can fill the same rows concurrently.

// eachStr reads an optional text column (numbers as text with num).
func (c *cols) eachStr(set func(int, string), num bool, names ...string) {
	field := c.t.first(names...)
	if field == "" {
		return
	}
	c.do(func(ctx context.Context, t *table) error { return t.strEach(ctx, field, num, set) })
}

// noEmpty returns an ErrEmptyKey *Error for the first of n rows whose
// value in the key column field (the first of names present) is null or
// empty.
func noEmpty(t *table, n int, get func(i int) string, names ...string) error {
	for i := range n {
		if get(i) == "" {
			return t.err(t.first(names...), int64(i), ErrEmptyKey)
		}
	}
	return nil
}

// eachReq reads a required text column: the first of names present.
func (c *cols) eachReq(set func(int, string), num bool, names ...string) {
	field, err := c.t.require(names...)
	if err != nil {
		c.fail(err)
		return
	}
	c.do(func(ctx context.Context, t *table) error { return t.strEach(ctx, field, num, set) })
}

func (c *cols) eachInt(set func(int, int64), names ...string) {
	field := c.t.first(names...)
	c.do(func(ctx context.Context, t *table) error { return t.intsEach(ctx, field, set) })
}

func (c *cols) eachFloat(set func(int, float64), names ...string) {
	field := c.t.first(names...)
	c.do(func(ctx context.Context, t *table) error { return t.floatsEach(ctx, field, set) })
}

func (c *cols) eachList(set func(int, []string), num bool, names ...string) {
	field := c.t.first(names...)
	c.do(func(ctx context.Context, t *table) error { return t.strListEach(ctx, field, num, set) })
}

// at returns s[i] or the zero value when the column was absent (nil).
func at[T any](s []T, i int) T {
	if s == nil {
		var z T
		return z
	}
	return s[i]
}

func readDocuments(ctx context.Context, t *table) ([]Document, error) {
	c := newCols(ctx, t)
	var (
		id, hrid, title, text, created []string
		tus                            [][]string
	)
	c.req(&id, true, "id")
	c.strNum(&hrid, true, "human_readable_id")
	c.str(&title, "title")
	c.str(&text, "text", "raw_content")
	c.list(&tus, false, "text_unit_ids", "text_units")
	c.str(&created, "creation_date")
	var meta []string
	metaField := t.first("metadata", "raw_data", "attributes")
	c.do(func(ctx context.Context, t *table) (err error) {
		meta, err = t.jsonText(ctx, metaField)
		return err
	})
	if err := c.wait(); err != nil {
		return nil, err
	}
	if err := noEmpty(t, len(id), func(i int) string { return id[i] }, "id"); err != nil {
		return nil, err
	}
	docs := make([]Document, t.rows)
	for i := range docs {
		docs[i] = Document{
			ID:              id[i],
			HumanReadableID: at(hrid, i),
			Title:           at(title, i),
			Text:            at(text, i),
			TextUnitIDs:     at(tus, i),
			CreationDate:    at(created, i),
			Metadata:        at(meta, i),
		}
	}
	return docs, nil
}

func readTextUnits(ctx context.Context, t *table) ([]TextUnit, error) {
	c := newCols(ctx, t)
	var (
		id, hrid, text, doc    []string
		ntok                   []int64
		ntokOK                 []bool
		docs, ents, rels, covs [][]string
	)
	c.req(&id, true, "id")
	c.strNum(&hrid, true, "human_readable_id")
	c.str(&text, "text", "chunk")
	c.ints(&ntok, &ntokOK, "n_tokens")
	c.list(&docs, false, "document_ids")
	c.str(&doc, "document_id")
	c.list(&ents, false, "entity_ids")
	c.list(&rels, false, "relationship_ids")
	c.list(&covs, false, "covariate_ids")
	if err := c.wait(); err != nil {
		return nil, err
	}
	if err := noEmpty(t, len(id), func(i int) string { return id[i] }, "id"); err != nil {
		return nil, err
	}
	tus := make([]TextUnit, t.rows)
	for i := range tus {
		tu := TextUnit{
			ID:              id[i],
			HumanReadableID: at(hrid, i),
			Text:            at(text, i),
			NTokens:         at(ntok, i),
			HasNTokens:      at(ntokOK, i),
			DocumentIDs:     at(docs, i),
			EntityIDs:       at(ents, i),
			RelationshipIDs: at(rels, i),
			CovariateIDs:    at(covs, i),
		}
		if d := at(doc, i); d != "" && tu.DocumentIDs == nil {
			tu.DocumentIDs = []string{d}
		}
		tus[i] = tu
	}
	return tus, nil
}

// readEntities and readRelationships, the tables with the most rows, fill
// their rows directly from the columns (the each* readers), so that reading
// them needs no column-sized slice per column beside the rows.
func readEntities(ctx context.Context, t *table) ([]Entity, error) {
	es := make([]Entity, t.rows)
	c := newCols(ctx, t)
	c.eachReq(func(i int, s string) { es[i].ID = s }, true, "id")
	c.eachStr(func(i int, s string) { es[i].HumanReadableID = s }, true, "human_readable_id")
	c.eachReq(func(i int, s string) { es[i].Title = s }, false, "title", "name")
	c.eachStr(func(i int, s string) { es[i].Type = s }, false, "type")
	c.eachStr(func(i int, s string) { es[i].Description = s }, false, "description")
	c.eachList(func(i int, l []string) { es[i].TextUnitIDs = l }, false, "text_unit_ids")
	c.eachInt(func(i int, n int64) { es[i].Frequency, es[i].HasFrequency = n, true }, "frequency")
	c.eachInt(func(i int, n int64) { es[i].Degree, es[i].HasDegree = n, true }, "degree")
	var emb [][]float64
	c.do(func(ctx context.Context, t *table) (err error) {
		emb, err = t.floatList(ctx, t.first("description_embedding"))
		return err
	})
	if err := c.wait(); err != nil {
		return nil, err
	}
	for i := range emb {
		es[i].DescriptionEmbedding = emb[i]
	}
	return es, nil
}

func readRelationships(ctx context.Context, t *table) ([]Relationship, error) {
	rs := make([]Relationship, t.rows)
	c := newCols(ctx, t)
	c.eachReq(func(i int, s string) { rs[i].ID = s }, true, "id")
	c.eachStr(func(i int, s string) { rs[i].HumanReadableID = s }, true, "human_readable_id")
	c.eachReq(func(i int, s string) { rs[i].Source = s }, false, "source")
	c.eachReq(func(i int, s string) { rs[i].Target = s }, false, "target")
	c.eachStr(func(i int, s string) { rs[i].Description = s }, false, "description")
	c.eachFloat(func(i int, f float64) { rs[i].Weight, rs[i].HasWeight = f, true }, "weight")
	c.eachInt(func(i int, n int64) { rs[i].Rank, rs[i].HasRank = n, true }, "combined_degree", "rank")
	c.eachList(func(i int, l []string) { rs[i].TextUnitIDs = l }, false, "text_unit_ids")
	if err := c.wait(); err != nil {
		return nil, err
	}
	for _, k := range []struct {
		col string
		get func(i int) string
	}{{"id", func(i int) string { return rs[i].ID }}, {"source", func(i int) string { return rs[i].Source }}, {"target", func(i int) string { return rs[i].Target }}} {
		if err := noEmpty(t, len(rs), k.get, k.col); err != nil {
			return nil, err
		}
	}
	return rs, nil
}

// parentText turns GraphRAG's parent number into kgrag's: -1 (and NULL)
// mean a root, stored as "".
func parentText(v int64, ok bool) string {
	if !ok || v < 0 {
		return ""
	}
	return fmt.Sprint(v)
}

// readCommunities reads the communities table. entity_ids is left out
// (EntityIDs stay nil): the link pass has read it already and Walk hands its
// lists over rather than reading the column twice.
func readCommunities(ctx context.Context, t *table) ([]Community, error) {
	c := newCols(ctx, t)
	var (
		comm, id, hrid, title, period []string
		level, parent, size           []int64
		parentOK, sizeOK              []bool
		children, rels, tus           [][]string
	)
	// <= 0.4 keep the Leiden number in `id` (string); later in `community`.
	c.req(&comm, true, "community", "id")
	c.strNum(&id, true, "id")
	c.strNum(&hrid, true, "human_readable_id")
	c.ints(&level, nil, "level")
	c.ints(&parent, &parentOK, "parent")
	c.list(&children, true, "children")
	c.str(&title, "title")
	c.list(&rels, false, "relationship_ids")
	c.list(&tus, false, "text_unit_ids")
	c.str(&period, "period")
	c.ints(&size, &sizeOK, "size")
	if err := c.wait(); err != nil {
		return nil, err
	}
	cs := make([]Community, t.rows)
	for i := range cs {
		cs[i] = Community{
			ID:              at(id, i),
			HumanReadableID: at(hrid, i),
			Community:       comm[i],
			Level:           at(level, i),
			Parent:          parentText(at(parent, i), at(parentOK, i)),
			Children:        at(children, i),
			Title:           at(title, i),
			RelationshipIDs: at(rels, i),
			TextUnitIDs:     at(tus, i),
			Period:          at(period, i),
			Size:            at(size, i),
			HasSize:         at(sizeOK, i),
		}
		if cs[i].ID == "" {
			cs[i].ID = cs[i].Community
		}
	}
	return cs, nil
}

// reportRow is one row of the reports table with the columns a report-only
// community takes from it.
type reportRow struct {
	report   *CommunityReport
	parent   string
	children []string
}

func readReports(ctx context.Context, t *table, omitJSON bool) ([]reportRow, error) {
	c := newCols(ctx, t)
	var (
		comm, id, hrid, title, summary, full, fullJSON, expl, period []string
		level, parent, size                                          []int64
		parentOK, rankOK, sizeOK                                     []bool
		children                                                     [][]string
		rank                                                         []float64
	)
	c.req(&comm, true, "community")
	c.strNum(&id, true, "id")
	c.strNum(&hrid, true, "human_readable_id")
	c.ints(&level, nil, "level")
	c.ints(&parent, &parentOK, "parent")
	c.list(&children, true, "children")
	c.str(&title, "title")
	c.str(&summary, "summary")
	c.str(&full, "full_content")
	if !omitJSON {
		c.str(&fullJSON, "full_content_json")
	}
	c.floats(&rank, &rankOK, "rank")
	c.str(&expl, "rating_explanation", "rank_explanation")
	c.str(&period, "period")
	c.ints(&size, &sizeOK, "size")
	var findings [][]Finding
	c.do(func(ctx context.Context, t *table) (err error) {
		findings, err = t.findings(ctx, t.first("findings"))
		return err
	})
	if err := c.wait(); err != nil {
		return nil, err
	}
	rows := make([]reportRow, t.rows)
	for i := range rows {
		rows[i] = reportRow{
			report: &CommunityReport{
				ID:              at(id, i),
				HumanReadableID: at(hrid, i),
				Community:       comm[i],
				Level:           at(level, i),
				Title:           at(title, i),
				Summary:         at(summary, i),
				FullContent:     at(full, i),
				FullContentJSON: at(fullJSON, i),
				Rank:            at(rank, i),
				HasRank:         at(rankOK, i),
				RankExplanation: at(expl, i),
				Findings:        at(findings, i),
				Period:          at(period, i),
				Size:            at(size, i),
				HasSize:         at(sizeOK, i),
			},
			parent:   parentText(at(parent, i), at(parentOK, i)),
			children: at(children, i),
		}
	}
	return rows, nil
}

// placeReports decides where each report goes, given the Leiden numbers of
// the community rows and of the report rows: place[i] is the index of report
// i's community in the merged list, which is the community rows followed by
// one community per report whose number no row has (in report order), or -1
// for a second report of the same community (the first is kept). The link
// pass and the full read both merge by it, so they agree on the order.
func placeReports(comms, reports []string) (place []int, dups []string) {
	index := make(map[string]int, len(comms)+len(reports))
	for i, c := range comms {
		if _, dup := index[c]; !dup {
			index[c] = i
		}
	}
	has := make([]bool, len(comms), len(comms)+len(reports))
	place = make([]int, len(reports))
	for i, c := range reports {
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

// mergeReports attaches each report to its community and appends a
// community for each report that no community row has, by placeReports.
func mergeReports(cs []Community, reps []reportRow) []Community {
	nums := make([]string, len(cs))
	for i := range cs {
		nums[i] = cs[i].Community
	}
	repNums := make([]string, len(reps))
	for i := range reps {
		repNums[i] = reps[i].report.Community
	}
	place, _ := placeReports(nums, repNums)
	for i, rr := range reps {
		j := place[i]
		switch {
		case j < 0:
		case j < len(cs):
			cs[j].Report = rr.report
		default:
			// A report without a community row still describes a community.
			rep := rr.report
			cs = append(cs, Community{
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
			})
		}
	}
	return cs
}

func readCovariates(ctx context.Context, t *table) ([]Covariate, error) {
	c := newCols(ctx, t)
	var (
		id, hrid, ctype, typ, desc, subj, obj, status, start, end, src, tu []string
	)
	c.req(&id, true, "id")
	c.strNum(&hrid, true, "human_readable_id")
	c.str(&ctype, "covariate_type")
	c.str(&typ, "type")
	c.str(&desc, "description")
	c.str(&subj, "subject_id")
	c.str(&obj, "object_id")
	c.str(&status, "status")
	c.str(&start, "start_date")
	c.str(&end, "end_date")
	c.str(&src, "source_text")
	c.str(&tu, "text_unit_id")
	if err := c.wait(); err != nil {
		return nil, err
	}
	if err := noEmpty(t, len(id), func(i int) string { return id[i] }, "id"); err != nil {
		return nil, err
	}
	cs := make([]Covariate, t.rows)
	for i := range cs {
		cs[i] = Covariate{
			ID:              id[i],
			HumanReadableID: at(hrid, i),
			CovariateType:   at(ctype, i),
			Type:            at(typ, i),
			Description:     at(desc, i),
			SubjectID:       at(subj, i),
			ObjectID:        at(obj, i),
			Status:          at(status, i),
			StartDate:       at(start, i),
			EndDate:         at(end, i),
			SourceText:      at(src, i),
			TextUnitID:      at(tu, i),
		}
	}
	return cs, nil
}

// jsonText reads a metadata-like column as text: strings as they are, NULL
// columns as "", and nested values (pandas dicts become structs or maps) as
// JSON with sorted keys. Nested values go through parquet-go's row reader,
// which is slow but only ever meets the documents table.
func (t *table) jsonText(ctx context.Context, field string) ([]string, error) {
	if field == "" {
		return nil, nil
	}
	c := t.pf.Root().Column(field)
	if c.Leaf() {
		if isNullType(c) {
			return nil, nil
		}
		if bytesKind(c) {
			return t.str(ctx, field, false)
		}
	}
	out := make([]string, t.rows)
	rd := parquet.NewReader(t.pf)
	defer rd.Close()
	for i := 0; i < int(t.rows); i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		row := map[string]any{}
		if err := rd.Read(&row); err != nil {
			if err == io.EOF {
				return nil, t.err(field, int64(i), ErrRowCount)
			}
			return nil, t.err(field, int64(i), err)
		}
		v, ok := row[field]
		if !ok || v == nil {
			continue
		}
		b, err := json.Marshal(jsonable(v))
		if err != nil {
			return nil, t.err(field, int64(i), err)
		}
		out[i] = string(b)
	}
	return out, nil
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
	}
	return v
}
