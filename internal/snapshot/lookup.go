package snapshot

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/mmapfile"
)

// Row counts.
func (g *Graph) Entities() int      { return g.meta.Entities }
func (g *Graph) TextUnits() int     { return g.meta.TextUnits }
func (g *Graph) Relationships() int { return g.meta.Relationships }
func (g *Graph) Communities() int   { return g.meta.Communities }

func (g *Graph) corrupt(what string, i int) error {
	return fmt.Errorf("snapshot: %s: %w: %s %d is damaged; rebuild it with kgrag embed", g.path, ErrCorrupt, what, i)
}

// span is the byte range [off[i], off[i+1]) of the offset array sec,
// checked against limit.
func (g *Graph) span(sec, i int, limit uint64, what string) (lo, hi uint64, err error) {
	if g.closed.Load() {
		return 0, 0, mmapfile.ErrClosed
	}
	off := g.sec[sec]
	if i < 0 || 8*(i+2) > len(off) {
		return 0, 0, fmt.Errorf("snapshot: %s %d out of range", what, i)
	}
	lo = binary.LittleEndian.Uint64(off[8*i:])
	hi = binary.LittleEndian.Uint64(off[8*i+8:])
	if lo > hi || hi > limit {
		return 0, 0, g.corrupt(what, i)
	}
	return lo, hi, nil
}

func (g *Graph) record(offSec, blobSec, i int, what string) (*dec, error) {
	b := g.sec[blobSec]
	lo, hi, err := g.span(offSec, i, uint64(len(b)), what)
	if err != nil {
		return nil, err
	}
	return &dec{b: b[lo:hi]}, nil
}

// decode reads row i of a table with get.
func decode[T any](g *Graph, offSec, blobSec, i int, what string, get func(*dec) T) (T, error) {
	var zero T
	d, err := g.record(offSec, blobSec, i, what)
	if err != nil {
		return zero, err
	}
	v := get(d)
	if d.err != nil {
		return zero, g.corrupt(what, i)
	}
	return v, nil
}

// Entity decodes entity row i.
func (g *Graph) Entity(i int) (graphrag.Entity, error) {
	return decode(g, secEntOff, secEntBlob, i, "entity", getEntity)
}

// EntityName decodes the keys of entity row i.
func (g *Graph) EntityName(i int) (EntityName, error) {
	return decode(g, secEntOff, secEntBlob, i, "entity", getEntityName)
}

// TextUnit decodes text unit row i.
func (g *Graph) TextUnit(i int) (graphrag.TextUnit, error) {
	return decode(g, secUnitOff, secUnitBlob, i, "text unit", getUnit)
}

// Relationship decodes relationship row i.
func (g *Graph) Relationship(i int) (graphrag.Relationship, error) {
	return decode(g, secRelOff, secRelBlob, i, "relationship", getRelationship)
}

// Community decodes community row i with its report.
func (g *Graph) Community(i int) (graphrag.Community, error) {
	return decode(g, secCommOff, secCommBlob, i, "community", getCommunity)
}

// RelationshipPos is relationship row i's place when the relationships
// are ordered by human_readable_id (graphrag.CompareIDs, stable).
func (g *Graph) RelationshipPos(i int) int {
	return int(binary.LittleEndian.Uint32(g.sec[secRelPos][4*i:]))
}

// Deepest reports whether community row i is, for at least one of its
// members, the deepest of the member's communities at levels up to
// maxLevel (greatest level, then greatest number, first row on a tie).
func (g *Graph) Deepest(i int, level, maxLevel int64) bool {
	kept := int64(binary.LittleEndian.Uint64(g.sec[secCommKept][8*i:]))
	return level <= maxLevel && maxLevel < kept
}

// Key is the row of the entity id among the keys (every entity id that
// an entity, relationship end, community member or text unit names).
func (g *Graph) Key(id string) (int, bool, error) {
	return g.lookup(secKeyHash, id, g.meta.Keys, "entity id key", func(k int) ([]byte, bool) {
		lo, hi, err := g.span(secKeyOff, k, uint64(len(g.sec[secKeyBlob])), "entity id key")
		return g.sec[secKeyBlob][lo:hi], err == nil
	})
}

