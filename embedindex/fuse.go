package embedindex

import (
	"slices"
	"strings"
)

// RRFK is reciprocal rank fusion's constant (Cormack, Clarke and
// Büttcher, SIGIR 2009): a hit at rank r (from 1) of a list adds
// 1/(RRFK+r).
const RRFK = 60

// Fuse joins rankings by reciprocal rank fusion and returns the k best,
// best first (ties by id), scored by their fused score.
func Fuse(k int, lists ...[]Hit) []Hit {
	score := map[string]float64{}
	for _, l := range lists {
		for i, h := range l {
			score[h.ID] += 1 / float64(RRFK+i+1)
		}
	}
	out := make([]Hit, 0, len(score))
	for id, sc := range score {
		out = append(out, Hit{ID: id, Score: float32(sc)})
	}
	SortHits(out)
	if len(out) > k {
		out = out[:k]
	}
	return out
}

// SortHits orders hits as Index.Search returns them: best score first,
// ties by id.
func SortHits(hits []Hit) {
	slices.SortStableFunc(hits, func(a, b Hit) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
}
