package communities_test

import (
	"testing"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/communities"
	"github.com/kgrag/kgrag/internal/leiden"
)

// TestCarry: communities that persist take the earlier numbers, best
// match first; new ones are numbered after the largest earlier number;
// parents follow their communities.
func TestCarry(t *testing.T) {
	var edges []leiden.Edge
	for _, p := range [][2]string{{"A", "B"}, {"B", "C"}, {"D", "E"}, {"E", "F"}, {"X", "Y"}, {"C", "D"}} {
		edges = append(edges, leiden.Edge{Source: p[0], Target: p[1], Weight: 1})
	}
	g, err := leiden.NewGraph(edges)
	if err != nil {
		t.Fatal(err)
	}
	row := func(name string, cluster, level, parent int) leiden.Row {
		return leiden.Row{Node: g.Index(name), Cluster: cluster, Level: level, Parent: parent}
	}
	rows := []leiden.Row{
		row("D", 0, 0, -1), row("E", 0, 0, -1), row("F", 0, 0, -1), // was 3 with D, E: Jaccard 2/3
		row("A", 1, 0, -1), row("B", 1, 0, -1), row("C", 1, 0, -1), // was 7 exactly
		row("X", 2, 0, -1), row("Y", 2, 0, -1), // new
		row("A", 3, 1, 1), row("B", 3, 1, 1), // was 9 (A, B, C at level 1): Jaccard 2/3
	}
	titleOf := map[string]string{"a": "A", "b": "B", "c": "C", "d": "D", "e": "E"}
	prev := []graphrag.Community{
		{Community: "7", Level: 0, EntityIDs: []string{"a", "b", "c"}},
		{Community: "3", Level: 0, EntityIDs: []string{"d", "e"}},
		{Community: "9", Level: 1, Parent: "7", EntityIDs: []string{"a", "b", "c"}},
		{Community: "4", Level: 1, Parent: "3", EntityIDs: []string{"d"}}, // Jaccard 1/3 with nothing at level 1
	}
	got := communities.Carry(rows, g, prev, titleOf)
	want := map[int]int{0: 3, 1: 7, 2: 10, 3: 9}
	for i, r := range got {
		if r.Cluster != want[rows[i].Cluster] {
			t.Errorf("row %d (%s): cluster %d; want %d", i, g.Name(r.Node), r.Cluster, want[rows[i].Cluster])
		}
		if rows[i].Parent >= 0 && r.Parent != want[rows[i].Parent] {
			t.Errorf("row %d: parent %d; want %d", i, r.Parent, want[rows[i].Parent])
		}
	}
}
