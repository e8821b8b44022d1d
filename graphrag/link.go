package graphrag

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// links are the facts that cross tables: relationship and claim ends as
// entity ids (with placeholders), community membership seen from the
// entities, children derived from parents, membership and parents from
// create_final_nodes, text unit entity lists derived from entities, and
// community weights. Walk computes them before it hands over any table,
// from only the columns they need, so that each table can be completed
// when it is read and no table has to wait in memory for another.
type links struct {
	// byTitle maps an entity title to the id of the first entity with
	// that title, placeholders included.
	byTitle      map[string]string
	placeholders []Entity
	// entIndex maps an entity id to its entity: the first row of the
	// entities table with that id, or for a placeholder the number of
	// rows plus its position in placeholders.
	entIndex map[string]int32
	// member lists, by entity (entIndex), the communities (indices into
	// comms) that list it, in merged community order: those of entity e
	// are memberComm[memberOff[e]:memberOff[e+1]]. Entities are numbered
	// rather than keyed by id, so that a million memberships cost a few
	// megabytes, not a map of slices.
	memberOff, memberComm []int32
	// tuEntities maps a text unit id to the ids of the entities naming it,
	// in entity row order; nil when text_units has entity_ids.
	tuEntities map[string][]string
	// comms are the communities in merged order (community rows, then one
	// per report whose community has no row).
	comms          []commLink
	deriveChildren bool
	// degree maps an entity title to its degree where the entities table
	// has none (releases before 2.0); nil when it has.
	degree map[string]int64
}

// commLink is what the link pass knows of one community.
type commLink struct {
	community string
	parent    string
	children  []string // derived from parents; nil when not derived
	entityIDs []string // entity_ids, or the members create_final_nodes names
	weight    float64
	// none marks GraphRAG's community -1 (any negative number): "in no
	// community", which Walk leaves out with its report and memberships.
	none bool
	// left marks a malformed row (a number that is blank or no integer),
	// which Walk leaves out the same way.
	left bool
}

// noCommunity reports whether a Leiden number is GraphRAG's "no
// community" (-1).
func noCommunity(num string) bool { return strings.HasPrefix(num, "-") }

// link runs the link pass over the opened tables.
func (w *walker) link(ctx context.Context) (*links, error) {
	lk := &links{}
	w.q = newQuarantine()
	if err := w.linkIDs(ctx); err != nil {
		return nil, err
	}
	if err := w.linkIntFaults(ctx); err != nil {
		return nil, err
	}
	ents, err := w.linkEntities(ctx, lk)
	if err != nil {
		return nil, err
	}
	if err := w.linkCommunities(ctx, lk, ents.ids); err != nil {
		return nil, err
	}
	if t := w.tables[TableNodes]; t != nil && w.ds.Release.nodeMembership() {
		if err := w.linkNodes(ctx, t, lk); err != nil {
			return nil, err
		}
	}
	if err := w.linkEnds(ctx, lk); err != nil {
		return nil, err
	}
	if t := w.tables[TableEntities]; t != nil && !t.has("degree") {
		if err := w.linkDegrees(ctx, lk, ents.titles); err != nil {
			return nil, err
		}
	}
	if lk.deriveChildren = !w.haveChildren && w.haveParent; lk.deriveChildren {
		index := make(map[string]int, len(lk.comms))
		for i, c := range lk.comms {
			if _, dup := index[c.community]; !dup {
				index[c.community] = i
			}
		}
		for _, c := range lk.comms {
			if c.parent == "" {
				continue
			}
			if p, ok := index[c.parent]; ok {
				lk.comms[p].children = append(lk.comms[p].children, c.community)
			}
		}
	}
	none := 0
	for i := range lk.comms {
		c := &lk.comms[i]
		if c.left {
			c.entityIDs, c.children = nil, nil
			continue
		}
		if noCommunity(c.community) {
			c.none, c.entityIDs, c.children = true, nil, nil
			none++
		}
	}
	if none > 0 {
		w.ds.Notes = append(w.ds.Notes, fmt.Sprintf("%d communities (and their reports) numbered -1, GraphRAG's \"no community\", left out", none))
	}
	for k, p := range lk.placeholders {
		if _, ok := lk.entIndex[p.ID]; !ok {
			lk.entIndex[p.ID] = int32(len(ents.ids) + k)
		}
	}
	w.dropDanglingMembers(lk)
	members := make([][]string, len(lk.comms))
	for i, c := range lk.comms {
		members[i] = c.entityIDs
	}
	tusOf := func(id string) []int32 {
		if e, ok := lk.entIndex[id]; ok && int(e) < len(ents.ids) {
			return ents.tus[ents.tuOff[e]:ents.tuOff[e+1]]
		}
		return nil
	}
	for i, wt := range occurrenceWeights(members, tusOf, ents.nTU) {
		lk.comms[i].weight = wt
	}
	n := len(ents.ids) + len(lk.placeholders)
	lk.memberOff = make([]int32, n+1)
	for _, c := range lk.comms {
		for _, id := range c.entityIDs {
			lk.memberOff[lk.entIndex[id]+1]++
		}
	}
	for e := range n {
		lk.memberOff[e+1] += lk.memberOff[e]
	}
	lk.memberComm = make([]int32, lk.memberOff[n])
	next := slices.Clone(lk.memberOff[:n])
	for ci, c := range lk.comms {
		for _, id := range c.entityIDs {
			e := lk.entIndex[id]
			lk.memberComm[next[e]] = int32(ci)
			next[e]++
		}
	}
	return lk, nil
}

