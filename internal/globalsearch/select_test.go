package globalsearch_test

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/kgrag/kgrag/internal/globalsearch"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/llmcall"
	"github.com/kgrag/kgrag/internal/retrieval"
)

// tree is a ReportSource of hand-made communities: number -> parent.
type tree map[string]string

func (tr tree) CommunityReports(ctx context.Context, maxLevel int64) ([]retrieval.ReportRecord, error) {
	level := func(id string) int64 {
		n := int64(0)
		for p := tr[id]; p != ""; p = tr[p] {
			n++
		}
		return n
	}
	var out []retrieval.ReportRecord
	for id, parent := range tr {
		if level(id) > maxLevel {
			continue
		}
		r := retrieval.ReportRecord{ID: id, Level: level(id), Parent: parent, Title: "Community " + id,
			FullContent: "# Community " + id + "\n\nReport of community " + id + ".", Rank: 5, Weight: 1, Deepest: true}
		for child, p := range tr {
			if p == id && level(child) <= maxLevel {
				r.Children = append(r.Children, child)
				r.Deepest = false
			}
		}
		slices.SortFunc(r.Children, retrieval.CompareIDs)
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b retrieval.ReportRecord) int { return retrieval.CompareIDs(a.ID, b.ID) })
	return out, nil
}

var communityRE = regexp.MustCompile(`Report of community (\d+)\.`)

// byNumber finds the community of a tree report in a rating prompt.
func byNumber(sys string) string {
	if m := communityRE.FindStringSubmatch(sys); m != nil {
		return m[1]
	}
	return ""
}

// byContent finds the community of a report in a rating prompt by its
// full text, from the dataset.
func byContent(content map[string]string) func(string) string {
	return func(sys string) string {
		_, after, _ := strings.Cut(sys, "---Report---\n\n")
		report, _, _ := strings.Cut(after, "\n\n---End of report---")
		return content[report]
	}
}

// rater answers rating calls from replies(community), the community found
// by find in the prompt; other calls go to the default map/reduce replies.
func rater(t *testing.T, find func(sys string) string, replies func(community string) string) *llmtest.Server {
	return raterWith(t, llmtest.Config{}, find, replies)
}

// raterWith is rater on a server of cfg.
func raterWith(t *testing.T, cfg llmtest.Config, find func(sys string) string, replies func(community string) string) *llmtest.Server {
	srv := server(t, cfg)
	srv.Respond(func(r llmtest.Request) (string, bool) {
		sys := r.Messages[0].Content
		switch kind(r) {
		case "rate":
			c := find(sys)
			if c == "" {
				t.Errorf("rating prompt without a known report: %.300q", sys)
				return `{"rating": 0}`, true
			}
			return replies(c), true
		case "map":
			return mapReply(sys), true
		case "reduce":
			return reduceReply(sys), true
		}
		return "", false
	})
	return srv
}

func ratings(table map[string]int) func(string) string {
	return func(c string) string { return `{"reason": "test", "rating": ` + strconv.Itoa(table[c]) + `}` }
}

