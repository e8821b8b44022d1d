package prompts_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kgrag/kgrag/prompts"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// sampleContext is a small context in the shape retrieval prints.
const sampleContext = "-----Entities-----\nid|entity|description|number of relationships\n5|SCROOGE|a miser|12\n\n" +
	"-----Relationships-----\nid|source|target|description|weight\n23|SCROOGE|MARLEY|partners|2.0"

// sampleReports and samplePoints are a map batch and a reduce context in
// the shapes retrieval prints.
const (
	sampleReports = "id|title|occurrence weight|content|rank\n3|Scrooge and his clerk|1.0|\"# Scrooge\nScrooge employs Bob.\"|8.5\n"
	samplePoints  = "----Analyst 2----\nImportance Score: 90\nScrooge employs Bob Cratchit [Data: Reports (3)]"
)

// recordFormat is GraphRAG's record format, as internal/extraction/tuples'
// DefaultDelimiters gives it.
var recordFormat = prompts.RecordFormat{Tuple: "<|>", Record: "##", Completion: "<|COMPLETE|>"}

// sampleText is a passage of the Christmas Carol; esgTypes and
// sampleESGText are some of the NetworkX article's entity types (its
// spelling kept: commas, brackets and quotes in them) and a passage of
// the kind it reads.
const (
	sampleText    = "Scrooge and Marley were partners for I don't know how many years. Scrooge was his sole executor."
	sampleESGText = "PACCAR aims to reduce the CO2 emissions of its facilities worldwide by 35% by 2030, from a 2019 baseline."
)

var esgTypes = []string{"Scope 1 Emmission", "Co2", "Target Baseline Year", "Percentage Reduction (%)",
	"Target Type (Absolute, Intensity, or Other)(Please specify further detail if Other)",
	"Target Units (Relevant for 'Intensity' target type)"}

// TestRenderGolden checks each prompt as sent against a golden file, so a
// change of wording shows up in review as a diff of prose.
func TestRenderGolden(t *testing.T) {
	tests := []struct {
		name string
		data any
	}{
		{"local_answer", prompts.LocalAnswer{Context: sampleContext, ResponseType: prompts.DefaultResponseType}},
		{"plain_answer", prompts.PlainAnswer{ResponseType: "a single sentence"}},
		{"eval_judge", prompts.EvalJudge{Question: "Who kills Duncan?", Reference: "Macbeth kills Duncan in his sleep.", Answer: "Macbeth murders him [Data: Entities (3)]."}},
		{"global_map", prompts.GlobalMap{Context: sampleReports, MaxLength: 1000}},
		{"global_reduce", prompts.GlobalReduce{Context: samplePoints, ResponseType: prompts.DefaultResponseType, MaxLength: 2000}},
		{"global_reduce_general", prompts.GlobalReduce{Context: samplePoints, ResponseType: "a list", MaxLength: 500, GeneralKnowledge: true}},
		{"global_rate", prompts.GlobalRate{Question: "Who is Scrooge?", Report: "# Scrooge and his clerk\n\nScrooge employs Bob Cratchit."}},
		{"index_report", prompts.IndexReport{Context: "-----Entities-----\nhuman_readable_id,title,description,degree\n5,SCROOGE,a miser,12\n6,MARLEY,his partner,3\n\n" +
			"-----Relationships-----\nhuman_readable_id,source,target,description,combined_degree\n23,SCROOGE,MARLEY,partners,15\n", MaxLength: 2000}},
		{"index_report_text", prompts.IndexReport{Context: "-----SOURCES-----\nid,text,entity_degree\n3,\"Marley was dead, to begin with.\",12\n7,Scrooge knew he was dead.,5\n", MaxLength: 2000}},
		{"index_summarize", prompts.IndexSummarize{Title: "SCROOGE", Descriptions: []string{"A miser.", "Marley's partner."}, MaxLength: 500}},
		{"index_summarize_relationship", prompts.IndexSummarize{Source: "SCROOGE", Target: "MARLEY", Descriptions: []string{"Partners.", "Marley haunts Scrooge."}, MaxLength: 500}},
		{"index_extract", prompts.IndexExtract{RecordFormat: recordFormat, EntityTypes: []string{"organization", "person", "geo", "event"}, Text: sampleText}},
		{"index_extract_esg", prompts.IndexExtract{RecordFormat: recordFormat, EntityTypes: esgTypes, Text: sampleESGText}},
		{"index_extract_continue", prompts.IndexGlean{RecordFormat: recordFormat}},
		{"index_extract_loop", prompts.IndexGlean{RecordFormat: recordFormat}},
		{"index_claims", prompts.IndexClaims{RecordFormat: recordFormat, EntitySpecs: []string{"organization", "person", "geo", "event"},
			ClaimDescription: "Any claims or facts that could be relevant to information discovery.", Text: sampleText}},
		{"index_claims_continue", prompts.IndexGlean{RecordFormat: recordFormat}},
		{"index_claims_loop", prompts.IndexGlean{RecordFormat: recordFormat}},
		{"basic_answer", prompts.BasicAnswer{Context: "id|text\n2|" + sampleText + "\n", ResponseType: prompts.DefaultResponseType}},
		{"drift_expand", prompts.DriftExpand{Question: "How do the ghosts change Scrooge?", Template: "# Scrooge and his clerk\n\nScrooge employs Bob Cratchit."}},
		{"drift_primer", prompts.DriftPrimer{Question: "How do the ghosts change Scrooge?", Reports: "# Scrooge and his clerk\n\nScrooge employs Bob Cratchit.\n\n# Marley's ghost\n\nMarley warns Scrooge."}},
		{"drift_local", prompts.DriftLocal{Context: sampleContext, GlobalQuestion: "How do the ghosts change Scrooge?", FollowUps: 20, ResponseType: prompts.DefaultResponseType}},
		{"drift_reduce", prompts.DriftReduce{Context: "----Step 1: How do the ghosts change Scrooge?----\nThey show him his past [Data: Reports (3)].", ResponseType: prompts.DefaultResponseType}},
		{"thoughts_graph", prompts.ThoughtsGraph{Context: sampleContext, Questions: prompts.Questions{"Who is Scrooge?", "Whom does he employ?"}}},
		{"thoughts_answer", prompts.ThoughtsAnswer{Graph: "Nodes:\n- SCROOGE (person): a miser\n", Questions: prompts.Questions{"Who is Scrooge?", "Whom does he employ?"}, ResponseType: "a single sentence"}},
		{"thoughts_answer_single", prompts.ThoughtsAnswer{Graph: "Nodes:\n- SCROOGE (person): a miser\n", Questions: prompts.Questions{"Who is Scrooge?"}, ResponseType: "a single sentence"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(tt.name, "_general"), "_relationship"), "_esg"), "_single")
			got, err := prompts.Render(name, tt.data)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", tt.name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./prompts -update to create it)", err)
			}
			if d := cmp.Diff(string(want), got); d != "" {
				t.Errorf("Render(%q) differs from %s (-want +got):\n%s", tt.name, golden, d)
			}
		})
	}
}

