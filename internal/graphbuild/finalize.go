package graphbuild

import (
	"crypto/sha1"
	"encoding/hex"
	"strconv"

	"github.com/kgrag/kgrag/graphrag"
)

// Finalize turns g into GraphRAG 3.x's final entities and relationships
// tables, as GraphRAG 3.3.0's finalize_graph workflow does:
//
//   - the degree of an entity is graphrag.Degrees over the relationships,
//     as _build_degree_map computes it;
//   - entities keep the first row of each title (a title extracted with
//     two types keeps the first type, its frequency and its text units)
//     and drop an empty title; relationships keep the first row of each
//     (source, target);
//   - human_readable_id numbers the rows kept from 0, in order;
//   - a relationship's combined degree (Rank) is degree(source) +
//     degree(target).
//
// Descriptions are the MergedEntity and MergedRelationship Description
// fields (see Summarizer). GraphRAG gives every row a random uuid4;
// Finalize gives EntityID(title) and RelationshipID(source, target)
// instead, so a rebuilt graph keeps its ids. SourceID and TargetID are the
// EntityIDs of the ends.
func Finalize(g *Graph) ([]graphrag.Entity, []graphrag.Relationship) {
	var degree graphrag.Degrees
	for _, r := range g.Relationships {
		degree.Add(r.Source, r.Target)
	}

	entities := make([]graphrag.Entity, 0, len(g.Entities))
	ids := make(map[string]string, len(g.Entities)) // title -> id
	for _, e := range g.Entities {
		if _, dup := ids[e.Title]; dup || e.Title == "" {
			continue
		}
		ids[e.Title] = EntityID(e.Title)
		entities = append(entities, graphrag.Entity{
			ID:              ids[e.Title],
			HumanReadableID: strconv.Itoa(len(entities)),
			Title:           e.Title,
			Type:            e.Type,
			Description:     e.Description,
			TextUnitIDs:     e.TextUnitIDs,
			Frequency:       int64(e.Frequency),
			HasFrequency:    true,
			Degree:          degree.Of(e.Title),
			HasDegree:       true,
		})
	}

	entityID := func(title string) string {
		if id, ok := ids[title]; ok {
			return id
		}
		return EntityID(title) // only "", which no entity row keeps
	}
	rels := make([]graphrag.Relationship, 0, len(g.Relationships))
	seen := make(map[pairKey]struct{}, len(g.Relationships))
	for _, r := range g.Relationships {
		k := pairKey{r.Source, r.Target}
		if _, dup := seen[k]; dup {
			continue
		}
		seen[k] = struct{}{}
		rels = append(rels, graphrag.Relationship{
			ID:              RelationshipID(r.Source, r.Target),
			HumanReadableID: strconv.Itoa(len(rels)),
			Source:          r.Source,
			Target:          r.Target,
			SourceID:        entityID(r.Source),
			TargetID:        entityID(r.Target),
			Description:     r.Description,
			Weight:          r.Weight,
			HasWeight:       true,
			Rank:            degree.Of(r.Source) + degree.Of(r.Target),
			HasRank:         true,
			TextUnitIDs:     r.TextUnitIDs,
		})
	}
	return entities, rels
}

// idNamespace is the UUID namespace of kgrag's entity and relationship
// ids: uuid5(NAMESPACE_URL, "https://github.com/kgrag/kgrag/graphbuild"),
// 0789e9f7-091e-51f2-813b-9a5b190f25de.
const idNamespace = "\x07\x89\xe9\xf7\x09\x1e\x51\xf2\x81\x3b\x9a\x5b\x19\x0f\x25\xde"

// EntityID is the id of the entity titled title: the name-based UUID
// (version 5, SHA-1) of "entity\x00" + title in kgrag's namespace, written
// as GraphRAG writes its uuid4 ids. Python's
// uuid.uuid5(ns, "entity\x00" + title) gives the same.
func EntityID(title string) string { return uuid5("entity\x00" + title) }

// RelationshipID is the id of the relationship source -> target: the
// version 5 UUID of "relationship\x00" + source + "\x00" + target.
func RelationshipID(source, target string) string {
	return uuid5("relationship\x00" + source + "\x00" + target)
}

// CovariateID is the id of the n-th claim (from 0) extracted from the text
// unit textUnitID: the version 5 UUID of "covariate\x00" + textUnitID +
// "\x00" + n in decimal.
func CovariateID(textUnitID string, n int) string {
	return uuid5("covariate\x00" + textUnitID + "\x00" + strconv.Itoa(n))
}

// uuid5 follows RFC 9562, section 5.5.
func uuid5(name string) string {
	h := sha1.New()
	h.Write([]byte(idNamespace + name))
	var u [16]byte
	copy(u[:], h.Sum(nil))
	u[6] = u[6]&0x0f | 0x50
	u[8] = u[8]&0x3f | 0x80
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}