// EntityRow is the first entity row whose id is key k, if any.
func (g *Graph) EntityRow(k int) (int, bool) {
	v := int32(binary.LittleEndian.Uint32(g.sec[secKeyEntity][4*k:]))
	return int(v), v >= 0 && int(v) < g.meta.Entities
}

// EntityIndex is the first entity row with id.
func (g *Graph) EntityIndex(id string) (int, bool, error) {
	k, ok, err := g.Key(id)
	if !ok || err != nil {
		return 0, false, err
	}
	i, ok := g.EntityRow(k)
	return i, ok, nil
}

// RelationshipsOf lists the relationship rows with an end at key k, in
// row order (a loop once).
func (g *Graph) RelationshipsOf(k int) ([]int, error) {
	return g.list(secKeyRelOff, secKeyRels, k, g.meta.Relationships, "relationships of key")
}

// CommunitiesOf lists the community rows naming key k as a member, in
// row order, once for each time a row names it.
func (g *Graph) CommunitiesOf(k int) ([]int, error) {
	return g.list(secKeyCommOff, secKeyComms, k, g.meta.Communities, "communities of key")
}

// TextUnitsOf lists the text unit rows naming key k among their
// entity_ids, in row order; of text units that share an id only the
// first row is listed.
func (g *Graph) TextUnitsOf(k int) ([]int, error) {
	return g.list(secKeyUnitOff, secKeyUnits, k, g.meta.TextUnits, "text units of key")
}

func (g *Graph) list(offSec, dataSec, k, rows int, what string) ([]int, error) {
	data := g.sec[dataSec]
	lo, hi, err := g.span(offSec, k, uint64(len(data)/4), what)
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, hi-lo)
	for j := lo; j < hi; j++ {
		r := int(binary.LittleEndian.Uint32(data[4*j:]))
		if r >= rows {
			return nil, g.corrupt(what, k)
		}
		out = append(out, r)
	}
	return out, nil
}

// TextUnitIndex is the first text unit row with id.
func (g *Graph) TextUnitIndex(id string) (int, bool, error) {
	return g.lookup(secUnitHash, id, g.meta.TextUnits, "text unit", g.field(secUnitOff, secUnitBlob, 0))
}

// EntityByTitle is the first entity row with title that is not a
// placeholder.
func (g *Graph) EntityByTitle(title string) (int, bool, error) {
	return g.lookup(secTitleHash, title, g.meta.Entities, "entity", g.field(secEntOff, secEntBlob, 1))
}

// CommunityIndex is the first community row with the community number.
func (g *Graph) CommunityIndex(number string) (int, bool, error) {
	return g.lookup(secCommHash, number, g.meta.Communities, "community", g.field(secCommOff, secCommBlob, 0))
}

// field returns the raw bytes of string field n of a table's rows.
func (g *Graph) field(offSec, blobSec, n int) func(int) ([]byte, bool) {
	return func(i int) ([]byte, bool) {
		d, err := g.record(offSec, blobSec, i, "row")
		if err != nil {
			return nil, false
		}
		for range n {
			d.skip()
		}
		l := d.uvarint()
		if d.err != nil || l > uint64(len(d.b)) {
			return nil, false
		}
		return d.b[:l], true
	}
}

func (g *Graph) lookup(sec int, key string, rows int, what string, keyOf func(int) ([]byte, bool)) (int, bool, error) {
	if g.closed.Load() {
		return 0, false, mmapfile.ErrClosed
	}
	t := g.sec[sec]
	mask := uint64(len(t)/4 - 1)
	kb := []byte(key)
	for s, n := fnv1a(kb)&mask, uint64(0); n <= mask; s, n = (s+1)&mask, n+1 {
		v := binary.LittleEndian.Uint32(t[4*s:])
		if v == 0 {
			return 0, false, nil
		}
		i := int(v) - 1
		if i >= rows {
			return 0, false, g.corrupt(what+" index slot", int(s))
		}
		k, ok := keyOf(i)
		if !ok {
			return 0, false, g.corrupt(what, i)
		}
		if bytes.Equal(k, kb) {
			return i, true, nil
		}
	}
	return 0, false, nil // a full table: damaged, but a miss is what it says
}
