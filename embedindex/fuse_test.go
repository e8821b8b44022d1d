package embedindex_test

import (
	"math"
	"testing"

	"github.com/kgrag/kgrag/embedindex"
)

// TestFuse checks reciprocal rank fusion against scores worked by hand:
// b is 2nd and 1st (1/62 + 1/61), a 1st and absent (1/61), c 3rd and
// 2nd (1/63 + 1/62).
func TestFuse(t *testing.T) {
	x := []embedindex.Hit{{ID: "a"}, {ID: "b"}, {ID: "c"}}
	y := []embedindex.Hit{{ID: "b"}, {ID: "c"}}
	got := embedindex.Fuse(10, x, y)
	want := []struct {
		id    string
		score float64
	}{{"b", 1.0/62 + 1.0/61}, {"c", 1.0/63 + 1.0/62}, {"a", 1.0 / 61}}
	if len(got) != len(want) {
		t.Fatalf("Fuse = %v; want %v", got, want)
	}
	for i, w := range want {
		if got[i].ID != w.id || math.Abs(float64(got[i].Score)-w.score) > 1e-7 {
			t.Errorf("Fuse[%d] = %v; want %s %.6f", i, got[i], w.id, w.score)
		}
	}
	if got := embedindex.Fuse(1, x, y); len(got) != 1 || got[0].ID != "b" {
		t.Errorf("Fuse(1) = %v; want b alone", got)
	}
	// Equal scores: by id.
	if got := embedindex.Fuse(2, []embedindex.Hit{{ID: "z"}}, []embedindex.Hit{{ID: "y"}}); got[0].ID != "y" {
		t.Errorf("a tie = %v; want y first", got)
	}
}
