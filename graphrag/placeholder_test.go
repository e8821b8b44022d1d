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
