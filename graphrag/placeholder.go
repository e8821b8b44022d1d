package graphrag

// PlaceholderID is the id Open gives an entity that a relationship or claim
// names by title but the entities table does not hold.
func PlaceholderID(title string) string { return "title:" + title }
