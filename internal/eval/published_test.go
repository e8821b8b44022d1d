package eval_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/internal/answer"
	"github.com/kgrag/kgrag/internal/eval"
	"github.com/kgrag/kgrag/internal/test"
)

// TestReadHotpotQA reads the dev set as published, checked against the
// files read here without the package: every question's gold passages
// are the titles of its supporting facts, and the corpus is the corpus
// file's passages (the questions' contexts add none: HippoRAG packed
// them all).
func TestReadHotpotQA(t *testing.T) {
	dir := test.HotpotQA100(t)
	set, err := eval.ReadSet(filepath.Join(dir, "questions.json"), filepath.Join(dir, "corpus.json"))
	if err != nil {
		t.Fatal(err)
	}
	var raw []struct {
		ID    string   `json:"_id"`
		Facts [][2]any `json:"supporting_facts"`
	}
	readJSON(t, filepath.Join(dir, "questions.json"), &raw)
	var corpus map[string][]string
	readJSON(t, filepath.Join(dir, "corpus.json"), &corpus)
	if set.Format != eval.FormatHotpotQA || len(set.Questions) != len(raw) || len(set.Passages) != len(corpus) {
		t.Fatalf("format %s, %d questions, %d passages; want hotpotqa, %d, %d", set.Format, len(set.Questions), len(set.Passages), len(raw), len(corpus))
	}
	for i, q := range set.Questions {
		var want []string
		for _, f := range raw[i].Facts {
			if s := f[0].(string); !slices.Contains(want, s) {
				want = append(want, s)
			}
		}
		if q.ID != raw[i].ID || !slices.Equal(q.Evidence.Documents, want) {
			t.Errorf("question %d: id %s, gold %q; want %s, %q", i, q.ID, q.Evidence.Documents, raw[i].ID, want)
		}
	}
	for _, p := range set.Passages {
		if got := strings.TrimSpace(strings.Join(corpus[p.Title], "")); got != p.Text {
			t.Errorf("passage %q: text %.40q; want %.40q", p.Title, p.Text, got)
		}
	}
	// Written as documents, read back by encoding/csv: a row a passage,
	// the title as a sentence of its own above the text.
	var b bytes.Buffer
	if err := eval.WriteDocuments(&b, set.Passages); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(set.Passages)+1 || !slices.Equal(rows[0], []string{"title", "text"}) {
		t.Fatalf("%d rows, header %q", len(rows), rows[0])
	}
	if r := rows[1]; r[0] != "Demon Dice" || !strings.HasPrefix(r[1], "Demon Dice.\nDemon Dice, originally") {
		t.Errorf("first row = %.60q", r)
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReadPublishedShapes: 2WikiMultiHopQA (HotpotQA's shape), MuSiQue
// as JSON lines and as a list, a title two passages share, HippoRAG's
// list-shaped corpus.
func TestReadPublishedShapes(t *testing.T) {
	twoWiki := `[{"_id": "a1", "type": "compositional", "question": "Who is the father of the director of Film X?",
	  "answer": "Bob", "evidences": [["Film X", "director", "Ann"]],
	  "supporting_facts": [["Film X", 0], ["Ann", 1], ["Film X", 1]],
	  "context": [["Film X", ["Film X is a film", " directed by Ann."]], ["Ann", ["Ann is a director.", " Her father is Bob."]], ["Other", ["Unrelated."]]]}]`
	musique := `{"id": "2hop_1", "question": "Q1?", "answer": "A", "answerable": true, "paragraphs": [` +
		`{"idx": 0, "title": "Lilu", "paragraph_text": "Lilu is a demon.", "is_supporting": true}, ` +
		`{"idx": 1, "title": "Lilu", "paragraph_text": "Lilu is also a city.", "is_supporting": false}, ` +
		`{"idx": 2, "title": "Gallu", "paragraph_text": "Gallu is a demon too.", "is_supporting": true}]}` + "\n" +
		`{"id": "2hop_2", "question": "Q2?", "answer": "B", "paragraphs": [` +
		`{"idx": 0, "title": "Lilu", "paragraph_text": "Lilu is also a city.", "is_supporting": true}]}` + "\n"
	tests := []struct {
		name, file, text, corpus string
		format                   string
		gold                     [][]string
		passages                 []string
	}{
		{"2wiki", "dev.json", twoWiki, "", eval.FormatHotpotQA, [][]string{{"Film X", "Ann"}}, []string{"Film X", "Ann", "Other"}},
		{"musique jsonl", "dev.jsonl", musique, "", eval.FormatMuSiQue, [][]string{{"Lilu", "Gallu"}, {"Lilu (2)"}}, []string{"Lilu", "Lilu (2)", "Gallu"}},
		{"musique list", "dev.json", "[" + strings.Replace(strings.TrimSpace(musique), "}\n{", "},{", 1) + "]", "", eval.FormatMuSiQue,
			[][]string{{"Lilu", "Gallu"}, {"Lilu (2)"}}, []string{"Lilu", "Lilu (2)", "Gallu"}},
		{"list corpus", "dev.jsonl", musique, `[{"title": "Extra", "text": "More."}, {"title": "Lilu", "text": "Lilu is a demon."}]`, eval.FormatMuSiQue,
			[][]string{{"Lilu", "Gallu"}, {"Lilu (2)"}}, []string{"Extra", "Lilu", "Lilu (2)", "Gallu"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			corpus := ""
			if tt.corpus != "" {
				corpus = write(t, "corpus.json", tt.corpus)
			}
			set, err := eval.ReadSet(write(t, tt.file, tt.text), corpus)
			if err != nil {
				t.Fatal(err)
			}
			if set.Format != tt.format {
				t.Errorf("format %s; want %s", set.Format, tt.format)
			}
			for i, q := range set.Questions {
				if !slices.Equal(q.Evidence.Documents, tt.gold[i]) {
					t.Errorf("question %d: gold %q; want %q", i, q.Evidence.Documents, tt.gold[i])
				}
			}
			var titles []string
			for _, p := range set.Passages {
				titles = append(titles, p.Title)
			}
			if !slices.Equal(titles, tt.passages) {
				t.Errorf("passages %q; want %q", titles, tt.passages)
			}
		})
	}
}

func TestReadPublishedErrors(t *testing.T) {
	tests := []struct {
		name, file, text, want string
	}{
		{"empty", "q.json", "  ", "empty"},
		{"empty list", "q.json", "[]", "no questions"},
		{"gold not given", "q.json", `[{"_id": "x", "question": "Q?", "supporting_facts": [["Nowhere", 0]], "context": [["Here", ["Text."]]]}]`, `"Nowhere" is in neither`},
		{"bad context", "q.json", `[{"_id": "x", "question": "Q?", "supporting_facts": [], "context": [["Here"]]}]`, "want [title, sentences]"},
		{"bad musique line", "q.jsonl", `{"id": "1", "question": "Q?", "paragraphs": []}` + "\n{not json\n", "q.jsonl:2"},
		{"no question", "q.json", `[{"_id": "x", "question": " ", "supporting_facts": [], "context": []}]`, "the question is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := eval.ReadSet(write(t, tt.file, tt.text), "")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ReadSet: %v; want an error with %q", err, tt.want)
			}
		})
	}
	own := write(t, "own.jsonl", `{"question": "Who?"}`)
	if _, err := eval.ReadSet(own, write(t, "c.json", "{}")); err == nil || !strings.Contains(err.Error(), "kgrag's own format") {
		t.Errorf("--corpus with kgrag's format: %v; want an error", err)
	}
}

