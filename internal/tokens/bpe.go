package tokens

import (
	"container/heap"
	"math"
	"strings"
	"sync"
)

// bpeCounter counts tokens without regexp2: split (cl100kPiece or
// o200kPiece) cuts the text into pieces and each piece is merged with the
// ranks as tiktoken does. It is safe for concurrent use.
type bpeCounter struct {
	ranks map[string]int
	// split returns the end of the piece that starts at s[i:].
	split func(s string, i int) int

	// pieces memoises the token count of pieces that are not one token:
	// words repeat, and merging is what costs. Keys are copies, so that a
	// key does not hold a whole text alive; it is emptied when full.
	mu     sync.Mutex
	pieces map[string]int
}

const (
	maxCachedPieces   = 1 << 16 // entries before the cache is emptied
	maxCachedPieceLen = 256     // longer pieces (runs of dashes) are merged every time
)

func newBPECounter(ranks map[string]int, split func(s string, i int) int) *bpeCounter {
	return &bpeCounter{ranks: ranks, split: split, pieces: make(map[string]int)}
}

// count returns the number of tokens tiktoken-go's EncodeOrdinary returns
// for s.
func (c *bpeCounter) count(s string) int {
	// tiktoken-go runs the regexp on []rune(s) and encodes the pieces
	// back, so each invalid byte becomes U+FFFD.
	s = ValidText(s)
	n := 0
	for i := 0; i < len(s); {
		end := c.split(s, i)
		n += c.pieceCount(s[i:end])
		i = end
	}
	return n
}

func (c *bpeCounter) pieceCount(p string) int {
	// A piece that is a token is one token, whatever merging it would
	// give (tiktoken looks it up before merging too).
	if _, ok := c.ranks[p]; ok {
		return 1
	}
	if len(p) > maxCachedPieceLen {
		return mergeCount(p, c.ranks)
	}
	c.mu.Lock()
	n, ok := c.pieces[p]
	c.mu.Unlock()
	if ok {
		return n
	}
	n = mergeCount(p, c.ranks)
	c.mu.Lock()
	if len(c.pieces) >= maxCachedPieces {
		clear(c.pieces)
	}
	c.pieces[strings.Clone(p)] = n
	c.mu.Unlock()
	return n
}

// maxLinearMerge is the piece length above which mergeCount keeps its
// pairs in a heap: the scan that tiktoken does is quadratic, which a run of
// ten thousand dashes makes felt.
const maxLinearMerge = 128

// mergeCount returns the number of parts that byte-pair merging leaves of
// p: repeatedly merge the adjacent pair whose concatenation has the lowest
// rank, the leftmost on ties, until no pair is a token.
func mergeCount(p string, ranks map[string]int) int {
	if len(p) > maxLinearMerge {
		return heapMergeCount(p, ranks)
	}
	return scanMergeCount(p, ranks)
}

// scanMergeCount merges as tiktoken-go does, scanning all pairs for the
// lowest rank at each merge.
func scanMergeCount(p string, ranks map[string]int) int {
	if len(p) <= 1 {
		return len(p)
	}
	var buf [maxLinearMerge + 1]int
	return len(scanMerge(p, ranks, buf[:0])) - 1
}

// scanMerge merges p as tiktoken-go does, scanning all pairs for the
// lowest rank at each merge, and returns where its parts start followed by
// len(p), appended to starts (whose capacity saves an allocation when it
// is len(p)+1 or more). Count and Tokens share it.
func scanMerge(p string, ranks map[string]int, starts []int) []int {
	// rank[k] is the rank of part k joined with part k+1 (math.MaxInt
	// when that is no token).
	var rankBuf [maxLinearMerge]int
	n := len(p)
	rank := rankBuf[:0]
	if n > maxLinearMerge {
		rank = make([]int, 0, n)
	}
	starts = starts[:0]
	for k := range n + 1 {
		starts = append(starts, k)
	}
	rank = rank[:n]
	pairRank := func(k int) int { // rank of parts k and k+1 joined
		if k+2 < len(starts) {
			if r, ok := ranks[p[starts[k]:starts[k+2]]]; ok {
				return r
			}
		}
		return math.MaxInt
	}
	for k := range rank {
		rank[k] = pairRank(k)
	}
	for len(rank) > 1 {
		best, at := math.MaxInt, -1
		for k, r := range rank {
			if r < best {
				best, at = r, k
			}
		}
		if at < 0 {
			break
		}
		// Part at+1 joins part at.
		starts = append(starts[:at+1], starts[at+2:]...)
		rank = append(rank[:at+1], rank[at+2:]...)
		rank[at] = pairRank(at)
		if at > 0 {
			rank[at-1] = pairRank(at - 1)
		}
	}
	return starts
}

