package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/eval"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/test"
)

// multihopGraph writes the HotpotQA dev set's passages as documents
// (kgrag eval --write-documents), indexes them with the fast method and
// no model (kgrag index, --prune auto choosing light for these short
// passages) and embeds entities and text units with embedModel at url;
// it returns the published questions and corpus, the output and index.
func multihopGraph(t *testing.T, url, embedModel string) (questions, corpus, out, index string) {
	t.Helper()
	dir := test.HotpotQA100(t)
	questions, corpus = filepath.Join(dir, "questions.json"), filepath.Join(dir, "corpus.json")
	work := t.TempDir()
	docs, out := filepath.Join(work, "docs"), filepath.Join(work, "out")
	stdout, stderr, code := runKgrag(t, "eval", "--questions", questions, "--corpus", corpus, "--write-documents", docs)
	if code != 0 || !strings.Contains(stdout, "wrote 994 passages of 100 hotpotqa questions") {
		t.Fatalf("eval --write-documents: exit %d: %s%s", code, stdout, stderr)
	}
	_, stderr, code = runKgrag(t, "index", "-q", "--input", docs, "--output", out, "--method", "fast", "--reports", "none", "--title-column", "title")
	if code != 0 {
		t.Fatalf("index: exit %d: %s", code, stderr)
	}
	// --prune auto keeps the phrases found once on these short
	// passages: GraphRAG's pruning would leave some 1,400 of 10,400.
	if ds := openOutput(t, out); len(ds.Entities) < 10000 {
		t.Errorf("%d entities; want those found once kept (--prune light)", len(ds.Entities))
	}
	_, stderr, code = runKgrag(t, "embed", "-q", "--input", out, "--tables", "entities,text_units", "--llm-url", url, "--embed-model", embedModel)
	if code != 0 {
		t.Fatalf("embed: exit %d: %s", code, stderr)
	}
	return questions, corpus, out, filepath.Join(out, defaultIndexDir)
}

