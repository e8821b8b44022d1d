package retrieval_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/internal/test"
)

func newGlobalBuilder(t *testing.T, p retrieval.GlobalParams) *retrieval.GlobalBuilder {
	t.Helper()
	enc, err := encoderOnce()
	if err != nil {
		t.Fatal(err)
	}
	b, err := retrieval.NewGlobalBuilder(p, enc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCommunityReportsMemory checks MemoryBackend.CommunityReports against
// the communities as the reader gives them: every community up to the
// level that has a report, once, ordered by number, with its parent, its
// children up to the level, and Deepest exactly when no community up to
// the level names it as parent.
func TestCommunityReportsMemory(t *testing.T) {
	for _, name := range test.Samples() {
		ds, err := graphrag.Open(context.Background(), filepath.Join(test.GraphRAGSamples(t), name))
		if err != nil {
			t.Fatal(err)
		}
		b := retrieval.NewMemoryBackend(ds)
		for level := int64(0); level <= 4; level++ {
			t.Run(fmt.Sprintf("%s/level %d", name, level), func(t *testing.T) {
				got, err := b.CommunityReports(context.Background(), level)
				if err != nil {
					t.Fatal(err)
				}
				want := map[string]graphrag.Community{}
				parentOf := map[string]bool{}
				for _, c := range ds.Communities {
					if c.Level <= level {
						parentOf[c.Parent] = true
						if c.Report != nil {
							want[c.Community] = c
						}
					}
				}
				if len(got) != len(want) {
					t.Fatalf("%d reports; want %d", len(got), len(want))
				}
				for i, r := range got {
					c, ok := want[r.ID]
					if !ok {
						t.Fatalf("report %s is not a community up to level %d with a report", r.ID, level)
					}
					if i > 0 {
						prev := got[i-1]
						if prev.Level < r.Level || (prev.Level == r.Level && retrieval.CompareIDs(prev.ID, r.ID) >= 0) {
							t.Errorf("reports not deepest level first, then by number: %s (level %d) before %s (level %d)", prev.ID, prev.Level, r.ID, r.Level)
						}
					}
					if r.Level != c.Level || r.Parent != c.Parent || r.FullContent != c.Report.FullContent || r.Rank != c.Report.Rank || r.Weight != c.Weight {
						t.Errorf("report %s = level %d parent %q rank %g weight %g; want %d %q %g %g", r.ID, r.Level, r.Parent, r.Rank, r.Weight,
							c.Level, c.Parent, c.Report.Rank, c.Weight)
					}
					if r.Deepest == parentOf[r.ID] {
						t.Errorf("report %s: Deepest = %v, but named as parent: %v", r.ID, r.Deepest, parentOf[r.ID])
					}
					var kids []string
					for _, k := range c.Children {
						if w, ok := want[k]; ok && w.Level <= level {
							kids = append(kids, k)
						}
					}
					slices.SortFunc(kids, retrieval.CompareIDs)
					if !slices.Equal(r.Children, kids) {
						t.Errorf("report %s children %v; want %v (the reader's children with reports)", r.ID, r.Children, kids)
					}
				}
			})
		}
	}
}

// TestGlobalBatches packs the reports of every level of the four samples
// at several budgets and checks each batch from outside: its text counts
// (tokenised whole) at most the budget and exactly what Batch says, every
// report goes to one batch, each batch is ordered by weight then rank,
// weights are normalised to a largest of 1, and the fields round-trip
// through a CSV reader.
func TestGlobalBatches(t *testing.T) {
	enc, err := encoderOnce()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range test.Samples() {
		ds, err := graphrag.Open(context.Background(), filepath.Join(test.GraphRAGSamples(t), name))
		if err != nil {
			t.Fatal(err)
		}
		src := retrieval.NewMemoryBackend(ds)
		maxLevel := int64(0)
		for _, c := range ds.Communities {
			maxLevel = max(maxLevel, c.Level)
		}
		for level := int64(0); level <= maxLevel; level++ {
			for _, budget := range []int{800, 3000, 12000} {
				for _, rollUp := range []bool{false, true} {
					t.Run(fmt.Sprintf("%s/level %d/budget %d/roll-up %v", name, level, budget, rollUp), func(t *testing.T) {
						p := retrieval.DefaultGlobalParams()
						p.CommunityLevel, p.MaxContextTokens, p.RollUpReports = level, budget, rollUp
						b := newGlobalBuilder(t, p)
						all, err := src.CommunityReports(context.Background(), level)
						if err != nil {
							t.Fatal(err)
						}
						sel := b.Select(all)
						byID := map[string]retrieval.ReportRecord{}
						most := 0.0
						for _, r := range sel {
							byID[r.ID] = r
							most = max(most, r.Weight)
						}
						batches := b.Batches(sel)
						seen := map[string]int{}
						for i, bt := range batches {
							if n := enc.Count(bt.Text); n != bt.Tokens || n > budget {
								t.Errorf("batch %d: text counts %d tokens, Batch says %d, budget %d", i, n, bt.Tokens, budget)
							}
							rows := parseCSV(t, bt.Text)
							if want := []string{"id", "title", retrieval.WeightColumn, "content", "rank"}; !slices.Equal(rows[0], want) {
								t.Fatalf("header %q; want %q", rows[0], want)
							}
							if len(rows)-1 != len(bt.Reports) {
								t.Fatalf("batch %d: %d CSV rows for %d reports", i, len(rows)-1, len(bt.Reports))
							}
							prevW, prevR := 2.0, 0.0
							for j, row := range rows[1:] {
								id := row[0]
								seen[id]++
								orig, ok := byID[id]
								if !ok {
									t.Fatalf("batch %d has report %s, not selected", i, id)
								}
								w, _ := strconv.ParseFloat(row[2], 64)
								r, _ := strconv.ParseFloat(row[4], 64)
								if most > 0 && w != orig.Weight/most {
									t.Errorf("report %s weight %s; want %g / %g", id, row[2], orig.Weight, most)
								}
								if r != orig.Rank || row[1] != orig.Title {
									t.Errorf("report %s: rank %s title %q; want %g %q", id, row[4], row[1], orig.Rank, orig.Title)
								}
								if bt.Truncated == 0 && row[3] != orig.FullContent {
									t.Errorf("report %s content does not round-trip", id)
								} else if !strings.HasPrefix(orig.FullContent, row[3]) {
									t.Errorf("report %s content is not a prefix of the report", id)
								}
								if w > prevW || (w == prevW && r > prevR) {
									t.Errorf("batch %d row %d (%s): weight %g rank %g after %g %g; want descending", i, j, id, w, r, prevW, prevR)
								}
								prevW, prevR = w, r
							}
						}
						for id := range byID {
							if seen[id] != 1 {
								t.Errorf("report %s in %d batches; want 1", id, seen[id])
							}
						}
						if rollUp {
							for _, r := range sel {
								if !r.Deepest {
									t.Errorf("roll-up kept report %s, which has a sub-community up to level %d", r.ID, level)
								}
							}
						} else if len(sel) != len(all) {
							t.Errorf("selected %d of %d reports without roll-up", len(sel), len(all))
						}
					})
				}
			}
		}
	}
}

// parseCSV reads a batch table as pandas writes it: "|"-separated,
// quoted fields with doubled quotes, line breaks inside quotes.
func parseCSV(t *testing.T, text string) [][]string {
	t.Helper()
	var rows [][]string
	var row []string
	var field strings.Builder
	quoted, inQuotes := false, false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case inQuotes && c == '"' && i+1 < len(text) && text[i+1] == '"':
			field.WriteByte('"')
			i++
		case inQuotes && c == '"':
			inQuotes = false
		case inQuotes:
			field.WriteByte(c)
		case c == '"' && field.Len() == 0 && !quoted:
			inQuotes, quoted = true, true
		case c == '|':
			row = append(row, field.String())
			field.Reset()
			quoted = false
		case c == '\n':
			rows = append(rows, append(row, field.String()))
			row = nil
			field.Reset()
			quoted = false
		default:
			field.WriteByte(c)
		}
	}
	if inQuotes || field.Len() > 0 || row != nil {
		t.Fatalf("table does not end with a complete line: %q", text[max(0, len(text)-80):])
	}
	return rows
}

