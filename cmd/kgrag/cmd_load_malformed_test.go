package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/embedtext"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/test"
)

// malformedSample copies sample v into a new folder and damages it as a
// model's mis-parse does (scripts/oracle/malformed.py, with pyarrow, in
// the sample's own layout): an entity with an empty title and a sentence
// for a type, one with a null id, a relationship with an empty end, and a
// community naming the entity with the empty title.
func malformedSample(t *testing.T, v string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), v)
	script := filepath.Join(test.RepoRoot(t), "scripts", "oracle", "malformed.py")
	out, err := exec.Command("python3", script, filepath.Join(test.GraphRAGSamples(t), v), dir).CombinedOutput()
	if err != nil {
		test.SkipOrFail(t, "python3 with pyarrow is needed to damage the sample: %v\n%s", err, out)
	}
	return dir
}

// classCountsFile counts the instances of each gr: class in an RDF file
// as Oxigraph parses it (scripts/oracle/classes.py).
func classCountsFile(t *testing.T, path string) map[string]int64 {
	t.Helper()
	var m map[string]int64
	oracleJSON(t, "classes.py", &m, path)
	return m
}

// TestLoadMalformedRows: an output with a few malformed rows, in each
// release's layout, loads: the Turtle holds every other row, as many as
// pyarrow counts by the documented rule (scripts/oracle/counts.py) and
// Oxigraph parses; inspect --json names each row left out and agrees with
// the oracle per table; --strict and --max-bad-rows fail with exit 3 and
// write nothing.
func TestLoadMalformedRows(t *testing.T) {
	externalTools(t)
	for _, v := range test.Samples() {
		t.Run(v, func(t *testing.T) {
			dir := malformedSample(t, v)
			ttl := loadSaying(t, dir, "left out 3 malformed rows")
			want := oracleCounts(t, dir)
			delete(want, "IndexRun")
			delete(want, "Prompt")
			got := classCountsFile(t, ttl)
			for class, n := range want {
				if got[class] != n {
					t.Errorf("%s: %d in the Turtle; the oracle counts %d", class, got[class], n)
				}
			}

			// inspect --json: per table, what the oracle leaves out.
			rep := inspectJSON(t, dir)
			gotLeft := map[string]map[string]int{}
			var rows []int64
			for _, l := range rep.LeftOut {
				if l.Refs > 0 {
					continue
				}
				kind := "depends"
				if l.Malformed() {
					kind = "malformed"
				}
				if gotLeft[l.Table] == nil {
					gotLeft[l.Table] = map[string]int{"malformed": 0, "depends": 0}
				}
				gotLeft[l.Table][kind] += l.Rows
				if l.Table == graphrag.TableEntities {
					for _, r := range l.Examples {
						rows = append(rows, r.Row)
						if len(r.Fields) == 0 || !strings.HasSuffix(l.Path, ".parquet") {
							t.Errorf("example %+v of %s names no fields or file", r, l.Path)
						}
					}
				}
			}
			if wantLeft := oracleLeftOut(t, dir); !jsonEqual(gotLeft, wantLeft) {
				t.Errorf("left out per table: %v; the oracle: %v", gotLeft, wantLeft)
			}
			slices.Sort(rows)
			if !slices.Equal(rows, []int64{3, 7}) {
				t.Errorf("entity rows named: %v; want 3 and 7", rows)
			}

			for _, args := range [][]string{{"--strict"}, {"--max-bad-rows", "0"}, {"--max-bad-rows", "0.1%"}} {
				out := filepath.Join(t.TempDir(), "strict.ttl")
				_, stderr, code := runKgrag(t, append([]string{"load", "--input", dir, "--turtle", out}, args...)...)
				if code != exitMalformed {
					t.Errorf("load %v: exit %d; want %d\n%s", args, code, exitMalformed, stderr)
				}
				if _, err := os.Stat(out); err == nil {
					t.Errorf("load %v wrote %s", args, out)
				}
				if args[0] == "--strict" && !strings.Contains(stderr, "row 3: null or empty value") {
					t.Errorf("load --strict: %s; want the entity of row 3 named", stderr)
				}
			}
		})
	}
}

