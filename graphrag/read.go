package graphrag

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
)

// cols reads several columns, stopping at the first error. It keeps the
// per-table readers flat.
type cols struct {
	ctx context.Context
	t   *table
	err error
}

func (c *cols) str(names ...string) []string { return c.strNum(false, names...) }

func (c *cols) strNum(num bool, names ...string) []string {
	if c.err != nil {
		return nil
	}
	var v []string
	v, c.err = c.t.strOpt(c.ctx, c.t.first(names...), num)
	return v
}

// req reads a required text column: the first of names present.
func (c *cols) req(num bool, names ...string) []string {
	if c.err != nil {
		return nil
	}
	var n string
	if n, c.err = c.t.require(names...); c.err != nil {
		return nil
	}
	var v []string
	v, c.err = c.t.str(c.ctx, n, num)
	return v
}

// reqIntern reads a required text column of repeating values.
func (c *cols) reqIntern(names ...string) []string {
	if c.err != nil {
		return nil
	}
	var n string
	if n, c.err = c.t.require(names...); c.err != nil {
		return nil
	}
	var v []string
	v, c.err = c.t.strIntern(c.ctx, n)
	return v
}

func (c *cols) ints(names ...string) ([]int64, []bool) {
	if c.err != nil {
		return nil, nil
	}
	var v []int64
	var ok []bool
	v, ok, c.err = c.t.ints(c.ctx, c.t.first(names...))
	return v, ok
}

func (c *cols) floats(names ...string) ([]float64, []bool) {
	if c.err != nil {
		return nil, nil
	}
	var v []float64
	var ok []bool
	v, ok, c.err = c.t.floats(c.ctx, c.t.first(names...))
	return v, ok
}

func (c *cols) list(num bool, names ...string) [][]string {
	if c.err != nil {
		return nil
	}
	var v [][]string
	v, c.err = c.t.strList(c.ctx, c.t.first(names...), num)
	return v
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
	c := &cols{ctx: ctx, t: t}
	id := c.req(true, "id")
	hrid := c.strNum(true, "human_readable_id")
	title := c.str("title")
	text := c.str("text", "raw_content")
	tus := c.list(false, "text_unit_ids", "text_units")
	created := c.str("creation_date")
	if c.err != nil {
		return nil, c.err
	}
	meta, err := t.jsonText(ctx, t.first("metadata", "raw_data", "attributes"))
	if err != nil {
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
	c := &cols{ctx: ctx, t: t}
	id := c.req(true, "id")
	hrid := c.strNum(true, "human_readable_id")
	text := c.str("text", "chunk")
	ntok, ntokOK := c.ints("n_tokens")
	docs := c.list(false, "document_ids")
	doc := c.str("document_id")
	ents := c.list(false, "entity_ids")
	rels := c.list(false, "relationship_ids")
	covs := c.list(false, "covariate_ids")
	if c.err != nil {
		return nil, c.err
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

func readEntities(ctx context.Context, t *table) ([]Entity, error) {
	c := &cols{ctx: ctx, t: t}
	id := c.req(true, "id")
	hrid := c.strNum(true, "human_readable_id")
	title := c.req(false, "title", "name")
	typ := c.str("type")
	desc := c.str("description")
	tus := c.list(false, "text_unit_ids")
	freq, freqOK := c.ints("frequency")
	deg, degOK := c.ints("degree")
	if c.err != nil {
		return nil, c.err
	}
	emb, err := t.floatList(ctx, t.first("description_embedding"))
	if err != nil {
		return nil, err
	}
	es := make([]Entity, t.rows)
	for i := range es {
		es[i] = Entity{
			ID:                   id[i],
			HumanReadableID:      at(hrid, i),
			Title:                title[i],
			Type:                 at(typ, i),
			Description:          at(desc, i),
			TextUnitIDs:          at(tus, i),
			Frequency:            at(freq, i),
			HasFrequency:         at(freqOK, i),
			Degree:               at(deg, i),
			HasDegree:            at(degOK, i),
			DescriptionEmbedding: at(emb, i),
		}
	}
	return es, nil
}

func readRelationships(ctx context.Context, t *table) ([]Relationship, error) {
	c := &cols{ctx: ctx, t: t}
	id := c.req(true, "id")
	hrid := c.strNum(true, "human_readable_id")
	src := c.req(false, "source")
	dst := c.req(false, "target")
	desc := c.str("description")
	w, wOK := c.floats("weight")
	rank, rankOK := c.ints("combined_degree", "rank")
	tus := c.list(false, "text_unit_ids")
	if c.err != nil {
		return nil, c.err
	}
	rs := make([]Relationship, t.rows)
	for i := range rs {
		rs[i] = Relationship{
			ID:              id[i],
			HumanReadableID: at(hrid, i),
			Source:          src[i],
			Target:          dst[i],
			Description:     at(desc, i),
			Weight:          at(w, i),
			HasWeight:       at(wOK, i),
			Rank:            at(rank, i),
			HasRank:         at(rankOK, i),
			TextUnitIDs:     at(tus, i),
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
	c := &cols{ctx: ctx, t: t}
	// <= 0.4 keep the Leiden number in `id` (string); later in `community`.
	comm := c.req(true, "community", "id")
	id := c.strNum(true, "id")
	hrid := c.strNum(true, "human_readable_id")
	level, _ := c.ints("level")
	parent, parentOK := c.ints("parent")
	children := c.list(true, "children")
	title := c.str("title")
	rels := c.list(false, "relationship_ids")
	tus := c.list(false, "text_unit_ids")
	period := c.str("period")
	size, sizeOK := c.ints("size")
	if c.err != nil {
		return nil, c.err
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

func readReports(ctx context.Context, t *table) ([]reportRow, error) {
	c := &cols{ctx: ctx, t: t}
	comm := c.req(true, "community")
	id := c.strNum(true, "id")
	hrid := c.strNum(true, "human_readable_id")
	level, _ := c.ints("level")
	parent, parentOK := c.ints("parent")
	children := c.list(true, "children")
	title := c.str("title")
	summary := c.str("summary")
	full := c.str("full_content")
	fullJSON := c.str("full_content_json")
	rank, rankOK := c.floats("rank")
	expl := c.str("rating_explanation", "rank_explanation")
	period := c.str("period")
	size, sizeOK := c.ints("size")
	if c.err != nil {
		return nil, c.err
	}
	findings, err := t.findings(ctx, t.first("findings"))
	if err != nil {
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
	c := &cols{ctx: ctx, t: t}
	id := c.req(true, "id")
	hrid := c.strNum(true, "human_readable_id")
	ctype := c.str("covariate_type")
	typ := c.str("type")
	desc := c.str("description")
	subj := c.str("subject_id")
	obj := c.str("object_id")
	status := c.str("status")
	start := c.str("start_date")
	end := c.str("end_date")
	src := c.str("source_text")
	tu := c.str("text_unit_id")
	if c.err != nil {
		return nil, c.err
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