// dropDanglingMembers takes out of the communities' members the entity ids
// that no entity (nor placeholder) has, as the merged tables of `graphrag
// update` hold them, and notes how many and which: such a membership would
// put an entity in a community that is not in the graph.
//
// A membership naming a left-out entity is dropped too, and counted with
// what was left out (Dataset.LeftOut) rather than as dangling.
func (w *walker) dropDanglingMembers(lk *links) {
	known := func(id string) bool { _, ok := lk.entIndex[id]; return ok }
	dropped, left, example := 0, 0, ""
	for i := range lk.comms {
		c := &lk.comms[i]
		c.entityIDs = slices.DeleteFunc(c.entityIDs, func(id string) bool {
			if known(id) {
				return false
			}
			if w.q.leftEntityIDs[id] {
				left++
				return true
			}
			dropped++
			if example == "" {
				example = fmt.Sprintf("community %s names %q", c.community, id)
			}
			return true
		})
	}
	w.q.ref(TableCommunities, "entity_ids", CauseLeftOutEntity, left)
	if dropped > 0 {
		w.ds.DanglingMembers = dropped
		w.ds.Notes = append(w.ds.Notes, fmt.Sprintf("%d community memberships name an entity id that the entities table lacks (e.g. %s): left out", dropped, example))
	}
}

// entityLinks are the entity columns the link pass reads; they are dropped
// when it ends. Text units are numbered (tuNames), and each entity's are
// tus[tuOff[i]:tuOff[i+1]], so that the lists of a million entities need
// no slice each.
type entityLinks struct {
	ids, titles []string
	tuOff, tus  []int32
	tuNames     []string
	nTU         int
}

