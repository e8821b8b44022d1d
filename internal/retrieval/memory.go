package retrieval

import (
	"cmp"
	"context"
	"slices"
	"strconv"

	"github.com/kgrag/kgrag/graphrag"
)

var _ Backend = (*MemoryBackend)(nil)

// MemoryBackend answers Backend lookups from a *graphrag.Dataset held in
// memory. It indexes the dataset once in NewMemoryBackend and never
// modifies it. It is safe for concurrent use as long as the Dataset is not
// written to.
type MemoryBackend struct {
	ds        *graphrag.Dataset
	entities  map[string]int   // entity id -> index in ds.Entities
	units     map[string]int   // text unit id -> index in ds.TextUnits
	relsOf    map[string][]int // entity id -> indexes in ds.Relationships
	commsOf   map[string][]int // entity id -> indexes in ds.Communities
	relsOrder []int            // ds.Relationships indexes by human_readable_id
}

// NewMemoryBackend indexes ds. ds must not be nil.
func NewMemoryBackend(ds *graphrag.Dataset) *MemoryBackend {
	b := &MemoryBackend{
		ds:       ds,
		entities: make(map[string]int, len(ds.Entities)),
		units:    make(map[string]int, len(ds.TextUnits)),
		relsOf:   make(map[string][]int),
		commsOf:  make(map[string][]int),
	}
	for i, e := range ds.Entities {
		if _, dup := b.entities[e.ID]; !dup {
			b.entities[e.ID] = i
		}
	}
	for i, u := range ds.TextUnits {
		if _, dup := b.units[u.ID]; !dup {
			b.units[u.ID] = i
		}
	}
	for i, r := range ds.Relationships {
		b.relsOf[r.SourceID] = append(b.relsOf[r.SourceID], i)
		if r.TargetID != r.SourceID {
			b.relsOf[r.TargetID] = append(b.relsOf[r.TargetID], i)
		}
	}
	for i, c := range ds.Communities {
		for _, id := range c.EntityIDs {
			b.commsOf[id] = append(b.commsOf[id], i)
		}
	}
	b.relsOrder = make([]int, len(ds.Relationships))
	for i := range b.relsOrder {
		b.relsOrder[i] = i
	}
	slices.SortStableFunc(b.relsOrder, func(x, y int) int {
		return compareIDs(ds.Relationships[x].HumanReadableID, ds.Relationships[y].HumanReadableID)
	})
	return b
}

// Entities implements Backend.
func (b *MemoryBackend) Entities(ctx context.Context, ids []string) ([]EntityRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []EntityRecord
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		i, ok := b.entities[id]
		if !ok || seen[id] {
			continue
		}
		seen[id] = true
		e := b.ds.Entities[i]
		out = append(out, EntityRecord{
			ID: e.HumanReadableID, EntityID: e.ID, Title: e.Title,
			Description: e.Description, Rank: e.Degree, TextUnitIDs: b.unitOrder(e.TextUnitIDs),
		})
	}
	return out, nil
}

// unitOrder returns ids ordered by their text unit's human_readable_id,
// then id: the order SPARQLBackend can restore from RDF. GraphRAG writes
// text_unit_ids in text unit table order, which is the same order from
// release 1.0 on (checked on the samples), so this changes nothing there.
func (b *MemoryBackend) unitOrder(ids []string) []string {
	refs := make([]unitRef, len(ids))
	for i, id := range ids {
		refs[i].id = id
		if j, ok := b.units[id]; ok {
			refs[i].hrid = b.ds.TextUnits[j].HumanReadableID
		}
	}
	slices.SortStableFunc(refs, compareUnits)
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = r.id
	}
	return out
}

// Relationships implements Backend.
func (b *MemoryBackend) Relationships(ctx context.Context, entityIDs []string) ([]RelationshipRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	hit := make(map[int]bool)
	for _, id := range entityIDs {
		for _, i := range b.relsOf[id] {
			hit[i] = true
		}
	}
	var out []RelationshipRecord
	for _, i := range b.relsOrder {
		if !hit[i] {
			continue
		}
		r := b.ds.Relationships[i]
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
		i, ok := b.units[id]
		if !ok || seen[id] {
			continue
		}
		seen[id] = true
		u := b.ds.TextUnits[i]
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
// children after parents. Communities without a report are left out.
func (b *MemoryBackend) Reports(ctx context.Context, entityIDs []string, maxLevel int64) ([]ReportRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	comms := b.ds.Communities
	deeper := func(x, y int) bool { // community x is deeper than y
		if comms[x].Level != comms[y].Level {
			return comms[x].Level > comms[y].Level
		}
		return compareIDs(comms[x].Community, comms[y].Community) > 0
	}
	deepest := make(map[int]bool)
	for _, list := range b.commsOf {
		best := -1
		for _, ci := range list {
			if comms[ci].Level > maxLevel {
				continue
			}
			if best < 0 || deeper(ci, best) {
				best = ci
			}
		}
		if best >= 0 {
			deepest[best] = true
		}
	}
	members := make(map[int][]string)
	seen := make(map[string]bool, len(entityIDs))
	for _, id := range entityIDs {
		if seen[id] {
			continue
		}
		seen[id] = true
		for _, ci := range b.commsOf[id] {
			if comms[ci].Level <= maxLevel && comms[ci].Report != nil {
				members[ci] = append(members[ci], id)
			}
		}
	}
	order := firstSeen(entityIDs, func(id string) []string {
		var nums []string
		for _, ci := range b.commsOf[id] {
			if comms[ci].Level <= maxLevel {
				nums = append(nums, comms[ci].Community)
			}
		}
		return nums
	})
	out := make([]ReportRecord, 0, len(members))
	for ci, m := range members {
		c := comms[ci]
		out = append(out, ReportRecord{
			ID: c.Community, CommunityID: c.ID, Level: c.Level,
			Title: c.Report.Title, Summary: c.Report.Summary, FullContent: c.Report.FullContent,
			Rank: c.Report.Rank, Weight: c.Weight, Members: m, Deepest: deepest[ci], FirstSeen: order[c.Community],
		})
	}
	slices.SortFunc(out, func(x, y ReportRecord) int { return compareIDs(x.ID, y.ID) })
	return out, nil
}

// compareIDs orders GraphRAG ids: numerically when both are integers
// (human_readable_id, community numbers), else as strings.
func compareIDs(a, b string) int {
	x, errA := strconv.ParseInt(a, 10, 64)
	y, errB := strconv.ParseInt(b, 10, 64)
	switch {
	case errA == nil && errB == nil:
		return cmp.Compare(x, y)
	case errA == nil:
		return -1
	case errB == nil:
		return 1
	}
	return cmp.Compare(a, b)
}

var _ ReportSource = (*MemoryBackend)(nil)

// CommunityReports implements ReportSource.
func (b *MemoryBackend) CommunityReports(ctx context.Context, maxLevel int64) ([]ReportRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	hasSub := make(map[string]bool) // community numbers named as a parent up to maxLevel
	var out []ReportRecord
	for _, c := range b.ds.Communities {
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
func CompareIDs(a, b string) int { return compareIDs(a, b) }