func TestRenderLocalAnswer(t *testing.T) {
	got, err := prompts.Render("local_answer", prompts.LocalAnswer{Context: sampleContext, ResponseType: "one paragraph"})
	if err != nil {
		t.Fatal(err)
	}
	// The evidence is passed through whole, the citation form is taught,
	// and the model is told to admit when it does not know.
	for _, want := range []string{sampleContext, "one paragraph", "[Data: Entities (5, 7); Relationships (23)", "do not know"} {
		if !strings.Contains(got, want) {
			t.Errorf("rendered prompt lacks %q", want)
		}
	}
	if strings.Contains(got, "{{") {
		t.Errorf("rendered prompt still holds template actions:\n%s", got)
	}
}

func TestRenderErrors(t *testing.T) {
	tests := []struct {
		name string
		data any
		want string
	}{
		{"no_such_prompt", prompts.LocalAnswer{}, "no template"},
		{"local_answer", map[string]string{"ResponseType": "x"}, "render local_answer"},
		{"plain_answer", map[string]string{}, "render plain_answer"},
	}
	for _, tt := range tests {
		if _, err := prompts.Render(tt.name, tt.data); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Render(%q) error = %v; want it to mention %q", tt.name, err, tt.want)
		}
	}
}

// TestEveryTemplateParses renders each embedded template with an empty
// map: a syntax error fails here, not in front of a user.
func TestEveryTemplateParses(t *testing.T) {
	if len(prompts.Names()) == 0 {
		t.Fatal("no templates embedded")
	}
	for _, n := range prompts.Names() {
		if _, err := prompts.Render(n, map[string]string{}); err != nil && strings.Contains(err.Error(), "parse") {
			t.Errorf("%s: %v", n, err)
		}
	}
}

// BenchmarkRender: a render parses nothing (the templates are parsed once).
func BenchmarkRender(b *testing.B) {
	for b.Loop() {
		if _, err := prompts.Render("plain_answer", prompts.PlainAnswer{ResponseType: "one line"}); err != nil {
			b.Fatal(err)
		}
	}
}
