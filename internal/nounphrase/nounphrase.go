package nounphrase

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/jdkato/prose/v2"
)

// DefaultMaxWordLength is GraphRAG's text_analyzer.max_word_length.
const DefaultMaxWordLength = 15

// StopWords returns GraphRAG 3.3.0's EN_STOP_WORDS, the words its
// extractors leave out of noun phrases by default.
func StopWords() []string {
	return []string{"stuff", "thing", "things", "bunch", "bit", "bits", "people", "person",
		"okay", "hey", "hi", "hello", "laughter", "oh"}
}

// Options tune an Extractor. The zero value is not usable: start from
// DefaultOptions.
type Options struct {
	// ExcludeNouns are words left out of every phrase, matched without
	// regard to case (GraphRAG's exclude_nouns).
	ExcludeNouns []string
	// MaxWordLength drops a phrase with a longer word, in characters.
	MaxWordLength int
	// WordDelimiter joins the words of a phrase.
	WordDelimiter string
	// KeepInitialCapitals turns off kgrag's one correction of the
	// tagger: by default a capitalised word that starts a line or a
	// sentence, and that the same text also writes in lower case, is not
	// taken for a proper noun ("Which", "May", "Come" at the head of a
	// verse line). See Phrases.
	KeepInitialCapitals bool
}

// DefaultOptions returns GraphRAG 3.3.0's text_analyzer defaults.
func DefaultOptions() Options {
	return Options{ExcludeNouns: StopWords(), MaxWordLength: DefaultMaxWordLength, WordDelimiter: " "}
}

// Validate reports the first option that cannot work.
func (o Options) Validate() error {
	switch {
	case o.MaxWordLength < 1:
		return fmt.Errorf("nounphrase: max word length %d: must be at least 1", o.MaxWordLength)
	case o.WordDelimiter == "":
		return errors.New("nounphrase: the word delimiter is empty")
	}
	return nil
}

// Extractor finds noun phrases. It is safe for concurrent use.
type Extractor struct {
	opts    Options
	exclude map[string]bool
	model   *prose.Model
}

// model is prose's tagger, decoded once per process: decoding its weights
// takes longer than tagging a book.
var model = sync.OnceValue(func() *prose.Model { return prose.ModelFromData("kgrag") })

// New returns an Extractor with opts.
func New(opts Options) (*Extractor, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	x := &Extractor{opts: opts, exclude: make(map[string]bool, len(opts.ExcludeNouns)), model: model()}
	for _, w := range opts.ExcludeNouns {
		x.exclude[strings.ToUpper(w)] = true
	}
	return x, nil
}

// String names the extractor and its options, so that a cache of
// extractions can tell one configuration from another.
func (x *Extractor) String() string {
	return fmt.Sprintf("kgrag_regex_en_prose-v2.0.0_%v_%d_%q", x.opts.ExcludeNouns, x.opts.MaxWordLength, x.opts.WordDelimiter)
}

// Word is a token of the text with its Penn Treebank tag. Initial tells
// that it starts a line or follows a sentence's end.
type Word struct {
	Text, Tag string
	Initial   bool
}

// quotes are the characters prose's tokeniser replaces before it splits,
// replaced here first so that its tokens can be found in the text.
var quotes = strings.NewReplacer("\u201c", `"`, "\u201d", `"`, "\u2018", "'", "\u2019", "'", "&rsquo;", "'")

// Tag tokenises and tags text. A double hyphen (the dash of older
// printed texts) always separates words, as in NLTK's tokeniser, which
// GraphRAG's extractor uses; prose would keep "bed--a" as one word.
func (x *Extractor) Tag(text string) []Word {
	text = quotes.Replace(strings.ReplaceAll(text, "--", " -- "))
	doc, err := prose.NewDocument(text, prose.WithSegmentation(false), prose.WithExtraction(false), prose.UsingModel(x.model))
	if err != nil {
		return nil // prose reports no error from tokenising and tagging
	}
	toks := doc.Tokens()
	words := make([]Word, len(toks))
	at, initial := 0, true
	for i, t := range toks {
		// Find the token after the previous one; a line end in between
		// makes it initial. A token not found nearby (prose rewrote it)
		// leaves the position where it was.
		if j := strings.Index(text[at:min(len(text), at+len(t.Text)+64)], t.Text); j >= 0 {
			if strings.ContainsRune(text[at:at+j], '\n') {
				initial = true
			}
			at += j + len(t.Text)
		}
		words[i] = Word{Text: t.Text, Tag: t.Tag, Initial: initial}
		initial = t.Text == "." || t.Text == "!" || t.Text == "?" || t.Text == "[" || t.Text == "--" || t.Text == ":" || t.Text == ";"
	}
	return words
}