// inspectJSON runs inspect --json on dir.
func inspectJSON(t *testing.T, dir string) inspectReport {
	t.Helper()
	stdout, stderr, code := runKgrag(t, "inspect", "--json", dir)
	if code != 0 {
		t.Fatalf("inspect: exit %d\n%s", code, stderr)
	}
	var rep inspectReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// loadSaying loads dir into a Turtle file, which it returns, and checks
// that load's summary says summary.
func loadSaying(t *testing.T, dir, summary string) string {
	t.Helper()
	ttl := filepath.Join(t.TempDir(), "g.ttl")
	_, stderr, code := runKgrag(t, "load", "--input", dir, "--turtle", ttl)
	if code != 0 {
		t.Fatalf("load: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, summary) {
		t.Errorf("load's summary does not say %q:\n%s", summary, stderr)
	}
	return ttl
}

func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// leftOutEntity is the entity the left-out fixtures damage.
const leftOutEntity = "JACOB MARLEY"

// leftOutFixture writes the v3 sample with the id of leftOutEntity
// nulled, so that its row is left out, embeds it, and returns the
// fixture and a question in the entity's own words.
func leftOutFixture(t *testing.T) (askFixture, string) {
	t.Helper()
	ds, err := graphrag.Open(t.Context(), filepath.Join(test.GraphRAGSamples(t), "v3"))
	if err != nil {
		t.Fatal(err)
	}
	ds.Entities = slices.DeleteFunc(ds.Entities, func(e graphrag.Entity) bool { return e.Placeholder })
	i := slices.IndexFunc(ds.Entities, func(e graphrag.Entity) bool { return e.Title == leftOutEntity })
	if i < 0 {
		t.Fatalf("no %s in the sample", leftOutEntity)
	}
	question := embedtext.Entity(ds.Entities[i])
	ds.Entities[i].ID = ""
	in := t.TempDir()
	if err := graphrag.Write3x(t.Context(), in, ds); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.Start(t, llmtest.Config{Dim: askDim})
	index := t.TempDir()
	term, _, _ := testTerminal()
	if err := runEmbed(t.Context(), embedTestOptions(in, index, srv.URL(), askEmbedModel), term); err != nil {
		t.Fatal(err)
	}
	return askFixture{input: in, index: index, srv: srv}, question
}

// TestAskLeftOutNeverCited: an entity left out (its id null) is in no
// index, context or citation, even asked about in its own words, and no
// relationship naming it is either; ask --json carries what was left out,
// and --strict refuses the output with exit 3 through the snapshot as
// through the tables.
func TestAskLeftOutNeverCited(t *testing.T) {
	const gone = leftOutEntity
	f, question := leftOutFixture(t)
	index := f.index
	for _, snap := range []bool{true, false} {
		if !snap {
			if err := os.Remove(filepath.Join(index, "graph.snap")); err != nil {
				t.Fatal(err)
			}
		}
		opts := f.options(question)
		opts.contextOnly, opts.json = true, true
		term, out, _ := testTerminal()
		if err := runAsk(t.Context(), opts, term); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out.String(), "|"+gone+"|") {
			t.Errorf("snapshot=%v: the context cites %s, which was left out:\n%.600s", snap, gone, out.String())
		}
		r := decodeAsk(t, out.Bytes())
		if len(r.LeftOut) == 0 || r.LeftOut[0].Table != graphrag.TableEntities || r.LeftOut[0].Rows != 1 {
			t.Errorf("snapshot=%v: left_out = %+v; want the entity", snap, r.LeftOut)
		}
		if !strings.Contains(out.String(), `"left_out"`) {
			t.Errorf("snapshot=%v: no left_out in the JSON record", snap)
		}

		opts.read.strict = true
		term, _, _ = testTerminal()
		if err := runAsk(t.Context(), opts, term); exitCode(t.Context(), err) != exitMalformed {
			t.Errorf("snapshot=%v: ask --strict: %v (exit %d); want exit %d", snap, err, exitCode(t.Context(), err), exitMalformed)
		}
	}
}

// TestLoadNonIntegerValues: an integer column stored as floating point
// with 2.5 or infinity in a row (scripts/oracle/nonint.py damages the
// text units' n_tokens and the relationships' combined degree) loads:
// those values are missing from the graph, every other value is there as
// pyarrow reads it (NaN, pandas' null, missing too), as Oxigraph parses
// the Turtle (scripts/oracle/values.py); the summary and inspect --json
// count them; --strict fails with exit 3 naming the first row. A NaN in
// a struct of document metadata becomes JSON null instead of failing.
func TestLoadNonIntegerValues(t *testing.T) {
	externalTools(t)
	for _, v := range test.Samples() {
		t.Run(v, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), v)
			type column struct {
				File    string            `json:"file"`
				Column  string            `json:"column"`
				BadRows []int64           `json:"bad_rows"`
				Values  map[string]*int64 `json:"values"`
			}
			var report struct {
				DocumentNaN   string `json:"document_nan"`
				TextUnits     column `json:"text_units"`
				Relationships column `json:"relationships"`
			}
			oracleJSON(t, "nonint.py", &report, filepath.Join(test.GraphRAGSamples(t), v), dir)
			damaged := map[string]column{graphrag.TableTextUnits: report.TextUnits, graphrag.TableRelationships: report.Relationships}
			ttl := loadSaying(t, dir, "read 3 values that are not integers as missing")
			for table, prop := range map[string]string{graphrag.TableTextUnits: "n_tokens", graphrag.TableRelationships: "rank"} {
				got := turtleValues(t, ttl, prop)
				missing := 0
				for id, want := range damaged[table].Values {
					g, ok := got[id]
					if !ok {
						t.Errorf("%s %s: not in the Turtle", table, id)
						continue
					}
					if (g == nil) != (want == nil) || (g != nil && *g != strconv.FormatInt(*want, 10)) {
						t.Errorf("%s %s: gr:%s %v in the Turtle; pyarrow reads %v", table, id, prop, deref(g), deref(want))
					}
					if want == nil {
						missing++
					}
				}
				if missing == 0 {
					t.Errorf("%s: no value missing; the damage did not take", table)
				}
			}

			// NaN inside a struct of metadata: JSON null, as pandas'
			// to_json writes it, not a failed load.
			var meta map[string]any
			if m := turtleValues(t, ttl, "metadata")[report.DocumentNaN]; m == nil || json.Unmarshal([]byte(*m), &meta) != nil {
				t.Errorf("document %s: gr:metadata %v; want its JSON", report.DocumentNaN, deref(m))
			} else if p, ok := meta["page"]; !ok || p != nil || meta["source"] != "scan" {
				t.Errorf("document %s: gr:metadata %v; want page null and source scan", report.DocumentNaN, meta)
			}

			rep := inspectJSON(t, dir)
			for table, d := range damaged {
				var rows []int64
				for _, l := range rep.LeftOut {
					if l.Table == table && l.Column == d.Column && l.Values > 0 {
						if l.Values != len(d.BadRows) || l.Rows != 0 || l.Cause != graphrag.CauseNotInteger {
							t.Errorf("%s: %+v; want %d values, no row left out", table, l, len(d.BadRows))
						}
						for _, r := range l.Examples {
							rows = append(rows, r.Row)
						}
					}
				}
				if !slices.Equal(rows, d.BadRows) {
					t.Errorf("%s: rows named %v; pyarrow finds %v", table, rows, d.BadRows)
				}
			}

			strict := filepath.Join(t.TempDir(), "strict.ttl")
			_, stderr, code := runKgrag(t, "load", "--input", dir, "--turtle", strict, "--strict")
			if code != exitMalformed || !strings.Contains(stderr, "value is not an integer") {
				t.Errorf("load --strict: exit %d; want %d and the value named\n%s", code, exitMalformed, stderr)
			}
			if _, err := os.Stat(strict); err == nil {
				t.Errorf("load --strict wrote %s", strict)
			}
		})
	}
}

