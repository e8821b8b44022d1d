package retrieval_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kgrag/kgrag/embedindex/flat"
	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/embedtext"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/loader"
	"github.com/kgrag/kgrag/sparqlq"
)

// questions makes n questions about ds and the entity ids each selects,
// nearest first: questions name one or two entities (chosen with a fixed
// seed) and are embedded, like "title:description" of every entity, with
// the test server's deterministic word-hash embedder, then searched in a
// flat index, as kgrag ask does.
func questions(t *testing.T, ds *graphrag.Dataset, n, k int) (qs []string, selections [][]string) {
	t.Helper()
	const model, dim = "diff", 64
	var ids []string
	var vecs [][]float32
	var titles []string
	for _, e := range ds.Entities {
		if !e.Placeholder {
			ids = append(ids, e.ID)
			titles = append(titles, e.Title)
			vecs = append(vecs, llmtest.Embed(model, embedtext.Entity(e), dim))
		}
	}
	path := filepath.Join(t.TempDir(), "entities.vec")
	ctx := context.Background()
	if err := flat.Write(ctx, path, model, ids, vecs); err != nil {
		t.Fatal(err)
	}
	idx, err := flat.Open(ctx, path, flat.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, uint64(len(ids))))
	pick := func() string { return titles[rng.IntN(len(titles))] }
	for i := range n {
		var q string
		switch i % 4 {
		case 0:
			q = fmt.Sprintf("What is %s?", pick())
		case 1:
			q = fmt.Sprintf("Who is %s and what do they do?", pick())
		case 2:
			q = fmt.Sprintf("How are %s and %s related?", pick(), pick())
		default:
			q = fmt.Sprintf("What happens between %s and %s?", pick(), pick())
		}
		hits, err := idx.Search(ctx, llmtest.Embed(model, q, dim), k)
		if err != nil {
			t.Fatal(err)
		}
		var sel []string
		for _, h := range hits {
			sel = append(sel, h.ID)
		}
		qs = append(qs, q)
		selections = append(selections, sel)
	}
	return qs, selections
}

// differentialStores are the stores whose back end must agree with memory.
var differentialStores = []struct{ name, service string }{
	{"oxigraph", "OXIGRAPH"},
	{"fuseki", "FUSEKI"},
}

// TestSPARQLBackendMatchesMemory is the differential test of DESIGN.md:
// for each sample and 50 questions, the in-memory back end and the SPARQL
// back end over the same data loaded into a real Oxigraph and Fuseki give
// the same context: the same records, in the same order, and the same
// text, at community levels 0 to 3, with and without report roll-up. Each
// question costs four SPARQL round trips.
func TestSPARQLBackendMatchesMemory(t *testing.T) {
	const nQuestions = 50
	p := retrieval.DefaultParams()
	k := p.TopKEntities * p.OversampleScaler
	ctx := context.Background()
	for _, store := range differentialStores {
		t.Run(store.name, func(t *testing.T) {
			counter := &sparqlq.CountingTransport{}
			st := openStore(t, store.name, store.service, loader.Options{HTTPClient: &http.Client{Transport: counter}})
			for _, sample := range test.Samples() {
				t.Run(sample, func(t *testing.T) {
					ds, err := graphrag.Open(ctx, filepath.Join(test.GraphRAGSamples(t), sample))
					if err != nil {
						t.Fatal(err)
					}
					graph := loadGraph(ctx, t, st, ds, sample)
					// Community levels 0 to 3 in turn, so that every level
					// of the hierarchy is cut at once, with and without
					// GraphRAG 1.x's report roll-up.
					var mem, sq [8]*retrieval.Builder
					for i := range mem {
						pl := p
						pl.CommunityLevel = int64(i % 4)
						pl.RollUpReports = i >= 4
						mem[i] = newBuilder(t, retrieval.NewMemoryBackend(ds), pl)
						sq[i] = newBuilder(t, retrieval.NewSPARQLBackend(st.Client(), graph), pl)
					}
					qs, sels := questions(t, ds, nQuestions, k)
					var nonEmpty, trips int64
					var took []time.Duration
					for i, sel := range sels {
						want, err := mem[i%8].LocalContext(ctx, sel)
						if err != nil {
							t.Fatal(err)
						}
						before, start := counter.Requests(), time.Now()
						got, err := sq[i%8].LocalContext(ctx, sel)
						took = append(took, time.Since(start))
						if err != nil {
							t.Fatalf("question %d %q: %v", i, qs[i], err)
						}
						trips += counter.Requests() - before
						if len(want.Entities) > 0 {
							nonEmpty++
						}
						compareContexts(t, qs[i], want, got)
					}
					if nonEmpty < nQuestions*9/10 {
						t.Errorf("only %d of %d questions selected entities: the test compares little", nonEmpty, nQuestions)
					}
					perQ := float64(trips) / nQuestions
					slices.Sort(took)
					t.Logf("%s %s: %d questions identical; %.1f SPARQL round trips per question; p50 %v, p95 %v",
						store.name, sample, nQuestions, perQ, took[len(took)/2], took[len(took)*95/100])
					if perQ > 4 {
						t.Errorf("%.1f round trips per question; want at most 4", perQ)
					}
					compareGlobal(t, retrieval.NewMemoryBackend(ds), retrieval.NewSPARQLBackend(st.Client(), graph), counter.Requests)
				})
			}
		})
	}
}

