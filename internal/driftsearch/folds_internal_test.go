package driftsearch

import (
	"slices"
	"testing"

	"github.com/kgrag/kgrag/internal/retrieval"
)

// TestFolds checks the split of the primed reports against numpy's
// array_split, whose fold sizes (printed by numpy 2 for these cases) are
// the wants; numpy's empty folds are left out.
func TestFolds(t *testing.T) {
	tests := []struct {
		n, folds int
		sizes    []int // numpy: [len(x) for x in np.array_split(np.arange(n), folds)], zeros dropped
	}{
		{20, 5, []int{4, 4, 4, 4, 4}},
		{10, 3, []int{4, 3, 3}},
		{3, 5, []int{1, 1, 1}},
		{7, 2, []int{4, 3}},
		{1, 1, []int{1}},
		{21, 5, []int{5, 4, 4, 4, 4}},
		{0, 5, nil},
	}
	for _, tt := range tests {
		reports := make([]retrieval.ReportRecord, tt.n)
		for i := range reports {
			reports[i].ID = string(rune('a' + i))
		}
		got := folds(reports, tt.folds)
		var sizes []int
		var joined []retrieval.ReportRecord
		for _, f := range got {
			sizes = append(sizes, len(f))
			joined = append(joined, f...)
		}
		if !slices.Equal(sizes, tt.sizes) {
			t.Errorf("folds(%d reports, %d) sizes %v; numpy %v", tt.n, tt.folds, sizes, tt.sizes)
		}
		if !slices.EqualFunc(joined, reports, func(a, b retrieval.ReportRecord) bool { return a.ID == b.ID }) {
			t.Errorf("folds(%d, %d) do not keep the reports in order", tt.n, tt.folds)
		}
	}
}
