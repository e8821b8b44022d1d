package retrieval_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/loader"
	"github.com/kgrag/kgrag/loader/storetest"
)

// seedStores are the real stores sparql-templates mode's SPARQL backend is checked
// on, started by scripts/services.sh.
var seedStores = []struct{ name, service string }{
	{"oxigraph", "OXIGRAPH"},
	{"fuseki", "FUSEKI"},
}

// loadGraph maps ds into a graph of st unique to this run, dropped at
// cleanup, and returns its IRI.
func loadGraph(ctx context.Context, t *testing.T, st *loader.SPARQLStore, ds *graphrag.Dataset, name string) string {
	return storetest.LoadDataset(ctx, t, st, ds, name)
}

// seedSelections draws n selections of k entity ids from ds with a fixed
// seed: even ones at random, odd ones an entity and its neighbours (so
// that inside relationships and chunks holding several of them are
// common). Every fourth one also names an unknown id and repeats an id,
// which both backends must ignore.
func seedSelections(ds *graphrag.Dataset, sample string, n, k int) [][]string {
	rng := rand.New(rand.NewPCG(2, uint64(len(ds.Entities))))
	nbrs := map[string][]string{}
	for _, r := range ds.Relationships {
		nbrs[r.SourceID] = append(nbrs[r.SourceID], r.TargetID)
		nbrs[r.TargetID] = append(nbrs[r.TargetID], r.SourceID)
	}
	var sels [][]string
	for i := range n {
		var sel []string
		if i%2 == 1 {
			id := ds.Entities[rng.IntN(len(ds.Entities))].ID
			sel = append(sel, id)
			for _, j := range rng.Perm(len(nbrs[id]))[:min(k-1, len(nbrs[id]))] {
				sel = append(sel, nbrs[id][j])
			}
		}
		for len(sel) < k {
			sel = append(sel, ds.Entities[rng.IntN(len(ds.Entities))].ID)
		}
		if i%4 == 3 {
			sel[1] = "no such entity in " + sample
			sel[2] = sel[0]
		}
		sels = append(sels, sel)
	}
	return sels
}

// seedLookups is everything a TemplatesBackend answers for one selection, with
// no limits.
type seedLookups struct {
	Entities        []retrieval.EntityRecord
	Inside, Outside []retrieval.RelationshipRecord
	Chunks          []retrieval.TemplateChunk
	Communities     []retrieval.TemplateCommunity
}

func lookupAll(ctx context.Context, t *testing.T, b retrieval.TemplatesBackend, sel []string, level int64) seedLookups {
	t.Helper()
	var l seedLookups
	var err error
	if l.Entities, err = b.TemplateEntities(ctx, sel); err != nil {
		t.Fatal(err)
	}
	if l.Inside, l.Outside, err = b.TemplateRelationships(ctx, sel, 0); err != nil {
		t.Fatal(err)
	}
	if l.Chunks, err = b.TemplateChunks(ctx, sel, 0); err != nil {
		t.Fatal(err)
	}
	if l.Communities, err = b.TemplateCommunities(ctx, sel, level, 0); err != nil {
		t.Fatal(err)
	}
	return l
}

// onBoth runs f on the memory and the SPARQL backend, failing t on an
// error.
func onBoth[B, R any](t *testing.T, backends []B, f func(B) (R, error)) [2]R {
	t.Helper()
	var out [2]R
	for i, b := range backends {
		var err error
		if out[i], err = f(b); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// openStore opens the real store named (oxigraph, fuseki, virtuoso) at
// the URL of its service variable.
func openStore(t *testing.T, name, service string, o loader.Options) *loader.SPARQLStore {
	return storetest.Open(t, name, service, o)
}

// TestTemplatesBackendsAgree loads each sample into a real Oxigraph and Fuseki
// and checks, for 24 seeded selections of 10 entities per sample on
// community levels 0 to 2 in turn, that the SPARQL backend returns the
// same records in the same order as the memory backend, unlimited and
// through TemplatesContext with the RDF article's limits (same records, same text).
func TestTemplatesBackendsAgree(t *testing.T) {
	const nSelections, k = 24, 10
	ctx := context.Background()
	enc, err := encoderOnce()
	if err != nil {
		t.Fatal(err)
	}
	datasets := map[string]*graphrag.Dataset{}
	for _, sample := range test.Samples() {
		if datasets[sample], err = graphrag.Open(ctx, filepath.Join(test.GraphRAGSamples(t), sample)); err != nil {
			t.Fatal(err)
		}
	}
	for _, store := range seedStores {
		t.Run(store.name, func(t *testing.T) {
			st := openStore(t, store.name, store.service, loader.Options{})
			for _, sample := range test.Samples() {
				t.Run(sample, func(t *testing.T) {
					ds := datasets[sample]
					graph := loadGraph(ctx, t, st, ds, "seed-"+sample)
					mem := retrieval.NewMemorySource(ds)
					sq := retrieval.NewTemplatesSPARQLBackend(st.Client(), graph)
					var n [5]int // records compared per kind, so that the test is seen to compare something
					for i, sel := range seedSelections(ds, sample, nSelections, k) {
						level := int64(i % 3)
						want := lookupAll(ctx, t, mem, sel, level)
						if diff := cmp.Diff(want, lookupAll(ctx, t, sq, sel, level)); diff != "" {
							t.Errorf("selection %d (level %d): lookups differ (-memory +SPARQL):\n%s", i, level, diff)
						}
						for j, m := range []int{len(want.Entities), len(want.Inside), len(want.Outside), len(want.Chunks), len(want.Communities)} {
							n[j] += m
						}

						p := retrieval.DefaultTemplatesParams()
						p.CommunityLevel = level
						res := onBoth(t, []retrieval.TemplatesBackend{mem, sq}, func(b retrieval.TemplatesBackend) (*retrieval.TemplatesResult, error) {
							sb, err := retrieval.NewTemplatesBuilder(b, p, enc)
							if err != nil {
								return nil, err
							}
							return sb.TemplatesContext(ctx, sel)
						})
						if diff := cmp.Diff(res[0], res[1]); diff != "" {
							t.Errorf("selection %d (level %d): TemplatesContext differs (-memory +SPARQL):\n%s", i, level, diff)
						}
					}
					msg := fmt.Sprintf("%d entities, %d inside and %d outside relationships, %d chunks, %d communities", n[0], n[1], n[2], n[3], n[4])
					if slices.Contains(n[:], 0) {
						t.Errorf("the selections found %s: some kind was never compared", msg)
					}
					t.Logf("%d selections compared: %s", nSelections, msg)
				})
			}
		})
	}
}
