package basicsearch_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kgrag/kgrag/embedindex/flat"
	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/basicsearch"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/internal/test"
)

const (
	embedModel = "test-embed"
	dim        = 64
)

type basicJob struct {
	Kind             string   `json:"kind"`
	Dir              string   `json:"dir"`
	Hits             []string `json:"hits"`
	MaxContextTokens int      `json:"max_context_tokens"`
}

type basicOut struct {
	IDs  []string `json:"ids"`
	Text string   `json:"text"`
}

// TestBasicMatchesGraphRAG checks basic search's context against GraphRAG
// 3.3.0's own BasicSearchContext (scripts/oracle/graphrag_search.py) on
// the 2.x and 3.x samples: for each question the text units the index
// finds (the test server's embeddings) go to both, and both must keep the
// same units in the same order and print the same text, byte for byte.
// The cases cover GraphRAG's default (k 10 in a 12000-token budget, which
// cuts the tenth unit), budgets that cut early or keep nothing, and every
// text unit at once.
func TestBasicMatchesGraphRAG(t *testing.T) {
	py := test.GraphRAGPython(t)
	ctx := context.Background()
	srv := llmtest.Start(t, llmtest.Config{Dim: dim})
	client, err := llm.New(llm.Config{BaseURL: srv.URL(), EmbedModel: embedModel, HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		question string
		k, max   int
	}{
		{"Who is Scrooge's clerk?", 10, 12000},
		{"What does the Ghost of Christmas Yet to Come show?", 10, 12000},
		{"Tiny Tim", 5, 3000},
		{"Marley's ghost in chains", 10, 1500},
		{"Fezziwig's ball", 10, 20},
		{"Christmas", 100, 60000},
	}
	for _, sample := range []string{"v2.5.0", "v3"} {
		t.Run(sample, func(t *testing.T) {
			dir := filepath.Join(test.GraphRAGSamples(t), sample)
			ds, err := graphrag.Open(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			var vecs [][]float32
			for _, u := range ds.TextUnits {
				ids, vecs = append(ids, u.ID), append(vecs, llmtest.Embed(embedModel, u.Text, dim))
			}
			path := filepath.Join(t.TempDir(), "text_units.vec")
			if err := flat.Write(ctx, path, embedModel, ids, vecs); err != nil {
				t.Fatal(err)
			}
			idx, err := flat.Open(ctx, path, flat.Options{})
			if err != nil {
				t.Fatal(err)
			}
			src := retrieval.NewMemorySource(ds)
			var jobs []basicJob
			var got []*basicsearch.Result
			for _, c := range cases {
				p := retrieval.DefaultBasicParams()
				p.K, p.MaxContextTokens = c.k, c.max
				s, err := basicsearch.New(src, idx, client.Embedder(), nil, basicsearch.Options{Params: p})
				if err != nil {
					t.Fatal(err)
				}
				r, err := s.Context(ctx, c.question)
				if c.max == 20 {
					// Nothing fits: kgrag still finds the units, and
					// builds a context of the header alone.
					if err != nil {
						t.Fatalf("%q: %v", c.question, err)
					}
				} else if err != nil {
					t.Fatal(err)
				}
				hits := make([]string, len(r.Neighbours))
				for i, h := range r.Neighbours {
					hits[i] = h.ID
				}
				jobs = append(jobs, basicJob{Kind: "basic", Dir: dir, Hits: hits, MaxContextTokens: c.max})
				got = append(got, r)
			}
			want := test.PythonJSONL[basicOut](t, py, []string{filepath.Join(test.RepoRoot(t), "scripts", "oracle", "graphrag_search.py")}, jobs)
			for i, c := range cases {
				var ids []string
				for _, u := range got[i].Context.Units {
					ids = append(ids, u.TextUnitID)
				}
				name := fmt.Sprintf("%q (k %d, %d tokens)", c.question, c.k, c.max)
				if d := cmp.Diff(want[i].IDs, ids, cmpNil); d != "" {
					t.Errorf("%s: text units differ (-GraphRAG +kgrag):\n%s", name, d)
				}
				if d := cmp.Diff(want[i].Text, got[i].Context.Text); d != "" {
					t.Errorf("%s: context text differs (-GraphRAG +kgrag):\n%s", name, d)
				}
				if i == 0 && len(ids) != c.k-1 {
					t.Errorf("%s: %d units kept; the sample's tenth unit should not fit GraphRAG's budget", name, len(ids))
				}
			}
		})
	}
}

// cmpNil makes an empty list equal to none.
var cmpNil = cmp.Transformer("nil", func(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
})
