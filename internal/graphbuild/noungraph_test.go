package graphbuild_test

import (
	"math"
	"slices"
	"testing"

	"github.com/kgrag/kgrag/internal/graphbuild"
)

// TestNounGraphAndPrune pins a small case whose weights and pruning
// GraphRAG 3.3.0's own _extract_edges and prune_graph gave
// (scripts/oracle/graphrag_fast.py, op graph); by hand: the counts sum
// to 5 and the frequencies to 7, so A-B weighs 0.4 log2(0.4 / (2/7)^2);
// C has the highest degree and goes as the ego node, D is found in one
// unit only. TestFastGraphMatchesGraphRAG checks the whole book.
func TestNounGraphAndPrune(t *testing.T) {
	g := graphbuild.NounGraph([]graphbuild.NounPhrases{
		{TextUnitID: "a", Phrases: []string{"C", "A", "B"}},
		{TextUnitID: "b", Phrases: []string{"A", "B", "A"}},
		{TextUnitID: "c", Phrases: []string{"C", "D"}},
		{TextUnitID: "a", Phrases: []string{"X", "Y"}}, // a unit given twice counts once
	}, true)
	wantW := map[[2]string]float64{
		{"A", "B"}: 0.9171126996911385, {"A", "C"}: 0.2585563498455692,
		{"B", "C"}: 0.2585563498455692, {"C", "D"}: 0.45855634984556926,
	}
	if len(g.Relationships) != len(wantW) {
		t.Fatalf("%d relationships; want %d", len(g.Relationships), len(wantW))
	}
	for _, r := range g.Relationships {
		if w, ok := wantW[[2]string{r.Source, r.Target}]; !ok || math.Abs(r.Weight-w) > 1e-15 {
			t.Errorf("%s -> %s weighs %v; GraphRAG %v", r.Source, r.Target, r.Weight, w)
		}
	}
	var freq []int
	for _, e := range g.Entities {
		freq = append(freq, e.Frequency)
		if e.Type != graphbuild.NounPhraseType {
			t.Errorf("%s has type %q", e.Title, e.Type)
		}
	}
	if !slices.Equal(freq, []int{2, 2, 2, 1}) {
		t.Errorf("frequencies %v; want A, B, C, D: 2 2 2 1", freq)
	}
	st := graphbuild.Prune(g, graphbuild.DefaultPruneOptions())
	var titles []string
	for _, e := range g.Entities {
		titles = append(titles, e.Title)
	}
	if !slices.Equal(titles, []string{"A", "B"}) || len(g.Relationships) != 1 || g.Relationships[0].Source != "A" || g.Relationships[0].Target != "B" {
		t.Errorf("after pruning %v and %v; GraphRAG keeps A, B and A -> B", titles, g.Relationships)
	}
	if st.Ego != "C" || st.Entities != 2 || st.Relationships != 3 {
		t.Errorf("prune stats %+v; want ego C, 2 entities and 3 relationships removed", st)
	}
}
