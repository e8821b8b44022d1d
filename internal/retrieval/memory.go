package retrieval

import (
	"cmp"
	"context"
	"slices"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/snapshot"
)

var _ Backend = (*MemoryBackend)(nil)

// MemoryBackend answers Backend lookups from a graph snapshot: one built
// in memory from a *graphrag.Dataset (NewMemoryBackend) or one mapped from
// the file kgrag embed wrote (NewGraphSource). It never modifies the
// graph and is safe for concurrent use.
type MemoryBackend struct {
	g *snapshot.Graph
}

// NewMemoryBackend indexes ds. ds must not be nil, and is not read again.
func NewMemoryBackend(ds *graphrag.Dataset) *MemoryBackend {
	return &MemoryBackend{g: snapshot.Build(ds)}
}

// Entities implements Backend.
func (b *MemoryBackend) Entities(ctx context.Context, ids []string) ([]EntityRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []EntityRecord
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		i, ok, err := b.g.EntityIndex(id)
		if err != nil {
			return nil, err
		}
		if !ok || seen[id] {
			continue
		}
		seen[id] = true
		e, err := b.g.Entity(i)
		if err != nil {
			return nil, err
		}
		units, err := b.unitOrder(e.TextUnitIDs)
		if err != nil {
			return nil, err
		}
		out = append(out, EntityRecord{
			ID: e.HumanReadableID, EntityID: e.ID, Title: e.Title,
			Description: e.Description, Rank: e.Degree, TextUnitIDs: units,
		})
	}
	return out, nil
}

// unitOrder returns ids ordered by their text unit's human_readable_id,
// then id: the order SPARQLBackend can restore from RDF. GraphRAG writes
// text_unit_ids in text unit table order, which is the same order from
// release 1.0 on (checked on the samples), so this changes nothing there.
func (b *MemoryBackend) unitOrder(ids []string) ([]string, error) {
	refs := make([]unitRef, len(ids))
	for i, id := range ids {
		refs[i].id = id
		j, ok, err := b.g.TextUnitIndex(id)
		if err != nil {
			return nil, err
		}
		if ok {
			u, err := b.g.TextUnit(j)
			if err != nil {
				return nil, err
			}
			refs[i].hrid = u.HumanReadableID
		}
	}
	slices.SortStableFunc(refs, compareUnits)
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = r.id
	}
	return out, nil
}

// relationshipsOf lists the relationship rows with an end at entity id.
func (b *MemoryBackend) relationshipsOf(id string) ([]int, error) {
	k, ok, err := b.g.Key(id)
	if !ok || err != nil {
		return nil, err
	}
	return b.g.RelationshipsOf(k)
}

// communitiesOf lists the community rows naming entity id as a member.
func (b *MemoryBackend) communitiesOf(id string) ([]int, error) {
	k, ok, err := b.g.Key(id)
	if !ok || err != nil {
		return nil, err
	}
	return b.g.CommunitiesOf(k)
}

// Relationships implements Backend.
func (b *MemoryBackend) Relationships(ctx context.Context, entityIDs []string) ([]RelationshipRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	hit := make(map[int]bool)
	var rows []int
	for _, id := range entityIDs {
		rels, err := b.relationshipsOf(id)
		if err != nil {
			return nil, err
		}
		for _, i := range rels {
			if !hit[i] {
				hit[i] = true
				rows = append(rows, i)
			}
		}
	}
	slices.SortFunc(rows, func(x, y int) int { return cmp.Compare(b.g.RelationshipPos(x), b.g.RelationshipPos(y)) })
	out := make([]RelationshipRecord, 0, len(rows))
	for _, i := range rows {
		r, err := b.g.Relationship(i)
		if err != nil {
			return nil, err
		}
		out = append(out, RelationshipRecord{
			ID: r.HumanReadableID, RelationshipID: r.ID,
			Source: r.Source, Target: r.Target, SourceID: r.SourceID, TargetID: r.TargetID,
			Description: r.Description, Weight: r.Weight, HasWeight: r.HasWeight,
			Rank: r.Rank, TextUnitIDs: r.TextUnitIDs,
		})
	}
	return out, nil
}

// TextUnits implements Backend.
func (b *MemoryBackend) TextUnits(ctx context.Context, ids []string) ([]TextUnitRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []TextUnitRecord
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		i, ok, err := b.g.TextUnitIndex(id)
		if err != nil {
			return nil, err
		}
		if !ok || seen[id] {
			continue
		}
		seen[id] = true
		u, err := b.g.TextUnit(i)
		if err != nil {
			return nil, err
		}
		out = append(out, TextUnitRecord{
			ID: u.HumanReadableID, TextUnitID: u.ID, Text: u.Text,
			NTokens: u.NTokens, RelationshipIDs: u.RelationshipIDs,
		})
	}
	return out, nil
}

