package graphrag

import "strings"

// PlaceholderID is the id Open gives an entity that a relationship or claim
// names by title but the entities table does not hold.
func PlaceholderID(title string) string { return "title:" + title }

// IsNone reports whether v is one of the ways GraphRAG writes "no value" in
// text columns: empty, or NONE as the extraction prompts ask models to say,
// in the forms models write it (**NONE**, `None`, N/A, NONE.).
func IsNone(v string) bool {
	v = strings.Trim(strings.TrimSpace(v), "*_`'\".")
	switch strings.ToUpper(v) {
	case "", "NONE", "NULL", "NAN", "N/A":
		return true
	}
	return false
}

// IsProse reports whether a claim's subject or object is a sentence that a
// model wrote where an entity name belongs ("There are no named entities
// that match ...", a passage quoted from the text), which GraphRAG stores as
// it came: more than ten words, or six or more ending as a sentence ends.
// Such a claim gets no subject (or object) entity rather than an entity
// titled with the sentence.
func IsProse(v string) bool {
	v = strings.TrimSpace(v)
	words := len(strings.Fields(v))
	if words > 10 {
		return true
	}
	return words >= 6 && strings.ContainsAny(v[len(v)-1:], ".!?'\"")
}

// claimEnd reports whether a claim's subject or object names an entity.
func claimEnd(v string) bool { return !IsNone(v) && !IsProse(v) }
