package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/embedindex"
	answerjson "github.com/kgrag/kgrag/internal/answer"
	"github.com/kgrag/kgrag/internal/lexical"
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