// TestDynamicSelection checks the descent on a small hierarchy against
// hand-worked expectations of GraphRAG's algorithm:
//
//	0 ─┬─ 2 ─┬─ 5     1 ── 4
//	   │     └─ 6
//	   └─ 3
func TestDynamicSelection(t *testing.T) {
	tr := tree{"0": "", "1": "", "2": "0", "3": "0", "4": "1", "5": "2", "6": "2"}
	tests := []struct {
		name       string
		ratings    map[string]int
		bad        []string // communities whose rating reply is garbage
		threshold  int
		keepParent bool
		level      int64
		maxCalls   int
		wantRated  []string
		wantKept   []string
		wantLevels []globalsearch.LevelCount
	}{
		{name: "descend, children replace parents",
			ratings: map[string]int{"0": 3, "1": 0, "2": 4, "3": 0, "5": 2, "6": 0}, threshold: 1, level: 2,
			wantRated: []string{"0", "1", "2", "3", "5", "6"}, wantKept: []string{"5"},
			wantLevels: []globalsearch.LevelCount{{0, 2, 1}, {1, 2, 1}, {2, 2, 1}}},
		{name: "keep parents",
			ratings: map[string]int{"0": 3, "1": 0, "2": 4, "3": 0, "5": 2, "6": 0}, threshold: 1, keepParent: true, level: 2,
			wantRated: []string{"0", "1", "2", "3", "5", "6"}, wantKept: []string{"0", "2", "5"}},
		{name: "higher threshold stops at level 1",
			ratings: map[string]int{"0": 3, "1": 0, "2": 4, "3": 0, "5": 2, "6": 0}, threshold: 3, level: 2,
			wantRated: []string{"0", "1", "2", "3", "5", "6"}, wantKept: []string{"2"}},
		{name: "community level caps the descent",
			ratings: map[string]int{"0": 3, "1": 0, "2": 4, "3": 0, "5": 2, "6": 0}, threshold: 1, level: 1,
			wantRated: []string{"0", "1", "2", "3"}, wantKept: []string{"2"}},
		{name: "nothing relevant at the roots: the next level is rated whole",
			ratings: map[string]int{"0": 0, "1": 0, "2": 0, "3": 5, "4": 0}, threshold: 1, level: 2,
			wantRated: []string{"0", "1", "2", "3", "4"}, wantKept: []string{"3"},
			wantLevels: []globalsearch.LevelCount{{0, 2, 0}, {1, 3, 1}}},
		{name: "nothing relevant anywhere",
			ratings: map[string]int{}, threshold: 1, level: 2,
			wantRated: []string{"0", "1", "2", "3", "4", "5", "6"}, wantKept: nil},
		{name: "a garbage rating counts as 1 and keeps the branch",
			ratings: map[string]int{"1": 0, "2": 0, "3": 0}, bad: []string{"0"}, threshold: 1, level: 2,
			wantRated: []string{"0", "1", "2", "3"}, wantKept: []string{"0"}},
		{name: "call limit stops the descent",
			ratings: map[string]int{"0": 3, "1": 0, "2": 4, "3": 0, "5": 2, "6": 0}, threshold: 1, level: 2, maxCalls: 7,
			wantRated: []string{"0", "1", "2", "3"}, wantKept: []string{"2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := rater(t, byNumber, func(c string) string {
				if slices.Contains(tt.bad, c) {
					return "I think it is quite relevant"
				}
				return ratings(tt.ratings)(c)
			})
			s := setup{src: tr, params: retrieval.DefaultGlobalParams(), opts: globalsearch.DefaultOptions()}
			s.params.CommunityLevel = tt.level
			s.opts.Dynamic, s.opts.DynamicThreshold, s.opts.DynamicKeepParent = true, tt.threshold, tt.keepParent
			s.opts.MaxLLMCalls = tt.maxCalls
			res, err := s.searcher(t, client(t, srv, 1)).Search(context.Background(), question, globalsearch.Hooks{})
			if err != nil {
				t.Fatal(err)
			}
			sel := res.Selection
			var rated, kept []string
			for _, r := range sel.Rated {
				rated = append(rated, r.Community)
			}
			for _, r := range sel.Reports {
				kept = append(kept, r.ID)
			}
			if !slices.Equal(rated, tt.wantRated) || !slices.Equal(kept, tt.wantKept) {
				t.Errorf("rated %v, kept %v; want %v, %v", rated, kept, tt.wantRated, tt.wantKept)
			}
			if tt.wantLevels != nil && !slices.Equal(sel.Levels, tt.wantLevels) {
				t.Errorf("levels %+v; want %+v", sel.Levels, tt.wantLevels)
			}
			if got := len(requestsOf(srv, "rate")); got != len(tt.wantRated) || sel.Calls != got {
				t.Errorf("%d rating requests, Selection.Calls %d; want %d", got, sel.Calls, len(tt.wantRated))
			}
			if sel.Parse.Unusable != len(tt.bad) {
				t.Errorf("unusable ratings = %d; want %d", sel.Parse.Unusable, len(tt.bad))
			}
			if (tt.maxCalls > 0) != (sel.Stopped != "") {
				t.Errorf("Stopped = %q with limit %d", sel.Stopped, tt.maxCalls)
			}
			// Only the kept reports are mapped.
			mapped := map[string]bool{}
			for _, r := range requestsOf(srv, "map") {
				for _, m := range rowRE.FindAllStringSubmatch(batchTable(r.Messages[0].Content), -1) {
					mapped[m[1]] = true
				}
			}
			if got := slices.Sorted(maps.Keys(mapped)); !slices.Equal(got, slices.Sorted(slices.Values(tt.wantKept))) {
				t.Errorf("mapped reports %v; want the kept %v", got, tt.wantKept)
			}
		})
	}
}

