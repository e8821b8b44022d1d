package graphrag

import "context"

// Keys are what defines an entity and a relationship apart from the ids
// of one GraphRAG run, which are new UUIDs each time it runs: an entity's
// title (GraphRAG merges entities by title) and a relationship's two end
// titles (it merges relationships by their ends). They let a caller name
// records in a way that lasts across runs (kgrag load --iris keys).
type Keys struct {
	// EntityTitle maps every entity id, placeholders included, to its title.
	EntityTitle map[string]string
	// RelationshipEnds maps every relationship id to its source and
	// target titles.
	RelationshipEnds map[string][2]string
}

// Keys reads the keys of the walker's entities and relationships, with a
// columnar read of the id and title columns; it can be called before or
// after Walk.
func (w *Walker) Keys(ctx context.Context) (*Keys, error) {
	k := &Keys{EntityTitle: map[string]string{}, RelationshipEnds: map[string][2]string{}}
	if t := w.w.tables[TableEntities]; t != nil {
		ids, cols, err := idsAnd(ctx, t, []string{"title", "name"})
		if err != nil {
			return nil, err
		}
		for i, id := range ids {
			if w.w.q.has(TableEntities, int64(i)) {
				continue // left out: not in the graph
			}
			if _, ok := k.EntityTitle[id]; !ok {
				k.EntityTitle[id] = cols[0][i]
			}
		}
	}
	for _, p := range w.lk.placeholders {
		k.EntityTitle[p.ID] = p.Title
	}
	if t := w.w.tables[TableRelationships]; t != nil {
		ids, cols, err := idsAnd(ctx, t, []string{"source"}, []string{"target"})
		if err != nil {
			return nil, err
		}
		for i, id := range ids {
			if w.w.q.has(TableRelationships, int64(i)) {
				continue
			}
			if _, ok := k.RelationshipEnds[id]; !ok {
				k.RelationshipEnds[id] = [2]string{cols[0][i], cols[1][i]}
			}
		}
	}
	return k, nil
}

// idsAnd reads t's id column and one column per list of names (the first
// name t has), no other.
func idsAnd(ctx context.Context, t *table, names ...[]string) ([]string, [][]string, error) {
	var ids []string
	cols := make([][]string, len(names))
	c := newCols(ctx, t)
	c.req(&ids, true, "id")
	for i, n := range names {
		c.req(&cols[i], false, n...)
	}
	return ids, cols, c.wait()
}
