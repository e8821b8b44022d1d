package eval

import (
	"strings"
	"unicode"

	"github.com/kgrag/kgrag/internal/answer"
)

// Recall is how much of a question's evidence a context holds.
type Recall struct {
	Found int `json:"found"`
	Total int `json:"total"`
	// Missing are the pieces not found, as given ("quote: ...",
	// "entity: ...", "text unit: ...").
	Missing []string `json:"missing,omitempty"`
}

// Share is Found/Total; a question without evidence has none to miss
// (1).
func (r Recall) Share() float64 {
	if r.Total == 0 {
		return 1
	}
	return float64(r.Found) / float64(r.Total)
}

// minSplitWords is the shortest part of a quote that may be found apart
// from the rest: a quote the chunker cut in two is found when both parts
// are in the context (each in its text unit), but a part of one or two
// words would be found anywhere.
const minSplitWords = 3

// ContextRecall scores the context of res against ev:
//   - a quote is held when its words, in order, are in the context text
//     (case and whitespace aside, and the context's table punctuation
//     taken as space), or when it splits in two parts of at least
//     minSplitWords words that each are (a quote the chunker cut across
//     two text units, both of which the context holds);
//   - an entity is held when the context's records hold an entity of
//     that title (case aside); global search hands the model community
//     reports and no entity records, so there an entity is held when the
//     reports name it (its title found as a quote is);
//   - a text unit is held when the context's sources hold it, by id or
//     human-readable id.
//
// The context is res.Context, or global search's map batches.
func ContextRecall(ev Evidence, res *answer.Result) Recall {
	r := Recall{Total: ev.Items()}
	text, recs := contextOf(res)
	norm := " " + normalize(text) + " "
	for _, q := range ev.Quotes {
		if quoteIn(normalize(q), norm) {
			r.Found++
		} else {
			r.Missing = append(r.Missing, "quote: "+q)
		}
	}
	for _, title := range ev.Entities {
		if hasEntity(recs, title) || (res.Global != nil && quoteIn(normalize(title), norm)) {
			r.Found++
		} else {
			r.Missing = append(r.Missing, "entity: "+title)
		}
	}
	for _, id := range ev.TextUnits {
		if hasSource(recs, id) {
			r.Found++
		} else {
			r.Missing = append(r.Missing, "text unit: "+id)
		}
	}
	return r
}

// contextOf is the text and records a mode gave the model.
func contextOf(res *answer.Result) (string, answer.Records) {
	if res.Context != nil {
		return res.Context.Text, res.Context.Records
	}
	var b strings.Builder
	if g := res.Global; g != nil {
		for _, bt := range g.Batches {
			b.WriteString(bt.Text)
			b.WriteString("\n")
		}
	}
	return b.String(), answer.Records{}
}

// normalize lowercases s and turns every run of what is not a letter or
// digit into one space, so that line breaks, table delimiters and
// punctuation do not decide whether a quote is found.
func normalize(s string) string {
	var b strings.Builder
	space := true
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
			space = false
		} else if !space {
			b.WriteByte(' ')
			space = true
		}
	}
	return strings.TrimSpace(b.String())
}

// quoteIn says the normalized quote is in the normalized, space-padded
// text, whole or in two parts (see ContextRecall).
func quoteIn(q, text string) bool {
	if q == "" {
		return true
	}
	if strings.Contains(text, " "+q+" ") {
		return true
	}
	words := strings.Fields(q)
	for cut := minSplitWords; cut <= len(words)-minSplitWords; cut++ {
		head := " " + strings.Join(words[:cut], " ") + " "
		tail := " " + strings.Join(words[cut:], " ") + " "
		if strings.Contains(text, head) && strings.Contains(text, tail) {
			return true
		}
	}
	return false
}

func hasEntity(recs answer.Records, title string) bool {
	for _, e := range recs.Entities {
		if strings.EqualFold(e.Title, title) {
			return true
		}
	}
	return false
}

func hasSource(recs answer.Records, id string) bool {
	for _, s := range recs.Sources {
		if s.ID == id || s.TextUnitID == id {
			return true
		}
	}
	return false
}