// linkEntities reads entity ids, titles and text units, fills byTitle and
// entIndex and, where text_units lacks entity_ids, tuEntities.
func (w *walker) linkEntities(ctx context.Context, lk *links) (entityLinks, error) {
	var e entityLinks
	t := w.tables[TableEntities]
	if t != nil {
		c := newCols(ctx, t)
		c.req(&e.ids, true, "id")
		c.req(&e.titles, false, "title", "name")
		if field := t.first("text_unit_ids"); field != "" {
			tuIndex := map[string]int32{}
			count := make([]int32, t.rows+1)
			c.add(t.list(field, "", isBytes(), func(_ *table, i, _ int, v parquet.Value) error {
				b := v.ByteArray()
				n, ok := tuIndex[string(b)]
				if !ok {
					n = int32(len(e.tuNames))
					name := string(b)
					tuIndex[name] = n
					e.tuNames = append(e.tuNames, name)
				}
				e.tus = append(e.tus, n)
				count[c.lo+int64(i)+1]++
				return nil
			}))
			e.tuOff = count
		}
		if err := c.wait(); err != nil {
			return e, err
		}
		titleCol := t.first("title", "name")
		for i := range e.ids {
			switch {
			case blank(e.ids[i]):
				w.q.add(TableEntities, "id", CauseBlank, int64(i))
			case blank(e.titles[i]):
				w.q.add(TableEntities, titleCol, CauseBlank, int64(i))
			}
		}
	}
	if e.tuOff == nil {
		e.tuOff = make([]int32, len(e.ids)+1)
	}
	for i := range len(e.ids) {
		e.tuOff[i+1] += e.tuOff[i]
	}
	e.nTU = len(e.tuNames)
	lk.byTitle = make(map[string]string, len(e.ids))
	lk.entIndex = make(map[string]int32, len(e.ids))
	for i, title := range e.titles {
		if w.q.has(TableEntities, int64(i)) {
			continue
		}
		if _, dup := lk.byTitle[title]; !dup {
			lk.byTitle[title] = e.ids[i]
		}
		if _, dup := lk.entIndex[e.ids[i]]; !dup {
			lk.entIndex[e.ids[i]] = int32(i)
		}
	}
	// What the left-out rows held that no kept row has: the rows naming
	// only those are left out or lose the reference.
	w.q.leftTitles, w.q.leftEntityIDs = map[string]bool{}, map[string]bool{}
	for r := range w.q.rows(TableEntities) {
		if title := e.titles[r]; !blank(title) {
			if _, kept := lk.byTitle[title]; !kept {
				w.q.leftTitles[title] = true
			}
		}
		if id := e.ids[r]; !blank(id) {
			if _, kept := lk.entIndex[id]; !kept {
				w.q.leftEntityIDs[id] = true
			}
		}
	}
	if !w.haveTextUnitEnts {
		lk.tuEntities = make(map[string][]string)
		for i := range e.ids {
			if w.q.has(TableEntities, int64(i)) {
				continue
			}
			for _, tu := range e.tus[e.tuOff[i]:e.tuOff[i+1]] {
				name := e.tuNames[tu]
				lk.tuEntities[name] = append(lk.tuEntities[name], e.ids[i])
			}
		}
	}
	e.tuNames = nil
	return e, nil
}

// linkCommunities reads the Leiden numbers, parents and members of the
// community rows and the numbers and parents of the reports, and lays out
// the merged communities (noting reports beyond a community's first).
func (w *walker) linkCommunities(ctx context.Context, lk *links, ids []string) error {
	var nums []string
	if t := w.tables[TableCommunities]; t != nil {
		c := newCols(ctx, t)
		var (
			parent   []int64
			parentOK []bool
			ents     [][]string
		)
		c.req(&nums, true, "community", "id")
		c.ints(&parent, &parentOK, "parent")
		c.listIDs(&ents, lk.entIndex, ids, "entity_ids")
		if err := c.wait(); err != nil {
			return err
		}
		lk.comms = make([]commLink, len(nums))
		numCol := t.first("community", "id")
		for i := range nums {
			lk.comms[i] = commLink{
				community: nums[i],
				parent:    parentText(at(parent, i), at(parentOK, i)),
				entityIDs: at(ents, i),
			}
			if cause := communityFault(nums[i]); cause != "" {
				w.q.add(TableCommunities, numCol, cause, int64(i))
				lk.comms[i].left = true
			}
		}
	}
	t := w.tables[TableCommunityReports]
	if t == nil {
		return nil
	}
	c := newCols(ctx, t)
	var (
		repNums  []string
		parent   []int64
		parentOK []bool
	)
	c.req(&repNums, true, "community")
	c.ints(&parent, &parentOK, "parent")
	if err := c.wait(); err != nil {
		return err
	}
	for i := range repNums {
		if cause := communityFault(repNums[i]); cause != "" {
			w.q.add(TableCommunityReports, "community", cause, int64(i))
		}
	}
	place, dups := placeReports(nums, repNums, w.q.rows(TableCommunityReports))
	for _, d := range dups {
		w.ds.Notes = append(w.ds.Notes, fmt.Sprintf("community %s has more than one report; kept the first", d))
	}
	for i, j := range place {
		if j >= len(lk.comms) {
			lk.comms = append(lk.comms, commLink{
				community: repNums[i],
				parent:    parentText(at(parent, i), at(parentOK, i)),
			})
		}
	}
	return nil
}

