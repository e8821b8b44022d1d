package graphrag

import (
	"cmp"
	"strconv"
)

// CompareIDs orders GraphRAG ids and community numbers as GraphRAG's
// tables are ordered: numerically when both are integers
// (human_readable_id, community numbers), else as strings, integers
// first.
func CompareIDs(a, b string) int {
	x, errA := strconv.ParseInt(a, 10, 64)
	y, errB := strconv.ParseInt(b, 10, 64)
	switch {
	case errA == nil && errB == nil:
		return cmp.Compare(x, y)
	case errA == nil:
		return -1
	case errB == nil:
		return 1
	}
	return cmp.Compare(a, b)
}
