package reports

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/internal/tokens"
)

// TestPartCounts checks sortContext's part-by-part token count against
// counting every text whole (GraphRAG's way): on every community of the
// v3 and v2.5.0 samples, at budgets from tiny to the default, with and
// without sub-community reports ahead of the tables, in both encodings,
// the two must pick the same text, and the part counts must pass their
// own check (no fallback to whole counts).
func TestPartCounts(t *testing.T) {
	reports := []subReport{{"7", "# A report\n\nWith \"quotes\", commas\nand lines.\n\n"}, {"12", "Short."}}
	for _, encName := range []string{tokens.EncodingCL100K, tokens.EncodingO200K} {
		enc, err := tokens.NewEncoder(encName)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"v3", "v2.5.0"} {
			ds, err := graphrag.Open(context.Background(), filepath.Join(test.GraphRAGSamples(t), name))
			if err != nil {
				t.Fatal(err)
			}
			b, err := NewBuilder(ds, enc, DefaultMaxInputTokens)
			if err != nil {
				t.Fatal(err)
			}
			checked := 0
			for _, c := range b.comms {
				for _, max := range []int{1, 60, 200, 700, 3000, DefaultMaxInputTokens} {
					for _, reps := range [][]subReport{nil, reports} {
						fast, ok := b.sortContextBy(c.records, reps, max, false)
						slow, _ := b.sortContextBy(c.records, reps, max, true)
						if !ok || fast != slow {
							t.Errorf("%s %s community %s, budget %d, %d reports: part counts ok=%v, same text %v",
								encName, name, c.num, max, len(reps), ok, fast == slow)
						}
						checked++
					}
				}
			}
			if checked < 100 {
				t.Errorf("%s: only %d contexts checked", name, checked)
			}
		}
	}
}
