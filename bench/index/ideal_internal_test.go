package main

import (
	"context"
	"math/bits"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/kgrag/kgrag/internal/indexer"
	"github.com/kgrag/kgrag/internal/indexer/indexertest"
	"github.com/kgrag/kgrag/internal/test"
)

func TestRoundsChains(t *testing.T) {
	tests := []struct {
		name   string
		chains []int
		c      int
		want   int
	}{
		{"one call", []int{1}, 4, 1},
		{"equal chains fill rounds", []int{2, 2, 2, 2, 2, 2, 2, 2}, 4, 4},
		{"equal chains, last round short", []int{2, 2, 2, 2, 2}, 4, 3}, // ceil(10/4): a unit's calls need not share a slot
		{"one worker makes every call", []int{3, 1, 2}, 1, 6},
		{"the longest chain bounds", []int{5, 1, 1}, 4, 5},
		{"long chain first leaves no gap", []int{3, 1, 1, 1}, 2, 3},
		{"more workers than calls", []int{1, 1, 1}, 8, 1},
	}
	for _, tt := range tests {
		var f forest
		for _, k := range tt.chains {
			f.chain(k)
		}
		if got := f.rounds(tt.c); got != tt.want {
			t.Errorf("%s: rounds(%d) of chains %v = %d; want %d", tt.name, tt.c, tt.chains, got, tt.want)
		}
	}
}

// TestRoundsOptimal checks Hu's schedule against an exhaustive search of
// every schedule on random small call forests (chains, and calls waiting
// for several others, as report communities do).
func TestRoundsOptimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		n := 1 + rng.IntN(9)
		f := forest{next: make([]int, n)}
		for i := range n {
			f.next[i] = -1
			if i < n-1 && rng.IntN(3) > 0 {
				f.next[i] = i + 1 + rng.IntN(n-i-1)
			}
		}
		for c := 1; c <= 3; c++ {
			if got, want := f.rounds(c), bruteRounds(f.next, c); got != want {
				t.Fatalf("trial %d: next %v, c %d: rounds %d; the best schedule takes %d", trial, f.next, c, got, want)
			}
		}
	}
}

// bruteRounds is the fewest rounds over every schedule: breadth-first over
// the sets of calls done, each round making any ready calls, at most c.
func bruteRounds(next []int, c int) int {
	n := len(next)
	all := uint(1)<<n - 1
	preds := make([]uint, n)
	for i, nx := range next {
		if nx >= 0 {
			preds[nx] |= 1 << i
		}
	}
	seen := map[uint]bool{0: true}
	front := []uint{0}
	for rounds := 0; ; rounds++ {
		var nextFront []uint
		for _, done := range front {
			if done == all {
				return rounds
			}
			var ready uint
			for i := range n {
				if done&(1<<i) == 0 && preds[i]&^done == 0 {
					ready |= 1 << i
				}
			}
			for sub := ready; sub > 0; sub = (sub - 1) & ready {
				if bits.OnesCount(sub) <= c && !seen[done|sub] {
					seen[done|sub] = true
					nextFront = append(nextFront, done|sub)
				}
			}
		}
		front = nextFront
	}
}

// TestPlansCarol indexes a piece of the book against the instant server
// and checks the plans read from its requests against the run's own
// counts and the closed form for equal chains.
func TestPlansCarol(t *testing.T) {
	m := startModel(0)
	defer m.close()
	client, err := newClient(m)
	if err != nil {
		t.Fatal(err)
	}
	s := setup{text: indexertest.FirstWords(test.ChristmasCarol(t), 3000), concurrency: 3, size: 300, overlap: 50, plan: true}
	r, err := index(context.Background(), m, client, s, filepath.Join(t.TempDir(), "run"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.plans) != 3 {
		t.Fatalf("%d plans; want extraction, summaries, reports", len(r.plans))
	}
	ext := r.plans[0]
	units := r.sum.TextUnits
	// One gleaning round (GraphRAG's default) and no loop question after
	// the last round: two calls per unit.
	if got := len(ext.f.next); got != 2*units {
		t.Errorf("extraction: %d calls for %d units; want %d", got, units, 2*units)
	}
	for _, c := range []int{1, 3, 4, 8} {
		// With calls in flight the bound: every slot busy every round.
		if got, want := ext.f.rounds(c), max(2, (2*units+c-1)/c); got != want {
			t.Errorf("extraction rounds(%d) = %d; want max(2, ceil(2×%d/%d)) = %d", c, got, units, c, want)
		}
		// With a unit holding its slot: full rounds of units.
		if got, want := ext.slotRounds(c), (units+c-1)/c*2; got != want {
			t.Errorf("extraction slotRounds(%d) = %d; want ceil(%d/%d)×2 = %d", c, got, units, c, want)
		}
	}
	for _, p := range r.plans {
		if got, want := int64(len(p.f.next)), r.stage(p.stage).Calls; got != want || got == 0 {
			t.Errorf("%s: %d calls planned, the run counts %d", p.stage, got, want)
		}
	}
	if r.plans[1].stage != indexer.StageSummaries || r.plans[2].stage != indexer.StageReports {
		t.Errorf("stages %s, %s; want summaries, reports", r.plans[1].stage, r.plans[2].stage)
	}
}
