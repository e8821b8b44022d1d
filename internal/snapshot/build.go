package snapshot

import (
	"encoding/binary"
	"hash/crc32"
	"io"
	"math"
	"slices"

	"github.com/kgrag/kgrag/graphrag"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// sink receives a snapshot's sections in table order, each once.
type sink func(sec int, b []byte) error

// encode lays out ds as a snapshot, handing each section to emit as soon
// as it is made, so that a writer holds one large section at a time.
func encode(ds *graphrag.Dataset, meta Meta, emit sink) error {
	meta.Entities, meta.TextUnits = len(ds.Entities), len(ds.TextUnits)
	meta.LeftOut = ds.LeftOut
	if len(ds.Tables) > 0 {
		meta.TableRows = make(map[string]int64, len(ds.Tables))
		for _, t := range ds.Tables {
			meta.TableRows[t.Name] = t.Rows
		}
	}
	meta.Relationships, meta.Communities = len(ds.Relationships), len(ds.Communities)

	// Keys: every entity id named anywhere, entities first.
	keys := map[string]int{}
	var names []string
	key := func(id string) int {
		k, ok := keys[id]
		if !ok {
			k = len(names)
			keys[id] = k
			names = append(names, id)
		}
		return k
	}
	keyEntity := []int32{}
	for i, e := range ds.Entities {
		if k := key(e.ID); k == len(keyEntity) {
			keyEntity = append(keyEntity, int32(i))
		}
	}
	var rels, comms, units [][]uint32
	add := func(l *[][]uint32, k int, row int) {
		for len(*l) <= k {
			*l = append(*l, nil)
		}
		(*l)[k] = append((*l)[k], uint32(row))
	}
	for i, r := range ds.Relationships {
		add(&rels, key(r.SourceID), i)
		if r.TargetID != r.SourceID {
			add(&rels, key(r.TargetID), i)
		}
	}
	for i, c := range ds.Communities {
		for _, id := range c.EntityIDs {
			add(&comms, key(id), i)
		}
	}
	firstUnit := map[string]int{}
	for i, u := range ds.TextUnits {
		if _, dup := firstUnit[u.ID]; !dup {
			firstUnit[u.ID] = i
		}
	}
	for i, u := range ds.TextUnits {
		if firstUnit[u.ID] != i {
			continue // a repeated text unit id: the first row stands
		}
		seen := map[string]bool{}
		for _, id := range u.EntityIDs {
			if !seen[id] {
				seen[id] = true
				add(&units, key(id), i)
			}
		}
	}
	keys, firstUnit = nil, nil
	meta.Keys = len(names)
	for len(keyEntity) < len(names) {
		keyEntity = append(keyEntity, -1)
	}

	pair := func(a, b int, off, data []byte) error {
		if err := emit(a, off); err != nil {
			return err
		}
		return emit(b, data)
	}
	steps := []func() error{
		func() error { return emit(secMeta, meta.json()) },
		func() error { off, data := blob(ds.Entities, putEntity); return pair(secEntOff, secEntBlob, off, data) },
		func() error {
			off, data := blob(ds.TextUnits, putUnit)
			return pair(secUnitOff, secUnitBlob, off, data)
		},
		func() error {
			off, data := blob(ds.Relationships, putRelationship)
			return pair(secRelOff, secRelBlob, off, data)
		},
		func() error {
			off, data := blob(ds.Communities, putCommunity)
			return pair(secCommOff, secCommBlob, off, data)
		},
		func() error { return emit(secRelPos, relPositions(ds.Relationships)) },
		func() error {
			kept := deepestUntil(ds.Communities, comms)
			b := make([]byte, 0, 8*len(kept))
			for _, v := range kept {
				b = binary.LittleEndian.AppendUint64(b, uint64(v))
			}
			return emit(secCommKept, b)
		},
		func() error {
			off, data := blob(names, func(e *enc, s *string) { e.b = append(e.b, *s...) })
			return pair(secKeyOff, secKeyBlob, off, data)
		},
		func() error {
			return emit(secKeyHash, hashTable(len(names), func(i int) (string, bool) { return names[i], true }))
		},
		func() error {
			return emit(secKeyEntity, u32s(len(keyEntity), func(i int) uint32 { return uint32(keyEntity[i]) }))
		},
		func() error { off, data := lists(rels, len(names)); return pair(secKeyRelOff, secKeyRels, off, data) },
		func() error {
			off, data := lists(comms, len(names))
			return pair(secKeyCommOff, secKeyComms, off, data)
		},
		func() error {
			off, data := lists(units, len(names))
			return pair(secKeyUnitOff, secKeyUnits, off, data)
		},
		func() error {
			return emit(secUnitHash, hashTable(len(ds.TextUnits), func(i int) (string, bool) { return ds.TextUnits[i].ID, true }))
		},
		func() error {
			return emit(secTitleHash, hashTable(len(ds.Entities), func(i int) (string, bool) {
				return ds.Entities[i].Title, !ds.Entities[i].Placeholder
			}))
		},
		func() error {
			return emit(secCommHash, hashTable(len(ds.Communities), func(i int) (string, bool) { return ds.Communities[i].Community, true }))
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// relPositions gives each relationship row its place in
// human_readable_id order (stable).
func relPositions(rs []graphrag.Relationship) []byte {
	order := make([]int, len(rs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int {
		return graphrag.CompareIDs(rs[x].HumanReadableID, rs[y].HumanReadableID)
	})
	pos := make([]uint32, len(order))
	for p, i := range order {
		pos[i] = uint32(p)
	}
	return u32s(len(pos), func(i int) uint32 { return pos[i] })
}

// layout tracks where the sections go in the file: each on the next
// multiple of 8 after the header and the sections before it.
type layout struct {
	header [headerSize]byte
	end    int64
	meta   []byte
}

func newLayout() *layout {
	l := &layout{end: headerSize}
	copy(l.header[:], magic[:])
	binary.LittleEndian.PutUint32(l.header[8:], version)
	binary.LittleEndian.PutUint32(l.header[12:], numSections)
	return l
}

// place records section sec of n bytes and returns the padding that
// goes before it.
func (l *layout) place(sec int, b []byte) (pad int) {
	pad = int(align8(int(l.end)) - int(l.end))
	l.end += int64(pad)
	binary.LittleEndian.PutUint64(l.header[16+16*sec:], uint64(l.end))
	binary.LittleEndian.PutUint64(l.header[24+16*sec:], uint64(len(b)))
	l.end += int64(len(b))
	if sec == secMeta {
		l.meta = slices.Clone(b)
	}
	return pad
}

// finish fills in the header's checksum.
func (l *layout) finish() []byte {
	binary.LittleEndian.PutUint32(l.header[headerSize-8:], headerCRC(l.header[:headerSize-8], l.meta))
	return l.header[:]
}

// encodeTo writes the snapshot of ds to w, which must start empty.
func encodeTo(w io.WriterAt, ds *graphrag.Dataset, meta Meta) error {
	l := newLayout()
	var zero [8]byte
	err := encode(ds, meta, func(sec int, b []byte) error {
		pad := l.place(sec, b)
		at := l.end - int64(len(b))
		if _, err := w.WriteAt(zero[:pad], at-int64(pad)); err != nil {
			return err
		}
		_, err := w.WriteAt(b, at)
		return err
	})
	if err != nil {
		return err
	}
	_, err = w.WriteAt(l.finish(), 0)
	return err
}

func align8(n int) int { return (n + 7) &^ 7 }

func headerCRC(header, meta []byte) uint32 {
	return crc32.Update(crc32.Checksum(header, castagnoli), castagnoli, meta)
}

// blob encodes rows one record each, with their offsets.
func blob[T any](rows []T, put func(*enc, *T)) (off, data []byte) {
	off = make([]byte, 0, 8*(len(rows)+1))
	e := &enc{}
	const sample = 1024
	for i := range rows {
		if i == sample {
			// Size the blob from the first rows, so that it is not copied
			// at every doubling (a large table's blob is hundreds of MB).
			grown := make([]byte, len(e.b), len(e.b)/sample*len(rows)*21/20)
			copy(grown, e.b)
			e.b = grown
		}
		off = binary.LittleEndian.AppendUint64(off, uint64(len(e.b)))
		put(e, &rows[i])
	}
	return binary.LittleEndian.AppendUint64(off, uint64(len(e.b))), e.b
}

func u32s(n int, at func(int) uint32) []byte {
	b := make([]byte, 0, 4*n)
	for i := range n {
		b = binary.LittleEndian.AppendUint32(b, at(i))
	}
	return b
}

// lists lays out per-key rows as CSR over n keys.
func lists(l [][]uint32, n int) (off, data []byte) {
	off = make([]byte, 0, 8*(n+1))
	var total uint64
	for k := range n {
		off = binary.LittleEndian.AppendUint64(off, total)
		if k < len(l) {
			for _, r := range l[k] {
				data = binary.LittleEndian.AppendUint32(data, r)
			}
			total += uint64(len(l[k]))
		}
	}
	return binary.LittleEndian.AppendUint64(off, total), data
}

// fnv1a is the hash of every table: fixed, so a file reads the same in
// every process.
func fnv1a(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// hashTable indexes rows 0..n-1 by their key; key reports false for a row
// left out, and the first row of a key stands.
func hashTable(n int, key func(int) (string, bool)) []byte {
	slots := 8
	for slots < 2*n {
		slots *= 2
	}
	t := make([]uint32, slots)
	for i := range n {
		k, ok := key(i)
		if !ok {
			continue
		}
		for s := fnv1a([]byte(k)) & uint64(slots-1); ; s = (s + 1) & uint64(slots-1) {
			if t[s] == 0 {
				t[s] = uint32(i) + 1
				break
			}
			if other, _ := key(int(t[s]) - 1); other == k {
				break // a repeat: the first row stands
			}
		}
	}
	return u32s(slots, func(i int) uint32 { return t[i] })
}

// deepestUntil gives, for each community, the bound kept such that the
// community is the deepest community (up to maxLevel) of at least one of
// its members exactly when its level <= maxLevel < kept; math.MinInt64
// when it is never. A member's deepest community up to maxLevel is the one
// of greatest level, then greatest number, the first row on a tie, among
// its communities at levels <= maxLevel; it changes only at the levels of
// its communities, so the levels where a community is deepest for one
// member run from its own level to the member's next level, and for all
// members together from its own level to the largest of those.
func deepestUntil(comms []graphrag.Community, members [][]uint32) []int64 {
	kept := make([]int64, len(comms))
	for i := range kept {
		kept[i] = math.MinInt64
	}
	deeper := func(x, y uint32) bool {
		if comms[x].Level != comms[y].Level {
			return comms[x].Level > comms[y].Level
		}
		return graphrag.CompareIDs(comms[x].Community, comms[y].Community) > 0
	}
	for _, list := range members {
		var levels []int64
		for _, ci := range list {
			levels = append(levels, comms[ci].Level)
		}
		slices.Sort(levels)
		levels = slices.Compact(levels)
		for j, lv := range levels {
			best, found := uint32(0), false
			for _, ci := range list {
				if comms[ci].Level <= lv && (!found || deeper(ci, best)) {
					best, found = ci, true
				}
			}
			next := int64(math.MaxInt64)
			if j+1 < len(levels) {
				next = levels[j+1]
			}
			kept[best] = max(kept[best], next)
		}
	}
	return kept
}
