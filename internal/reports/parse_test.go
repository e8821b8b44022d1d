package reports_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/jsonrepair"
	"github.com/kgrag/kgrag/internal/reports"
)

// TestRenderSampleReports reads back every report of the v3 and v2.5.0
// samples from the JSON GraphRAG's model wrote (full_content_json) and
// renders it: full_content and full_content_json must come out as
// GraphRAG wrote them.
func TestRenderSampleReports(t *testing.T) {
	n := 0
	for _, s := range []string{"v3", "v2.5.0"} {
		for _, c := range sample(t, s).Communities {
			rep := c.Report
			if rep == nil {
				continue
			}
			n++
			r, fixes, err := reports.ParseReply(rep.FullContentJSON)
			if err != nil || len(fixes) > 0 {
				t.Errorf("%s community %s: ParseReply = %v, fixes %v", s, c.Community, err, fixes)
				continue
			}
			if d := cmp.Diff(rep.FullContent, r.FullContent()); d != "" {
				t.Errorf("%s community %s: FullContent (-GraphRAG +kgrag):\n%s", s, c.Community, d)
			}
			if d := cmp.Diff(rep.FullContentJSON, r.JSON()); d != "" {
				t.Errorf("%s community %s: JSON (-GraphRAG +kgrag):\n%s", s, c.Community, d)
			}
			if r.Title != rep.Title || r.Summary != rep.Summary || r.Rating != rep.Rank || r.RatingExplanation != rep.RankExplanation ||
				!slices.Equal(r.Findings, rep.Findings) {
				t.Errorf("%s community %s: parsed fields differ from the report's columns", s, c.Community)
			}
		}
	}
	if n < 140 {
		t.Errorf("only %d sample reports checked", n)
	}
}

func TestParseReply(t *testing.T) {
	good := `{"title": "T", "summary": "S", "findings": [{"summary": "a", "explanation": "b"}], "rating": 7.5, "rating_explanation": "E"}`
	want := reports.Reply{Title: "T", Summary: "S", Findings: []graphrag.Finding{{Summary: "a", Explanation: "b"}}, Rating: 7.5, RatingExplanation: "E"}
	tests := []struct {
		name    string
		in      string
		fixes   []jsonrepair.Fix
		problem string // "" when the reply is usable
	}{
		{"valid", good, nil, ""},
		{"fenced", "Here it is:\n```json\n" + good + "\n```", []jsonrepair.Fix{jsonrepair.FixCodeFence, jsonrepair.FixSurroundingText}, ""},
		{"trailing comma", strings.Replace(good, `"E"}`, `"E",}`, 1), []jsonrepair.Fix{jsonrepair.FixTrailingComma}, ""},
		{"python dict", `{'title': 'T', 'summary': 'S', 'findings': [{'summary': 'a', 'explanation': 'b'}], 'rating': 7.5, 'rating_explanation': 'E'}`,
			[]jsonrepair.Fix{jsonrepair.FixSingleQuotes}, ""},
		{"rating as text", strings.Replace(good, `7.5`, `"7.5"`, 1), nil, ""},
		{"no json", "I am sorry, I cannot help.", nil, "no readable JSON object"},
		{"a list", `[` + good + `]`, nil, "not a JSON object"},
		{"no rating", strings.Replace(good, `"rating": 7.5, `, ``, 1), nil, `no "rating"`},
		{"rating a word", strings.Replace(good, `7.5`, `"high"`, 1), nil, `"rating" "high" is not a number`},
		{"rating true", strings.Replace(good, `7.5`, `true`, 1), nil, `"rating" true is not a number`},
		{"rating nan", strings.Replace(good, `7.5`, `"nan"`, 1), nil, `"rating" "nan" is not a number`},
		{"title null", strings.Replace(good, `"T"`, `null`, 1), nil, `no "title"`},
		{"title a number", strings.Replace(good, `"T"`, `3`, 1), nil, `"title" 3 is not a string`},
		{"findings text", strings.Replace(good, `[{"summary": "a", "explanation": "b"}]`, `"none"`, 1), nil, `"findings" is not a list of objects`},
		{"finding without explanation", strings.Replace(good, `, "explanation": "b"`, ``, 1), nil, `finding 0: no "explanation"`},
		{"truncated", good[:60], []jsonrepair.Fix{jsonrepair.FixTruncated}, `no "rating"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, fixes, err := reports.ParseReply(tt.in)
			if !slices.Equal(fixes, tt.fixes) {
				t.Errorf("ParseReply fixes = %v; want %v", fixes, tt.fixes)
			}
			if tt.problem != "" {
				var pe *reports.ParseError
				if !errors.As(err, &pe) || pe.Msg != tt.problem {
					t.Errorf("ParseReply error = %v; want a *ParseError %q", err, tt.problem)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseReply: %v", err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("ParseReply (-want +got):\n%s", d)
			}
		})
	}
}

func TestReport(t *testing.T) {
	r := reports.Reply{Title: "Scrooge", Summary: "A miser.", Findings: []graphrag.Finding{{Summary: "Mean", Explanation: "Very."}, {Summary: "Rich", Explanation: "Yes."}},
		Rating: 8, RatingExplanation: "Central."}
	c := &graphrag.Community{Community: "12", Level: 2, Period: "2026-01-01", Size: 7, HasSize: true}
	got := r.Report(c)
	wantFull := "# Scrooge\n\nA miser.\n\n## Mean\n\nVery.\n\n## Rich\n\nYes."
	// GraphRAG's id is the SHA-512 of full_content; this one is from
	// coreutils: printf '# Scrooge\n\nA miser.\n\n## Mean...' | sha512sum
	const wantID = "aaf6c1722e5be4b02691bffde6ee5df32ce5d518b22560908ddc4eff99edb498ee5d1cd95f53821c095458537be6c35af77d0ae3cb71a4aaee3a7f101077150b"
	if got.FullContent != wantFull {
		t.Errorf("FullContent = %q; want %q", got.FullContent, wantFull)
	}
	if got.Community != "12" || got.HumanReadableID != "12" || got.Level != 2 || got.Rank != 8 || !got.HasRank ||
		got.Size != 7 || !got.HasSize || got.Period != "2026-01-01" || got.RankExplanation != "Central." || len(got.Findings) != 2 {
		t.Errorf("Report = %+v", got)
	}
	if got.ID != wantID {
		t.Errorf("ID = %q; want %q", got.ID, wantID)
	}
}

// TestSchemaLimits checks the report schema's limits against the words a
// report may have: valid JSON, GraphRAG's ten findings at its default of
// 2000 words, one for a short report, and a text budget that grows with
// the words.
func TestSchemaLimits(t *testing.T) {
	tests := []struct {
		words, items, summary int
	}{
		{2000, 10, 3000},
		{1000, 5, 1500},
		{40, 1, 100},
	}
	for _, tt := range tests {
		var s struct {
			Properties struct {
				Summary  struct{ MaxLength int }
				Findings struct{ MaxItems int }
			}
			Required []string
		}
		if err := json.Unmarshal(reports.Schema(tt.words), &s); err != nil {
			t.Fatalf("%d words: %v", tt.words, err)
		}
		if s.Properties.Findings.MaxItems != tt.items || s.Properties.Summary.MaxLength != tt.summary || len(s.Required) != 5 {
			t.Errorf("%d words: %d findings, summary %d chars, required %v; want %d, %d, 5 keys",
				tt.words, s.Properties.Findings.MaxItems, s.Properties.Summary.MaxLength, s.Required, tt.items, tt.summary)
		}
	}
}
