package tuples_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kgrag/kgrag/internal/extraction/tuples"
)

// golden is a hand-written expectation for one reply in testdata: what a
// careful reader takes from it, written before the parser was run on it.
// There is no -update flag on purpose: the files are not the parser's
// output.
type golden struct {
	Note          string                `json:"note"`
	WellFormed    bool                  `json:"wellformed"` // GraphRAG's own parser reads it right (graphrag_test.go)
	Entities      []tuples.Entity       `json:"entities"`
	Relationships []tuples.Relationship `json:"relationships"`
	Claims        []tuples.Claim        `json:"claims"`
	Dropped       []string              `json:"dropped"` // reasons, in order
	Repairs       map[tuples.Repair]int `json:"repairs"`
}

// corpusFile is one reply of testdata with its golden.
type corpusFile struct {
	name   string // file name without .txt
	reply  string
	want   golden
	claims bool // a claim extraction reply (claims_*)
}

func readCorpus(t testing.TB) []corpusFile {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var files []corpusFile
	for _, p := range paths {
		reply, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		g, err := os.ReadFile(strings.TrimSuffix(p, ".txt") + ".json")
		if err != nil {
			t.Fatalf("golden for %s: %v", p, err)
		}
		f := corpusFile{name: strings.TrimSuffix(filepath.Base(p), ".txt"), reply: string(reply)}
		f.claims = strings.HasPrefix(f.name, "claims_")
		dec := json.NewDecoder(bytes.NewReader(g))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f.want); err != nil {
			t.Fatalf("golden for %s: %v", p, err)
		}
		files = append(files, f)
	}
	return files
}

func reasons(d []tuples.Dropped) []string {
	var r []string
	for _, x := range d {
		r = append(r, x.Reason)
	}
	return r
}

var emptyIsNil = cmpopts.EquateEmpty()

func TestCorpus(t *testing.T) {
	files := readCorpus(t)
	var graphs, claims int
	for _, f := range files {
		t.Run(f.name, func(t *testing.T) {
			var got golden
			var records, kept int
			if f.claims {
				claims++
				res := tuples.ParseClaims(f.reply, tuples.DefaultDelimiters())
				got = golden{Claims: res.Claims, Dropped: reasons(res.Dropped), Repairs: res.Repairs}
				records, kept = res.Records, len(res.Claims)+len(res.Dropped)
			} else {
				graphs++
				res := tuples.ParseGraph(f.reply, tuples.DefaultDelimiters())
				got = golden{Entities: res.Entities, Relationships: res.Relationships, Dropped: reasons(res.Dropped), Repairs: res.Repairs}
				records, kept = res.Records, len(res.Entities)+len(res.Relationships)+len(res.Dropped)
			}
			if records != kept {
				t.Errorf("Records = %d; kept + dropped = %d", records, kept)
			}
			want := f.want
			want.Note, want.WellFormed = "", false
			if diff := cmp.Diff(want, got, emptyIsNil); diff != "" {
				t.Errorf("%s (%s): parse mismatch (-want +got):\n%s", f.name, f.want.Note, diff)
			}
		})
	}
	if graphs < 30 || claims < 3 {
		t.Errorf("corpus has %d graph and %d claim replies; want at least 30 and 3", graphs, claims)
	}
}

// TestDelimiters runs a reply written with other delimiters: the zero
// Delimiters mean GraphRAG's, and custom ones are honoured.
func TestDelimiters(t *testing.T) {
	custom := tuples.Delimiters{Tuple: "<SEP>", Record: "<REC>", Completion: "<END>"}
	tests := []struct {
		name  string
		reply string
		d     tuples.Delimiters
		want  []string // titles
	}{
		{"zero value is GraphRAG's", `("entity"<|>A<|>T<|>d)##("entity"<|>B<|>T<|>d)<|COMPLETE|>`, tuples.Delimiters{}, []string{"A", "B"}},
		{"custom", `("entity"<SEP>A<SEP>T<SEP>d)<REC>("entity"<SEP>B<SEP>T<SEP>d)<END>`, custom, []string{"A", "B"}},
		{"custom with spaces inside", `("entity"<SEP >A< SEP>T<SEP>d)<REC>`, custom, []string{"A"}},
		{"custom, no pipe fallback", `("entity"|A|T|d)`, custom, nil},
	}
	for _, tt := range tests {
		res := tuples.ParseGraph(tt.reply, tt.d)
		var got []string
		for _, e := range res.Entities {
			got = append(got, e.Title)
		}
		if diff := cmp.Diff(tt.want, got, emptyIsNil); diff != "" {
			t.Errorf("%s: ParseGraph(%q) titles (-want +got):\n%s", tt.name, tt.reply, diff)
		}
	}
}

// TestDroppedRecord checks that a dropped record is reported as written.
func TestDroppedRecord(t *testing.T) {
	res := tuples.ParseGraph("  (\"entity\"<|><|>PERSON<|>nameless)  \n##\n", tuples.Delimiters{})
	want := []tuples.Dropped{{Record: `("entity"<|><|>PERSON<|>nameless)`, Reason: tuples.ReasonNoName}}
	if diff := cmp.Diff(want, res.Dropped); diff != "" {
		t.Errorf("Dropped (-want +got):\n%s", diff)
	}
}

