package eval

import (
	"slices"
	"strings"
	"unicode"

	"github.com/kgrag/kgrag/internal/answer"
)

// Recall is how much of a question's evidence a context holds.
type Recall struct {
	Found int `json:"found"`
	Total int `json:"total"`
	// Quotes, Entities, TextUnits and Documents split Found and Total by
	// kind of evidence (nil for a kind the question has none of): a
	// mode can hold every entity and few of the quotes.
	Quotes    *Part `json:"quotes,omitempty"`
	Entities  *Part `json:"entities,omitempty"`
	TextUnits *Part `json:"text_units,omitempty"`
	Documents *Part `json:"documents,omitempty"`
	// Missing are the pieces not found, as given ("quote: ...",
	// "entity: ...", "text unit: ...", "document: ...").
	Missing []string `json:"missing,omitempty"`
}

// Part is the evidence of one kind found, of how much.
type Part struct {
	Found int `json:"found"`
	Total int `json:"total"`
}

// Share is Found/Total.
func (p Part) Share() float64 { return float64(p.Found) / float64(p.Total) }

// Documents maps a document's title to the ids of its text units (both
// GraphRAG's and the human-readable ones), for document evidence.
type Documents map[string][]string

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
//     human-readable id;
//   - a document is held when the context's sources hold one of its text
//     units (docs maps its title to them).
//
// The context is res.Context, or global search's map batches.
func ContextRecall(ev Evidence, res *answer.Result, docs Documents) Recall {
	r := Recall{Total: ev.Items()}
	text, recs := contextOf(res)
	norm := " " + normalize(text) + " "
	score := func(items []string, kind string, held func(string) bool) *Part {
		if len(items) == 0 {
			return nil
		}
		p := &Part{Total: len(items)}
		for _, x := range items {
			if held(x) {
				p.Found++
			} else {
				r.Missing = append(r.Missing, kind+": "+x)
			}
		}
		r.Found += p.Found
		return p
	}
	r.Quotes = score(ev.Quotes, "quote", func(q string) bool { return quoteIn(normalize(q), norm) })
	r.Entities = score(ev.Entities, "entity", func(title string) bool {
		return hasEntity(recs, title) || (res.Global != nil && quoteIn(normalize(title), norm))
	})
	r.TextUnits = score(ev.TextUnits, "text unit", func(id string) bool { return hasSource(recs, id) })
	r.Documents = score(ev.Documents, "document", func(title string) bool {
		return slices.ContainsFunc(docs[title], func(id string) bool { return hasSource(recs, id) })
	})
	return r
}

// RecallAt is the share of the question's gold passages among the first
// k text units res ranked (res.Ranking), as the multi-hop papers compute
// it: gold documents when the question names them, else gold text
// units. ok is false when there is no such gold or no ranking.
func RecallAt(ev Evidence, res *answer.Result, docs Documents, k int) (share float64, ok bool) {
	if len(res.Ranking) == 0 {
		return 0, false
	}
	top := map[string]bool{}
	for i, h := range res.Ranking {
		if i == k {
			break
		}
		top[h.ID] = true
	}
	found := 0
	switch {
	case len(ev.Documents) > 0:
		for _, title := range ev.Documents {
			if slices.ContainsFunc(docs[title], func(id string) bool { return top[id] }) {
				found++
			}
		}
		return float64(found) / float64(len(ev.Documents)), true
	case len(ev.TextUnits) > 0:
		for _, id := range ev.TextUnits {
			if top[id] {
				found++
			}
		}
		return float64(found) / float64(len(ev.TextUnits)), true
	}
	return 0, false
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
