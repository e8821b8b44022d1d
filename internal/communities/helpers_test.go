package communities_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/graphbuild"
	"github.com/kgrag/kgrag/internal/leiden"
	"github.com/kgrag/kgrag/internal/leiden/leidentest"
)

// relEdges is what GraphRAG clusters: each relationship's ends and weight.
func relEdges(rels []graphrag.Relationship) []leiden.Edge {
	return leidentest.RelationshipEdges(&graphrag.Dataset{Relationships: rels})
}

func weight(r graphrag.Relationship) float64 {
	if !r.HasWeight {
		return 1
	}
	return r.Weight
}

// graph holds hand-made entities and relationships, with ids as
// graphbuild.Finalize gives them.
type graph struct {
	entities []graphrag.Entity
	rels     []graphrag.Relationship
}

func (g *graph) ent(titles ...string) *graph {
	for _, title := range titles {
		g.entities = append(g.entities, graphrag.Entity{ID: graphbuild.EntityID(title), Title: title})
	}
	return g
}

// rel adds source -> target; a second one of the same pair gets an id of
// its own, and each relationship its own text unit plus a shared one.
func (g *graph) rel(source, target string, w float64) *graph {
	n := len(g.rels)
	g.rels = append(g.rels, graphrag.Relationship{
		ID: fmt.Sprintf("%s#%d", graphbuild.RelationshipID(source, target), n), Source: source, Target: target,
		Weight: w, HasWeight: true, TextUnitIDs: []string{fmt.Sprintf("tu-%03d", n), "tu-shared"},
	})
	return g
}

// clique links every pair of titles.
func (g *graph) clique(w float64, titles ...string) *graph {
	for i, a := range titles {
		for _, b := range titles[i+1:] {
			g.rel(a, b, w)
		}
	}
	return g
}

func titles(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}

// find returns the community holding entity id, at level.
func find(cs []graphrag.Community, level int64, id string) *graphrag.Community {
	for i := range cs {
		if cs[i].Level == level && slices.Contains(cs[i].EntityIDs, id) {
			return &cs[i]
		}
	}
	return nil
}

// holds reports which communities list relationship id.
func holds(cs []graphrag.Community, id string) []string {
	var out []string
	for _, c := range cs {
		if slices.Contains(c.RelationshipIDs, id) {
			out = append(out, c.Community)
		}
	}
	return out
}

// byName builds hand-made rows: the named nodes in community cluster.
func byName(g *leiden.Graph, level, cluster, parent int, names ...string) []leiden.Row {
	var rows []leiden.Row
	for _, n := range names {
		v := g.Index(n)
		if v < 0 {
			panic("no node " + n)
		}
		rows = append(rows, leiden.Row{Node: v, Cluster: cluster, Level: level, Parent: parent})
	}
	return rows
}

