package eval_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/answer"
	"github.com/kgrag/kgrag/internal/engine"
	"github.com/kgrag/kgrag/internal/eval"
	"github.com/kgrag/kgrag/internal/localsearch"
	"github.com/kgrag/kgrag/internal/mode"
	"github.com/kgrag/kgrag/internal/retrieval"
)

// nearest is a vector index whose kNN gives the same entities, in order,
// for any question: the test says what the search finds.
type nearest []string

func (n nearest) Search(_ context.Context, _ []float32, k int) ([]embedindex.Hit, error) {
	var out []embedindex.Hit
	for i, id := range n[:min(k, len(n))] {
		out = append(out, embedindex.Hit{ID: id, Score: 1 - float32(i)/10})
	}
	return out, nil
}
func (n nearest) Info() embedindex.Info {
	return embedindex.Info{Model: "m", Dim: 2, Count: len(n), Metric: embedindex.MetricCosine, Path: "nearest"}
}
func (nearest) Close() error { return nil }

type embedder struct{}

func (embedder) Model() string { return "m" }
func (embedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, 0}
	}
	return out, nil
}

// tiny is a graph of three text units and three entities, one per unit.
// The sentence "the thane of cawdor lives, a prosperous gentleman" is cut
// by the chunker between units 1 and 2.
func tiny() *graphrag.Dataset {
	units := []graphrag.TextUnit{
		{ID: "tu1", HumanReadableID: "1", Text: "Ross brings news: the thane of cawdor lives,", NTokens: 10, HasNTokens: true, EntityIDs: []string{"e1"}},
		{ID: "tu2", HumanReadableID: "2", Text: "a prosperous gentleman, says Macbeth.", NTokens: 8, HasNTokens: true, EntityIDs: []string{"e2"}},
		{ID: "tu3", HumanReadableID: "3", Text: "Banquo's ghost sits in Macbeth's place at the feast.", NTokens: 12, HasNTokens: true, EntityIDs: []string{"e3"}},
	}
	ents := []graphrag.Entity{
		{ID: "e1", HumanReadableID: "0", Title: "ROSS", Type: "PERSON", Description: "a thane who brings news", TextUnitIDs: []string{"tu1"}},
		{ID: "e2", HumanReadableID: "1", Title: "MACBETH", Type: "PERSON", Description: "thane of Glamis", TextUnitIDs: []string{"tu2"}},
		{ID: "e3", HumanReadableID: "2", Title: "BANQUO", Type: "PERSON", Description: "a general whose ghost returns", TextUnitIDs: []string{"tu3"}},
	}
	return &graphrag.Dataset{Release: graphrag.Release3, TextUnits: units, Entities: ents}
}

