package graphbuild_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/graphbuild"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
)

func llmConfig() llmtest.Config { return llmtest.Config{} }

// buildSmall merges, summarises (test server) and finalizes a small
// corpus with a self-pair, both directions of a pair, an orphan and a
// title with two types.
func buildSmall(t *testing.T) ([]graphrag.Entity, []graphrag.Relationship) {
	t.Helper()
	g := graphbuild.Merge([]graphbuild.Extraction{
		withRels(ents("tu-1", ent("SCROOGE", "PERSON", "A miser."), ent("MARLEY", "PERSON", "Dead partner."),
			ent("BOB CRATCHIT", "PERSON", "Scrooge's clerk.")),
			rel("SCROOGE", "MARLEY", "Partners.", 8), rel("SCROOGE", "BOB CRATCHIT", "Employs him.", 7),
			rel("SCROOGE", "GHOST", "Sees it.", 2)),
		withRels(ents("tu-2", ent("SCROOGE", "PERSON", "Changes his ways."), ent("MARLEY", "GHOST", "Wears chains."),
			ent("TINY TIM", "PERSON", "Bob's son.")),
			rel("MARLEY", "SCROOGE", "Warns him.", 9), rel("BOB CRATCHIT", "TINY TIM", "Father of.", 0),
			rel("SCROOGE", "SCROOGE", "Argues with himself.", 1)),
	})
	srv := summaryServer(t, llmConfig())
	if _, err := summarizer(t, srv, 500).Summarize(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	return graphbuild.Finalize(g)
}

// TestWrite3xRoundTrip writes a built graph as GraphRAG 3.x parquet and
// reads it back with graphrag.Open: the release is 3.x, no placeholder
// is needed (every relationship end is an entity) and every field
// survives.
func TestWrite3xRoundTrip(t *testing.T) {
	es, rs := buildSmall(t)
	if len(es) != 4 || len(rs) != 5 {
		t.Fatalf("built %d entities and %d relationships; want 4 and 5 (GHOST is no entity)", len(es), len(rs))
	}
	dir := t.TempDir()
	ctx := context.Background()
	if err := graphrag.Write3x(ctx, dir, &graphrag.Dataset{Entities: es, Relationships: rs}); err != nil {
		t.Fatal(err)
	}
	ds, err := graphrag.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Release != graphrag.Release3 || ds.Placeholders != 0 {
		t.Errorf("Open: release %q, %d placeholders; want %q and none", ds.Release, ds.Placeholders, graphrag.Release3)
	}
	empty := cmpopts.EquateEmpty()
	ignore := cmpopts.IgnoreFields(graphrag.Entity{}, "Communities")
	if d := cmp.Diff(es, ds.Entities, empty, ignore); d != "" {
		t.Errorf("entities after Write3x and Open (-written +read):\n%s", d)
	}
	if d := cmp.Diff(rs, ds.Relationships, empty); d != "" {
		t.Errorf("relationships after Write3x and Open (-written +read):\n%s", d)
	}
	// Degrees as GraphRAG counts them: distinct undirected pairs, a
	// self-pair twice.
	wantDegree := map[string]int64{"SCROOGE": 4, "MARLEY": 1, "BOB CRATCHIT": 2, "TINY TIM": 1}
	for _, e := range ds.Entities {
		if e.Degree != wantDegree[e.Title] {
			t.Errorf("degree of %s = %d; want %d", e.Title, e.Degree, wantDegree[e.Title])
		}
	}
}