// linkNodes reads community membership from create_final_nodes (<= 0.4):
// one row per entity and level, naming the entity by title and its
// community at that level (NULL when the entity is in none). These releases
// write no parent either, so the hierarchy is derived from the same rows:
// the community of an entity at level L+1 is a child of its community at
// level L (hierarchical Leiden only splits communities). It runs before
// placeholders exist, so rows naming no entity of the table are left out.
func (w *walker) linkNodes(ctx context.Context, t *table, lk *links) error {
	c := newCols(ctx, t)
	var (
		title, comm []string
		level       []int64
		levelOK     []bool
	)
	c.req(&title, false, "title")
	c.req(&comm, true, "community")
	c.ints(&level, &levelOK, "level")
	if err := c.wait(); err != nil {
		return err
	}
	index := make(map[string]int, len(lk.comms))
	for i, c := range lk.comms {
		if _, dup := index[c.community]; !dup {
			index[c.community] = i
		}
	}
	seen := make(map[[2]string]bool)
	unknown, left := 0, 0
	for i := range title {
		if comm[i] == "" || noCommunity(comm[i]) {
			continue
		}
		j, ok := index[comm[i]]
		if !ok {
			continue
		}
		id, ok := lk.byTitle[title[i]]
		if !ok {
			if w.q.leftTitles[title[i]] {
				left++
			} else {
				unknown++
			}
			continue
		}
		k := [2]string{comm[i], id}
		if seen[k] {
			continue
		}
		seen[k] = true
		lk.comms[j].entityIDs = append(lk.comms[j].entityIDs, id)
	}
	w.q.ref(TableNodes, "title", CauseLeftOutEntity, left)
	if unknown > 0 {
		w.ds.Notes = append(w.ds.Notes, fmt.Sprintf("%d create_final_nodes rows name no entity; left out of communities", unknown))
	}
	if level == nil || w.haveParent {
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
		if j, ok := index[comm[i]]; ok && lk.comms[j].parent == "" && p != comm[i] {
			lk.comms[j].parent = p
		}
	}
	w.haveParent = true
	return nil
}

// linkDegrees finds the degree of every title of the entities table for
// releases whose entities table has no degree column
// (all before 2.0): create_final_nodes's degree where that table has the
// title (GraphRAG's own number, repeated on each level's row), else the
// degree computed from the relationships as GraphRAG computes it (see
// Degrees). Where both are known and differ, create_final_nodes's is kept
// and a note counts them. Placeholders get none, as in the releases that
// write degree themselves.
func (w *walker) linkDegrees(ctx context.Context, lk *links, titles []string) error {
	var computed Degrees
	if t := w.tables[TableRelationships]; t != nil {
		var src, dst []string
		c := newCols(ctx, t)
		c.str(&src, "source")
		c.str(&dst, "target")
		if err := c.wait(); err != nil {
			return err
		}
		for i := range src {
			if !w.q.has(TableRelationships, int64(i)) {
				computed.Add(src[i], at(dst, i))
			}
		}
	}
	var nodes map[string]int64
	if t := w.tables[TableNodes]; t != nil && t.has("degree") {
		var (
			title []string
			deg   []int64
			ok    []bool
		)
		c := newCols(ctx, t)
		c.req(&title, false, "title")
		c.ints(&deg, &ok, "degree")
		if err := c.wait(); err != nil {
			return err
		}
		nodes = make(map[string]int64, len(title))
		for i := range title {
			if _, dup := nodes[title[i]]; !dup && at(ok, i) {
				nodes[title[i]] = deg[i]
			}
		}
	}
	lk.degree = make(map[string]int64, len(titles))
	var fromNodes, fromRels, differ int
	example := ""
	add := func(title string) {
		if _, done := lk.degree[title]; done {
			return
		}
		c := computed.Of(title)
		n, ok := nodes[title]
		if !ok {
			lk.degree[title] = c
			fromRels++
			return
		}
		lk.degree[title] = n
		fromNodes++
		if n != c {
			differ++
			if example == "" {
				example = fmt.Sprintf("%q: %d, its relationships give %d", title, n, c)
			}
		}
	}
	for _, title := range titles {
		add(title)
	}
	switch {
	case fromRels == 0:
		w.ds.Notes = append(w.ds.Notes, fmt.Sprintf("entity degree read from create_final_nodes (%d titles): the entities table of this release has none", fromNodes))
	case fromNodes == 0:
		w.ds.Notes = append(w.ds.Notes, fmt.Sprintf("entity degree computed from the relationships as GraphRAG computes it (%d titles): no table of this output keeps it", fromRels))
	default:
		w.ds.Notes = append(w.ds.Notes, fmt.Sprintf("entity degree read from create_final_nodes for %d titles and computed from the relationships, as GraphRAG computes it, for %d that create_final_nodes lacks", fromNodes, fromRels))
	}
	if differ > 0 {
		w.ds.Notes = append(w.ds.Notes, fmt.Sprintf("create_final_nodes gives %d titles another degree than their relationships do (e.g. %s); kept create_final_nodes's", differ, example))
	}
	return nil
}