// turtleValues reads the values of gr:prop in an RDF file by gr:id, as
// Oxigraph parses it (scripts/oracle/values.py): nil where a subject has
// none.
func turtleValues(t *testing.T, path, prop string) map[string]*string {
	t.Helper()
	var got map[string]*string
	oracleJSON(t, "values.py", &got, path, prop)
	return got
}

// oracleJSON runs scripts/oracle/script with args and decodes the JSON it
// prints into out; the caller has checked the tools are there
// (externalTools), so a failure fails the test.
func oracleJSON(t *testing.T, script string, out any, args ...string) {
	t.Helper()
	var stderr strings.Builder
	cmd := exec.Command("python3", append([]string{filepath.Join(test.RepoRoot(t), "scripts", "oracle", script)}, args...)...)
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %q: %v\n%s", script, args, err, stderr.String())
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s output %q: %v", script, b, err)
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return "none"
	}
	return *p
}

// TestServeLeftOutNeverCited asks kgrag serve about the left-out entity,
// in its own words, through PyPI openai: the context records, the
// citations and the prompt the model gets name neither it nor a
// relationship of it, and the neighbours are entities that are kept.
func TestServeLeftOutNeverCited(t *testing.T) {
	f, question := leftOutFixture(t)
	sf := startServe(t, f, nil)
	var out struct {
		Answers []struct {
			Answer string
			KGRAG  *serveReply `json:"kgrag"`
			Error  *struct{ Type, Message string }
		}
	}
	f.srv.Reset()
	runPy(t, "openai_client.py", &out, "--base-url", sf.http.URL+"/v1", "--model", "kgrag-local", question)
	if len(out.Answers) != 1 || out.Answers[0].Error != nil || out.Answers[0].KGRAG == nil || out.Answers[0].KGRAG.Context == nil {
		t.Fatalf("openai client: %+v; want an answer with its context", out.Answers)
	}
	r := out.Answers[0].KGRAG
	recs := r.Context.Records
	if len(recs.Entities) == 0 {
		t.Fatal("the context holds no entity: the test would prove nothing")
	}
	for _, e := range recs.Entities {
		if e.Title == leftOutEntity {
			t.Errorf("context entity %+v was left out", e)
		}
	}
	for _, rel := range recs.Relationships {
		if rel.Source == leftOutEntity || rel.Target == leftOutEntity {
			t.Errorf("context relationship %+v names the left-out entity", rel)
		}
	}
	for _, c := range r.Citations {
		if c.Title == leftOutEntity || strings.Contains(c.Title, leftOutEntity+" ") {
			t.Errorf("citation %+v names the left-out entity", c)
		}
	}
	prompts := 0
	for _, req := range f.srv.Requests() {
		if !strings.HasSuffix(req.Path, "/chat/completions") {
			continue
		}
		prompts++
		for _, m := range req.Messages {
			if strings.Contains(m.Content, "|"+leftOutEntity+"|") {
				t.Errorf("the prompt the model got cites %s:\n%.600s", leftOutEntity, m.Content)
			}
		}
	}
	if prompts == 0 {
		t.Error("the model got no prompt")
	}
}