// TestDocumentRecall: a document is held when the context holds one of
// its text units, by either id; recall@k reads the ranking's first k.
func TestDocumentRecall(t *testing.T) {
	docs := eval.Documents{"Ann": {"g-ann", "7"}, "Film X": {"g-film", "3"}, "Other": {"g-other", "9"}}
	ev := eval.Evidence{Documents: []string{"Film X", "Ann"}}
	res := &answer.Result{
		Context: &answer.Context{Records: answer.Records{Sources: []answer.Source{{ID: "3", TextUnitID: "g-film"}, {ID: "9", TextUnitID: "g-other"}}}},
		Ranking: []answer.Hit{{ID: "9"}, {ID: "3"}, {ID: "5"}, {ID: "4"}, {ID: "6"}, {ID: "7"}},
	}
	r := eval.ContextRecall(ev, res, docs)
	if r.Found != 1 || r.Total != 2 || r.Documents == nil || r.Documents.Found != 1 || r.Quotes != nil ||
		!slices.Equal(r.Missing, []string{"document: Ann"}) {
		t.Errorf("ContextRecall = %+v; want Film X held, Ann missing", r)
	}
	for k, want := range map[int]float64{1: 0, 2: 0.5, 5: 0.5, 6: 1} {
		if got, ok := eval.RecallAt(ev, res, docs, k); !ok || got != want {
			t.Errorf("RecallAt(%d) = %v, %v; want %v", k, got, ok, want)
		}
	}
	if _, ok := eval.RecallAt(ev, &answer.Result{Context: res.Context}, docs, 5); ok {
		t.Error("RecallAt without a ranking: want no value")
	}
}
