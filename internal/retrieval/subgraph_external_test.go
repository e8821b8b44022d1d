package retrieval_test

import (
	stdcmp "cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kgrag/kgrag/embedindex/flat"
	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/internal/test"
)

// nxJob is one job of scripts/oracle/networkx_retrieval.py.
type nxJob struct {
	Dir         string      `json:"dir"`
	EntityIDs   []string    `json:"entity_ids"`
	EntityVecs  [][]float32 `json:"entity_vecs"`
	QuestionVec []float32   `json:"question_vec"`
	TopNodes    int         `json:"top_nodes"`
	TopInside   int         `json:"top_inside"`
	TopOutside  int         `json:"top_outside"`
}

// nxOut is its answer: the records the article's section-9 code selects.
type nxOut struct {
	Nodes     []string   `json:"nodes"`
	Chunks    []string   `json:"chunks"`
	Inside    []string   `json:"inside"`
	Outside   []string   `json:"outside"`
	NodesInfo [][]string `json:"nodes_info"`
	Summaries [][]any    `json:"summaries"` // node id, [community numbers], text
}

// nxQuestions are questions drawn from the sample itself, so that they
// share words with some entities: the start of a few descriptions, and a
// pair of titles.
func nxQuestions(ds *graphrag.Dataset) []string {
	var qs []string
	n := len(ds.Entities)
	for _, i := range []int{n / 5, n / 2, 4 * n / 5} {
		words := strings.Fields(ds.Entities[i].Description)
		qs = append(qs, strings.Join(words[:min(len(words), 10)], " ")+"?")
	}
	return append(qs, fmt.Sprintf("How are %s and %s related?", ds.Entities[0].Title, ds.Entities[1].Title))
}

// TestSubgraphMatchesNetworkX runs subgraph mode's selection from memory
// on the four samples against an independent implementation of the
// NetworkX article's section-9 code (scripts/oracle/networkx_retrieval.py:
// pandas and networkx over the same parquet files), given the same entity
// embeddings (llmtest.Embed of "title: description", as kgrag embed writes
// them into a flat index here): the same nodes, chunks, inside and outside
// relationships in order (ties included: the samples have dozens of
// relationships of equal weight), touched nodes with their descriptions,
// and each node's deepest community summary. A second run with small
// limits (3 nodes, 2 and 5 relationships) puts the cut inside runs of
// equal weight.
func TestSubgraphMatchesNetworkX(t *testing.T) {
	py := test.GraphRAGPython(t)
	ctx := context.Background()
	const model, dim = "nx-embed", 64
	type run struct {
		sample string
		ds     *graphrag.Dataset
		idx    *flat.Index
		q      string
		params retrieval.SubgraphParams
	}
	var runs []run
	var jobs []nxJob
	small := retrieval.DefaultSubgraphParams()
	small.TopNodes, small.TopInside, small.TopOutside = 3, 2, 5
	for _, sample := range test.Samples() {
		dir := filepath.Join(test.GraphRAGSamples(t), sample)
		ds, err := graphrag.Open(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		var vecs [][]float32
		for _, e := range ds.Entities {
			if e.Placeholder {
				continue
			}
			ids = append(ids, e.ID)
			vecs = append(vecs, llmtest.Embed(model, e.Title+": "+e.Description, dim))
		}
		path := filepath.Join(t.TempDir(), "index")
		if err := flat.Write(ctx, path, model, ids, vecs); err != nil {
			t.Fatal(err)
		}
		idx, err := flat.Open(ctx, path, flat.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range nxQuestions(ds) {
			for _, p := range []retrieval.SubgraphParams{retrieval.DefaultSubgraphParams(), small} {
				runs = append(runs, run{sample, ds, idx, q, p})
				jobs = append(jobs, nxJob{Dir: dir, EntityIDs: ids, EntityVecs: vecs, QuestionVec: llmtest.Embed(model, q, dim),
					TopNodes: p.TopNodes, TopInside: p.TopInside, TopOutside: p.TopOutside})
			}
		}
	}
	want := test.PythonJSONL[nxOut](t, py, []string{filepath.Join(test.RepoRoot(t), "scripts", "oracle", "networkx_retrieval.py"), "--jobs"}, jobs)

	ties := 0
	for i, r := range runs {
		name := fmt.Sprintf("%s/%d-%d-%d/%s", r.sample, r.params.TopNodes, r.params.TopInside, r.params.TopOutside, r.q)
		t.Run(name, func(t *testing.T) {
			hits, err := r.idx.Search(ctx, llmtest.Embed(model, r.q, dim), r.params.TopNodes)
			if err != nil {
				t.Fatal(err)
			}
			var sel []string
			for _, h := range hits {
				sel = append(sel, h.ID)
			}
			w := want[i]
			if diff := cmp.Diff(w.Nodes, sel); diff != "" {
				t.Fatalf("nearest nodes (-networkx +kgrag):\n%s", diff)
			}
			b, err := retrieval.NewSubgraphBuilder(retrieval.NewMemorySource(r.ds), r.params, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := b.Records(ctx, sel)
			if err != nil {
				t.Fatal(err)
			}
			var chunks []string
			for _, c := range got.Chunks {
				chunks = append(chunks, c.TextUnitID)
			}
			slices.Sort(chunks)
			relIDs := func(rs []retrieval.RelationshipRecord) []string {
				out := []string{}
				for _, r := range rs {
					out = append(out, r.RelationshipID)
				}
				return out
			}
			info := [][]string{}
			for _, e := range got.Entities {
				info = append(info, []string{e.EntityID, e.Description})
			}
			slices.SortFunc(info, func(x, y []string) int { return slices.Compare(x, y) })
			var sums [][]any
			for _, s := range got.Summaries {
				cs, texts := []any{}, []string{}
				for _, rep := range s.Reports {
					cs = append(cs, rep.ID)
					texts = append(texts, stdcmp.Or(rep.Summary, rep.FullContent))
				}
				text := strings.Join(texts, "\n")
				if len(cs) == 0 {
					text = " " // the article's placeholder summary
				}
				sums = append(sums, []any{s.EntityID, cs, text})
			}
			for _, c := range []struct {
				what      string
				want, got any
			}{
				{"chunks", w.Chunks, chunks},
				{"inside relationships", w.Inside, relIDs(got.Inside)},
				{"outside relationships", w.Outside, relIDs(got.Outside)},
				{"nodes touched", w.NodesInfo, info},
				{"community summaries", w.Summaries, sums},
			} {
				if diff := cmp.Diff(c.want, c.got); diff != "" {
					t.Errorf("%s (-networkx +kgrag):\n%s", c.what, diff)
				}
			}
			if len(w.Chunks) == 0 || len(w.Outside) == 0 || len(w.NodesInfo) == 0 {
				t.Errorf("the oracle selected %d chunks, %d outside relationships, %d nodes: the comparison proves little",
					len(w.Chunks), len(w.Outside), len(w.NodesInfo))
			}
			// Count the runs whose cut falls inside equal weights, where
			// only the tie order decides.
			all := slices.Concat(got.Inside, got.Outside)
			for j := 1; j < len(all); j++ {
				if all[j].Weight == all[j-1].Weight && all[j].Inside == all[j-1].Inside {
					ties++
					break
				}
			}
		})
	}
	if ties == 0 {
		t.Errorf("no run had relationships of equal weight: the tie order went unchecked")
	}
}
