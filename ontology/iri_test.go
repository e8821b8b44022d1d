package ontology_test

import (
	"testing"

	"github.com/kgrag/kgrag/ontology"
)

func TestAppendSegment(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"b45241d70f0e43fca764df95b2b81f77", "b45241d70f0e43fca764df95b2b81f77"},
		{"25ad6f95-a5d0-49c0-982b-a915cbd01568", "25ad6f95-a5d0-49c0-982b-a915cbd01568"},
		{"title:MR. FEZZIWIG", "title%3AMR.%20FEZZIWIG"},
		{"a/b#c?d", "a%2Fb%23c%3Fd"},
		{"100%", "100%25"},
		{`<>"{}|^` + "`\\", "%3C%3E%22%7B%7D%7C%5E%60%5C"},
		{"\x00\n\t\x7f", "%00%0A%09%7F"},
		{"斯克鲁奇", "斯克鲁奇"},
		{"🎄", "🎄"},
		{"\uFFFE", "%EF%BF%BE"},        // a non-character: not ucschar
		{"\xff", "%FF"},                // invalid UTF-8 stays distinct
		{"\u00a0", "\u00a0"},           // no-break space is ucschar
		{"\U000E0001", "%F3%A0%80%81"}, // language tag character
	}
	for _, tt := range tests {
		if got := string(ontology.AppendSegment(nil, tt.in)); got != tt.want {
			t.Errorf("AppendSegment(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestValidateBase(t *testing.T) {
	tests := []struct {
		base string
		ok   bool
	}{
		{"http://example.org/kg/", true},
		{"https://data.example.com/graphrag#", true},
		{"urn:kgrag:", false},
		{"http://example.org/kg", false},
		{"kg/", false},
		{"http://example.org/a b/", false},
		{"http://example.org/<x>/", false},
	}
	for _, tt := range tests {
		err := ontology.ValidateBase(tt.base)
		if (err == nil) != tt.ok {
			t.Errorf("ValidateBase(%q) = %v; want ok=%v", tt.base, err, tt.ok)
		}
	}
}
