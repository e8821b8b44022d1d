package retrieval_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/loader"
)

// walkView is a WalkGraph by ids, for comparing graphs read in different
// orders: each entity's text units and relationships, each unit's
// entities, all sorted.
type walkView struct {
	Units    map[string]string   // GraphRAG id -> human-readable id
	Mentions map[string][]string // entity id -> text unit ids
	Edges    map[string][]string // entity id -> related entity ids
	Titles   map[string]string
}

func viewOf(g *retrieval.WalkGraph) walkView {
	v := walkView{Units: map[string]string{}, Mentions: map[string][]string{}, Edges: map[string][]string{}, Titles: map[string]string{}}
	for _, u := range g.Units {
		v.Units[u.TextUnitID] = u.ID
	}
	for i, e := range g.Entities {
		v.Titles[e.ID] = e.Title
		for _, u := range e.Units {
			v.Mentions[e.ID] = append(v.Mentions[e.ID], g.Units[u].TextUnitID)
		}
		for _, x := range g.Edges[i] {
			v.Edges[e.ID] = append(v.Edges[e.ID], g.Entities[x.To].ID)
		}
		slices.Sort(v.Mentions[e.ID])
		slices.Sort(v.Edges[e.ID])
	}
	return v
}

// TestWalkGraphSources reads each sample's whole graph for the walk mode
// from memory and from real Oxigraph and Fuseki stores kgrag load
// filled, and checks that both hold the dataset's entities, text units,
// mentions (the entities' text_unit_ids) and relationships.
func TestWalkGraphSources(t *testing.T) {
	ctx := context.Background()
	for _, store := range seedStores {
		t.Run(store.name, func(t *testing.T) {
			st := openStore(t, store.name, store.service, loader.Options{})
			for _, sample := range test.Samples() {
				t.Run(sample, func(t *testing.T) {
					ds, err := graphrag.Open(ctx, filepath.Join(test.GraphRAGSamples(t), sample))
					if err != nil {
						t.Fatal(err)
					}
					graph := loadGraph(ctx, t, st, ds, "walk-"+sample)
					mem, err := retrieval.NewMemorySource(ds).WalkGraph(ctx)
					if err != nil {
						t.Fatal(err)
					}
					sp, err := retrieval.NewSPARQLSource(st.Client(), graph).WalkGraph(ctx)
					if err != nil {
						t.Fatal(err)
					}
					// From the dataset itself.
					want := walkView{Units: map[string]string{}, Mentions: map[string][]string{}, Edges: map[string][]string{}, Titles: map[string]string{}}
					for _, u := range ds.TextUnits {
						want.Units[u.ID] = u.HumanReadableID
						if u.HumanReadableID == "" {
							want.Units[u.ID] = u.ID // releases before 1.0 number none
						}
					}
					byTitle := map[string]string{}
					for _, e := range ds.Entities {
						want.Titles[e.ID] = e.Title
						byTitle[e.Title] = e.ID
						for _, u := range e.TextUnitIDs {
							if _, ok := want.Units[u]; ok && !slices.Contains(want.Mentions[e.ID], u) {
								want.Mentions[e.ID] = append(want.Mentions[e.ID], u)
							}
						}
						slices.Sort(want.Mentions[e.ID])
					}
					for _, r := range ds.Relationships {
						s, d := r.SourceID, r.TargetID
						if s == "" {
							s = byTitle[r.Source]
						}
						if d == "" {
							d = byTitle[r.Target]
						}
						if s == "" || d == "" || s == d {
							continue
						}
						want.Edges[s] = append(want.Edges[s], d)
						want.Edges[d] = append(want.Edges[d], s)
					}
					for k := range want.Edges {
						slices.Sort(want.Edges[k])
					}
					if diff := cmp.Diff(want, viewOf(mem)); diff != "" {
						t.Errorf("memory differs from the dataset (-dataset +memory):\n%s", diff)
					}
					if diff := cmp.Diff(viewOf(mem), viewOf(sp)); diff != "" {
						t.Errorf("store differs from memory (-memory +store):\n%s", diff)
					}
					if len(mem.Units) != len(ds.TextUnits) || len(mem.Entities) == 0 {
						t.Errorf("%d units, %d entities; want %d units and some entities", len(mem.Units), len(mem.Entities), len(ds.TextUnits))
					}
				})
			}
		})
	}
}
