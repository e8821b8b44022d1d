package graphrag

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/parquet-go/parquet-go"
)

// reader fills a Dataset from opened tables and records which optional
// columns were present, since some fix-ups apply only when one is missing.
type reader struct {
	ds     *Dataset
	tables map[string]*table

	haveChildren     bool // communities or reports carry `children`
	haveParent       bool
	haveTextUnitEnts bool // text_units carry entity_ids
}

// readAll reads every opened table into the model, then links them.
// Tables that need no other table are read concurrently (one goroutine per
// core: reading is CPU-bound decoding); reports and nodes refer to
// communities and entities and are read after them.
func (r *reader) readAll(ctx context.Context) error {
	has := func(name, col string) bool {
		t := r.tables[name]
		return t != nil && t.has(col)
	}
	r.haveChildren = has(TableCommunities, "children") || has(TableCommunityReports, "children")
	r.haveParent = has(TableCommunities, "parent") || has(TableCommunityReports, "parent")
	r.haveTextUnitEnts = has(TableTextUnits, "entity_ids")

	type step struct {
		name string
		read func(context.Context, *table) error
	}
	independent := []step{
		{TableCommunities, r.communities}, // the largest tables first
		{TableRelationships, r.relationships},
		{TableEntities, r.entities},
		{TableTextUnits, r.textUnits},
		{TableDocuments, r.documents},
		{TableCovariates, r.covariates},
	}
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, len(independent))
	sem := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	var wg sync.WaitGroup
	for i, s := range independent {
		t := r.tables[s.name]
		if t == nil {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := s.read(pctx, t); err != nil {
				errs[i] = err
				cancel()
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	// Report the error that caused the cancellation, not a sibling's
	// context.Canceled.
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	for _, s := range []step{{TableCommunityReports, r.reports}, {TableNodes, r.nodes}} {
		if t := r.tables[s.name]; t != nil {
			if err := s.read(ctx, t); err != nil {
				return err
			}
		}
	}
	r.link()
	return nil
}

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

func (r *reader) documents(ctx context.Context, t *table) error {
	c := &cols{ctx: ctx, t: t}
	id := c.req(true, "id")
	hrid := c.strNum(true, "human_readable_id")
	title := c.str("title")
	text := c.str("text", "raw_content")
	tus := c.list(false, "text_unit_ids", "text_units")
	created := c.str("creation_date")
	if c.err != nil {
		return c.err
	}
	meta, err := t.jsonText(ctx, t.first("metadata", "raw_data", "attributes"))
	if err != nil {
		return err
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
	r.ds.Documents = docs
	return nil
}

func (r *reader) textUnits(ctx context.Context, t *table) error {
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
		return c.err
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
	r.ds.TextUnits = tus
	return nil
}

func (r *reader) entities(ctx context.Context, t *table) error {
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
		return c.err
	}
	emb, err := t.floatList(ctx, t.first("description_embedding"))
	if err != nil {
		return err
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
	r.ds.Entities = es
	return nil
}

func (r *reader) relationships(ctx context.Context, t *table) error {
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
		return c.err
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
	r.ds.Relationships = rs
	return nil
}

// parentText turns GraphRAG's parent number into kgrag's: -1 (and NULL)
// mean a root, stored as "".
func parentText(v int64, ok bool) string {
	if !ok || v < 0 {
		return ""
	}
	return fmt.Sprint(v)
}

func (r *reader) communities(ctx context.Context, t *table) error {
	c := &cols{ctx: ctx, t: t}
	// <= 0.4 keep the Leiden number in `id` (string); later in `community`.
	comm := c.req(true, "community", "id")
	id := c.strNum(true, "id")
	hrid := c.strNum(true, "human_readable_id")
	level, _ := c.ints("level")
	parent, parentOK := c.ints("parent")
	children := c.list(true, "children")
	title := c.str("title")
	ents := c.list(false, "entity_ids")
	rels := c.list(false, "relationship_ids")
	tus := c.list(false, "text_unit_ids")
	period := c.str("period")
	size, sizeOK := c.ints("size")
	if c.err != nil {
		return c.err
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
			EntityIDs:       at(ents, i),
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
	r.ds.Communities = cs
	return nil
}

func (r *reader) reports(ctx context.Context, t *table) error {
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
		return c.err
	}
	findings, err := t.findings(ctx, t.first("findings"))
	if err != nil {
		return err
	}

	index := make(map[string]int, len(r.ds.Communities))
	for i, c := range r.ds.Communities {
		if _, dup := index[c.Community]; !dup {
			index[c.Community] = i
		}
	}
	for i := 0; i < int(t.rows); i++ {
		rep := &CommunityReport{
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
		}
		if j, ok := index[rep.Community]; ok {
			if r.ds.Communities[j].Report == nil {
				r.ds.Communities[j].Report = rep
				continue
			}
			r.ds.Notes = append(r.ds.Notes, fmt.Sprintf("community %s has more than one report; kept the first", rep.Community))
			continue
		}
		// A report without a community row still describes a community.
		index[rep.Community] = len(r.ds.Communities)
		r.ds.Communities = append(r.ds.Communities, Community{
			ID:        rep.Community,
			Community: rep.Community,
			Level:     rep.Level,
			Parent:    parentText(at(parent, i), at(parentOK, i)),
			Children:  at(children, i),
			Title:     rep.Title,
			Period:    rep.Period,
			Size:      rep.Size,
			HasSize:   rep.HasSize,
			Report:    rep,
		})
	}
	return nil
}

// nodes reads community membership from create_final_nodes (<= 0.4): one
// row per entity and level, naming the entity by title and its community
// at that level (NULL when the entity is in none). These releases write no
// parent either, so the hierarchy is derived from the same rows: the
// community of an entity at level L+1 is a child of its community at level
// L (hierarchical Leiden only splits communities).
func (r *reader) nodes(ctx context.Context, t *table) error {
	c := &cols{ctx: ctx, t: t}
	title := c.req(false, "title")
	comm := c.req(true, "community")
	level, levelOK := c.ints("level")
	if c.err != nil {
		return c.err
	}
	byTitle := make(map[string]string, len(r.ds.Entities))
	for _, e := range r.ds.Entities {
		if _, dup := byTitle[e.Title]; !dup {
			byTitle[e.Title] = e.ID
		}
	}
	index := make(map[string]int, len(r.ds.Communities))
	for i, c := range r.ds.Communities {
		if _, dup := index[c.Community]; !dup {
			index[c.Community] = i
		}
	}
	seen := make(map[[2]string]bool)
	unknown := 0
	for i := range title {
		if comm[i] == "" {
			continue
		}
		j, ok := index[comm[i]]
		if !ok {
			continue
		}
		id, ok := byTitle[title[i]]
		if !ok {
			unknown++
			continue
		}
		k := [2]string{comm[i], id}
		if seen[k] {
			continue
		}
		seen[k] = true
		r.ds.Communities[j].EntityIDs = append(r.ds.Communities[j].EntityIDs, id)
	}
	if unknown > 0 {
		r.ds.Notes = append(r.ds.Notes, fmt.Sprintf("%d create_final_nodes rows name no entity; left out of communities", unknown))
	}
	if level == nil || r.haveParent {
		return nil
	}
	type titleLevel struct {
		title string
		level int64
	}
	byLevel := make(map[titleLevel]string, len(title))
	for i := range title {
		if comm[i] != "" && levelOK[i] {
			byLevel[titleLevel{title[i], level[i]}] = comm[i]
		}
	}
	for i := range title {
		if comm[i] == "" || !levelOK[i] {
			continue
		}
		p, ok := byLevel[titleLevel{title[i], level[i] - 1}]
		if !ok {
			continue
		}
		if j, ok := index[comm[i]]; ok && r.ds.Communities[j].Parent == "" && p != comm[i] {
			r.ds.Communities[j].Parent = p
		}
	}
	r.haveParent = true
	return nil
}

func (r *reader) covariates(ctx context.Context, t *table) error {
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
		return c.err
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
	r.ds.Covariates = cs
	return nil
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
