package communities_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/communities"
	"github.com/kgrag/kgrag/internal/graphbuild"
	"github.com/kgrag/kgrag/internal/leiden"
)

// TestBuildByHand spells out the whole table for rowsByHand's clustering,
// worked out on paper from create_communities (TestBuildMatchesGraphRAG
// has GraphRAG build the same).
func TestBuildByHand(t *testing.T) {
	c := rowsByHand()
	g, rows := c.cluster(t)
	got := communities.Build(c.entities, c.rels, g, rows, communities.Options{Period: "2026-01-02"})

	ids := func(titles ...string) []string {
		var out []string
		for _, s := range titles {
			out = append(out, graphbuild.EntityID(s))
		}
		return out
	}
	rels := func(i ...int) []string {
		var out []string
		for _, n := range i {
			out = append(out, c.rels[n].ID)
		}
		return slices.Sorted(slices.Values(out))
	}
	row := func(n, parent string, level int64, children []string, entities, relIDs, units []string) graphrag.Community {
		return graphrag.Community{ID: communities.CommunityID(n, entities), HumanReadableID: n, Community: n, Level: level,
			Parent: parent, Children: children, Title: "Community " + n, EntityIDs: entities, RelationshipIDs: relIDs,
			TextUnitIDs: units, Period: "2026-01-02", Size: int64(len(entities)), HasSize: true}
	}
	// Relationships: 0 A-B, 1 C-D, 2 B-C, 3 D-S, 4 GHOST-A, 5 X-X, 6 G1-G2;
	// relationship n has text units tu-00n and tu-shared.
	want := []graphrag.Community{
		row("0", "", 0, []string{"3", "4"}, ids("D", "C", "B", "A", "S"), rels(0, 1, 2, 3, 4),
			[]string{"tu-000", "tu-001", "tu-002", "tu-003", "tu-004", "tu-shared"}),
		row("2", "", 0, nil, ids("X"), rels(5), []string{"tu-005", "tu-shared"}),
		row("3", "0", 1, nil, ids("B", "A"), rels(0, 4), []string{"tu-000", "tu-004", "tu-shared"}),
		row("4", "0", 1, nil, ids("D", "C"), rels(1), []string{"tu-001", "tu-shared"}),
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Build (-want +got):\n%s", d)
	}
}

func TestBuildEdges(t *testing.T) {
	g := (&graph{}).ent("A", "B").rel("A", "B", 1)
	lg, err := leiden.NewGraph(leiden.GraphRAGEdges(relEdges(g.rels), true))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		rows []leiden.Row
		want int
	}{
		{"no rows", nil, 0},
		{"only singletons", []leiden.Row{{Node: 0, Cluster: 0, Parent: -1}, {Node: 1, Cluster: 1, Parent: -1}}, 0},
		{"one pair", []leiden.Row{{Node: 0, Cluster: 0, Parent: -1}, {Node: 1, Cluster: 0, Parent: -1}}, 1},
	}
	for _, tt := range tests {
		if got := communities.Build(g.entities, g.rels, lg, tt.rows, communities.Options{}); len(got) != tt.want {
			t.Errorf("%s: Build made %d communities; want %d", tt.name, len(got), tt.want)
		}
	}
}

// TestPeriod: the zero Options stamp rows with today's UTC date, as
// GraphRAG does.
func TestPeriod(t *testing.T) {
	c := clusterCase{entities: (&graph{}).ent("A", "B").entities, rels: (&graph{}).rel("A", "B", 1).rels, useLCC: true}
	before := time.Now().UTC().Format(time.DateOnly)
	g, rows := c.cluster(t)
	got := communities.Build(c.entities, c.rels, g, rows, communities.Options{})
	after := time.Now().UTC().Format(time.DateOnly)
	if len(got) != 1 || got[0].Period != before && got[0].Period != after {
		t.Fatalf("Build = %+v; want one community of period %s", got, before)
	}
}

// TestCommunityID checks ids against Python's
// uuid.uuid5(uuid.UUID("0789e9f7-091e-51f2-813b-9a5b190f25de"), name).
func TestCommunityID(t *testing.T) {
	tests := []struct {
		community string
		entities  []string
		want      string
	}{
		{"0", nil, "7a5aa1cf-269a-5f6b-94b4-f879f3950cab"},
		{"12", []string{"e1", "e2"}, "59af3bb4-e032-5931-afd5-a726d55619c1"},
		{"12", []string{"e2", "e1"}, "bca7fbd6-4294-5fea-b502-0f620393d69d"},
	}
	for _, tt := range tests {
		if got := communities.CommunityID(tt.community, tt.entities); got != tt.want {
			t.Errorf("CommunityID(%q, %q) = %s; want %s", tt.community, tt.entities, got, tt.want)
		}
	}
}

// TestHierarchyRows builds from a real leiden.Hierarchy: every kept
// community's children are its kept sub-communities, and each level's
// communities hold every entity of the clustered graph once.
func TestHierarchyRows(t *testing.T) {
	c := handCases()[len(handCases())-1] // the planted graph
	g, err := leiden.NewGraph(leiden.GraphRAGEdges(relEdges(c.rels), true))
	if err != nil {
		t.Fatal(err)
	}
	h, err := leiden.Hierarchical(context.Background(), g, leiden.HierOptions{MaxClusterSize: 5, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	got := communities.Build(c.entities, c.rels, g, h.Rows(), communities.Options{})
	byNumber := map[string]graphrag.Community{}
	for _, cm := range got {
		byNumber[cm.Community] = cm
	}
	for _, cm := range got {
		for _, ch := range cm.Children {
			if byNumber[ch].Parent != cm.Community || byNumber[ch].Level != cm.Level+1 {
				t.Errorf("community %s lists child %s whose parent is %q at level %d", cm.Community, ch, byNumber[ch].Parent, byNumber[ch].Level)
			}
		}
		if cm.Parent != "" && !slices.Contains(byNumber[cm.Parent].Children, cm.Community) {
			t.Errorf("community %s is not among its parent %s's children", cm.Community, cm.Parent)
		}
	}
	// Level 0 partitions the graph: each of its nodes is an entity.
	seen := map[string]int{}
	for _, cm := range got {
		if cm.Level == 0 {
			for _, id := range cm.EntityIDs {
				seen[id]++
			}
		}
	}
	if len(seen) != g.N() {
		t.Errorf("level 0 holds %d entities; the graph has %d nodes", len(seen), g.N())
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("entity %s is in %d level 0 communities", id, n)
		}
	}
}
