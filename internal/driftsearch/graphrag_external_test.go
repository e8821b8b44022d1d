package driftsearch_test

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kgrag/kgrag/internal/driftsearch"
	"github.com/kgrag/kgrag/internal/test"
)

// oracleDrift is scripts/oracle/graphrag_search.py's answer to a DRIFT job.
type oracleDrift struct {
	Primed  []string `json:"primed"`
	Folds   [][]string
	Actions []struct {
		Query    string              `json:"query"`
		Answered bool                `json:"answered"`
		Answer   *string             `json:"answer"`
		Context  map[string][]string `json:"context"`
	} `json:"actions"`
	Reduce []string       `json:"reduce"`
	Calls  map[string]int `json:"calls"`
}

type driftJob struct {
	Kind       string `json:"kind"`
	Dir        string `json:"dir"`
	Question   string `json:"question"`
	Level      int64  `json:"level"`
	Template   string `json:"template"`
	EmbedURL   string `json:"embed_url"`
	EmbedModel string `json:"embed_model"`
	// VisibleOnly: the entity store holds only what GraphRAG's reader
	// keeps.
	VisibleOnly bool `json:"visible_only,omitempty"`
}

// TestDRIFTMatchesGraphRAG runs kgrag's DRIFT search and GraphRAG 3.3.0's
// own DRIFTSearch (scripts/oracle/graphrag_search.py) on the 2.x and 3.x
// samples with GraphRAG's defaults, the same embeddings (the test
// server's) and the same scripted replies, and checks that both make the
// same calls with the same contexts:
//   - the 20 reports primed, nearest the expanded question first, and
//     their 5 folds;
//   - every action in the order asked (the primer's follow-ups, then each
//     round's), whether it was answered, and for each answered follow-up
//     the ids of the reports, entities, relationships and sources its
//     local search context printed;
//   - the answers the final call combines, in order;
//   - the calls of each kind.
//
// GraphRAG's two random draws are fixed to kgrag's choices (see the
// oracle). The samples' text units count their human_readable_id from 0,
// as GraphRAG's printed row positions do, so source ids compare as they
// are.
//
// The follow-ups' local contexts differ from GraphRAG's as shipped for two
// of the causes internal/retrieval's TestLocalContextMatchesGraphRAG
// names (kgrag keeps entities in no community up to the level, which
// GraphRAG's reader drops: cause 1; kgrag keeps the top 10 neighbours
// where GraphRAG keeps all 20 it asked for: cause 6). The test logs the
// agreement as shipped, then removes both (an entity index of the
// entities GraphRAG keeps, and 20 neighbours kept) and requires the same
// calls, contexts and answers exactly.
func TestDRIFTMatchesGraphRAG(t *testing.T) {
	py := test.GraphRAGPython(t)
	const question = "How do the ghosts change Scrooge?"
	for _, sample := range []string{"v2.5.0", "v3"} {
		for _, removed := range []bool{false, true} {
			name := sample + "/as shipped"
			if removed {
				name = sample + "/causes removed"
			}
			t.Run(name, func(t *testing.T) {
				opts := driftsearch.DefaultOptions()
				visibleAt := int64(-1)
				if removed {
					visibleAt = opts.CommunityLevel
					opts.Local.TopKEntities, opts.Local.OversampleScaler = 20, 1
				}
				f := newFixture(t, sample, question, visibleAt)
				res, err := f.searcher(t, f.client, opts).Search(context.Background(), question, driftsearch.Hooks{})
				if err != nil {
					t.Fatal(err)
				}
				want := test.PythonJSONL[oracleDrift](t, py, []string{filepath.Join(test.RepoRoot(t), "scripts", "oracle", "graphrag_search.py")},
					[]driftJob{{Kind: "drift", Dir: filepath.Join(test.GraphRAGSamples(t), sample), Question: question, Level: opts.CommunityLevel,
						Template: res.Template, EmbedURL: f.srv.URL(), EmbedModel: embedModel, VisibleOnly: removed}})[0]
				diffs := compareDrift(res, want, kinds(f.srv))
				same := 0
				for _, a := range res.Actions {
					if _, ok := diffs[a.ID]; !ok && a.ID > 0 {
						same++
					}
				}
				t.Logf("%s: %d calls %v; %d of %d follow-ups asked alike with the same context", name, res.LLMCalls, kinds(f.srv), same, len(res.Actions)-1)
				if !removed {
					if _, ok := diffs[-1]; ok {
						t.Errorf("primer differs from GraphRAG's:\n%s", diffs[-1])
					}
					return
				}
				for _, id := range slices.Sorted(maps.Keys(diffs)) {
					t.Errorf("%s", diffs[id])
				}
			})
		}
	}
}

// compareDrift lists the differences between kgrag's search and
// GraphRAG's: -1 the primer's, -2 the totals', else by action.
func compareDrift(res *driftsearch.Result, want oracleDrift, calls map[string]int) map[int]string {
	out := map[int]string{}
	var folds [][]string
	for _, p := range res.Primer {
		folds = append(folds, p.ReportIDs)
	}
	if d := cmp.Diff(want.Primed, res.Primed) + cmp.Diff(want.Folds, folds); d != "" {
		out[-1] = "primed reports or folds differ (-GraphRAG +kgrag):\n" + d
	}
	var reduce []string
	for _, a := range res.Actions {
		if a.Answer != "" {
			reduce = append(reduce, a.Answer)
		}
	}
	if d := cmp.Diff(want.Calls, calls) + cmp.Diff(want.Reduce, reduce); d != "" || len(res.Actions) != len(want.Actions) ||
		res.LLMCalls != calls["expand"]+calls["primer"]+calls["local"]+calls["reduce"] {
		out[-2] = fmt.Sprintf("%d actions, GraphRAG %d; Result.LLMCalls %d; calls or reduced answers differ (-GraphRAG +kgrag):\n%s",
			len(res.Actions), len(want.Actions), res.LLMCalls, d)
	}
	for i := range min(len(res.Actions), len(want.Actions)) {
		a, w := res.Actions[i], want.Actions[i]
		if a.Query != w.Query || a.Answered != w.Answered {
			out[i] = fmt.Sprintf("action %d: %q answered %v; GraphRAG %q answered %v", i, a.Query, a.Answered, w.Query, w.Answered)
			continue
		}
		if i == 0 || !a.Answered {
			continue
		}
		got := map[string][]string{"reports": a.Context.Reports, "entities": a.Context.Entities,
			"relationships": a.Context.Relationships, "sources": a.Context.Sources}
		if d := cmp.Diff(w.Context, got); d != "" {
			out[i] = fmt.Sprintf("action %d %q: context records differ (-GraphRAG +kgrag):\n%s", i, a.Query, d)
		}
	}
	return out
}
