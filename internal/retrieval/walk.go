package retrieval

import (
	"context"
	"fmt"
	"slices"

	"github.com/kgrag/kgrag/sparqlq"
)

// WalkGraph is a graph as the walk mode reads it: whole, once, then held
// in memory for every question. Entities and text units are numbered by
// their position; Edges join entities (relationships, each once per
// direction), Mentions join each entity to the text units it comes from.
type WalkGraph struct {
	Entities []WalkEntity
	Units    []WalkUnit
	// Edges[i] are entity i's relationships.
	Edges [][]WalkEdge
}

// WalkEntity is one entity: its GraphRAG id, human-readable id, title,
// description and the text units it comes from.
type WalkEntity struct {
	ID, HumanReadableID, Title, Description string
	Units                                   []int32
}

// WalkUnit is one text unit: its human-readable id (the id contexts
// print), GraphRAG id and text, and the entities that come from it.
type WalkUnit struct {
	ID, TextUnitID, Text string
	Entities             []int32
}

// WalkEdge is a relationship to entity To, of weight Weight (GraphRAG's,
// or 1 where it has none).
type WalkEdge struct {
	To     int32
	Weight float64
}

// WalkLoader reads a whole graph for the walk mode.
type WalkLoader interface {
	WalkGraph(ctx context.Context) (*WalkGraph, error)
}

var (
	_ WalkLoader = (*MemorySource)(nil)
	_ WalkLoader = (*SPARQLSource)(nil)
)

// walkBuilder assembles a WalkGraph from rows in any order, by GraphRAG
// id: rows naming an entity or text unit the graph does not hold are
// left out, as every lookup leaves out unknown ids.
type walkBuilder struct {
	g      WalkGraph
	entity map[string]int32
	unit   map[string]int32
}

func newWalkBuilder() *walkBuilder {
	return &walkBuilder{entity: map[string]int32{}, unit: map[string]int32{}}
}

func (b *walkBuilder) addUnit(id, hrid, text string) {
	if _, ok := b.unit[id]; ok {
		return
	}
	if hrid == "" {
		hrid = id
	}
	b.unit[id] = int32(len(b.g.Units))
	b.g.Units = append(b.g.Units, WalkUnit{ID: hrid, TextUnitID: id, Text: text})
}

func (b *walkBuilder) addEntity(id, hrid, title, description string) {
	if _, ok := b.entity[id]; ok {
		return
	}
	b.entity[id] = int32(len(b.g.Entities))
	b.g.Entities = append(b.g.Entities, WalkEntity{ID: id, HumanReadableID: hrid, Title: title, Description: description})
	b.g.Edges = append(b.g.Edges, nil)
}

// mention links an entity to a text unit it comes from.
func (b *walkBuilder) mention(entityID, unitID string) {
	e, ok1 := b.entity[entityID]
	u, ok2 := b.unit[unitID]
	if !ok1 || !ok2 {
		return
	}
	for _, x := range b.g.Entities[e].Units {
		if x == u {
			return
		}
	}
	b.g.Entities[e].Units = append(b.g.Entities[e].Units, u)
	b.g.Units[u].Entities = append(b.g.Units[u].Entities, e)
}

// edge adds a relationship both ways; a relationship given twice (a
// merged graphrag update) adds its weight again.
func (b *walkBuilder) edge(sourceID, targetID string, weight float64) {
	s, ok1 := b.entity[sourceID]
	t, ok2 := b.entity[targetID]
	if !ok1 || !ok2 || s == t {
		return
	}
	if weight <= 0 {
		// Fast graphs weigh by PMI, which can be 0 or below: the walk
		// needs a positive weight to follow the edge at all.
		weight = 1e-3
	}
	b.g.Edges[s] = append(b.g.Edges[s], WalkEdge{To: t, Weight: weight})
	b.g.Edges[t] = append(b.g.Edges[t], WalkEdge{To: s, Weight: weight})
}

// WalkGraph reads every entity, text unit and relationship of the
// snapshot.
func (s *MemorySource) WalkGraph(ctx context.Context) (*WalkGraph, error) {
	g := s.g
	b := newWalkBuilder()
	for i := range g.TextUnits() {
		u, err := g.TextUnit(i)
		if err != nil {
			return nil, fmt.Errorf("retrieval: walk graph: %w", err)
		}
		b.addUnit(u.ID, u.HumanReadableID, u.Text)
	}
	titles := map[string]string{}
	for i := range g.Entities() {
		if i%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		e, err := g.Entity(i)
		if err != nil {
			return nil, fmt.Errorf("retrieval: walk graph: %w", err)
		}
		b.addEntity(e.ID, e.HumanReadableID, e.Title, e.Description)
		titles[e.Title] = e.ID
		for _, u := range e.TextUnitIDs {
			b.mention(e.ID, u)
		}
	}
	for i := range g.Relationships() {
		r, err := g.Relationship(i)
		if err != nil {
			return nil, fmt.Errorf("retrieval: walk graph: %w", err)
		}
		src, dst := r.SourceID, r.TargetID
		if src == "" {
			src = titles[r.Source]
		}
		if dst == "" {
			dst = titles[r.Target]
		}
		w := r.Weight
		if !r.HasWeight {
			w = 1
		}
		b.edge(src, dst, w)
	}
	return &b.g, nil
}

// WalkGraph reads the graph with three queries (walk_units,
// walk_entities, walk_relationships): every text unit, entity with its
// text units, and relationship.
func (s *SPARQLSource) WalkGraph(ctx context.Context) (*WalkGraph, error) {
	c, graph := s.SPARQLBackend.c, s.SPARQLBackend.graph
	b := newWalkBuilder()
	fail := func(what string, err error) error { return fmt.Errorf("retrieval: walk graph: %s: %w", what, err) }
	err := sparqlq.SelectRows(ctx, c, "walk_units", graph, sparqlq.Params{}, func(r *sparqlq.Row) error {
		b.addUnit(r.Str("id"), r.Str("human_readable_id"), r.Str("text"))
		return nil
	})
	if err != nil {
		return nil, fail("text units", err)
	}
	// Units in table order, as the memory source has them: the store
	// returns rows in any order.
	slices.SortStableFunc(b.g.Units, func(x, y WalkUnit) int { return compareIDs(x.ID, y.ID) })
	for i, u := range b.g.Units {
		b.unit[u.TextUnitID] = int32(i)
	}
	type mention struct{ entity, unit string }
	var mentions []mention
	err = sparqlq.SelectRows(ctx, c, "walk_entities", graph, sparqlq.Params{}, func(r *sparqlq.Row) error {
		if r.Has("unit") {
			mentions = append(mentions, mention{r.Str("id"), r.Str("unit")})
			return nil
		}
		b.addEntity(r.Str("id"), r.Str("human_readable_id"), r.Str("title"), r.Str("description"))
		return nil
	})
	if err != nil {
		return nil, fail("entities", err)
	}
	slices.SortStableFunc(b.g.Entities, func(x, y WalkEntity) int { return compareIDs(x.HumanReadableID, y.HumanReadableID) })
	for i, e := range b.g.Entities {
		b.entity[e.ID] = int32(i)
	}
	for _, m := range mentions {
		b.mention(m.entity, m.unit)
	}
	err = sparqlq.SelectRows(ctx, c, "walk_relationships", graph, sparqlq.Params{}, func(r *sparqlq.Row) error {
		w := 1.0
		if r.Has("weight") {
			w = r.Float("weight")
		}
		b.edge(r.Str("source_id"), r.Str("target_id"), w)
		return r.Err()
	})
	if err != nil {
		return nil, fail("relationships", err)
	}
	return &b.g, nil
}
