package eval_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/answer"
	"github.com/kgrag/kgrag/internal/eval"
	"github.com/kgrag/kgrag/internal/test"
)

// TestShippedQuestionSets checks the question sets under demo/eval
// against the texts they were written from: every gold quote is in the
// text (as ContextRecall matches it, with the whole text as the context),
// every gold entity is a title of the graph the set is run on (for
// Macbeth, whose graph kgrag index builds, a name the text holds), the
// four kinds are there, and absent questions carry no gold.
func TestShippedQuestionSets(t *testing.T) {
	root := test.RepoRoot(t)
	macbeth, err := os.ReadFile(filepath.Join(root, "demo", "text", "macbeth.txt"))
	if err != nil {
		t.Fatal(err)
	}
	carolTitles := func(t *testing.T) map[string]bool {
		ds, err := graphrag.Open(context.Background(), filepath.Join(test.GraphRAGSamples(t), "v3"))
		if err != nil {
			t.Fatal(err)
		}
		titles := map[string]bool{}
		for _, e := range ds.Entities {
			titles[e.Title] = true
		}
		return titles
	}
	tests := []struct {
		file   string
		text   func(*testing.T) string
		titles func(*testing.T) map[string]bool // nil: titles are checked as quotes
	}{
		{"macbeth.jsonl", func(*testing.T) string { return string(macbeth) }, nil},
		{"christmas-carol.jsonl", func(t *testing.T) string { return test.ChristmasCarol(t) }, carolTitles},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			qs, err := eval.ReadFile(filepath.Join(root, "demo", "eval", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			whole := &answer.Result{Context: &answer.Context{Text: tt.text(t)}}
			var titles map[string]bool
			if tt.titles != nil {
				titles = tt.titles(t)
			}
			kinds := map[string]int{}
			for _, q := range qs {
				kinds[q.Kind]++
				ev := q.Evidence
				if q.Kind == eval.KindAbsent {
					if ev.Items() > 0 || q.Answer != "" {
						t.Errorf("%s: an absent question with gold %+v, answer %q", q.ID, ev, q.Answer)
					}
					continue
				}
				if len(ev.Quotes) == 0 || q.Answer == "" {
					t.Errorf("%s: %d quotes, answer %q; want both", q.ID, len(ev.Quotes), q.Answer)
				}
				asText := eval.Evidence{Quotes: ev.Quotes}
				if titles == nil {
					asText.Quotes = append(asText.Quotes, ev.Entities...)
				}
				if r := eval.ContextRecall(asText, whole, nil); r.Found != r.Total {
					t.Errorf("%s: not in the text: %s", q.ID, strings.Join(r.Missing, "; "))
				}
				for _, e := range ev.Entities {
					if titles != nil && !titles[e] {
						t.Errorf("%s: entity %q is no title of the graph", q.ID, e)
					}
				}
			}
			if len(qs) < 40 {
				t.Errorf("%d questions; want at least 40", len(qs))
			}
			for _, k := range []string{eval.KindFact, eval.KindRelation, eval.KindTheme, eval.KindAbsent} {
				if kinds[k] < 8 {
					t.Errorf("%d %s questions; want at least 8 of each kind (%v)", kinds[k], k, kinds)
				}
			}
		})
	}
}