// TestDynamicSelectionSamples descends the real hierarchies of the 3.x and
// 2.5.0 samples (communities with parent and children columns), with
// ratings from a fixed rule, and checks the descent against the parent
// column read from the parquet files: the roots and nothing else are rated
// first; a community is rated later exactly when its parent was rated
// relevant; and the kept reports are the relevant ones no relevant child
// replaced.
func TestDynamicSelectionSamples(t *testing.T) {
	for _, name := range []string{"v3", "v2.5.0"} {
		for _, level := range []int64{1, 2, 3} {
			t.Run(name+"/level "+strconv.FormatInt(level, 10), func(t *testing.T) {
				ds := sample(t, name)
				parent := map[string]string{}
				lvl := map[string]int64{}
				hasReport := map[string]bool{}
				content := map[string]string{}
				for _, c := range ds.Communities {
					parent[c.Community], lvl[c.Community] = c.Parent, c.Level
					hasReport[c.Community] = c.Report != nil
					if c.Report != nil {
						content[c.Report.FullContent] = c.Community
					}
				}
				rule := func(c string) int { // relevant: about a third, at every level
					n, _ := strconv.Atoi(c)
					return []int{0, 3, 0, 0, 5, 1}[n%6]
				}
				var mu sync.Mutex
				srv := rater(t, byContent(content), func(c string) string {
					mu.Lock()
					defer mu.Unlock()
					return `{"rating": ` + strconv.Itoa(rule(c)) + `}`
				})
				s := defaults(t, name, 12000)
				s.params.CommunityLevel = level
				s.opts.Dynamic = true
				s.opts.Concurrency = 3
				res, err := s.searcher(t, client(t, srv, 1)).Search(context.Background(), question, globalsearch.Hooks{})
				if err != nil {
					t.Fatal(err)
				}
				rated := map[string]bool{}
				relevant := map[string]bool{}
				for _, r := range res.Selection.Rated {
					if rated[r.Community] {
						t.Errorf("community %s rated twice", r.Community)
					}
					rated[r.Community] = true
					if r.Rating != rule(r.Community) {
						t.Errorf("community %s rated %d; the server said %d", r.Community, r.Rating, rule(r.Community))
					}
					if r.Rating >= 1 {
						relevant[r.Community] = true
					}
				}
				roots := 0
				for c, p := range parent {
					if !hasReport[c] || lvl[c] > level {
						if rated[c] {
							t.Errorf("community %s (level %d, report %v) rated; want only reports up to level %d", c, lvl[c], hasReport[c], level)
						}
						continue
					}
					if p == "" {
						roots++
						if !rated[c] {
							t.Errorf("root %s not rated", c)
						}
						continue
					}
					if rated[c] != relevant[p] {
						t.Errorf("community %s rated %v, its parent %s relevant %v; want the same", c, rated[c], p, relevant[p])
					}
				}
				if roots == 0 || len(rated) <= roots {
					t.Fatalf("%d roots, %d rated: the sample does not exercise the descent", roots, len(rated))
				}
				want := map[string]bool{}
				for c := range relevant {
					want[c] = true
				}
				for c := range relevant {
					delete(want, parent[c])
				}
				var kept []string
				for _, r := range res.Selection.Reports {
					kept = append(kept, r.ID)
				}
				wantKept := slices.SortedFunc(maps.Keys(want), retrieval.CompareIDs)
				if !slices.Equal(kept, wantKept) {
					t.Errorf("kept %v; want %v", kept, wantKept)
				}
				if strings.Join(kept, ",") == "" {
					t.Errorf("nothing kept: the rule should keep some")
				}
				t.Logf("%s level %d: %d reports, %d roots, %d rated, %d relevant, %d kept, %d map calls",
					name, level, res.Reports, roots, len(rated), len(relevant), len(kept), len(res.Batches))
			})
		}
	}
}

