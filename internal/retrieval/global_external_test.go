package retrieval_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/internal/test"
)

// graphRAGDirs returns, per sample, a directory GraphRAG 3.x reads: the
// 2.x and 3.x samples as they are, the older ones written in 3.x layout
// by graphrag.Write3x from what kgrag read.
func graphRAGDirs(t *testing.T) (map[string]string, map[string]*graphrag.Dataset) {
	t.Helper()
	dirs := map[string]string{}
	sets := map[string]*graphrag.Dataset{}
	for _, name := range test.Samples() {
		dir := filepath.Join(test.GraphRAGSamples(t), name)
		ds, err := graphrag.Open(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		if name == "v0.3.4" || name == "v1.0.1" {
			dir = filepath.Join(t.TempDir(), name)
			if err := graphrag.Write3x(context.Background(), dir, ds); err != nil {
				t.Fatal(err)
			}
		}
		dirs[name], sets[name] = dir, ds
	}
	return dirs, sets
}

// TestGlobalBatchesMatchGraphRAG packs the reports of every level of the
// four samples, at GraphRAG's budget and a small one, and compares the
// batches with those GraphRAG 3.3.0's GlobalCommunityContext builds
// (PyPI graphrag, scripts/oracle/graphrag_global.py): with
// GraphRAGTokenCount they must be the same reports in the same order and
// the same text, byte for byte. kgrag's own exact count may cut batches
// elsewhere (GraphRAG counts a report's line before quoting it, and a
// "-----Reports-----" line it does not send): the test measures how
// often, and checks that kgrag's batches, unlike GraphRAG's, never exceed
// the budget.
func TestGlobalBatchesMatchGraphRAG(t *testing.T) {
	py := graphragPython(t)
	enc, err := encoderOnce()
	if err != nil {
		t.Fatal(err)
	}
	dirs, sets := graphRAGDirs(t)
	var jobs []test.GlobalJob
	var names []string
	for _, name := range test.Samples() {
		for level := int64(0); level <= 3; level++ {
			for _, budget := range []int{12000, 2500} {
				jobs = append(jobs, test.GlobalJob{Dir: dirs[name], Level: level, Budget: budget})
				names = append(names, name)
			}
		}
	}
	outs := test.GraphRAGGlobal(t, py, jobs)
	var batches, sameExact, grOver, reports int
	for i, j := range jobs {
		name, gr := names[i], outs[i]
		t.Run(fmt.Sprintf("%s/level %d/budget %d", name, j.Level, j.Budget), func(t *testing.T) {
			all, err := retrieval.NewMemoryBackend(sets[name]).CommunityReports(context.Background(), j.Level)
			if err != nil {
				t.Fatal(err)
			}
			if len(all) != gr.Reports {
				t.Errorf("%d reports up to the level; GraphRAG reads %d", len(all), gr.Reports)
			}
			p := retrieval.DefaultGlobalParams()
			p.CommunityLevel, p.MaxContextTokens, p.GraphRAGTokenCount = j.Level, j.Budget, true
			got := newGlobalBuilder(t, p).Batches(all)
			if len(got) != len(gr.Batches) {
				t.Fatalf("%d batches; GraphRAG makes %d", len(got), len(gr.Batches))
			}
			for k, b := range got {
				var ids []string
				for _, r := range b.Reports {
					ids = append(ids, r.ID)
				}
				if !slices.Equal(ids, gr.Batches[k].IDs) {
					t.Errorf("batch %d: reports %v; GraphRAG %v", k, ids, gr.Batches[k].IDs)
				} else if b.Text != gr.Batches[k].Text {
					t.Errorf("batch %d: text differs at %s", k, firstDiff(b.Text, gr.Batches[k].Text))
				}
				if gr.Batches[k].Tokens > j.Budget {
					grOver++
				}
			}
			reports += len(all)

			// kgrag as shipped: exact counts.
			p.GraphRAGTokenCount = false
			exact := newGlobalBuilder(t, p).Batches(all)
			for k, b := range exact {
				if n := enc.Count(b.Text); n > j.Budget {
					t.Errorf("exact batch %d: %d tokens, over the budget %d", k, n, j.Budget)
				}
				if k < len(gr.Batches) && b.Text == gr.Batches[k].Text {
					sameExact++
				}
			}
			batches += len(gr.Batches)
		})
	}
	t.Logf("%d jobs, %d reports, %d GraphRAG batches: all identical with GraphRAG's count; "+
		"%d identical with kgrag's exact count; %d GraphRAG batches over their budget",
		len(jobs), reports, batches, sameExact, grOver)
	if batches < 50 {
		t.Errorf("only %d batches compared", batches)
	}
}