// multihopEval runs kgrag eval over the dev set with args and returns the
// report.
func multihopEval(t *testing.T, questions, corpus, out, url, embedModel string, args ...string) evalReport {
	t.Helper()
	base := []string{"eval", "-q", "--questions", questions, "--corpus", corpus, "--input", out, "--llm-url", url, "--embed-model", embedModel, "--json"}
	stdout, stderr, code := runKgrag(t, append(base, args...)...)
	if code != 0 {
		t.Fatalf("eval %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	var rep evalReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestEvalPublishedSet runs a published multi-hop set end to end with the
// test model server's embeddings: its passages become documents, the
// fast graph is built and embedded, and eval scores every question's
// gold passages as documents, with recall@2 and @5 for the modes that
// rank text units. Recall is checked by a second reading: the ask --json
// record's sources and ranking, mapped to documents here from the
// parquet output, must give the same shares.
func TestEvalPublishedSet(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{Dim: askDim})
	questions, corpus, out, _ := multihopGraph(t, srv.URL(), askEmbedModel)
	rep := multihopEval(t, questions, corpus, out, srv.URL(), askEmbedModel, "--modes", "basic,walk,local", "--limit", "20", "--max-context-tokens", "1200")
	if rep.Count != 20 {
		t.Fatalf("%d questions; want 20", rep.Count)
	}
	for _, m := range rep.Modes {
		s := m.Summary
		if s.Failed != 0 || len(m.Results) != 20 {
			t.Errorf("%s: %d failed of %d", m.Mode, s.Failed, len(m.Results))
		}
		if s.DocumentRecall == nil || *s.DocumentRecall != s.Recall {
			t.Errorf("%s: document recall %v, context recall %v; want both, equal (the only evidence is documents)", m.Mode, s.DocumentRecall, s.Recall)
		}
		ranks := m.Mode != modeLocal
		if (s.RecallAt2 != nil) != ranks || (s.RecallAt5 != nil) != ranks {
			t.Errorf("%s: recall@2 %v, @5 %v; want them for the modes that rank text units only", m.Mode, s.RecallAt2, s.RecallAt5)
		}
		if s.MeanTokens > 1200 {
			t.Errorf("%s: mean context %f tokens over the 1,200 budget", m.Mode, s.MeanTokens)
		}
		for _, r := range m.Results {
			if r.Recall.Total != 2 {
				t.Errorf("%s, %s: %d gold passages; HotpotQA gives 2", m.Mode, r.ID, r.Recall.Total)
			}
		}
	}
	// The second reading, for the walk's first question.
	set, err := eval.ReadSet(questions, corpus)
	if err != nil {
		t.Fatal(err)
	}
	q := set.Questions[0]
	stdout, stderr, code := runKgrag(t, "ask", "-q", "--mode", "walk", "--context-only", "--json", "--input", out, "--llm-url", srv.URL(),
		"--embed-model", askEmbedModel, "--max-context-tokens", "1200", q.Question)
	if code != 0 {
		t.Fatalf("ask: exit %d: %s", code, stderr)
	}
	r := decodeAsk(t, []byte(stdout))
	docOf := docsOfUnits(t, out)
	held, top5 := 0, 0
	for _, g := range q.Evidence.Documents {
		for _, s := range r.Context.Records.Sources {
			if docOf[s.TextUnitID] == g {
				held++
				break
			}
		}
		for i, h := range r.Ranking {
			if i < 5 && docOf[h.ID] == g {
				top5++
				break
			}
		}
	}
	var walk eval.ModeReport
	for _, m := range rep.Modes {
		if m.Mode == "walk" {
			walk = m
		}
	}
	res := walk.Results[0]
	if res.Recall.Found != held || res.RecallAt5 == nil || *res.RecallAt5 != float64(top5)/2 {
		t.Errorf("walk, %s: found %d, recall@5 %v; ask --json holds %d, %d in its first 5", res.ID, res.Recall.Found, res.RecallAt5, held, top5)
	}
}

// docsOfUnits maps each text unit of out, by GraphRAG and human-readable
// id, to its document's title.
func docsOfUnits(t *testing.T, out string) map[string]string {
	t.Helper()
	m := map[string]string{}
	ds := openOutput(t, out)
	hr := map[string]string{}
	for _, u := range ds.TextUnits {
		hr[u.ID] = u.HumanReadableID
	}
	for _, d := range ds.Documents {
		for _, id := range d.TextUnitIDs {
			m[id], m[hr[id]] = d.Title, d.Title
		}
	}
	return m
}

// TestMultihopRealEmbedder is the measure: HotpotQA-100 over the
// fast graph embedded by all-MiniLM-L6-v2, at a 1,200-token budget. The
// walk's context must hold at least 0.05 more of the gold passages than
// basic search's (GraphRAG's, and kept by rank with twice the text
// units), and its recall@5 must beat basic's and BM25's. The table is
// logged.
func TestMultihopRealEmbedder(t *testing.T) {
	url, _, embedModel := modelServer(t)
	questions, corpus, out, _ := multihopGraph(t, url, embedModel)
	at1200 := []string{"--max-context-tokens", "1200"}
	runs := []struct {
		name string
		args []string
	}{
		{"basic", []string{"--modes", "basic"}},
		{"basic vector k20", []string{"--modes", "basic", "--basic-retriever", "vector", "--top-k-text-units", "20"}},
		{"bm25 k20", []string{"--modes", "basic", "--basic-retriever", "bm25", "--top-k-text-units", "20"}},
		{"walk", []string{"--modes", "walk"}},
	}
	got := map[string]eval.Summary{}
	var table strings.Builder
	fmt.Fprintf(&table, "%-18s %8s %6s %6s %8s\n", "HotpotQA-100", "RECALL", "R@2", "R@5", "TOKENS")
	for _, r := range runs {
		rep := multihopEval(t, questions, corpus, out, url, embedModel, append(r.args, at1200...)...)
		if len(rep.Modes) != 1 || rep.Modes[0].Summary.Failed != 0 {
			t.Fatalf("%s: %+v", r.name, rep.Modes)
		}
		s := rep.Modes[0].Summary
		got[r.name] = s
		fmt.Fprintf(&table, "%-18s %8.3f %6.3f %6.3f %8.0f\n", r.name, s.Recall, *s.RecallAt2, *s.RecallAt5, s.MeanTokens)
	}
	t.Logf("at 1,200 tokens, %s:\n%s", embedModel, table.String())
	walk := got["walk"]
	for _, b := range []string{"basic", "basic vector k20"} {
		if walk.Recall < got[b].Recall+0.05 {
			t.Errorf("walk's context recall %.3f; want at least %s's %.3f + 0.05", walk.Recall, b, got[b].Recall)
		}
	}
	for _, b := range []string{"basic", "bm25 k20"} {
		if *walk.RecallAt5 <= *got[b].RecallAt5 {
			t.Errorf("walk's recall@5 %.3f; want above %s's %.3f", *walk.RecallAt5, b, *got[b].RecallAt5)
		}
	}
}

func openOutput(t *testing.T, dir string) *graphrag.Dataset {
	t.Helper()
	ds, err := graphrag.Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}
