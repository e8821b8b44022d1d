package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/internal/tokens"
)

// TestBusy checks the union of handler spans against hand-worked sums.
func TestBusy(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	tests := []struct {
		name          string
		spans         [][2]int // ms from t0
		from, to      int
		union, sum, n int
	}{
		{"none", nil, 0, 100, 0, 0, 0},
		{"apart", [][2]int{{10, 20}, {30, 45}}, 0, 100, 25, 25, 2},
		{"overlapping", [][2]int{{10, 30}, {20, 40}}, 0, 100, 30, 40, 2},
		{"nested", [][2]int{{10, 50}, {20, 30}, {35, 40}}, 0, 100, 40, 55, 3},
		{"unsorted", [][2]int{{60, 70}, {10, 20}, {15, 25}}, 0, 100, 25, 30, 3},
		{"clipped to the window", [][2]int{{0, 20}, {90, 120}, {200, 210}}, 10, 100, 20, 20, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &model{}
			for _, s := range tt.spans {
				m.spans = append(m.spans, span{at(s[0]), at(s[1])})
			}
			union, sum, n := m.busy(at(tt.from), at(tt.to))
			want := func(ms int) time.Duration { return time.Duration(ms) * time.Millisecond }
			if union != want(tt.union) || sum != want(tt.sum) || n != tt.n {
				t.Errorf("busy = %v, %v, %d; want %v, %v, %d", union, sum, n, want(tt.union), want(tt.sum), tt.n)
			}
		})
	}
}

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
	defer m.close()
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