// Reports implements Backend. Deepest follows GraphRAG 1.x's roll-up: a
// community is kept if it is, for at least one entity of the dataset, its
// deepest community up to maxLevel. GraphRAG picks that community as the
// largest community number; kgrag picks the deepest level, then the
// largest number, which agrees with GraphRAG wherever Leiden numbers
// children after parents. The snapshot holds the answer for every
// maxLevel (snapshot.Graph.Deepest). Communities without a report are
// left out.
func (b *MemoryBackend) Reports(ctx context.Context, entityIDs []string, maxLevel int64) ([]ReportRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	comms := map[int]graphrag.Community{}
	community := func(ci int) (graphrag.Community, error) {
		c, ok := comms[ci]
		if !ok {
			var err error
			if c, err = b.g.Community(ci); err != nil {
				return c, err
			}
			comms[ci] = c
		}
		return c, nil
	}
	members := make(map[int][]string)
	numbers := make(map[string][]string) // entity id -> its community numbers up to maxLevel
	seen := make(map[string]bool, len(entityIDs))
	for _, id := range entityIDs {
		if seen[id] {
			continue
		}
		seen[id] = true
		list, err := b.communitiesOf(id)
		if err != nil {
			return nil, err
		}
		for _, ci := range list {
			c, err := community(ci)
			if err != nil {
				return nil, err
			}
			if c.Level > maxLevel {
				continue
			}
			numbers[id] = append(numbers[id], c.Community)
			if c.Report != nil {
				members[ci] = append(members[ci], id)
			}
		}
	}
	order := firstSeen(entityIDs, func(id string) []string { return numbers[id] })
	out := make([]ReportRecord, 0, len(members))
	for ci, m := range members {
		c := comms[ci]
		out = append(out, ReportRecord{
			ID: c.Community, CommunityID: c.ID, Level: c.Level,
			Title: c.Report.Title, Summary: c.Report.Summary, FullContent: c.Report.FullContent,
			Rank: c.Report.Rank, Weight: c.Weight, Members: m, Deepest: b.g.Deepest(ci, c.Level, maxLevel),
			FirstSeen: order[c.Community],
		})
	}
	slices.SortFunc(out, func(x, y ReportRecord) int { return compareIDs(x.ID, y.ID) })
	return out, nil
}

// compareIDs orders GraphRAG ids as GraphRAG's tables are ordered.
func compareIDs(a, b string) int { return graphrag.CompareIDs(a, b) }

var _ ReportSource = (*MemoryBackend)(nil)

// CommunityReports implements ReportSource.
func (b *MemoryBackend) CommunityReports(ctx context.Context, maxLevel int64) ([]ReportRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	hasSub := make(map[string]bool) // community numbers named as a parent up to maxLevel
	var out []ReportRecord
	for ci := range b.g.Communities() {
		c, err := b.g.Community(ci)
		if err != nil {
			return nil, err
		}
		if c.Level > maxLevel {
			continue
		}
		if c.Parent != "" {
			hasSub[c.Parent] = true
		}
		if c.Report == nil {
			continue
		}
		out = append(out, ReportRecord{
			ID: c.Community, CommunityID: c.ID, Level: c.Level,
			Title: c.Report.Title, Summary: c.Report.Summary, FullContent: c.Report.FullContent,
			Rank: c.Report.Rank, Weight: c.Weight, Parent: c.Parent,
		})
	}
	return finishReports(out, hasSub), nil
}

// finishReports orders reports as GraphRAG writes them (deepest level
// first, then by community number) and fills Deepest and Children from the
// parents named up to the level.
func finishReports(out []ReportRecord, hasSub map[string]bool) []ReportRecord {
	slices.SortFunc(out, func(x, y ReportRecord) int {
		if c := cmp.Compare(y.Level, x.Level); c != 0 {
			return c
		}
		return compareIDs(x.ID, y.ID)
	})
	at := make(map[string]int, len(out))
	for i := range out {
		at[out[i].ID] = i
		out[i].Deepest = !hasSub[out[i].ID]
	}
	for _, r := range out {
		if i, ok := at[r.Parent]; ok && r.Parent != "" {
			out[i].Children = append(out[i].Children, r.ID)
		}
	}
	return out
}

// CompareIDs orders GraphRAG ids and community numbers as retrieval does:
// numerically when both are integers, else as strings, integers first.
func CompareIDs(a, b string) int { return graphrag.CompareIDs(a, b) }