// linkEnds leaves out the relationships and claims that are malformed (a
// blank id or relationship end) or name a left-out entity, and creates
// the placeholder entities for the rest, in the order GraphRAG's rows
// name them: relationships (source, then target, row by row), then claims
// (subject, then object). A title that no entity has gets a placeholder
// entity (ID PlaceholderID(title)) so that no relationship or claim is
// dropped; GraphRAG itself writes such relationships (its 3.x test output
// holds 84) and claims about entities it never extracted.
func (w *walker) linkEnds(ctx context.Context, lk *links) error {
	made := map[string]bool{}
	resolve := func(title string) bool {
		if id, ok := lk.byTitle[title]; ok {
			return made[id]
		}
		id := PlaceholderID(title)
		lk.byTitle[title] = id
		made[id] = true
		lk.placeholders = append(lk.placeholders, Entity{ID: id, Title: title, Placeholder: true})
		return true
	}
	if t := w.tables[TableRelationships]; t != nil {
		// Only ends that name no entity matter here: collecting them per
		// column and merging by row keeps GraphRAG's order without
		// holding every end of every relationship.
		var (
			src, dst []titleMiss
			blankIDs []int64
		)
		c := newCols(ctx, t)
		c.blanks(&blankIDs, "id")
		c.unknownTitles(&src, lk.byTitle, "source")
		c.unknownTitles(&dst, lk.byTitle, "target")
		if err := c.wait(); err != nil {
			return err
		}
		for _, r := range blankIDs {
			w.q.add(TableRelationships, "id", CauseBlank, r)
		}
		ends := mergeEnds(src, dst)
		// Malformed first, so that a row with a blank end and a left-out
		// one counts against the limit.
		for _, m := range ends {
			if blank(m.title) {
				w.q.add(TableRelationships, m.col, CauseBlank, int64(m.row))
			}
		}
		for _, m := range ends {
			if w.q.leftTitles[m.title] {
				w.q.add(TableRelationships, m.col, CauseLeftOutEntity, int64(m.row))
			}
		}
		last := -1
		for _, m := range ends {
			if w.q.has(TableRelationships, int64(m.row)) {
				continue
			}
			resolve(m.title)
			if m.row != last {
				w.ds.PlaceholderRelationships++
				last = m.row
			}
		}
		if rows := w.q.rows(TableRelationships); rows != nil {
			ids, err := leftIDs(ctx, t, rows)
			if err != nil {
				return err
			}
			w.q.leftRelIDs = ids
		}
	}
	if t := w.tables[TableCovariates]; t != nil {
		c := newCols(ctx, t)
		var (
			subj, obj []string
			blankIDs  []int64
		)
		c.blanks(&blankIDs, "id")
		c.str(&subj, "subject_id")
		c.str(&obj, "object_id")
		if err := c.wait(); err != nil {
			return err
		}
		for _, r := range blankIDs {
			w.q.add(TableCovariates, "id", CauseBlank, r)
		}
		prose, example := 0, ""
		for i := 0; i < int(t.rows); i++ {
			s, o := at(subj, i), at(obj, i)
			switch {
			case claimEnd(s) && w.q.leftTitles[s]:
				w.q.add(TableCovariates, "subject_id", CauseLeftOutEntity, int64(i))
			case claimEnd(o) && w.q.leftTitles[o]:
				w.q.add(TableCovariates, "object_id", CauseLeftOutEntity, int64(i))
			}
			if w.q.has(TableCovariates, int64(i)) {
				continue
			}
			var ps, po bool
			if claimEnd(s) {
				ps = resolve(s)
			}
			if claimEnd(o) {
				po = resolve(o)
			}
			if ps || po {
				w.ds.PlaceholderCovariates++
			}
			for _, v := range []string{s, o} {
				if IsProse(v) {
					prose++
					if example == "" {
						example = v
					}
				}
			}
		}
		if prose > 0 {
			if len(example) > 80 {
				example = example[:80] + "..."
			}
			w.ds.Notes = append(w.ds.Notes, fmt.Sprintf("%d claim subjects or objects are sentences, not entity names (e.g. %q): those claims name no entity there", prose, example))
		}
	}
	w.ds.Placeholders = len(lk.placeholders)
	return nil
}

