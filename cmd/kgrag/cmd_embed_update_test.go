package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/embedindex/elastic"
	"github.com/kgrag/kgrag/embedindex/flat"
	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/embedtext"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/test"
)

// TestEmbedFollowsUpdate embeds the v3 sample, then a copy of it with 5
// entities gone and one description changed, into the flat index and into
// Elasticsearch (in place: the change is small): only the changed text is
// embedded again (the cache answers the rest), and the gone entities'
// vectors are in neither index.
func TestEmbedFollowsUpdate(t *testing.T) {
	esURL := test.Service(t, "ELASTICSEARCH")
	ctx := context.Background()
	in := filepath.Join(test.GraphRAGSamples(t), "v3")
	ds, err := graphrag.Open(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	gone := map[string]bool{}
	for _, e := range ds.Entities[10:15] {
		gone[e.ID] = true
	}
	ds.Entities = append(ds.Entities[:10:10], ds.Entities[15:]...)
	ds.Entities[0].Description += " He counts his money twice."
	changed := filepath.Join(t.TempDir(), "output")
	if err := graphrag.Write3x(ctx, changed, ds); err != nil {
		t.Fatal(err)
	}

	srv := llmtest.Start(t, llmtest.Config{Dim: askDim})
	for _, es := range []bool{false, true} {
		index := t.TempDir()
		// A fresh alias per run; the test service's data is thrown away
		// when it stops.
		alias := fmt.Sprintf("kgrag-embed-update-%d", rand.Uint32())
		embed := func(input string) string {
			t.Helper()
			opts := embedTestOptions(input, index, srv.URL(), askEmbedModel)
			opts.esMaxChange = defaultESMaxChange
			if es {
				opts.es = indexOptions{url: esURL, name: alias}
			}
			term, _, errb := testTerminal()
			if err := runEmbed(ctx, opts, term); err != nil {
				t.Fatal(err)
			}
			return errb.String()
		}
		_ = embed(in)
		count := func() int {
			t.Helper()
			if es {
				x, err := elastic.Open(ctx, elastic.Config{URL: esURL, Index: alias})
				if err != nil {
					t.Fatal(err)
				}
				return x.Info().Count
			}
			x, err := flat.Open(ctx, filepath.Join(index, entityIndexFile), flat.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return x.Info().Count
		}
		firstCount := count()
		srv.Reset()
		out := embed(changed)
		var texts int
		for _, r := range srv.Requests() {
			texts += len(r.Inputs)
		}
		if texts != 1 {
			t.Errorf("es %v: the update embedded %d texts; want 1 (the changed description)", es, texts)
		}
		if es && !strings.Contains(out, "updated in place: 1 written, 5 deleted") {
			t.Errorf("Elasticsearch: %q; want an update in place of 1 written, 5 deleted", out)
		}
		if n := count(); n != firstCount-len(gone) {
			t.Errorf("es %v: the index holds %d vectors; want %d (%d less %d gone)", es, n, firstCount-len(gone), firstCount, len(gone))
		}
		// The gone entities are not found, even by their own vectors.
		var x embedindex.Index
		if es {
			x, err = elastic.Open(ctx, elastic.Config{URL: esURL, Index: alias})
		} else {
			x, err = flat.Open(ctx, filepath.Join(index, entityIndexFile), flat.Options{})
		}
		if err != nil {
			t.Fatal(err)
		}
		search := func(v []float32) []string {
			hits, err := x.Search(ctx, v, 3)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, h := range hits {
				ids = append(ids, h.ID)
			}
			return ids
		}
		orig, err := graphrag.Open(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range orig.Entities {
			if !gone[e.ID] {
				continue
			}
			for _, id := range search(llmtest.Embed(askEmbedModel, embedtext.Entity(e), askDim)) {
				if gone[id] {
					t.Errorf("es %v: the vector of gone entity %s (%s) is still found", es, e.ID, e.Title)
				}
			}
		}
	}
}
