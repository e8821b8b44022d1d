package graphbuild_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kgrag/kgrag/internal/graphbuild"
)

// TestMerge checks grouping, order, counts and the orphan filter on a
// hand-made case (TestMatchesGraphRAG checks the same against GraphRAG).
func TestMerge(t *testing.T) {
	g := graphbuild.Merge([]graphbuild.Extraction{
		withRels(ents("t1", ent("B", "P", "b1"), ent("A", "P", "a1"), ent("A", "Q", "aq")),
			rel("A", "B", "ab1", 2), rel("A", "X", "ax", 1), rel("B", "A", "ba", 0)),
		withRels(ents("t2", ent("A", "P", "a2"), ent("A", "P", "a2")),
			rel("A", "B", "ab2", 0.5), rel("X", "Y", "xy1", 1), rel("X", "Y", "xy2", 1)),
	})
	wantE := []graphbuild.MergedEntity{
		{Title: "B", Type: "P", Descriptions: []string{"b1"}, TextUnitIDs: []string{"t1"}, Frequency: 1},
		{Title: "A", Type: "P", Descriptions: []string{"a1", "a2", "a2"}, TextUnitIDs: []string{"t1", "t2", "t2"}, Frequency: 3},
		{Title: "A", Type: "Q", Descriptions: []string{"aq"}, TextUnitIDs: []string{"t1"}, Frequency: 1},
	}
	wantR := []graphbuild.MergedRelationship{
		{Source: "A", Target: "B", Descriptions: []string{"ab1", "ab2"}, TextUnitIDs: []string{"t1", "t2"}, Weight: 2.5},
		{Source: "B", Target: "A", Descriptions: []string{"ba"}, TextUnitIDs: []string{"t1"}, Weight: graphbuild.DefaultWeight},
	}
	if d := cmp.Diff(wantE, g.Entities); d != "" {
		t.Errorf("entities (-want +got):\n%s", d)
	}
	if d := cmp.Diff(wantR, g.Relationships); d != "" {
		t.Errorf("relationships (-want +got):\n%s", d)
	}
	if g.Orphans != 2 || g.OrphanRecords != 3 {
		t.Errorf("Orphans %d, OrphanRecords %d; want 2 (A->X, X->Y) and 3", g.Orphans, g.OrphanRecords)
	}
}

// TestIDs checks ids against Python's uuid.uuid5 in kgrag's namespace
// (pinned here; TestMatchesGraphRAG asks Python for many more), and that
// they are distinct for distinct names.
func TestIDs(t *testing.T) {
	tests := []struct{ got, want string }{
		{graphbuild.EntityID("A"), "079d7514-c4e8-5ceb-b107-1b8fabde1af1"},
		{graphbuild.RelationshipID("A", "B"), "49d341a8-5863-50ce-b453-f87b65fd00de"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("id %s; want %s", tt.got, tt.want)
		}
	}
	ids := map[string]bool{}
	for _, id := range []string{graphbuild.EntityID("A"), graphbuild.EntityID("B"), graphbuild.EntityID("a"),
		graphbuild.RelationshipID("A", "B"), graphbuild.RelationshipID("B", "A"), graphbuild.RelationshipID("A", "A")} {
		if ids[id] || len(id) != 36 || id[14] != '5' {
			t.Errorf("id %s repeated or not a version 5 UUID", id)
		}
		ids[id] = true
	}
}