// endMiss is a relationship end that names no kept entity.
type endMiss struct {
	titleMiss
	col string // "source" or "target"
}

// mergeEnds merges the unknown sources and targets by row, a row's
// source first: the order in which GraphRAG's rows name them.
func mergeEnds(src, dst []titleMiss) []endMiss {
	out := make([]endMiss, 0, len(src)+len(dst))
	for len(src) > 0 || len(dst) > 0 {
		if len(dst) == 0 || len(src) > 0 && src[0].row <= dst[0].row {
			out = append(out, endMiss{src[0], "source"})
			src = src[1:]
		} else {
			out = append(out, endMiss{dst[0], "target"})
			dst = dst[1:]
		}
	}
	return out
}

// leftIDs returns the ids of the given rows of t that no other row has:
// the ids that references to the left-out rows use. The id column is read
// twice, only when rows are left out: once for those rows' ids, once to
// drop the ids a kept row shares.
func leftIDs(ctx context.Context, t *table, rows map[int64]bool) (map[string]bool, error) {
	ids := map[string]bool{}
	scan := func(keep func(row int64, v parquet.Value)) error {
		c := newCols(ctx, t)
		field, err := t.require("id")
		if err != nil {
			return err
		}
		c.add(t.scalar(field, isBytesOrNumber(), func(i int, v parquet.Value) error {
			keep(c.lo+int64(i), v)
			return nil
		}))
		return c.wait()
	}
	err := scan(func(row int64, v parquet.Value) {
		if rows[row] {
			if id := textOf(v); !blank(id) {
				ids[id] = true
			}
		}
	})
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	err = scan(func(row int64, v parquet.Value) {
		if !rows[row] {
			if k := v.Kind(); k == parquet.ByteArray || k == parquet.FixedLenByteArray {
				if b := v.ByteArray(); ids[string(b)] {
					delete(ids, string(b))
				}
				return
			}
			delete(ids, textOf(v))
		}
	})
	return ids, err
}

// communityFault says why a community number is malformed ("" when it is
// not): GraphRAG writes an integer (-1 for "no community").
func communityFault(num string) string {
	if blank(num) {
		return CauseBlank
	}
	if _, err := strconv.ParseInt(num, 10, 64); err != nil {
		return CauseNotInteger
	}
	return ""
}

