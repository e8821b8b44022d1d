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
	e, err := w.w.linkEntities(ctx, &links{})
	if err != nil {
		return nil, err
	}
	for i, id := range e.ids {
		if _, ok := k.EntityTitle[id]; !ok {
			k.EntityTitle[id] = e.titles[i]
		}
	}
	for _, p := range w.lk.placeholders {
		k.EntityTitle[p.ID] = p.Title
	}
	if t := w.w.tables[TableRelationships]; t != nil {
		var ids, src, dst []string
		c := newCols(ctx, t)
		c.req(&ids, true, "id")
		c.req(&src, false, "source")
		c.req(&dst, false, "target")
		if err := c.wait(); err != nil {
			return nil, err
		}
		for i, id := range ids {
			if _, ok := k.RelationshipEnds[id]; !ok {
				k.RelationshipEnds[id] = [2]string{src[i], dst[i]}
			}
		}
	}
	return k, nil
}
