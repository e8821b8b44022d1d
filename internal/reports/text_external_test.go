package reports_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/indexer"
	"github.com/kgrag/kgrag/internal/reports"
	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/internal/tokens"
)

// These tests run GraphRAG 3.3.0's text-unit context builder (the fast
// method's create_community_reports_text) through
// scripts/oracle/graphrag_report_text.py and compare its contexts with
// NewTextBuilder's.

type textLocal struct {
	Community string   `json:"community"`
	Level     int64    `json:"level"`
	Text      string   `json:"text"`
	Tokens    int      `json:"tokens"`
	Exceeds   bool     `json:"exceeds"`
	Units     []string `json:"units"`
}

type textLevel struct {
	Community string `json:"community"`
	Level     int64  `json:"level"`
	Text      string `json:"text"`
	Tokens    int    `json:"tokens"`
}

type textOut struct {
	Local    []textLocal `json:"local"`
	Actual   []textLevel `json:"actual"`
	Intended []textLevel `json:"intended"`
	Seconds  float64     `json:"seconds"`
	Dropped  int         `json:"dropped"`
}

// fastCarol indexes A Christmas Carol with the fast method, without
// reports (no model), and returns the output folder.
func fastCarol(t *testing.T) string {
	t.Helper()
	opts := indexer.DefaultOptions()
	opts.Input = test.SourceText(t)
	opts.Output = filepath.Join(t.TempDir(), "output")
	opts.Method, opts.NoReports = indexer.MethodFast, true
	if _, err := indexer.Run(t.Context(), nil, opts); err != nil {
		t.Fatal(err)
	}
	return opts.Output
}

// withUnnamedUnit writes a copy of the output in dir with one more text
// unit, which no entity names: pandas' join then gives it no degree, and
// the entity_degree column of every context turns to floats ("12.0").
func withUnnamedUnit(t *testing.T, dir string) string {
	t.Helper()
	ds, err := graphrag.Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	last := ds.TextUnits[len(ds.TextUnits)-1]
	ds.TextUnits = append(ds.TextUnits, graphrag.TextUnit{ID: "unnamed-unit", HumanReadableID: fmt.Sprint(len(ds.TextUnits)),
		Text: "A passage, with \"no\" noun phrase kept.", NTokens: 9, HasNTokens: true, DocumentIDs: last.DocumentIDs})
	out := filepath.Join(t.TempDir(), "unnamed")
	if err := graphrag.Write3x(t.Context(), out, ds); err != nil {
		t.Fatal(err)
	}
	return out
}

// standIns are made-up reports for every community of ds, of lengths that
// vary with the community number, so that over-budget communities mix
// some sub-community reports with the others' text units.
func standIns(ds *graphrag.Dataset, words int) map[string]string {
	out := make(map[string]string)
	for _, c := range ds.Communities {
		n := 0
		fmt.Sscan(c.Community, &n)
		out[c.Community] = fmt.Sprintf("# Community %s\n\nA report, \"made up\" for the test:%s", c.Community,
			strings.Repeat(" word", words*(1+n%5)))
	}
	return out
}

type textJob struct {
	name     string
	dir      string
	budget   int
	words    int // length of the stand-in reports (see standIns)
	encoding string
}

