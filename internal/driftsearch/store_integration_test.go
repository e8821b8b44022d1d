package driftsearch_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kgrag/kgrag/internal/driftsearch"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/loader"
	"github.com/kgrag/kgrag/loader/storetest"
)

// TestDRIFTFromStore runs DRIFT over the v3 sample loaded into a real
// Oxigraph and Fuseki and in memory, with the same indexes and scripted
// model, and checks that both make the same search: the reports primed,
// every action with its answer and its context's records, and the calls.
func TestDRIFTFromStore(t *testing.T) {
	ctx := context.Background()
	for _, store := range []struct{ name, service string }{{"oxigraph", "OXIGRAPH"}, {"fuseki", "FUSEKI"}} {
		t.Run(store.name, func(t *testing.T) {
			st := storetest.Open(t, store.name, store.service, loader.Options{})
			f := newFixture(t, "v3", question, -1)
			graph := storetest.LoadDataset(ctx, t, st, f.ds, "drift")
			opts := driftsearch.DefaultOptions()
			mem, err := f.searcher(t, f.client, opts).Search(ctx, question, driftsearch.Hooks{})
			if err != nil {
				t.Fatal(err)
			}
			memCalls := kinds(f.srv)
			f.srv.Reset()
			res, err := f.searcherOver(t, retrieval.NewSPARQLSource(st.Client(), graph), f.client, opts).Search(ctx, question, driftsearch.Hooks{})
			if err != nil {
				t.Fatal(err)
			}
			ignore := cmpopts.IgnoreFields(driftsearch.Result{}, "Timings", "ExpandCall", "Primer", "Reduce")
			ignoreCalls := cmpopts.IgnoreFields(driftsearch.Action{}, "Call")
			if d := cmp.Diff(mem, res, ignore, ignoreCalls); d != "" {
				t.Errorf("DRIFT from %s differs from memory (-memory +store):\n%s", store.name, d)
			}
			if d := cmp.Diff(memCalls, kinds(f.srv)); d != "" {
				t.Errorf("calls differ (-memory +store):\n%s", d)
			}
			t.Logf("%s: %d actions, %d model calls; timings %v", store.name, len(res.Actions), res.LLMCalls, res.Timings)
		})
	}
}