func FuzzParseGraph(f *testing.F) {
	for _, c := range readCorpus(f) {
		f.Add(c.reply)
	}
	f.Add("(\"entity\"<|>\u00df<|>x<|>y)")
	f.Add("((((((")
	f.Add("(\"relationship\"<|>a<|>b<|>c<|>1e999)")
	f.Fuzz(func(t *testing.T, reply string) {
		res := tuples.ParseGraph(reply, tuples.DefaultDelimiters())
		for _, e := range res.Entities {
			if e.Title == "" || strings.ToUpper(e.Title) != e.Title {
				t.Fatalf("ParseGraph(%q): entity title %q is empty or not upper-case", reply, e.Title)
			}
		}
		for _, r := range res.Relationships {
			if r.Source == "" || r.Target == "" || r.Source == r.Target {
				t.Fatalf("ParseGraph(%q): relationship %q -> %q", reply, r.Source, r.Target)
			}
			if !(r.Weight > 0 && r.Weight <= tuples.MaxWeight) || !r.HasWeight && r.Weight != tuples.DefaultWeight {
				t.Fatalf("ParseGraph(%q): relationship weight %v (has %v)", reply, r.Weight, r.HasWeight)
			}
		}
		if n := len(res.Entities) + len(res.Relationships) + len(res.Dropped); n != res.Records {
			t.Fatalf("ParseGraph(%q): %d kept + dropped, %d records", reply, n, res.Records)
		}
		// Every record comes from a piece of a line parted by a delimiter.
		pieces := strings.Count(reply, "\n") + strings.Count(reply, "##") + strings.Count(strings.ToUpper(reply), "<|COMPLETE|>") + 1
		if res.Records > pieces+strings.Count(reply, "(") {
			t.Fatalf("ParseGraph(%q): %d records from %d pieces", reply, res.Records, pieces)
		}
		for _, d := range res.Dropped {
			if d.Reason == "" || d.Record == "" {
				t.Fatalf("ParseGraph(%q): dropped %+v", reply, d)
			}
		}
		for k, n := range res.Repairs {
			if n <= 0 {
				t.Fatalf("ParseGraph(%q): repair %s counted %d", reply, k, n)
			}
		}
		tuples.ParseClaims(reply, tuples.DefaultDelimiters())
	})
}

// BenchmarkParseGraph parses a 4 KB reply of a small model: records one a
// line with some repairs to make.
func BenchmarkParseGraph(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("Here are the entities:\n")
	for i := 0; sb.Len() < 4096; i++ {
		switch i % 3 {
		case 0:
			sb.WriteString("(\"entity\"<|>Ebenezer Scrooge<|>PERSON<|>A miserly old man who runs a counting-house in London)\n##\n")
		case 1:
			sb.WriteString("- (\"entity\"<|>\"BOB CRATCHIT\"<|>person<|>Scrooge's clerk, paid fifteen shillings a week)\n")
		default:
			sb.WriteString("(\"relationship\"<|>EBENEZER SCROOGE<|>BOB CRATCHIT<|>Scrooge employs Bob Cratchit as his clerk<|>8)\n##\n")
		}
	}
	sb.WriteString("<|COMPLETE|>\n")
	reply := sb.String()
	b.SetBytes(int64(len(reply)))
	b.ReportAllocs()
	for b.Loop() {
		res := tuples.ParseGraph(reply, tuples.DefaultDelimiters())
		if len(res.Entities) == 0 {
			b.Fatal("no entities")
		}
	}
}

// TestLinearTime parses replies built to make a careless parser rescan
// text (unclosed records, runs of parentheses, delimiters, quotes) at two
// sizes: eight times the input may take at most 24 times as long (a
// quadratic parser takes 64; the slack is for caches and the collector).
// Timings are the best of three.
func TestLinearTime(t *testing.T) {
	if testing.Short() {
		t.Skip("timing test")
	}
	shapes := map[string]func(n int) string{
		"unclosed record": func(n int) string { return "(\"entity\"<|>" + strings.Repeat("a\n", n) },
		"parentheses":     func(n int) string { return strings.Repeat(")(", n) + "<|>" },
		"nested":          func(n int) string { return strings.Repeat("(", n) + "\"entity\"<|>a<|>b<|>c" + strings.Repeat(")", n) },
		"records on a line": func(n int) string {
			return "(\"entity\"<|>a<|>b<|>c)" + strings.Repeat(", (\"entity\"<|>a<|>b", n)
		},
		"quotes":      func(n int) string { return "(\"entity\"<|>" + strings.Repeat("\"*", n) + "x<|>T<|>d)" },
		"completions": func(n int) string { return strings.Repeat("x<|complete|>", n) },
		"claims":      func(n int) string { return strings.Repeat("(a<|>b (c) ", n) },
	}
	best := func(reply string) time.Duration {
		d := time.Duration(1 << 62)
		for range 3 {
			start := time.Now()
			tuples.ParseGraph(reply, tuples.Delimiters{})
			tuples.ParseClaims(reply, tuples.Delimiters{})
			d = min(d, time.Since(start))
		}
		return d
	}
	// 16 times the input takes 16 times as long when linear, 256 times
	// when quadratic: a bound of 64 times leaves room for a loaded
	// machine's noise (CI, tests in parallel) and still catches the
	// quadratic.
	const n = 10000
	for name, shape := range shapes {
		small, large := best(shape(n)), best(shape(16*n))
		t.Logf("%-17s %v for n, %v for 16n", name, small, large)
		if large > 64*small+20*time.Millisecond {
			t.Errorf("%s: %v for n = %d, %v for 16n: not linear", name, small, n, large)
		}
	}
}