// TestTextContextsAgainstGraphRAG builds the text-unit context of every
// community, on the fast output of A Christmas Carol and on the v3
// sample, and checks, against GraphRAG's build_local_context and
// build_level_context on the same tables:
//
//   - local: the same communities, each with the same text units in the
//     same order, the same text byte for byte, the same token count and
//     the same over-the-budget flag;
//   - actual: with no report written (as GraphRAG 3.3.0 runs), the same
//     context, over-budget ones trimmed to the budget;
//   - intended: with stand-in reports of the sub-communities written, the
//     same context, over-budget ones given sub-community reports (GraphRAG's
//     functions with their two faults mended; see the script).
//
// It requires over-budget communities, trimmed ones, mixed contexts and
// contexts of reports alone to occur.
func TestTextContextsAgainstGraphRAG(t *testing.T) {
	py := test.GraphRAGPython(t)
	carol := fastCarol(t)
	v3 := filepath.Join(test.GraphRAGSamples(t), "v3")
	unnamed := withUnnamedUnit(t, carol)
	jobs := []textJob{
		{"carol/8000", carol, 8000, 40, tokens.EncodingCL100K},
		{"carol/3000", carol, 3000, 300, tokens.EncodingCL100K},
		{"carol/8000/o200k", carol, 8000, 40, tokens.EncodingO200K},
		{"carol+unnamed/8000", unnamed, 8000, 40, tokens.EncodingCL100K},
		{"v3/8000", v3, 8000, 40, tokens.EncodingCL100K},
		{"v3/2500", v3, 2500, 200, tokens.EncodingCL100K},
	}
	datasets := make([]*graphrag.Dataset, len(jobs))
	var req []map[string]any
	for i, j := range jobs {
		ds, err := graphrag.Open(t.Context(), j.dir)
		if err != nil {
			t.Fatal(err)
		}
		datasets[i] = ds
		req = append(req, map[string]any{"dir": j.dir, "max_context_tokens": j.budget, "encoding": j.encoding,
			"reports": standIns(ds, j.words), "drop_unnamed": true})
	}
	out := test.PythonJSONL[textOut](t, py, []string{filepath.Join(test.RepoRoot(t), "scripts", "oracle", "graphrag_report_text.py"), "--jobs"}, req)

	var total, same, over, trimmed, mixed, reportsOnly, floats int
	for i, j := range jobs {
		ds, o := datasets[i], out[i]
		b, err := reports.NewTextBuilder(ds, encoding(t, j.encoding), j.budget)
		if err != nil {
			t.Fatal(err)
		}
		if b.Len() != len(o.Local) {
			t.Errorf("%s: %d communities with a context; GraphRAG has %d", j.name, b.Len(), len(o.Local))
		}
		for _, w := range o.Local {
			total++
			got, ok := b.Local(w.Community)
			if !ok {
				t.Errorf("%s: community %s: no context; GraphRAG has one", j.name, w.Community)
				continue
			}
			units := slices.DeleteFunc(slices.Clone(w.Units), func(id string) bool { return id == "0" }) // GraphRAG drops id 0
			if d := cmp.Diff(units, b.Units(w.Community), cmpopts.EquateEmpty()); d != "" {
				t.Errorf("%s: community %s: text units (-GraphRAG +kgrag):\n%s", j.name, w.Community, d)
			}
			if got.Level != w.Level || got.Exceeds != w.Exceeds || got.Tokens != w.Tokens {
				t.Errorf("%s: community %s: level %d, exceeds %v, %d tokens; GraphRAG: %d, %v, %d",
					j.name, w.Community, got.Level, got.Exceeds, got.Tokens, w.Level, w.Exceeds, w.Tokens)
			}
			if got.Text != w.Text {
				t.Errorf("%s: community %s: local context differs (-GraphRAG +kgrag):\n%s", j.name, w.Community, clip(cmp.Diff(w.Text, got.Text)))
				continue
			}
			same++
			if w.Exceeds {
				over++
			}
			if strings.HasSuffix(w.Text, ".0\n") {
				floats++
			}
		}
		done := standIns(ds, j.words)
		for _, c := range []struct {
			what   string
			want   []textLevel
			report func(string) (string, bool)
		}{
			{"actual", o.Actual, nil},
			{"intended", o.Intended, func(num string) (string, bool) { s, ok := done[num]; return s, ok }},
		} {
			if len(c.want) != len(o.Local) {
				t.Errorf("%s: GraphRAG's %s level contexts: %d; local ones: %d", j.name, c.what, len(c.want), len(o.Local))
			}
			for _, w := range c.want {
				total++
				got, ok := b.Context(w.Community, c.report)
				if !ok {
					t.Errorf("%s %s: community %s: no context", j.name, c.what, w.Community)
					continue
				}
				if got.Text != w.Text || got.Tokens != w.Tokens {
					t.Errorf("%s %s: community %s (%d tokens; GraphRAG %d): context differs (-GraphRAG +kgrag):\n%s",
						j.name, c.what, w.Community, got.Tokens, w.Tokens, clip(cmp.Diff(w.Text, got.Text)))
					continue
				}
				same++
				local, _ := b.Local(w.Community)
				switch {
				case !local.Exceeds:
				case strings.HasPrefix(w.Text, "----REPORTS-----"):
					mixed++
				case strings.HasPrefix(w.Text, "community,full_content"):
					reportsOnly++
				default:
					trimmed++
					if w.Tokens > j.budget && len(b.Units(w.Community)) > 1 {
						t.Errorf("%s %s: community %s: %d tokens over %d", j.name, c.what, w.Community, w.Tokens, j.budget)
					}
				}
			}
		}
		t.Logf("%s: %d communities, %d over the budget, %d community text units named by none of its entities (left out by both); GraphRAG built them in %.2fs",
			j.name, len(o.Local), countOver(o.Local), o.Dropped, o.Seconds)
	}
	t.Logf("%d of %d contexts identical to GraphRAG's (local, as run, as intended): %d local ones over the budget, "+
		"%d trimmed, %d mixing sub-community reports with text units, %d of reports alone; %d with float degrees", same, total, over, trimmed, mixed, reportsOnly, floats)
	for what, n := range map[string]int{"over the budget": over, "trimmed": trimmed, "mixed": mixed, "reports alone": reportsOnly, "float degree": floats} {
		if n == 0 {
			t.Errorf("no %s context was compared: the jobs no longer cover that case", what)
		}
	}
}

func countOver(ls []textLocal) int {
	n := 0
	for _, l := range ls {
		if l.Exceeds {
			n++
		}
	}
	return n
}
