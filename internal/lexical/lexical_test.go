package lexical_test

import (
	"math"
	"slices"
	"testing"

	"github.com/kgrag/kgrag/internal/lexical"
)

func TestTerms(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"If Gallu is a demon, Lilu is what?", []string{"gallu", "demon", "lilu"}},
		{"Alû and Chloë Leland", []string{"alu", "chloe", "leland"}},
		{"Scrooge's clerk", []string{"scrooge", "clerk"}},
		{"BWV 1033 (1736–1737)", []string{"bwv", "1033", "1736", "1737"}},
		{"", nil},
		{"the of and", nil},
	}
	for _, tt := range tests {
		if got := lexical.Terms(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Terms(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

// TestSearchByHand checks the scores against Okapi BM25 worked by hand
// (k1 1.2, b 0.75, Lucene's idf ln(1 + (N - n + 0.5)/(n + 0.5))) over
// three documents of 1, 3 and 1 terms (average 5/3):
//
//	"dog" is in d1 twice: idf = ln(1 + 2.5/1.5) = 0.980829;
//	  norm = 1.2 * (0.25 + 0.75*3/(5/3)) = 1.92;
//	  score = 0.980829 * 2 * 2.2 / (2 + 1.92) = 1.100929.
//	"cat" is in d0 and d1 once: idf = ln(1 + 1.5/2.5) = 0.470004;
//	  d0: norm = 1.2 * (0.25 + 0.75*1/(5/3)) = 0.84,
//	      score = 0.470004 * 2.2 / 1.84 = 0.561961;
//	  d1: score = 0.470004 * 2.2 / 2.92 = 0.354113.
func TestSearchByHand(t *testing.T) {
	x := lexical.New()
	for _, d := range []string{"a cat", "cat dog dog", "bird"} {
		x.Add(d)
	}
	tests := []struct {
		query string
		want  []lexical.Hit
	}{
		{"dog", []lexical.Hit{{Doc: 1, Score: 1.100929}}},
		{"cat", []lexical.Hit{{Doc: 0, Score: 0.561961}, {Doc: 1, Score: 0.354113}}},
		{"cat cat", []lexical.Hit{{Doc: 0, Score: 0.561961}, {Doc: 1, Score: 0.354113}}}, // a term counts once
		{"dog cat", []lexical.Hit{{Doc: 1, Score: 1.100929 + 0.354113}, {Doc: 0, Score: 0.561961}}},
		{"fish", nil},
	}
	for _, tt := range tests {
		got := x.Search(tt.query, 0)
		if len(got) != len(tt.want) {
			t.Errorf("Search(%q) = %v; want %v", tt.query, got, tt.want)
			continue
		}
		for i := range got {
			if got[i].Doc != tt.want[i].Doc || math.Abs(got[i].Score-tt.want[i].Score) > 1e-5 {
				t.Errorf("Search(%q) = %v; want %v", tt.query, got, tt.want)
				break
			}
		}
	}
	if got := x.Search("cat", 1); len(got) != 1 || got[0].Doc != 0 {
		t.Errorf("Search(cat, 1) = %v; want d0 alone", got)
	}
}

func TestEmpty(t *testing.T) {
	if got := lexical.New().Search("anything", 5); len(got) != 0 {
		t.Errorf("Search over no documents = %v; want none", got)
	}
}
