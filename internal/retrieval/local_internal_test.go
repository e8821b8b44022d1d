package retrieval

import "testing"

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
		if got := csvRow(tt.in, "|"); got != tt.want {
			t.Errorf("csvRow(%q) = %q; want %q", tt.in, got, tt.want)
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
	enc, err := NewEncoder(EncodingCL100K)
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
