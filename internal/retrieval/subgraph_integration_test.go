package retrieval_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/loader"
)

// TestSubgraphBackendsAgree loads each sample into a real Oxigraph and
// Fuseki and checks, for 16 seeded selections of 12 entities per sample
// (with the article's limits and with small ones that cut inside runs of
// equal weight), that subgraph mode selects the same records from the
// store (template subgraph_relationships and the shared lookups) as from
// memory, and prints the same context.
func TestSubgraphBackendsAgree(t *testing.T) {
	const nSelections, k = 16, 12
	ctx := context.Background()
	enc, err := encoderOnce()
	if err != nil {
		t.Fatal(err)
	}
	small := retrieval.DefaultSubgraphParams()
	small.TopInside, small.TopOutside = 2, 3
	for _, store := range seedStores {
		t.Run(store.name, func(t *testing.T) {
			st := openStore(t, store.name, store.service, loader.Options{})
			for _, sample := range test.Samples() {
				t.Run(sample, func(t *testing.T) {
					ds, err := graphrag.Open(ctx, filepath.Join(test.GraphRAGSamples(t), sample))
					if err != nil {
						t.Fatal(err)
					}
					graph := loadGraph(ctx, t, st, ds, "subgraph-"+sample)
					backends := []retrieval.SubgraphBackend{retrieval.NewMemorySource(ds), retrieval.NewSPARQLSource(st.Client(), graph)}
					var n [4]int
					for i, sel := range seedSelections(ds, sample, nSelections, k) {
						p := retrieval.DefaultSubgraphParams()
						if i%2 == 1 {
							p = small
						}
						res := onBoth(t, backends, func(b retrieval.SubgraphBackend) (*retrieval.SubgraphResult, error) {
							sb, err := retrieval.NewSubgraphBuilder(b, p, enc)
							if err != nil {
								return nil, err
							}
							return sb.SubgraphContext(ctx, sel)
						})
						if diff := cmp.Diff(res[0], res[1]); diff != "" {
							t.Errorf("selection %d: subgraph differs (-memory +SPARQL):\n%s", i, diff)
						}
						r := res[0].Records
						for j, m := range []int{len(r.Chunks), len(r.Inside), len(r.Outside), len(r.Summaries)} {
							n[j] += m
						}
					}
					msg := fmt.Sprintf("%d chunks, %d inside and %d outside relationships, %d summaries", n[0], n[1], n[2], n[3])
					for _, m := range n {
						if m == 0 {
							t.Errorf("the selections found %s: some kind was never compared", msg)
						}
					}
					t.Logf("%d selections compared: %s", nSelections, msg)
				})
			}
		})
	}
}
