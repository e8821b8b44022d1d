package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/internal/tokens"
)

// TestAsk runs one question on the v3 sample against the scripted server,
// static and with dynamic selection: every reply must parse (ask checks
// that, and that the server saw one request per model call), the ratings
// must be the rule's, and the server's busy time must fit in the wall time.
func TestAsk(t *testing.T) {
	ctx := context.Background()
	d, err := openDataset(ctx, "v3", filepath.Join(test.GraphRAGSamples(t), "v3"))
	if err != nil {
		t.Fatal(err)
	}
	m := startModel(0)
	defer m.Close()
	if err := m.rateReports(ctx, d, 2); err != nil {
		t.Fatal(err)
	}
	client, err := newClient(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, dynamic := range []bool{false, true} {
		enc, err := tokens.NewEncoder(tokens.EncodingCL100K)
		if err != nil {
			t.Fatal(err)
		}
		s, err := searcher(d, enc, client, 2, 4, dynamic)
		if err != nil {
			t.Fatal(err)
		}
		a, err := ask(ctx, s, m, question(0))
		if err != nil {
			t.Fatalf("dynamic %v: %v", dynamic, err)
		}
		if a.busy <= 0 || a.busy > a.wall || a.busy > a.handlers {
			t.Errorf("dynamic %v: busy %v, wall %v, handlers %v; want 0 < busy <= wall and <= handlers", dynamic, a.busy, a.wall, a.handlers)
		}
		if len(a.res.Batches) == 0 || len(a.res.Reduce.Context.Points) == 0 {
			t.Errorf("dynamic %v: %d batches, %d points; want some", dynamic, len(a.res.Batches), len(a.res.Reduce.Context.Points))
		}
		if !dynamic {
			continue
		}
		if len(a.res.Selection.Rated) == 0 {
			t.Fatal("dynamic selection rated nothing")
		}
		for _, r := range a.res.Selection.Rated {
			if r.Rating != rating(r.Community) {
				t.Errorf("community %s rated %d; the rule says %d", r.Community, r.Rating, rating(r.Community))
			}
		}
	}
}
