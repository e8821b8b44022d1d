package elastic_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kgrag/kgrag/embedindex/elastic"
)

// TestRealUpdate changes a built index in place when the change is small
// (new, changed and deleted vectors; the rest untouched) and rebuilds it
// when it is large; after each, the index holds exactly the new set: each
// vector is its own nearest neighbour and deleted ids are gone.
func TestRealUpdate(t *testing.T) {
	cfg := realConfig(t)
	ctx := context.Background()
	const n, dim = 300, 32
	r := rand.New(rand.NewPCG(3, 4))
	ids, vecs := randomSet(r, "e", n, dim)
	if err := elastic.Build(ctx, cfg, "m", dim, ids, vecs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteAll(t, cfg) })

	// 10 changed, 5 deleted, 5 new: 20 of 300.
	ids2, vecs2 := slices.Clone(ids[5:]), slices.Clone(vecs[5:])
	for i := range 10 {
		vecs2[i] = randomUnit(r, dim)
	}
	newIDs, newVecs := randomSet(r, "n", 5, dim)
	ids2, vecs2 = append(ids2, newIDs...), append(vecs2, newVecs...)
	st, err := elastic.Update(ctx, cfg, "m", dim, ids2, vecs2, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	if st.Rebuilt || st.Upserted != 15 || st.Deleted != 5 || st.Unchanged != 285 {
		t.Errorf("small change: %+v; want in place, 15 upserted, 5 deleted, 285 unchanged", st)
	}
	checkHolds(t, cfg, ids2, vecs2, ids[:5])

	// Nothing changes: nothing written.
	if st, err := elastic.Update(ctx, cfg, "m", dim, ids2, vecs2, 0.1); err != nil || st.Upserted+st.Deleted != 0 || st.Rebuilt {
		t.Errorf("no change: %+v, %v; want nothing written", st, err)
	}

	// Half the vectors change: rebuilt.
	ids3, vecs3 := slices.Clone(ids2), slices.Clone(vecs2)
	for i := range len(vecs3) / 2 {
		vecs3[i] = randomUnit(r, dim)
	}
	st, err = elastic.Update(ctx, cfg, "m", dim, ids3, vecs3, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Rebuilt || st.Reason == "" {
		t.Errorf("large change: %+v; want a rebuild with a reason", st)
	}
	checkHolds(t, cfg, ids3, vecs3, nil)

	// Another model: rebuilt, whatever the change.
	if st, err := elastic.Update(ctx, cfg, "other", dim, ids3, vecs3, 0.1); err != nil || !st.Rebuilt {
		t.Errorf("other model: %+v, %v; want a rebuild", st, err)
	}
}

// checkHolds checks that the alias holds exactly ids: each vector finds
// itself first, the count matches, and none of gone is found.
func checkHolds(t *testing.T, cfg elastic.Config, ids []string, vecs [][]float32, gone []string) {
	t.Helper()
	idx, err := elastic.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c := idx.Info().Count; c != len(ids) {
		t.Errorf("the index holds %d documents; want %d", c, len(ids))
	}
	for i := 0; i < len(ids); i += 7 {
		hits, err := idx.Search(context.Background(), vecs[i], 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 || hits[0].ID != ids[i] {
			t.Errorf("vector of %s: nearest %v; want itself", ids[i], hits)
		}
		for _, h := range hits {
			if slices.Contains(gone, h.ID) {
				t.Errorf("deleted %s is still found", h.ID)
			}
		}
	}
}