// heapMergeCount is mergeCount with the candidate pairs in a heap (see
// heapMerge).
func heapMergeCount(p string, ranks map[string]int) int {
	_, parts := heapMerge(p, ranks)
	return parts
}

// heapMerge merges p with the candidate pairs in a min-heap by (rank,
// start), which picks the same pair as the scan: starts of live parts
// order them left to right. Stale entries are skipped when popped. It
// returns the number of parts and next, where next[i] is the end of the
// part that starts at i (the parts start at 0, next[0], ...).
func heapMerge(p string, ranks map[string]int) (next []int, parts int) {
	n := len(p)
	next = make([]int, n)  // start of the part after the one at i, n at the end
	prev := make([]int, n) // start of the part before, -1 at the start
	for i := range n {
		next[i], prev[i] = i+1, i-1
	}
	h := make(pairHeap, 0, n)
	pair := func(i int) (mergePair, bool) { // the part at i and the next one
		if j := next[i]; j < n {
			if r, ok := ranks[p[i:next[j]]]; ok {
				return mergePair{rank: r, start: i, end: next[j]}, true
			}
		}
		return mergePair{}, false
	}
	for i := range n {
		if m, ok := pair(i); ok {
			h = append(h, m)
		}
	}
	heap.Init(&h)
	parts = n
	for h.Len() > 0 {
		m := heap.Pop(&h).(mergePair)
		j := next[m.start]
		if prev[m.start] == -2 || j >= n || next[j] != m.end {
			continue // one of its parts has changed since
		}
		// The part at j joins the part at m.start.
		next[m.start] = m.end
		if m.end < n {
			prev[m.end] = m.start
		}
		prev[j] = -2
		parts--
		if m, ok := pair(m.start); ok {
			heap.Push(&h, m)
		}
		if q := prev[m.start]; q >= 0 {
			if m, ok := pair(q); ok {
				heap.Push(&h, m)
			}
		}
	}
	return next, parts
}

type mergePair struct{ rank, start, end int }

type pairHeap []mergePair

func (h pairHeap) Len() int { return len(h) }
func (h pairHeap) Less(a, b int) bool {
	if h[a].rank != h[b].rank {
		return h[a].rank < h[b].rank
	}
	return h[a].start < h[b].start
}
func (h pairHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *pairHeap) Push(x any)   { *h = append(*h, x.(mergePair)) }
func (h *pairHeap) Pop() any {
	old := *h
	m := old[len(old)-1]
	*h = old[:len(old)-1]
	return m
}

// appendTokens appends the tokens of s, valid UTF-8, to dst: the same
// pieces and merges as count, with where each part is.
func (c *bpeCounter) appendTokens(dst []Token, s string) []Token {
	for i := 0; i < len(s); {
		end := c.split(s, i)
		dst = c.appendPiece(dst, s[i:end], i)
		i = end
	}
	return dst
}

// appendPiece appends the tokens of the piece p, which starts at byte off
// of the text. Every part that merging leaves is a token: single bytes
// are, and merges only make tokens.
func (c *bpeCounter) appendPiece(dst []Token, p string, off int) []Token {
	if r, ok := c.ranks[p]; ok {
		return append(dst, Token{ID: r, Start: off, End: off + len(p)})
	}
	if len(p) > maxLinearMerge {
		next, _ := heapMerge(p, c.ranks)
		for i := 0; i < len(p); i = next[i] {
			dst = append(dst, Token{ID: c.ranks[p[i:next[i]]], Start: off + i, End: off + next[i]})
		}
		return dst
	}
	var buf [maxLinearMerge + 1]int
	starts := scanMerge(p, c.ranks, buf[:0])
	for k := 0; k+1 < len(starts); k++ {
		a, b := starts[k], starts[k+1]
		dst = append(dst, Token{ID: c.ranks[p[a:b]], Start: off + a, End: off + b})
	}
	return dst
}
