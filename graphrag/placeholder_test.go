package graphrag_test

import (
	"testing"

	"github.com/kgrag/kgrag/graphrag"
)

func TestIsNone(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"", true}, {"NONE", true}, {"**NONE**", true}, {" none ", true},
		{"SCROOGE", false}, {"0", false}, {"None of them", false},
	}
	for _, tt := range tests {
		if got := graphrag.IsNone(tt.in); got != tt.want {
			t.Errorf("IsNone(%q) = %v; want %v", tt.in, got, tt.want)
		}
	}
}

func TestClaimEnds(t *testing.T) {
	tests := []struct {
		in          string
		none, prose bool
	}{
		{"", true, false},
		{"NONE", true, false},
		{"**NONE**", true, false},
		{"`None`", true, false},
		{"N/A", true, false},
		{"none.", true, false},
		{"EBENEZER SCROOGE", false, false},
		{"PROJECT GUTENBERG LITERARY ARCHIVE FOUNDATION", false, false},
		{"GHOST OF CHRISTMAS YET TO COME", false, false},
		{"J. B. LIPPINCOTT CO.", false, false},
		{"There are no named entities that match the predefined entity specification ['organization', 'person', 'geo', 'event'] in the provided text. Therefore, no claims can be extracted.", false, true},
		{"Up Scrooge went, not caring a button for that.", false, true},
		{"Let me leave it alone, then,' said Scrooge. 'Much good may it do you!'", false, true},
	}
	for _, tt := range tests {
		if got := graphrag.IsNone(tt.in); got != tt.none {
			t.Errorf("IsNone(%q) = %v; want %v", tt.in, got, tt.none)
		}
		if got := graphrag.IsProse(tt.in); got != tt.prose {
			t.Errorf("IsProse(%q) = %v; want %v", tt.in, got, tt.prose)
		}
	}
}