// linkIDs leaves out the documents and text units whose id is blank; the
// other tables' keys are read with their links.
func (w *walker) linkIDs(ctx context.Context) error {
	for _, name := range []string{TableDocuments, TableTextUnits} {
		t := w.tables[name]
		if t == nil {
			continue
		}
		var rows []int64
		c := newCols(ctx, t)
		c.blanks(&rows, "id")
		if err := c.wait(); err != nil {
			return err
		}
		for _, r := range rows {
			w.q.add(name, "id", CauseBlank, r)
		}
	}
	return nil
}

// titleMiss is a row whose entity title no entity has.
type titleMiss struct {
	row   int
	title string
}

// unknownTitles reads into dst, in row order, the rows of the required
// text column (the first of names present) whose value is no key of
// byTitle, which it only reads. NULL reads as "", as the full read has it.
func (c *cols) unknownTitles(dst *[]titleMiss, byTitle map[string]string, names ...string) {
	field, err := c.t.require(names...)
	if err != nil {
		c.fail(err)
		return
	}
	_, emptyKnown := byTitle[""]
	var next int64 // the first row not yet seen
	nulls := func(to int64) {
		for ; next < to; next++ {
			if !emptyKnown {
				*dst = append(*dst, titleMiss{row: int(next)})
			}
		}
	}
	c.add(afterCol{c.t.scalar(field, isBytes(), func(i int, v parquet.Value) error {
		row := c.lo + int64(i)
		nulls(row)
		next = row + 1
		if b := v.ByteArray(); len(b) > 0 || !emptyKnown {
			if _, ok := byTitle[string(b)]; !ok {
				*dst = append(*dst, titleMiss{row: int(row), title: string(b)})
			}
		}
		return nil
	}), func(_, hi int64) { nulls(hi) }})
}

// afterCol calls after once each window of its column is read.
type afterCol struct {
	colReader
	after func(lo, hi int64)
}

func (a afterCol) read(ctx context.Context, lo, hi int64) error {
	if err := a.colReader.read(ctx, lo, hi); err != nil {
		return err
	}
	a.after(lo, hi)
	return nil
}

// ComputeWeights sets every Community.Weight to kgrag's occurrence weight:
// the number of distinct text units in which the community's member
// entities (EntityIDs) occur (the union of their TextUnitIDs), divided by
// the largest such number over all communities. Weights are thus in [0, 1],
// and all 0 when no community has any text unit.
//
// This is the "occurrence" weight of GraphRAG's local search
// (_compute_community_weights in query/context_builder/community_context.py:
// len(set(text_unit_ids of the entities whose community_ids hold the
// community)), divided by the largest). It matches GraphRAG >= 1.0, where an
// entity's community_ids are all its communities (read_indexer_entities
// explodes communities.entity_ids), with one difference: GraphRAG normalises
// over the reports passed to the context builder for one query, kgrag over
// every community of the dataset, so that the weight is a stable property of
// a community that can be stored (gr:weight). GraphRAG <= 0.4 gave each
// entity only its deepest community, so its weights of parent communities
// were smaller than kgrag's.
func (d *Dataset) ComputeWeights() {
	members := make([][]string, len(d.Communities))
	for i, c := range d.Communities {
		members[i] = c.EntityIDs
	}
	// Number the text units and find each id's first entity.
	tuIndex := map[string]int32{}
	ents := make(map[string][]int32, len(d.Entities))
	for _, e := range d.Entities {
		if _, dup := ents[e.ID]; dup {
			continue
		}
		nums := make([]int32, 0, len(e.TextUnitIDs))
		for _, id := range e.TextUnitIDs {
			n, ok := tuIndex[id]
			if !ok {
				n = int32(len(tuIndex))
				tuIndex[id] = n
			}
			nums = append(nums, n)
		}
		ents[e.ID] = nums
	}
	for i, wt := range occurrenceWeights(members, func(id string) []int32 { return ents[id] }, len(tuIndex)) {
		d.Communities[i].Weight = wt
	}
}

