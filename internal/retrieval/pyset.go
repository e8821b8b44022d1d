package retrieval

import (
	"slices"
	"strconv"
)

// GraphRAG orders the reports of local search by (matches, rank), and
// keeps reports that tie in the order it first met their communities:
// walking the selected entities in order, and each entity's communities in
// the order a Python set of their numbers iterates (read_indexer_entities
// aggregates them with set, as floats). Python's sort is stable, so that
// order decides ties. A set of small numbers iterates in the order of its
// hash table, which depends on the numbers and the order they were added
// but not on PYTHONHASHSEED (floats hash to their value), so it can be
// computed: pySetOrder replays CPython's set insertion.

// CPython's setobject.c constants.
const (
	pySetMinSize      = 8
	pySetLinearProbes = 9
	pySetPerturbShift = 5
)

type pySetEntry struct {
	key  int64
	used bool
}

// pySetOrder returns keys, each once, in the order CPython 3 iterates
// set(float(k) for k in keys): the hash of an integral float is the
// integer (for the non-negative numbers of Leiden communities).
func pySetOrder(keys []int64) []int64 {
	table := make([]pySetEntry, pySetMinSize)
	fill := 0
	for _, k := range keys {
		if pySetAdd(table, k) {
			fill++
			mask := len(table) - 1
			if fill*5 >= mask*3 {
				table = pySetResize(table, fill*4) // used == fill: nothing is deleted
			}
		}
	}
	var out []int64
	for _, e := range table {
		if e.used {
			out = append(out, e.key)
		}
	}
	return out
}

// pyHash is CPython's hash of float(k) for a Leiden community number.
func pyHash(k int64) uint64 {
	if k == -1 {
		return uint64(0xFFFFFFFFFFFFFFFE) // hash(-1.0) is -2: -1 means an error
	}
	return uint64(k) // integral floats hash to their value (below 2^61-1)
}

// pySetAdd is set_add_entry on a table without deleted entries; it reports
// whether k was new.
func pySetAdd(table []pySetEntry, k int64) bool {
	mask := uint64(len(table) - 1)
	h := pyHash(k)
	i, perturb := h&mask, h
	for {
		probes := 0
		if i+pySetLinearProbes <= mask {
			probes = pySetLinearProbes
		}
		for j := uint64(0); j <= uint64(probes); j++ {
			e := &table[i+j]
			if !e.used {
				e.key, e.used = k, true
				return true
			}
			if e.key == k {
				return false
			}
		}
		perturb >>= pySetPerturbShift
		i = (i*5 + 1 + perturb) & mask
	}
}

// pySetResize is set_table_resize: a table of the least power of two above
// minUsed (at least 8), the entries inserted again in table order.
func pySetResize(old []pySetEntry, minUsed int) []pySetEntry {
	size := pySetMinSize
	for size <= minUsed {
		size <<= 1
	}
	table := make([]pySetEntry, size)
	mask := uint64(size - 1)
	for _, e := range old {
		if !e.used {
			continue
		}
		h := pyHash(e.key)
		i, perturb := h&mask, h
	probe:
		for {
			if !table[i].used {
				table[i] = e
				break
			}
			if i+pySetLinearProbes <= mask {
				for j := uint64(1); j <= pySetLinearProbes; j++ {
					if !table[i+j].used {
						table[i+j] = e
						break probe
					}
				}
			}
			perturb >>= pySetPerturbShift
			i = (i*5 + 1 + perturb) & mask
		}
	}
	return table
}

// firstSeen numbers communities in the order GraphRAG's local search first
// meets them: the entities in order, each entity's communities (numbers,
// up to the level asked for, added in ascending order as GraphRAG's
// communities table lists them) in Python set order. Numbers that are not
// integers keep their order and come after.
func firstSeen(entityIDs []string, comms func(id string) []string) map[string]int {
	seen := make(map[string]int)
	for _, id := range entityIDs {
		var nums []int64
		var other []string
		for _, c := range comms(id) {
			if n, err := strconv.ParseInt(c, 10, 64); err == nil {
				nums = append(nums, n)
			} else {
				other = append(other, c)
			}
		}
		slices.Sort(nums)
		for _, n := range pySetOrder(nums) {
			if c := strconv.FormatInt(n, 10); !hasKey(seen, c) {
				seen[c] = len(seen)
			}
		}
		for _, c := range other {
			if !hasKey(seen, c) {
				seen[c] = len(seen)
			}
		}
	}
	return seen
}

func hasKey(m map[string]int, k string) bool { _, ok := m[k]; return ok }