// compareContexts fails when two contexts differ in records, order or text.
func compareContexts(t *testing.T, q string, want, got *retrieval.Context) {
	t.Helper()
	diff := func(what string, w, g []string) {
		t.Helper()
		if !slices.Equal(w, g) {
			t.Errorf("%q: %s: memory %q, SPARQL %q", q, what, w, g)
		}
	}
	diff("reports", ids(want.Reports, func(r retrieval.ReportRecord) string { return r.ID }),
		ids(got.Reports, func(r retrieval.ReportRecord) string { return r.ID }))
	diff("entities", ids(want.Entities, func(r retrieval.EntityRecord) string { return r.ID }),
		ids(got.Entities, func(r retrieval.EntityRecord) string { return r.ID }))
	diff("relationships", ids(want.Relationships, func(r retrieval.RelationshipRecord) string { return r.ID }),
		ids(got.Relationships, func(r retrieval.RelationshipRecord) string { return r.ID }))
	diff("text units", ids(want.TextUnits, func(r retrieval.TextUnitRecord) string { return r.TextUnitID }),
		ids(got.TextUnits, func(r retrieval.TextUnitRecord) string { return r.TextUnitID }))
	if want.Text != got.Text {
		t.Errorf("%q: context text differs (memory %d tokens, SPARQL %d):\n%s", q, want.Tokens, got.Tokens, firstDiff(want.Text, got.Text))
	}
}

// firstDiff shows where two texts part.
func firstDiff(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-80)
	return fmt.Sprintf("memory: …%q…\nSPARQL: …%q…", a[from:min(len(a), i+80)], b[from:min(len(b), i+80)])
}

// compareGlobal checks that both back ends give global search the same
// reports at every level, with the same parents, children and roll-up
// flags, in one SPARQL request each, and hence the same map batches.
func compareGlobal(t *testing.T, mem, sq retrieval.ReportSource, requests func() int64) {
	t.Helper()
	ctx := context.Background()
	for level := int64(0); level <= 3; level++ {
		want, err := mem.CommunityReports(ctx, level)
		if err != nil {
			t.Fatal(err)
		}
		before := requests()
		got, err := sq.CommunityReports(ctx, level)
		if err != nil {
			t.Fatalf("level %d: %v", level, err)
		}
		if n := requests() - before; n != 1 {
			t.Errorf("level %d: %d SPARQL requests; want 1", level, n)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("level %d: SPARQL reports differ from memory (-memory +SPARQL):\n%s", level, d)
			continue
		}
		for _, rollUp := range []bool{false, true} {
			p := retrieval.DefaultGlobalParams()
			p.CommunityLevel, p.RollUpReports, p.MaxContextTokens = level, rollUp, 3000
			b := newGlobalBuilder(t, p)
			wb, gb := b.Batches(b.Select(want)), b.Batches(b.Select(got))
			if len(wb) == 0 && len(want) > 0 {
				t.Errorf("level %d: no batches from %d reports", level, len(want))
			}
			for i := range wb {
				if i >= len(gb) || wb[i].Text != gb[i].Text {
					t.Errorf("level %d roll-up %v: batch %d differs", level, rollUp, i)
					break
				}
			}
		}
		t.Logf("level %d: %d reports identical", level, len(want))
	}
}