// TestGlobalBatchesShuffle: the seed decides the order, the same seed the
// same batches, and seed -1 keeps community order.
func TestGlobalBatchesShuffle(t *testing.T) {
	ds, _ := openV3(t)
	all, err := retrieval.NewMemoryBackend(ds).CommunityReports(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	order := func(seed int64) []string {
		p := retrieval.DefaultGlobalParams()
		p.MaxContextTokens, p.ShuffleSeed = 1000000, seed
		p.IncludeCommunityWeight, p.IncludeCommunityRank = false, false // no sort inside the batch
		var ids []string
		for _, bt := range newGlobalBuilder(t, p).Batches(all) {
			for _, r := range bt.Reports {
				ids = append(ids, r.ID)
			}
		}
		return ids
	}
	a, b, c, none := order(86), order(86), order(87), order(-1)
	var inOrder []string
	for _, r := range all {
		inOrder = append(inOrder, r.ID)
	}
	if !slices.Equal(a, b) || slices.Equal(a, c) || !slices.Equal(none, inOrder) || slices.Equal(a, inOrder) {
		t.Errorf("seed 86 twice equal %v, 86 vs 87 differ %v, -1 in order %v, 86 shuffled %v",
			slices.Equal(a, b), !slices.Equal(a, c), slices.Equal(none, inOrder), !slices.Equal(a, inOrder))
	}
}

// TestGlobalBatchesTruncate: a report that alone exceeds the budget is cut
// to fit, on a rune boundary, and counted.
func TestGlobalBatchesTruncate(t *testing.T) {
	enc, _ := encoderOnce()
	long := strings.Repeat("Scrooge’s counting-house, «cold» and dark. ", 400)
	reports := []retrieval.ReportRecord{
		{ID: "1", Title: "Long", FullContent: long, Rank: 5, Weight: 1},
		{ID: "2", Title: "Short", FullContent: "A short report.", Rank: 4, Weight: 0.5},
	}
	p := retrieval.DefaultGlobalParams()
	p.MaxContextTokens = 500
	bs := newGlobalBuilder(t, p).Batches(reports)
	truncated := 0
	for _, b := range bs {
		truncated += b.Truncated
		if n := enc.Count(b.Text); n > 500 || n != b.Tokens {
			t.Errorf("batch counts %d, says %d; budget 500", n, b.Tokens)
		}
		for _, r := range b.Reports {
			if r.ID == "1" && (len(r.FullContent) >= len(long) || !strings.HasPrefix(long, r.FullContent) || len(r.FullContent) < 1000) {
				t.Errorf("report 1 cut to %d bytes; want a long prefix of %d", len(r.FullContent), len(long))
			}
		}
	}
	if truncated != 1 {
		t.Errorf("truncated %d; want 1", truncated)
	}
}

// TestReduceContext: points scored 0 are dropped, the rest ranked by
// score with ties in batch order, and taken while the text, tokenised
// whole, fits the budget.
func TestReduceContext(t *testing.T) {
	enc, _ := encoderOnce()
	var points []retrieval.KeyPoint
	for i := range 60 {
		points = append(points, retrieval.KeyPoint{Batch: i % 7, Score: (i * 13) % 101,
			Description: strings.Repeat(fmt.Sprintf("Point %d says Scrooge changed.   ", i), 1+i%4) + " [Data: Reports (1, 2)]  "})
	}
	for _, budget := range []int{50, 400, 1500, 100000} {
		p := retrieval.DefaultGlobalParams()
		p.ReduceContextTokens = budget
		rc := newGlobalBuilder(t, p).ReduceContext(points)
		if n := enc.Count(rc.Text); n != rc.Tokens || n > budget {
			t.Errorf("budget %d: text counts %d, says %d", budget, n, rc.Tokens)
		}
		var scored []retrieval.KeyPoint
		for _, pt := range points {
			if pt.Score > 0 {
				scored = append(scored, pt)
			}
		}
		slices.SortStableFunc(scored, func(a, b retrieval.KeyPoint) int { return b.Score - a.Score })
		if rc.Scored != len(scored) || !slices.Equal(rc.Points, scored[:len(rc.Points)]) {
			t.Errorf("budget %d: points are not the best-first prefix of the %d scored", budget, len(scored))
		}
		if len(rc.Points) < len(scored) {
			next := scored[len(rc.Points)]
			block := fmt.Sprintf("----Analyst %d----\nImportance Score: %d\n%s", next.Batch+1, next.Score, next.Description)
			with := rc.Text + "\n\n" + block
			if rc.Text == "" {
				with = block
			}
			if enc.Count(with) <= budget {
				t.Errorf("budget %d: stopped after %d points, but the next fits", budget, len(rc.Points))
			}
		}
		if budget == 100000 && len(rc.Points) != len(scored) {
			t.Errorf("a large budget takes all %d points, not %d", len(scored), len(rc.Points))
		}
	}
}
