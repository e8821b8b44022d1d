package nounphrase_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/internal/nounphrase"
)

// TestPhrases applies the grammar and filter to hand-tagged words; each
// want follows from GraphRAG's regex_english rules by hand.
func TestPhrases(t *testing.T) {
	x, err := nounphrase.New(nounphrase.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	w := func(s string) []nounphrase.Word {
		var out []nounphrase.Word
		for _, f := range strings.Fields(s) {
			// ^ marks a word that starts a line or a sentence.
			initial := strings.HasPrefix(f, "^")
			text, tag, _ := strings.Cut(strings.TrimPrefix(f, "^"), "/")
			out = append(out, nounphrase.Word{Text: text, Tag: tag, Initial: initial})
		}
		return out
	}
	tests := []struct {
		name, in string
		want     []string
	}{
		{"proper nouns join", "Bob/NNP Cratchit/NNP came/VBD", []string{"BOB CRATCHIT"}},
		{"one proper noun", "Scrooge/NNP slept/VBD", []string{"SCROOGE"}},
		{"one common noun is no phrase", "the/DT door/NN", nil},
		{"nouns join", "the/DT counting/NN house/NN", []string{"COUNTING HOUSE"}},
		{"adjectives then noun", "a/DT cold/JJ bleak/JJ night/NN", []string{"COLD BLEAK NIGHT"}},
		// NNPS folds into NNP for the grammar, but only NNP words are
		// proper nouns for the filter, so "Cratchits" alone goes.
		{"plurals fold", "young/JJ Cratchits/NNPS and/CC cold/JJ hands/NNS", []string{"COLD HANDS"}},
		{"one hyphenated noun is no chunk", "a/DT door-nail/NN", nil},
		{"hyphenated word in a chunk", "the/DT Christmas-time/JJ season/NN", []string{"CHRISTMAS-TIME SEASON"}},
		{"proper noun then noun stay apart", "Christmas/NNP dinner/NN", []string{"CHRISTMAS"}},
		{"stop words go", "the/DT people/NNS thing/NN", nil},
		{"stop word leaves one word", "cold/JJ people/NNS", nil},
		{"stop word inside", "good/JJ old/JJ stuff/NN", []string{"GOOD OLD"}},
		{"proper noun elsewhere counts", "Marley/NNP said/VBD marley/NN ghost/NN", []string{"MARLEY", "MARLEY GHOST"}},
		{"invalid word", "Mr./NNP Scrooge/NNP", nil},
		{"long word", "extraordinarily/JJ incomprehensibilities/NNS", nil},
		{"repeated once", "Tiny/NNP Tim/NNP and/CC Tiny/NNP Tim/NNP", []string{"TINY TIM"}},
		{"sorted", "Tim/NNP and/CC Belle/NNP", []string{"BELLE", "TIM"}},
		// kgrag's correction: an initial capital also written in lower
		// case is no proper noun; a name, or a word inside a sentence,
		// stays.
		{"initial word written lower too", "^Which/NNP Macbeth/NNP saw/VBD ,/, which/WDT", []string{"MACBETH"}},
		{"initial name", "^Banquo/NNP said/VBD which/WDT", []string{"BANQUO"}},
		{"inside the sentence", "the/DT Ghost/NNP and/CC the/DT ghost/NN", []string{"GHOST"}},
		{"initial, never lower", "^Ghost/NNP went/VBD", []string{"GHOST"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := x.Phrases(w(tt.in)); !slices.Equal(got, tt.want) {
				t.Errorf("Phrases(%q) = %q; want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestExtract runs the tagger on real sentences: the names are found,
// no phrase holds a line end or a stray character, and a double hyphen
// separates words ("counting-house--a dismal little cell").
func TestExtract(t *testing.T) {
	x, err := nounphrase.New(nounphrase.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	got := x.Extract("Marley was dead: to begin with.\r\nOld Marley was as dead as a door-nail. Bob Cratchit and Tiny Tim\r\nwent to the counting-house--a dismal little cell.\nWhich is to say, the cell which\nMay be cold, as it may.")
	for _, want := range []string{"BOB CRATCHIT", "TINY TIM", "OLD MARLEY", "MARLEY", "DISMAL LITTLE CELL"} {
		if !slices.Contains(got, want) {
			t.Errorf("Extract lacks %q: %q", want, got)
		}
	}
	for _, p := range got {
		if p == "WHICH" || p == "MAY" {
			t.Errorf("line-initial %q taken for a proper noun: %q", p, got)
		}
		if strings.ContainsAny(p, "\r\n\t.:") || strings.Contains(p, "--") {
			t.Errorf("phrase %q holds a character it should not", p)
		}
	}
}

func TestOptions(t *testing.T) {
	o := nounphrase.DefaultOptions()
	o.KeepInitialCapitals = true
	keep, err := nounphrase.New(o)
	if err != nil {
		t.Fatal(err)
	}
	if got := keep.Phrases([]nounphrase.Word{{Text: "Which", Tag: "NNP", Initial: true}, {Text: "which", Tag: "WDT"}}); !slices.Equal(got, []string{"WHICH"}) {
		t.Errorf("KeepInitialCapitals: %q; want [WHICH], as GraphRAG's filter alone gives", got)
	}
	for _, o := range []nounphrase.Options{{MaxWordLength: 0, WordDelimiter: " "}, {MaxWordLength: 15}} {
		if _, err := nounphrase.New(o); err == nil {
			t.Errorf("New(%+v) took options that cannot work", o)
		}
	}
}

func BenchmarkExtract(b *testing.B) {
	x, err := nounphrase.New(nounphrase.DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	text := strings.Repeat("Old Marley was as dead as a door-nail. Bob Cratchit and Tiny Tim went to the counting-house of Scrooge and Marley. ", 40)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		x.Extract(text)
	}
}