// occurrenceWeights computes the weights ComputeWeights describes for
// communities with the given member entity ids, where tusOf gives the text
// units (numbered below nTU) of the entity with an id (the first entity
// with it).
func occurrenceWeights(members [][]string, tusOf func(id string) []int32, nTU int) []float64 {
	stamp := make([]int32, nTU)
	counts := make([]int, len(members))
	most := 0
	for ci, ids := range members {
		gen := int32(ci + 1)
		n := 0
		for _, id := range ids {
			for _, t := range tusOf(id) {
				if stamp[t] != gen {
					stamp[t] = gen
					n++
				}
			}
		}
		counts[ci] = n
		most = max(most, n)
	}
	weights := make([]float64, len(members))
	if most == 0 {
		return weights
	}
	for ci, n := range counts {
		weights[ci] = float64(n) / float64(most)
	}
	return weights
}

// listIDs reads a list column of entity ids (communities' entity_ids)
// into one list per row, each id that entIndex knows as the entity's own
// string (ids[entIndex[id]]), so that a million memberships make no new
// string; an id it does not know (a placeholder's, or one the entities
// table lacks) is copied.
func (c *cols) listIDs(dst *[][]string, entIndex map[string]int32, ids []string, names ...string) {
	field := c.t.first(names...)
	if field == "" {
		return
	}
	*dst = make([][]string, c.t.rows)
	var flat []string
	var rowOf []int32
	c.add(afterCol{c.t.list(field, "", isBytes(), func(_ *table, i, _ int, v parquet.Value) error {
		b := v.ByteArray()
		if e, ok := entIndex[string(b)]; ok {
			flat = append(flat, ids[e])
		} else {
			flat = append(flat, string(b))
		}
		rowOf = append(rowOf, int32(c.lo+int64(i)))
		return nil
	}), func(_, _ int64) {
		for i := 0; i < len(flat); {
			j := i + 1
			for j < len(flat) && rowOf[j] == rowOf[i] {
				j++
			}
			(*dst)[rowOf[i]] = flat[i:j:j]
			i = j
		}
		flat, rowOf = nil, nil
	}})
}

// intFields are the integer columns of each table that are no key, as the
// readers read them (the first present of each group): keep it in step
// with the eachInt and ints calls of read.go and this file.
func intFields(table string) [][]string {
	switch table {
	case TableTextUnits:
		return [][]string{{"n_tokens"}}
	case TableEntities:
		return [][]string{{"frequency"}, {"degree"}}
	case TableRelationships:
		return [][]string{{"combined_degree", "rank"}}
	case TableCommunities, TableCommunityReports:
		return [][]string{{"level"}, {"parent"}, {"size"}}
	case TableNodes:
		return [][]string{{"level"}, {"degree"}}
	}
	return nil
}

// linkIntFaults counts the values of the integer columns that are not
// integers (2.5, infinity: a writer's slip in one row), which the readers
// take as missing. Only a column stored as floating point can hold one
// (pandas writes an int column with a null in it as double), so the
// others cost nothing. NaN is pandas' null and missing anyway.
func (w *walker) linkIntFaults(ctx context.Context) error {
	for _, name := range append(tableNames(), TableNodes) {
		t := w.tables[name]
		if t == nil {
			continue
		}
		var fields []string
		for _, group := range intFields(name) {
			field := t.first(group...)
			if field == "" {
				continue
			}
			col := t.pf.Root().Column(field)
			if k := col.Type().Kind(); col.Leaf() && (k == parquet.Float || k == parquet.Double) {
				fields = append(fields, field)
			}
		}
		if len(fields) == 0 {
			continue
		}
		c := newCols(ctx, t)
		bad := make([][]int64, len(fields)) // by field: the columns are read concurrently
		for k, field := range fields {
			c.add(t.scalar(field, isNumber(), func(i int, v parquet.Value) error {
				if f := floatOf(v); !math.IsNaN(f) && !integral(f) {
					bad[k] = append(bad[k], c.lo+int64(i))
				}
				return nil
			}))
		}
		if err := c.wait(); err != nil {
			return err
		}
		for k, field := range fields {
			for _, row := range bad[k] {
				w.q.value(name, field, CauseNotInteger, row)
			}
		}
	}
	return nil
}
