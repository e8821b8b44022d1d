package llmtest

import (
	"testing"
	"time"
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
			m := &Timed{}
			for _, s := range tt.spans {
				m.spans = append(m.spans, span{at(s[0]), at(s[1])})
			}
			union, sum, n := m.Busy(at(tt.from), at(tt.to))
			want := func(ms int) time.Duration { return time.Duration(ms) * time.Millisecond }
			if union != want(tt.union) || sum != want(tt.sum) || n != tt.n {
				t.Errorf("busy = %v, %v, %d; want %v, %v, %d", union, sum, n, want(tt.union), want(tt.sum), tt.n)
			}
		})
	}
}
