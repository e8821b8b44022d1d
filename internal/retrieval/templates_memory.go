package retrieval

import (
	"cmp"
	"context"
	"slices"
	"strconv"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/snapshot"
)

var _ TemplatesBackend = (*templatesMemoryBackend)(nil)

// templatesMemoryBackend answers TemplatesBackend lookups from a graph snapshot,
// exactly as the sparqlq templates answer them over the graph `kgrag
// load` writes from the same dataset (package ontology): it reads the
// same fields the mapping writes (text units' entity_ids for
// gr:has_entity, entities' communities for gr:in_community, relationship
// ends by entity id) and leaves out what the mapping leaves out
// (placeholder entities have no description, degree or community). It
// is safe for concurrent use.
type templatesMemoryBackend struct {
	*MemoryBackend // the same snapshot, and its entity and relationship lookups
}

// selected returns the entities among ids (each once), as the templates'
// `?entity gr:id ?selected ; a gr:Entity` find them.
func (b *templatesMemoryBackend) selected(ids []string) (map[string]*graphrag.Entity, error) {
	out := make(map[string]*graphrag.Entity, len(ids))
	for _, id := range ids {
		if _, dup := out[id]; dup {
			continue
		}
		i, ok, err := b.g.EntityIndex(id)
		if err != nil {
			return nil, err
		}
		if ok {
			e, err := b.g.Entity(i)
			if err != nil {
				return nil, err
			}
			out[id] = &e
		}
	}
	return out, nil
}

// canonicalHRID is a human_readable_id as a store returns it: the mapping
// writes an integer one as xsd:integer, whose lexical form is canonical.
func canonicalHRID(s string) string {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return strconv.FormatInt(n, 10)
	}
	return s
}

