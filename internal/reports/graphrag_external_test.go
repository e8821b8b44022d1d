package reports_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/jsonrepair"
	"github.com/kgrag/kgrag/internal/reports"
	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/internal/tokens"
)

// These tests run Microsoft GraphRAG 3.3.0's own code
// (scripts/oracle/graphrag_report_context.py, in the venv of
// scripts/graphrag-py.sh) and compare its answers with this package's.

type oracleContext struct {
	Community string `json:"community"`
	Level     int64  `json:"level"`
	Text      string `json:"text"`
	Tokens    int    `json:"tokens"`
	Exceeds   bool   `json:"exceeds"`
}

type oracleRendered struct {
	OK              bool    `json:"ok"`
	Error           string  `json:"error"`
	FullContent     string  `json:"full_content"`
	FullContentJSON string  `json:"full_content_json"`
	Rating          float64 `json:"rating"`
}

type oracleOut struct {
	Contexts []oracleContext  `json:"contexts"`
	Seconds  float64          `json:"seconds"`
	Reports  []oracleRendered `json:"reports"`
}

// runOracle runs the jobs in one interpreter and returns the answers in
// order.
func runOracle(t *testing.T, jobs []map[string]any) []oracleOut {
	t.Helper()
	py := test.GraphRAGPython(t)
	return test.PythonJSONL[oracleOut](t, py, []string{filepath.Join(test.RepoRoot(t), "scripts", "oracle", "graphrag_report_context.py"), "--jobs"}, jobs)
}

var (
	mu       sync.Mutex
	encoders = map[string]*tokens.Encoder{}
	dsCache  = map[string]*graphrag.Dataset{}
)

// enc is the cl100k_base encoder, kgrag's default.
func enc(t testing.TB) *tokens.Encoder { return encoding(t, tokens.EncodingCL100K) }

func encoding(t testing.TB, name string) *tokens.Encoder {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if e := encoders[name]; e != nil {
		return e
	}
	e, err := tokens.NewEncoder(name)
	if err != nil {
		t.Fatal(err)
	}
	encoders[name] = e
	return e
}

func sample(t testing.TB, name string) *graphrag.Dataset {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if ds := dsCache[name]; ds != nil {
		return ds
	}
	ds, err := graphrag.Open(context.Background(), filepath.Join(test.GraphRAGSamples(t), name))
	if err != nil {
		t.Fatal(err)
	}
	dsCache[name] = ds
	return ds
}

// sampleReports returns, by community number, the text that stands for
// each of the sample's reports: its full_content, or its title.
func sampleReports(ds *graphrag.Dataset, column string) map[string]string {
	out := make(map[string]string)
	for _, c := range ds.Communities {
		if c.Report == nil {
			continue
		}
		if column == "title" {
			out[c.Community] = c.Report.Title
		} else {
			out[c.Community] = c.Report.FullContent
		}
	}
	return out
}

// checkContexts checks the contexts: it builds every community's report context on
// the v3 and v2.5.0 samples, giving each community the sample's reports of
// its sub-communities as the reports already written, and checks it
// against GraphRAG's build_local_context + build_level_context on the same
// data: same communities, same text byte for byte, same token count.
//
// At the default budget every local context fits. At 300 tokens some do
// not even with one relationship, and the real reports are longer than
// that: GraphRAG then gives an empty context or the over-budget one. With
// the reports' titles standing in for the reports, at 150 and 600 tokens,
// over-budget communities get their sub-communities' reports mixed with
// the rest of their tables. The test requires each of these cases to
// occur, so that it cannot pass by comparing only easy ones.
type contextJob struct {
	sample   string
	budget   int
	column   string
	encoding string
}

func contextJobs() []contextJob {
	var jobs []contextJob
	for _, s := range []string{"v3", "v2.5.0"} {
		jobs = append(jobs, contextJob{s, 8000, "full_content", tokens.EncodingCL100K}, contextJob{s, 300, "full_content", tokens.EncodingCL100K},
			contextJob{s, 150, "title", tokens.EncodingCL100K}, contextJob{s, 600, "title", tokens.EncodingCL100K})
	}
	// GraphRAG 3.x's own default encoding, on the small sample.
	return append(jobs, contextJob{"v2.5.0", 8000, "full_content", tokens.EncodingO200K}, contextJob{"v2.5.0", 150, "title", tokens.EncodingO200K})
}

