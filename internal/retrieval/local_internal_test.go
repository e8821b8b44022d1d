package retrieval

import (
	"testing"

	"github.com/kgrag/kgrag/internal/tokens"
)

func TestCSVRow(t *testing.T) {
	tests := []struct {
		in   []string
		want string
	}{
		{[]string{"1", "title", "plain"}, "1|title|plain\n"},
		{[]string{"2", "a|b", "two\nlines"}, "2|\"a|b\"|\"two\nlines\"\n"},
		{[]string{"3", `say "hi"`, ""}, "3|\"say \"\"hi\"\"\"|\n"},
	}
	for _, tt := range tests {
		if got := CSVRow(tt.in, "|"); got != tt.want {
			t.Errorf("CSVRow(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestPyFloat(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{1, "1.0"}, {2.5, "2.5"}, {0.1, "0.1"}, {12, "12.0"}, {1e-05, "1e-05"}, {1e16, "1e+16"},
	}
	for _, tt := range tests {
		if got := pyFloat(tt.in); got != tt.want {
			t.Errorf("pyFloat(%v) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestEncoderCount(t *testing.T) {
	enc, err := tokens.NewEncoder(tokens.EncodingCL100K)
	if err != nil {
		t.Fatal(err)
	}
	// Counts from OpenAI's tiktoken (cl100k_base).
	tests := []struct {
		in   string
		want int
	}{
		{"", 0}, {"hello world", 2}, {"tiktoken is great!", 6},
	}
	for _, tt := range tests {
		if got := enc.Count(tt.in); got != tt.want {
			t.Errorf("Count(%q) = %d; want %d", tt.in, got, tt.want)
		}
	}
}

// TestFillCountsExactly checks the shortcut of fill: where it claims the
// sum of its lines' tokens is the count of the table, tiktoken counting
// the whole table agrees, on rows that end in awkward places (spaces and
// blank lines before the newline, punctuation, digits, non-Latin text).
func TestFillCountsExactly(t *testing.T) {
	enc, err := tokens.NewEncoder(tokens.EncodingCL100K)
	if err != nil {
		t.Fatal(err)
	}
	rows := []string{
		"1|SCROOGE|a man \n", "2|x|ends with spaces   \n", "3|y|two\n\nnewlines\n",
		"4|z|12345\n", "5|w|!!!\n", "6|v|naïve café 東京\n", "|empty id|\n",
		"7|u|'s contraction\n", "8|t|tab\t\n", "9|s|\"quoted\"\n",
		" 10|leading space|\n", "\n", "11|no newline",
	}
	for start := range rows {
		for end := start + 1; end <= len(rows); end++ {
			_, tab := fill(enc, "-----Test-----\nid|text\n", rows[start:end], 1<<30, func(s string) string { return s })
			if whole := enc.Count(tab.text); tab.exact && tab.tokens != whole {
				t.Errorf("rows %d..%d: sum of lines %d tokens, whole table %d", start, end, tab.tokens, whole)
			}
			if got := tab.count(enc); got != enc.Count(tab.text) {
				t.Errorf("rows %d..%d: count %d; whole table %d", start, end, got, enc.Count(tab.text))
			}
		}
	}
}

// TestJoinTablesCountsExactly checks joinTables' count against tiktoken
// counting the joined text, for tables ending in each of the test rows.
func TestJoinTablesCountsExactly(t *testing.T) {
	enc, err := tokens.NewEncoder(tokens.EncodingCL100K)
	if err != nil {
		t.Fatal(err)
	}
	rows := []string{
		"1|SCROOGE|a man \n", "2|x|ends with spaces   \n", "3|y|two\n\nnewlines\n", "4|z|12345\n",
		"5|w|!!!\n", "6|v|naïve café 東京\n", "|empty id|\n", "8|t|tab\t\n", "9|s|x|\n",
		" 10|leading space|\n", "11|no newline",
	}
	id := func(s string) string { return s }
	for i, a := range rows {
		for j, b := range rows {
			_, ta := fill(enc, "-----A-----\nid|text\n", []string{a}, 1<<30, id)
			_, tb := fill(enc, "-----B-----\nid|text\n", []string{b}, 1<<30, id)
			_, empty := fill(enc, "", nil, 1<<30, id)
			for _, ts := range [][]table{{ta, tb}, {ta, empty, tb}, {ta, tb, ta}} {
				got := joinTables(enc, ts...)
				if n, whole := got.count(enc), enc.Count(got.text); n != whole {
					t.Errorf("rows %d, %d: joinTables counts %d; whole text %d (exact %v)", i, j, n, whole, got.exact)
				}
			}
		}
	}
}