// Extract returns the distinct noun phrases of text, sorted.
func (x *Extractor) Extract(text string) []string {
	return x.Phrases(x.Tag(text))
}

// grammar is TextBlob's FastNPExtractor grammar over simplified tags: the
// tag a pair of adjacent tags merges into. NNI is a phrase of common
// nouns.
var grammar = map[[2]string]string{
	{"NNP", "NNP"}: "NNP",
	{"NN", "NN"}:   "NNI",
	{"NNI", "NN"}:  "NNI",
	{"JJ", "JJ"}:   "JJ",
	{"JJ", "NN"}:   "NNI",
}

// simplify folds plurals and superlatives into their base tag, as
// TextBlob's _normalize_tags does (a trailing S goes: NNS, NNPS, JJS).
func simplify(tag string) string {
	if len(tag) > 2 && strings.HasSuffix(tag, "S") {
		return tag[:len(tag)-1]
	}
	return tag
}

// validWord is GraphRAG's has_valid_tokens pattern.
var validWord = regexp.MustCompile(`^[a-zA-Z0-9\-]+$`)

// Phrases returns the distinct noun phrases of tagged words, sorted.
//
// GraphRAG's extractor tags twice: TextBlob's chunker with a tagger
// trained on the Brown corpus, which has seen "Which" and "May" open a
// sentence, and the proper nouns with NLTK's perceptron. kgrag has one
// perceptron, which takes most capitalised words for proper nouns, so,
// unless KeepInitialCapitals, a word tagged NNP or NNPS that is Initial
// and that the same words also hold in lower case is tagged as nothing
// (it joins no chunk). A name is never written in lower case, so it
// stays; "Ghost" inside a sentence stays too.
func (x *Extractor) Phrases(words []Word) []string {
	type chunk struct {
		words []string
		tag   string
	}
	var lower map[string]bool
	if !x.opts.KeepInitialCapitals {
		lower = map[string]bool{}
		for _, w := range words {
			if w.Text != "" && strings.ToLower(w.Text) == w.Text {
				lower[w.Text] = true
			}
		}
	}
	chunks := make([]chunk, 0, len(words))
	proper := map[string]bool{}
	for _, w := range words {
		if lower != nil && w.Initial && (w.Tag == "NNP" || w.Tag == "NNPS") && lower[strings.ToLower(w.Text)] {
			w.Tag = "-"
		}
		if w.Tag == "NNP" {
			proper[strings.ToUpper(w.Text)] = true
		}
		chunks = append(chunks, chunk{words: []string{w.Text}, tag: simplify(w.Tag)})
	}
	// TextBlob merges the leftmost matching pair and starts over; merging
	// left to right in one pass gives the same chunks, since a merged
	// chunk can only merge again with the chunk after it.
	merged := chunks[:0]
	for _, c := range chunks {
		if n := len(merged); n > 0 {
			if tag, ok := grammar[[2]string{merged[n-1].tag, c.tag}]; ok {
				merged[n-1].words = append(merged[n-1].words, c.words...)
				merged[n-1].tag = tag
				continue
			}
		}
		merged = append(merged, c)
	}
	seen := map[string]bool{}
	var out []string
	for _, c := range merged {
		if c.tag != "NNP" && c.tag != "NNI" {
			continue
		}
		if p, ok := x.keep(c.words, proper); ok && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// keep applies GraphRAG's filter to a chunk's words: the stop words go,
// and what is left is kept when it names a proper noun, has more than one
// word or a hyphenated word, and every word is valid.
func (x *Extractor) keep(words []string, proper map[string]bool) (string, bool) {
	var cleaned []string
	hasProper, compound := false, false
	for _, w := range words {
		up := strings.ToUpper(w)
		if x.exclude[up] {
			continue
		}
		cleaned = append(cleaned, up)
		if proper[up] {
			hasProper = true
		}
		if strings.Contains(w, "-") && len(strings.TrimSpace(w)) > 1 && len(strings.Split(strings.TrimSpace(w), "-")) > 1 {
			compound = true
		}
		if !validWord.MatchString(w) || len([]rune(w)) > x.opts.MaxWordLength {
			return "", false
		}
	}
	if !hasProper && len(cleaned) < 2 && !compound {
		return "", false
	}
	return strings.Join(cleaned, x.opts.WordDelimiter), true
}