// TestAgainstGraphRAG runs GraphRAG once (importing it takes seconds) for
// both comparisons.
func TestAgainstGraphRAG(t *testing.T) {
	dir := test.GraphRAGSamples(t)
	jobs := contextJobs()
	var req []map[string]any
	for _, j := range jobs {
		// GraphRAG is given the claims of v2.5.0 (on v3 they would
		// quadruple its run time) to show that they change nothing.
		req = append(req, map[string]any{"dir": filepath.Join(dir, j.sample), "max_context_tokens": j.budget,
			"report_column": j.column, "encoding": j.encoding, "claims": j.sample == "v2.5.0"})
	}
	replies, sent, repaired := renderJob(t)
	req = append(req, map[string]any{"render": sent})
	out := runOracle(t, req)
	t.Run("contexts", func(t *testing.T) { checkContexts(t, jobs, out[:len(jobs)]) })
	t.Run("render", func(t *testing.T) { checkRender(t, replies, repaired, out[len(jobs)].Reports) })
}

func checkContexts(t *testing.T, jobs []contextJob, out []oracleOut) {

	var total, same, fit, over, mixed, reportsOnly, empty int
	for i, j := range jobs {
		name := j.sample + "/" + j.column + "/" + itoa(j.budget) + "/" + j.encoding
		ds := sample(t, j.sample)
		b, err := reports.NewBuilder(ds, encoding(t, j.encoding), j.budget)
		if err != nil {
			t.Fatal(err)
		}
		done := sampleReports(ds, j.column)
		lookup := func(num string) (string, bool) { s, ok := done[num]; return s, ok }
		want := out[i].Contexts
		if b.Len() != len(want) {
			t.Errorf("%s: %d communities with a context; GraphRAG has %d", name, b.Len(), len(want))
		}
		var levels []int64
		for _, w := range want {
			if len(levels) == 0 || levels[len(levels)-1] != w.Level {
				levels = append(levels, w.Level)
			}
		}
		if d := cmp.Diff(levels, b.Levels()); d != "" {
			t.Errorf("%s: levels (-GraphRAG +kgrag):\n%s", name, d)
		}
		for _, w := range want {
			total++
			got, ok := b.Context(w.Community, lookup)
			if !ok {
				t.Errorf("%s: community %s: no context; GraphRAG has one", name, w.Community)
				continue
			}
			if got.Level != w.Level || got.Exceeds != w.Exceeds {
				t.Errorf("%s: community %s: level %d, exceeds %v; GraphRAG: %d, %v", name, w.Community, got.Level, got.Exceeds, w.Level, w.Exceeds)
			}
			if got.Text != w.Text {
				t.Errorf("%s: community %s (level %d, exceeds %v): context differs (-GraphRAG +kgrag):\n%s",
					name, w.Community, w.Level, w.Exceeds, cmp.Diff(w.Text, got.Text))
				continue
			}
			if got.Tokens != w.Tokens {
				t.Errorf("%s: community %s: %d tokens; GraphRAG counts %d", name, w.Community, got.Tokens, w.Tokens)
				continue
			}
			same++
			switch {
			case w.Text == "":
				empty++
			case strings.HasPrefix(w.Text, "----Reports-----"):
				mixed++
				if len(got.Reports) == 0 {
					t.Errorf("%s: community %s: mixed context but Context.Reports is empty", name, w.Community)
				}
			case strings.HasPrefix(w.Text, "community,full_content"):
				reportsOnly++
			case w.Exceeds:
				over++
			default:
				fit++
			}
		}
	}
	t.Logf("%d of %d community contexts identical to GraphRAG's: %d within the budget, %d over it (no report to use), "+
		"%d mixing sub-community reports with tables, %d of reports alone, %d empty", same, total, fit, over, mixed, reportsOnly, empty)
	for what, n := range map[string]int{"within the budget": fit, "over the budget": over, "mixed": mixed, "reports alone": reportsOnly, "empty": empty} {
		if n == 0 {
			t.Errorf("no %s context was compared: the jobs no longer cover that case", what)
		}
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// replyCorpus is a set of model replies: well-formed ones with text that
// tests the JSON and Markdown rendering, and ones GraphRAG refuses.
func replyCorpus() []string {
	return []string{
		`{"title": "Scrooge & Marley <firm>", "summary": "A \"counting-house\" in London.\nTwo lines\tand a tab, a \\ backslash, a \u0001 and a \u001f.", "findings": [{"summary": "Scrooge is mean", "explanation": "He pays Bob 15s. [Data: Entities (1); Relationships (2, 3)]"}, {"summary": "Ünïcödé – “quotes” ☃ 🎄", "explanation": "Line\u2028separator and \u00a0 nbsp and / slash."}], "rating": 8, "rating_explanation": "Central."}`,
		`{"title": "T", "summary": "S", "findings": [], "rating": 7.25, "rating_explanation": "E"}`,
		`{"title": "", "summary": "", "findings": [{"summary": "", "explanation": ""}], "rating": 0, "rating_explanation": ""}`,
		`{"title": "T", "summary": "S", "findings": [{"summary": "a", "explanation": "b", "extra": 1}], "rating": "7.5", "rating_explanation": "E", "other": [1, 2]}`,
		`{"title": "T", "summary": "S", "findings": [], "rating": 1e-6, "rating_explanation": "E"}`,
		`{"title": "T", "summary": "S", "findings": [], "rating": 12345678901234567890, "rating_explanation": "E"}`,
		`{"title": "T", "summary": "S", "findings": [], "rating": -0.0, "rating_explanation": "E"}`,
		`{"title": "T", "summary": "S", "findings": [], "rating": 0.00001, "rating_explanation": "E"}`,
		`{"title": "T", "summary": "S", "findings": [], "rating": " 6 ", "rating_explanation": "E"}`,
		// Refused by GraphRAG's CommunityReportResponse.
		`{"title": "T", "summary": "S", "findings": [], "rating_explanation": "E"}`,
		`{"title": "T", "summary": "S", "findings": [], "rating": "high", "rating_explanation": "E"}`,
		`{"title": "T", "summary": "S", "findings": "none", "rating": 5, "rating_explanation": "E"}`,
		`{"title": null, "summary": "S", "findings": [], "rating": 5, "rating_explanation": "E"}`,
		`{"title": 5, "summary": "S", "findings": [], "rating": 5, "rating_explanation": "E"}`,
		`{"title": "T", "summary": "S", "findings": [{"summary": "a"}], "rating": 5, "rating_explanation": "E"}`,
		`{"title": "T", "summary": "S", "findings": ["a"], "rating": 5, "rating_explanation": "E"}`,
		`{"title": "T", "summary": "S", "findings": [], "rating": null, "rating_explanation": "E"}`,
		`{"title": "T", "summary": "S", "findings": [], "rating": [5], "rating_explanation": "E"}`,
		`[{"title": "T"}]`,
		`I cannot write this report.`,
	}
}

// renderJob and checkRender parse replies with ParseReply and with
// GraphRAG's own parse (json.loads, CommunityReportResponse), and renders
// the accepted ones with Reply.FullContent and Reply.JSON and with
// GraphRAG's _get_text_output and model_dump_json(indent=4): the same
// replies must be accepted, with the same text and rating. The replies are
// the corpus above and every report of the v3 and v2.5.0 samples
// (full_content_json, the JSON GraphRAG's model wrote). Replies only
// jsonrepair can read (fenced, trailing commas) are refused by GraphRAG;
// for them the repaired text goes to GraphRAG.
func renderJob(t *testing.T) (replies, sent []string, repaired int) {
	replies = replyCorpus()
	replies = append(replies,
		"```json\n"+replies[1]+"\n```",
		`{"title": "T", "summary": "S", "findings": [{"summary": "a", "explanation": "b",},], "rating": 5, "rating_explanation": "E",}`)
	for _, s := range []string{"v3", "v2.5.0"} {
		for _, c := range sample(t, s).Communities {
			if c.Report != nil {
				replies = append(replies, c.Report.FullContentJSON)
			}
		}
	}
	// GraphRAG gets each reply as jsonrepair leaves it: the same as the
	// reply when it is valid JSON.
	sent = make([]string, len(replies))
	for i, r := range replies {
		sent[i] = r
		if out, fixes, err := jsonrepair.Repair(r); err == nil && len(fixes) > 0 {
			sent[i] = out
			repaired++
		}
	}
	return replies, sent, repaired
}

func checkRender(t *testing.T, replies []string, repaired int, got []oracleRendered) {
	if len(got) != len(replies) {
		t.Fatalf("GraphRAG rendered %d of %d replies", len(got), len(replies))
	}
	accepted, refused := 0, 0
	for i, want := range got {
		r, _, err := reports.ParseReply(replies[i])
		if (err == nil) != want.OK {
			t.Errorf("reply %d: ParseReply error = %v; GraphRAG ok = %v (%s)\n%s", i, err, want.OK, want.Error, clip(replies[i]))
			continue
		}
		if err != nil {
			refused++
			continue
		}
		accepted++
		if r.Rating != want.Rating {
			t.Errorf("reply %d: rating %v; GraphRAG %v", i, r.Rating, want.Rating)
		}
		if d := cmp.Diff(want.FullContent, r.FullContent()); d != "" {
			t.Errorf("reply %d: FullContent differs from GraphRAG's (-GraphRAG +kgrag):\n%s", i, d)
		}
		if d := cmp.Diff(want.FullContentJSON, r.JSON()); d != "" {
			t.Errorf("reply %d: JSON differs from GraphRAG's model_dump_json (-GraphRAG +kgrag):\n%s", i, d)
		}
	}
	t.Logf("%d replies (%d repaired first): %d accepted and rendered as GraphRAG does, %d refused by both", len(replies), repaired, accepted, refused)
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}