// TemplateEntities implements TemplatesBackend.
func (b *templatesMemoryBackend) TemplateEntities(ctx context.Context, ids []string) ([]EntityRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sel, err := b.selected(ids)
	if err != nil {
		return nil, err
	}
	var out []EntityRecord
	for _, e := range sel {
		r := EntityRecord{ID: canonicalHRID(e.HumanReadableID), EntityID: e.ID, Title: e.Title}
		if !e.Placeholder {
			r.Description = e.Description
			if e.HasDegree {
				r.Rank = e.Degree
			}
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(x, y EntityRecord) int { return cmp.Compare(x.EntityID, y.EntityID) })
	return out, nil
}

// seedRel is a relationship with the keys the relationships template
// orders by; a missing rank or weight sorts below every value, as an
// unbound variable does in SPARQL.
type seedRel struct {
	r                RelationshipRecord
	ends             int
	hasRank, hasWght bool
	srcHRID, tgtHRID string // the ends' human_readable_ids
}

// touching returns every relationship with at least one end among ids
// and both ends entities of the graph, each once, with its selected ends
// counted.
func (b *templatesMemoryBackend) touching(ids []string) ([]seedRel, error) {
	sel, err := b.selected(ids)
	if err != nil {
		return nil, err
	}
	seen := make(map[string]bool)
	var rels []seedRel
	for id := range sel {
		list, err := b.relationshipsOf(id)
		if err != nil {
			return nil, err
		}
		for _, i := range list {
			r, err := b.g.Relationship(i)
			if err != nil {
				return nil, err
			}
			se, okS, err := b.end(r.SourceID)
			if err != nil {
				return nil, err
			}
			te, okT, err := b.end(r.TargetID)
			if err != nil {
				return nil, err
			}
			if seen[r.ID] || !okS || !okT { // both ends must be entities of the graph
				continue
			}
			seen[r.ID] = true
			sr := seedRel{r: RelationshipRecord{
				ID: canonicalHRID(r.HumanReadableID), RelationshipID: r.ID,
				Source: se.Title, Target: te.Title,
				SourceID: r.SourceID, TargetID: r.TargetID, Description: r.Description,
			}, hasRank: r.HasRank, hasWght: r.HasWeight,
				srcHRID: canonicalHRID(se.HumanReadableID), tgtHRID: canonicalHRID(te.HumanReadableID)}
			if r.HasRank {
				sr.r.Rank = r.Rank
			}
			if r.HasWeight {
				sr.r.Weight = r.Weight
			}
			if sel[r.SourceID] != nil {
				sr.ends++
			}
			if sel[r.TargetID] != nil {
				sr.ends++
			}
			rels = append(rels, sr)
		}
	}
	return rels, nil
}

// end names the entity with id, if the graph has one.
func (b *templatesMemoryBackend) end(id string) (snapshot.EntityName, bool, error) {
	i, ok, err := b.g.EntityIndex(id)
	if !ok || err != nil {
		return snapshot.EntityName{}, false, err
	}
	e, err := b.g.EntityName(i)
	return e, err == nil, err
}

// SubgraphRelationships implements SubgraphBackend.
func (b *templatesMemoryBackend) SubgraphRelationships(ctx context.Context, ids []string) ([]SubgraphEdge, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rels, err := b.touching(ids)
	if err != nil {
		return nil, err
	}
	var out []SubgraphEdge
	for _, sr := range rels {
		e := SubgraphEdge{RelationshipRecord: sr.r, SourceHRID: sr.srcHRID, TargetHRID: sr.tgtHRID}
		e.Rank = 0 // the article ranks by weight alone; the template reads no rank
		e.HasWeight = sr.hasWght
		out = append(out, e)
	}
	return out, nil
}

// TemplateRelationships implements TemplatesBackend.
func (b *templatesMemoryBackend) TemplateRelationships(ctx context.Context, ids []string, limit int) (inside, outside []RelationshipRecord, err error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	rels, err := b.touching(ids)
	if err != nil {
		return nil, nil, err
	}
	slices.SortFunc(rels, func(x, y seedRel) int {
		return cmp.Or(
			cmp.Compare(y.ends, x.ends),
			compareOptional(y.hasRank, y.r.Rank, x.hasRank, x.r.Rank),
			compareOptional(y.hasWght, y.r.Weight, x.hasWght, x.r.Weight),
			cmp.Compare(x.r.RelationshipID, y.r.RelationshipID))
	})
	for _, sr := range rels {
		sr.r.Inside = sr.ends == 2
		if sr.r.Inside && (limit <= 0 || len(inside) < limit) {
			inside = append(inside, sr.r)
		} else if !sr.r.Inside && (limit <= 0 || len(outside) < limit) {
			outside = append(outside, sr.r)
		}
	}
	return inside, outside, nil
}

// compareOptional compares two values of which either may be missing; a
// missing one is the smaller.
func compareOptional[T cmp.Ordered](hasX bool, x T, hasY bool, y T) int {
	if hasX != hasY {
		if hasX {
			return 1
		}
		return -1
	}
	return cmp.Compare(x, y)
}

// TemplateChunks implements TemplatesBackend.
func (b *templatesMemoryBackend) TemplateChunks(ctx context.Context, ids []string, limit int) ([]TemplateChunk, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sel, err := b.selected(ids)
	if err != nil {
		return nil, err
	}
	count := make(map[int]int64) // text unit row -> selected entities it names
	for id := range sel {
		k, ok, err := b.g.Key(id)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		rows, err := b.g.TextUnitsOf(k)
		if err != nil {
			return nil, err
		}
		for _, u := range rows {
			count[u]++
		}
	}
	var out []TemplateChunk
	for row, n := range count {
		u, err := b.g.TextUnit(row)
		if err != nil {
			return nil, err
		}
		c := TemplateChunk{TextUnitRecord{ID: canonicalHRID(u.HumanReadableID), TextUnitID: u.ID, Text: u.Text}, n}
		if u.HasNTokens {
			c.NTokens = u.NTokens
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(x, y TemplateChunk) int {
		return cmp.Or(cmp.Compare(y.SelectedEntities, x.SelectedEntities), cmp.Compare(x.TextUnitID, y.TextUnitID))
	})
	return truncate(out, limit), nil
}

// TemplateCommunities implements TemplatesBackend.
func (b *templatesMemoryBackend) TemplateCommunities(ctx context.Context, ids []string, level int64, limit int) ([]TemplateCommunity, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkLevel(level); err != nil {
		return nil, err
	}
	sel, err := b.selected(ids)
	if err != nil {
		return nil, err
	}
	count := make(map[int]int64)
	comms := make(map[int]graphrag.Community)
	for _, e := range sel {
		if e.Placeholder {
			continue
		}
		for _, num := range uniqueIDs(e.Communities) {
			i, ok, err := b.g.CommunityIndex(num)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			c, err := b.g.Community(i)
			if err != nil {
				return nil, err
			}
			if c.Level == level {
				count[i]++
				comms[i] = c
			}
		}
	}
	type ranked struct {
		c       TemplateCommunity
		number  int64
		hasRank bool
	}
	var rs []ranked
	for i, n := range count {
		c := comms[i]
		num, err := strconv.ParseInt(c.Community, 10, 64)
		if err != nil {
			continue // the mapping refuses a graph with such a community
		}
		r := ranked{c: TemplateCommunity{
			ReportRecord: ReportRecord{ID: strconv.FormatInt(num, 10), CommunityID: c.ID,
				Level: c.Level, Title: c.Title, Weight: c.Weight},
			HumanReadableID: canonicalHRID(c.HumanReadableID), SelectedEntities: n,
		}, number: num}
		if rep := c.Report; rep != nil {
			r.c.Title = cmp.Or(rep.Title, c.Title)
			r.c.Summary, r.c.FullContent = rep.Summary, rep.FullContent
			if rep.HasRank {
				r.c.Rank, r.hasRank = rep.Rank, true
			}
		}
		rs = append(rs, r)
	}
	slices.SortFunc(rs, func(x, y ranked) int {
		return cmp.Or(
			cmp.Compare(y.c.SelectedEntities, x.c.SelectedEntities),
			compareOptional(y.hasRank, y.c.Rank, x.hasRank, x.c.Rank),
			cmp.Compare(y.c.Weight, x.c.Weight),
			cmp.Compare(x.number, y.number))
	})
	var out []TemplateCommunity
	for _, r := range rs {
		out = append(out, r.c)
	}
	return truncate(out, limit), nil
}

// truncate keeps the first limit records when limit > 0.
func truncate[T any](s []T, limit int) []T {
	if limit > 0 && len(s) > limit {
		return s[:limit]
	}
	return s
}