// handCases are small graphs for what the samples may not show.
func handCases() []clusterCase {
	var cases []clusterCase

	iso := (&graph{}).ent("A", "B", "C", "D", "E", "LONER", "HERMIT").
		clique(2, "A", "B", "C").clique(2, "C", "D", "E").rel("E", "GHOST", 1).rel("A", "E", 1)
	cases = append(cases, clusterCase{name: "hand: isolated entities and a missing one", entities: iso.entities, rels: iso.rels, useLCC: true,
		check: func(t *testing.T, got []graphrag.Community) {
			for _, title := range []string{"LONER", "HERMIT"} {
				if c := find(got, 0, graphbuild.EntityID(title)); c != nil {
					t.Errorf("%s, in no relationship, is in community %s", title, c.Community)
				}
			}
			size := 0
			for _, c := range got {
				if c.Level == 0 {
					size += int(c.Size)
				}
			}
			if size != 5 {
				t.Errorf("level 0 sizes add up to %d; want 5 (GHOST is clustered but no entity)", size)
			}
		}})

	self := (&graph{}).ent("A", "B", "C", "P", "Q", "Z").
		clique(1, "A", "B", "C").rel("B", "A", 3).rel("A", "A", 2).rel("P", "Q", 1).rel("Z", "Z", 5)
	cases = append(cases, clusterCase{name: "hand: self-loops, both directions, no lcc", entities: self.entities, rels: self.rels,
		check: func(t *testing.T, got []graphrag.Community) {
			a := find(got, 0, graphbuild.EntityID("A"))
			if a == nil {
				t.Fatal("A is in no community")
			}
			for _, i := range []int{0, 3, 4} { // A -> B, B -> A, A -> A
				if id := self.rels[i].ID; !slices.Contains(a.RelationshipIDs, id) {
					t.Errorf("A's community lacks %s -> %s", self.rels[i].Source, self.rels[i].Target)
				}
			}
			z := find(got, 0, graphbuild.EntityID("Z"))
			if z == nil || z.Size != 1 || !slices.Equal(z.RelationshipIDs, []string{self.rels[6].ID}) {
				t.Errorf("Z's community = %+v; want Z alone with its self-loop", z)
			}
		}})

	two := (&graph{}).ent(titles("L", 5)...).ent(titles("R", 5)...).
		clique(5, titles("L", 5)...).clique(5, titles("R", 5)...).rel("L0", "R0", 1)
	bridge := two.rels[len(two.rels)-1].ID
	cases = append(cases, clusterCase{name: "hand: a relationship across two communities", entities: two.entities, rels: two.rels, useLCC: true,
		check: func(t *testing.T, got []graphrag.Community) {
			if len(got) != 2 || got[0].Size != 5 || got[1].Size != 5 {
				t.Errorf("got %d communities; want the two cliques", len(got))
			}
			if in := holds(got, bridge); len(in) != 0 {
				t.Errorf("the bridge L0 -> R0 is in communities %v; want none", in)
			}
		}})

	cases = append(cases, rowsByHand())

	lower := (&graph{}).ent("a", "B", "C", "D").clique(1, "a", "B", "C").clique(1, "B", "C", "D")
	cases = append(cases, clusterCase{name: "hand: a lower-case title under use_lcc", entities: lower.entities, rels: lower.rels, useLCC: true,
		check: func(t *testing.T, got []graphrag.Community) {
			if c := find(got, 0, graphbuild.EntityID("a")); c != nil {
				t.Errorf("a is in community %s; GraphRAG's graph knows only A", c.Community)
			}
		}})

	planted, _, err := leidentest.Planted(leidentest.Spec{Seed: 3, Nodes: 400, Edges: 1600, MinSize: 8, MaxSize: 60, Mu: 0.2})
	if err != nil {
		panic(err)
	}
	pg := &graph{}
	for v := range planted.N() {
		pg.ent(planted.Name(v))
	}
	for _, e := range planted.Edges() {
		pg.rel(e.Source, e.Target, e.Weight)
	}
	cases = append(cases, clusterCase{name: "planted: 400 nodes, max cluster size 5", entities: pg.entities, rels: pg.rels, useLCC: true, maxSize: 5,
		check: func(t *testing.T, got []graphrag.Community) {
			deepest := int64(0)
			for _, c := range got {
				deepest = max(deepest, c.Level)
			}
			if deepest < 2 {
				t.Errorf("deepest level %d; want splits down to level 2 at least", deepest)
			}
		}})
	return cases
}

// rowsByHand is a clustering given by hand: level 0 holds both pairs,
// level 1 splits them, so the bridge B -> C is inside at level 0 only; a
// singleton without a self-loop is dropped and missing from its parent's
// children; GHOST has no entity; rows come level 1 first, and X is given
// twice at level 0 (the last community counts); community 6 is two
// titles no entity has (dropped though it holds a relationship).
func rowsByHand() clusterCase {
	rowsG := (&graph{}).ent("A", "B", "C", "D", "S", "X").
		rel("A", "B", 1).rel("C", "D", 1).rel("B", "C", 1).rel("D", "S", 1).rel("GHOST", "A", 1).rel("X", "X", 1).
		rel("G1", "G2", 1)
	return clusterCase{name: "hand: rows by hand", entities: rowsG.entities, rels: rowsG.rels,
		rows: func(g *leiden.Graph) []leiden.Row {
			var rows []leiden.Row
			rows = append(rows, byName(g, 1, 3, 0, "B", "A", "GHOST")...)
			rows = append(rows, byName(g, 1, 4, 0, "D", "C")...)
			rows = append(rows, byName(g, 1, 5, 0, "S")...)
			rows = append(rows, byName(g, 0, 1, -1, "X")...)
			rows = append(rows, byName(g, 0, 0, -1, "D", "C", "B", "A", "S", "GHOST")...)
			rows = append(rows, byName(g, 0, 2, -1, "X")...)
			rows = append(rows, byName(g, 0, 6, -1, "G1", "G2")...)
			return rows
		},
		check: func(t *testing.T, got []graphrag.Community) {
			want := []string{"0", "2", "3", "4"} // 1 lost X to 2; 5 is a lone S; 6 has no entity
			var have []string
			for _, c := range got {
				have = append(have, c.Community)
			}
			if !slices.Equal(have, want) {
				t.Errorf("communities %v; want %v", have, want)
			}
			if in := holds(got, rowsG.rels[2].ID); !slices.Equal(in, []string{"0"}) {
				t.Errorf("B -> C is in communities %v; want [0]", in)
			}
		}}
}
