package graphrag

import "strings"

// PlaceholderID is the id Open gives an entity that a relationship or claim
// names by title but the entities table does not hold.
func PlaceholderID(title string) string { return "title:" + title }

// IsNone reports whether v is one of the ways GraphRAG writes "no value" in
// text columns: empty, or NONE as the extraction prompts ask models to say.
func IsNone(v string) bool {
	switch strings.TrimSpace(v) {
	case "", "NONE", "**NONE**", "None", "none", "null", "NULL", "NaN":
		return true
	}
	return false
}