// TestContextRecallByHand asks local search over tiny, whose kNN finds
// ROSS and MACBETH but not BANQUO, with evidence worked out by hand:
//
//	quote "the thane of cawdor lives a prosperous gentleman": split
//	  across units 1 and 2, both in the context (their entities were
//	  found): found                                              1
//	quote "Banquo's ghost sits in Macbeth's place": unit 3 is BANQUO's
//	  alone, which the kNN missed: missing                       0
//	entity MACBETH: found                                        1
//	entity BANQUO: missed by the kNN                             0
//	text unit "1" (human-readable id): found                     1
//	text unit "tu3": missing                                     0
//
// so 3 of 6, 0.5; and a question without evidence scores 1.
func TestContextRecallByHand(t *testing.T) {
	d := engine.Deps{Source: retrieval.NewMemorySource(tiny()), Name: "tiny", Entities: nearest{"e1", "e2"}, Embedder: embedder{}}
	o := engine.Options{Local: localsearch.Options{Params: retrieval.DefaultParams()}}
	e, err := engine.Open(mode.Local, d, o)
	if err != nil {
		t.Fatal(err)
	}
	qs := []eval.Question{
		{ID: "a", Question: "What does Ross say of Cawdor?", Evidence: eval.Evidence{
			Quotes:    []string{"the thane of Cawdor lives, a prosperous gentleman", "Banquo's ghost sits in Macbeth's place"},
			Entities:  []string{"macbeth", "BANQUO"},
			TextUnits: []string{"1", "tu3"},
		}},
		{ID: "b", Question: "Is there a question without evidence?"},
	}
	rep, err := eval.Run(context.Background(), e, qs, eval.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := rep.Results[0]
	if a.Err != "" || a.Recall.Found != 3 || a.Recall.Total != 6 {
		t.Fatalf("recall %+v (err %q); want 3 of 6", a.Recall, a.Err)
	}
	want := []string{"quote: Banquo's ghost sits in Macbeth's place", "entity: BANQUO", "text unit: tu3"}
	if strings.Join(a.Recall.Missing, "|") != strings.Join(want, "|") {
		t.Errorf("missing %q; want %q", a.Recall.Missing, want)
	}
	if a.Tokens == 0 || a.LLMCalls != 0 {
		t.Errorf("%d context tokens, %d calls; want a context and no call", a.Tokens, a.LLMCalls)
	}
	if rep.Summary.Recall != 0.5 || rep.Results[1].Recall.Share() != 1 {
		t.Errorf("mean recall %g, question b %g; want 0.5 (b has no evidence to score) and 1", rep.Summary.Recall, rep.Results[1].Recall.Share())
	}
}

// TestEntityInReports: global search's context is community reports,
// without entity records, so an entity counts when a report names it;
// in other modes naming is not selecting, and the records decide.
func TestEntityInReports(t *testing.T) {
	const reports = "id|title|content\n1|The witches' prophecy|Macbeth and Banquo meet three witches on the heath."
	ev := eval.Evidence{Entities: []string{"MACBETH", "DUNCAN", "THREE WITCHES"}}
	tests := []struct {
		name string
		res  *answer.Result
		want int
	}{
		{"global", &answer.Result{Global: &answer.Global{Batches: []answer.Batch{{Text: reports}}}}, 2},
		{"local, no records", &answer.Result{Context: &answer.Context{Text: reports}}, 0},
		{"local, records", &answer.Result{Context: &answer.Context{Text: reports,
			Records: answer.Records{Entities: []answer.Entity{{Title: "Duncan"}}}}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if r := eval.ContextRecall(ev, tt.res, nil); r.Found != tt.want || r.Total != 3 {
				t.Errorf("recall %+v; want %d of 3", r, tt.want)
			}
		})
	}
}

// TestQuoteMatching: case, whitespace, punctuation and table delimiters
// do not decide; a split needs parts of three words or more.
func TestQuoteMatching(t *testing.T) {
	ctx := &answer.Result{Context: &answer.Context{Text: "id|text\n1|Fair is FOUL,\nand foul is fair:\n2|Hover through the fog and filthy air."}}
	tests := []struct {
		quote string
		want  bool
	}{
		{"fair is foul, and foul is fair", true},
		{"Fair is foul and   foul is fair", true},
		{"foul is fair hover through the fog", true}, // split: 3 + 4 words
		{"fair hover through", false},                // a 1-word part
		{"fair is foul filthy air", false},           // both parts there, but the tail is 2 words
		{"the fog and filthy air", true},
		{"fog and foul air", false},
	}
	for _, tt := range tests {
		r := eval.ContextRecall(eval.Evidence{Quotes: []string{tt.quote}}, ctx, nil)
		if got := r.Found == 1; got != tt.want {
			t.Errorf("%q found %v; want %v", tt.quote, got, tt.want)
		}
	}
}

// TestReadFile: JSONL and YAML sets, and a bad line named.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	qs, err := eval.ReadFile(write("ok.jsonl", `{"id": "a", "kind": "fact", "question": "Who?", "evidence": {"quotes": ["x y z"]}}
# a comment
{"question": "Why?"}
`))
	if err != nil || len(qs) != 2 || qs[1].ID != "q2" || qs[1].Line != 3 {
		t.Fatalf("%+v, %v; want two questions, the second numbered q2 from line 3", qs, err)
	}
	ys, err := eval.ReadFile(write("ok.yaml", "- id: a\n  question: Who?\n  evidence:\n    entities: [MACBETH]\n- question: Why?\n"))
	if err != nil || len(ys) != 2 || ys[0].Evidence.Entities[0] != "MACBETH" || ys[1].Line != 5 {
		t.Fatalf("%+v, %v; want two questions from YAML", ys, err)
	}
	for _, tt := range []struct {
		name, body string
		line       int
		says       string
	}{
		{"bad.jsonl", "{\"question\": \"Who?\"}\n{\"question\": \"Why?\", \"evidence\": [1]}\n", 2, "not a question object"},
		{"unknown.jsonl", "{\"question\": \"Who?\", \"gold\": \"x\"}\n", 1, "unknown field"},
		{"kind.jsonl", "{\"question\": \"Who?\", \"kind\": \"trivia\"}\n", 1, "kind \"trivia\""},
		{"twice.jsonl", "{\"id\": \"a\", \"question\": \"Who?\"}\n{\"id\": \"a\", \"question\": \"Why?\"}\n", 2, "used on line 1"},
		{"empty.yaml", "- question: \"\"\n", 1, "the question is empty"},
	} {
		_, err := eval.ReadFile(write(tt.name, tt.body))
		var le *eval.LineError
		if !errors.As(err, &le) || le.Line != tt.line || !strings.Contains(err.Error(), tt.says) || !strings.Contains(err.Error(), tt.name) {
			t.Errorf("%s: %v; want line %d saying %q", tt.name, err, tt.line, tt.says)
		}
	}
}
