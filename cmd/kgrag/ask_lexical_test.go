package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/embedindex"
	answerjson "github.com/kgrag/kgrag/internal/answer"
	"github.com/kgrag/kgrag/internal/lexical"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
)

// TestAskLexicalRetrievers: --entity-retriever hybrid's start entities
// are the fusion (reciprocal rank, embedindex.Fuse) of the vector
// neighbours, as --entity-retriever vector gives them, and the entities
// of highest BM25 score over "title description", read here from the
// parquet output; every entity mode builds its context from them.
// --basic-retriever bm25 ranks first a text unit that holds the
// question's rarest word, and hybrid keeps it among those it ranks.
func TestAskLexicalRetrievers(t *testing.T) {
	f := newAllTablesFixture(t)
	q := "Tell me about Bob Cratchit and the Fezziwig ball"
	base := []string{"ask", "-q", "--json", "--context-only", "--input", f.input, "--index", f.index, "--llm-url", f.srv.URL(), "--embed-model", askEmbedModel}
	ask := func(t *testing.T, args ...string) askResult {
		t.Helper()
		stdout, stderr, code := runKgrag(t, append(append(slices.Clone(base), args...), q)...)
		if code != 0 {
			t.Fatalf("ask %s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
		return decodeAsk(t, []byte(stdout))
	}
	has := func(hits []answerjson.Hit, id string) bool {
		return slices.ContainsFunc(hits, func(h answerjson.Hit) bool { return h.ID == id })
	}
	ds := openOutput(t, f.input)
	lex := lexical.New()
	for _, e := range ds.Entities {
		lex.Add(e.Title + " " + e.Description)
	}
	for _, m := range []string{modeLocal, modeSPARQL, modeSubgraph} {
		t.Run(m, func(t *testing.T) {
			vec := ask(t, "--mode", m)
			hyb := ask(t, "--mode", m, "--entity-retriever", "hybrid")
			k := len(vec.Neighbours)
			var vh, bh []embedindex.Hit
			for _, h := range vec.Neighbours {
				vh = append(vh, embedindex.Hit{ID: h.ID})
			}
			for _, h := range lex.Search(q, k) {
				bh = append(bh, embedindex.Hit{ID: ds.Entities[h.Doc].ID})
			}
			want := embedindex.Fuse(k, vh, bh)
			var got, wantIDs []string
			for i := range want {
				wantIDs = append(wantIDs, want[i].ID)
			}
			for _, h := range hyb.Neighbours {
				got = append(got, h.ID)
			}
			if !slices.Equal(got, wantIDs) {
				t.Errorf("hybrid start entities %q; want %q", got, wantIDs)
			}
			if slices.Equal(got, func() []string {
				var v []string
				for _, h := range vec.Neighbours {
					v = append(v, h.ID)
				}
				return v
			}()) {
				t.Error("hybrid's start entities are the vector ones: BM25 added nothing")
			}
			if hyb.Context == nil || hyb.Context.Tokens == 0 {
				t.Error("hybrid built no context")
			}
		})
	}
	// The text unit BM25 ranks first holds the most of the question's
	// words, weighed by rarity: it must hold "cratchit" at least.
	bm := ask(t, "--mode", "basic", "--basic-retriever", "bm25")
	if len(bm.Ranking) == 0 || len(bm.Neighbours) != 0 {
		t.Fatalf("bm25: ranking %d, neighbours %d; want a ranking and no kNN", len(bm.Ranking), len(bm.Neighbours))
	}
	top := ""
	for _, u := range ds.TextUnits {
		if u.ID == bm.Ranking[0].ID || u.HumanReadableID == bm.Ranking[0].ID {
			top = u.Text
		}
	}
	if !slices.Contains(lexical.Terms(top), "cratchit") {
		t.Errorf("bm25's first text unit %s lacks the word cratchit", bm.Ranking[0].ID)
	}
	hy := ask(t, "--mode", "basic", "--basic-retriever", "hybrid")
	if !has(hy.Ranking, bm.Ranking[0].ID) || len(hy.Neighbours) == 0 {
		t.Errorf("hybrid ranking %v; want bm25's first %s in it, and the kNN neighbours recorded", hy.Ranking, bm.Ranking[0].ID)
	}
}

// TestAskRerank: --rerank-model reorders the walk's and basic search's
// first --rerank-top text units by the server's scores (the test
// server's llmtest.Rerank of the question and the unit's text, computed
// here from the parquet output), best first, and sends one rerank
// request a question; basic search's GraphRAG retriever refuses it.
func TestAskRerank(t *testing.T) {
	f := newAllTablesFixture(t)
	q := "What does Bob Cratchit eat at Christmas dinner?"
	base := []string{"ask", "-q", "--json", "--context-only", "--input", f.input, "--index", f.index, "--llm-url", f.srv.URL(), "--embed-model", askEmbedModel}
	text := map[string]string{}
	for _, u := range openOutput(t, f.input).TextUnits {
		text[u.ID], text[u.HumanReadableID] = u.Text, u.Text
	}
	for _, args := range [][]string{{"--mode", "walk"}, {"--mode", "basic", "--basic-retriever", "hybrid"}} {
		t.Run(args[1], func(t *testing.T) {
			f.srv.Reset()
			cmd := append(append(slices.Clone(base), args...), "--rerank-model", "test-reranker", "--rerank-top", "5", q)
			stdout, stderr, code := runKgrag(t, cmd...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			r := decodeAsk(t, []byte(stdout))
			if len(r.Ranking) < 5 {
				t.Fatalf("ranking of %d units; want 5 or more", len(r.Ranking))
			}
			for i := 1; i < 5; i++ {
				a, b := llmtest.Rerank(q, text[r.Ranking[i-1].ID]), llmtest.Rerank(q, text[r.Ranking[i].ID])
				if a < b {
					t.Errorf("ranking %d (%s, %.2f) before %d (%s, %.2f): want the reranker's order", i-1, r.Ranking[i-1].ID, a, i, r.Ranking[i].ID, b)
				}
			}
			n := 0
			for _, req := range f.srv.Requests() {
				if strings.HasSuffix(req.Path, "/rerank") {
					n++
					if docs, _ := req.Extra["documents"].([]any); len(docs) != 5 || req.Model != "test-reranker" {
						t.Errorf("rerank request with %d documents, model %q; want 5, test-reranker", len(docs), req.Model)
					}
				}
			}
			if n != 1 {
				t.Errorf("%d rerank requests; want 1", n)
			}
			if _, ok := r.Timings["rerank"]; !ok {
				t.Errorf("timings %v lack rerank", r.Timings)
			}
		})
	}
	_, stderr, code := runKgrag(t, append(slices.Clone(base), "--mode", "basic", "--rerank-model", "test-reranker", q)...)
	if code != exitUsage || !strings.Contains(stderr, "--basic-retriever") {
		t.Errorf("basic with GraphRAG's retriever and a reranker: exit %d, %q; want a usage error naming --basic-retriever", code, stderr)
	}
}