// TestSearchReasoningModel: a reasoning model whose <think> block (or
// reasoning_content) holds a draft rating and a draft of map points gives
// the same selection, points and answer as a model without one: nothing
// of the draft is parsed.
func TestSearchReasoningModel(t *testing.T) {
	const draft = `First a draft: {"rating": 5} {"points": [{"description": "DRAFT POINT [Data: Reports (0)]", "score": 100}]}`
	ds := sample(t, "v3")
	content := map[string]string{}
	for _, c := range ds.Communities {
		if c.Report != nil {
			content[c.Report.FullContent] = c.Community
		}
	}
	rule := func(c string) string {
		n, _ := strconv.Atoi(c)
		return `{"rating": ` + strconv.Itoa([]int{0, 3, 0, 0, 5, 1}[n%6]) + `}`
	}
	run := func(cfg llmtest.Config) *globalsearch.Result {
		srv := raterWith(t, cfg, byContent(content), rule)
		s := defaults(t, "v3", 12000)
		s.params.CommunityLevel = 2
		s.opts.Dynamic = true
		res, err := s.searcher(t, client(t, srv, 1)).Search(context.Background(), question, globalsearch.Hooks{})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	// picked is what the selection chose: each rating, then the reports.
	picked := func(sel *globalsearch.Selection) []string {
		var out []string
		for _, r := range sel.Rated {
			out = append(out, r.Community+"="+strconv.Itoa(r.Rating))
		}
		for _, r := range sel.Reports {
			out = append(out, "report "+r.ID)
		}
		return out
	}
	plain := run(llmtest.Config{})
	for _, apart := range []bool{false, true} {
		got := run(llmtest.Config{Reasoning: draft, ReasoningApart: apart})
		if !slices.Equal(picked(got.Selection), picked(plain.Selection)) || got.Selection.Parse.Valid != len(got.Selection.Rated) {
			t.Errorf("apart %v: selection %v (parse %+v); want %v as without reasoning, every rating valid", apart,
				picked(got.Selection), got.Selection.Parse, picked(plain.Selection))
		}
		if got.Answer != plain.Answer || strings.Contains(got.Answer, "DRAFT") {
			t.Errorf("apart %v: answer %q; want %q", apart, got.Answer, plain.Answer)
		}
		if len(got.Batches) != len(plain.Batches) {
			t.Fatalf("apart %v: %d batches; want %d", apart, len(got.Batches), len(plain.Batches))
		}
		for i, b := range got.Batches {
			if b.Parse != llmcall.ParseValid || b.ReasoningChars < len(draft) {
				t.Errorf("apart %v: batch %d parsed %s, %d characters of reasoning counted; want valid, %d", apart, i, b.Parse, b.ReasoningChars, len(draft))
			}
			if fmt.Sprint(b.Points) != fmt.Sprint(plain.Batches[i].Points) {
				t.Errorf("apart %v: batch %d points %v; want %v", apart, i, b.Points, plain.Batches[i].Points)
			}
		}
	}
}
