package flat

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
)

// The approximate index is a hierarchical navigable small-world graph
// (Malkov and Yashunin, 2016) over the rows of the index's vectors, which
// it shares with the exact scan: the graph adds only links, 4 bytes each.
//
// Building is deterministic and parallel at once. Rows are inserted in
// batches: every row of a batch searches the graph as it stood before the
// batch (read-only, so the rows are searched concurrently) plus the rows
// of its batch before it (by brute force), then the batch's links are
// written, each target's incoming links in row order. No result depends
// on which goroutine did what, so the same vectors and seed give the same
// graph whatever GOMAXPROCS is.
//
// Row levels are drawn from a PCG seeded by the build's seed, so the
// layer structure is repeatable too.

const (
	defaultM         = 16  // links per row on upper levels; level 0 holds 2M
	defaultEfBuild   = 100 // candidates kept while linking a new row
	maxGraphLevel    = 15
	maxBatch         = 256
	recallK          = 10
	defaultQueries   = 200
	defaultTarget    = 0.98
	perturbation     = 0.5 // norm of the noise added to a sample vector to make a recall query
	ctxCheckInterval = 128 // expansions between ctx checks during a search
)

// efLadder are the efSearch values tried in turn until recall meets the
// target.
var efLadder = []int{16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024}

// graph is an HNSW graph. It is read-only once built and then safe for
// concurrent searches.
type graph struct {
	m        int
	efBuild  int
	seed     uint64
	ef       int     // efSearch chosen when the index was built
	recall   float32 // recall@10 measured at ef
	queries  int     // how many queries measured it
	entry    int32
	maxLevel int
	levels   []uint8  // top level of each row
	l0       []int32  // 2m links per row, -1 after the last
	upOff    []uint32 // n+1 offsets: row r's links on levels 1.. are up[upOff[r]:upOff[r+1]]
	up       []int32  // levels[r]*m links per row on levels 1.., -1 padded

	// The slices live in the heap, or in the file's mapping (see
	// format.go): one backing array each, no per-row slices, so opening a
	// mapped graph allocates nothing in proportion to its rows.

	pool sync.Pool // *searcher
}

func (g *graph) links(r int32, l int) []int32 {
	if l == 0 {
		m0 := 2 * g.m
		return g.l0[int(r)*m0 : int(r+1)*m0]
	}
	o := int(g.upOff[r]) + (l-1)*g.m
	return g.up[o : o+g.m]
}

// cand is a row and its score against the query.
type cand struct {
	score float32
	row   int32
}

// better orders candidates: higher score, then lower row.
func better(a, b cand) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return a.row < b.row
}

// heap is a binary heap of candidates; top is the best one when max is
// set, the worst one otherwise.
type heap struct {
	c   []cand
	max bool
}

func (h *heap) less(i, j int) bool {
	if h.max {
		return better(h.c[i], h.c[j])
	}
	return better(h.c[j], h.c[i])
}

func (h *heap) push(x cand) {
	h.c = append(h.c, x)
	for i := len(h.c) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h.c[i], h.c[p] = h.c[p], h.c[i]
		i = p
	}
}

func (h *heap) pop() cand {
	top := h.c[0]
	last := len(h.c) - 1
	h.c[0] = h.c[last]
	h.c = h.c[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < last && h.less(l, m) {
			m = l
		}
		if r < last && h.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		h.c[i], h.c[m] = h.c[m], h.c[i]
		i = m
	}
	return top
}

// searcher is the scratch space of one search: a visited mark per row
// (a generation number, so it need not be cleared) and the two heaps.
type searcher struct {
	seen  []uint32
	gen   uint32
	cands heap
	res   heap
}

func newSearcher(n int) *searcher {
	return &searcher{seen: make([]uint32, n), cands: heap{max: true}}
}

func (s *searcher) reset() {
	s.gen++
	if s.gen == 0 {
		clear(s.seen)
		s.gen = 1
	}
	s.cands.c, s.res.c = s.cands.c[:0], s.res.c[:0]
}

// vecs is the row-major matrix of unit vectors the graph links.
type vecs struct {
	v   []float32
	dim int
}

func (v vecs) row(r int32) []float32 { return v.v[int(r)*v.dim : int(r+1)*v.dim] }

// greedy walks level l from ep towards q, one best neighbour at a time.
func (g *graph) greedy(v vecs, q []float32, ep cand, l int) cand {
	for changed := true; changed; {
		changed = false
		for _, nb := range g.links(ep.row, l) {
			if nb < 0 {
				break
			}
			if c := (cand{dot(q, v.row(nb)), nb}); better(c, ep) {
				ep, changed = c, true
			}
		}
	}
	return ep
}

// searchLayer is the beam search of level l from eps, keeping the best ef
// rows in s.res (a heap, worst on top). A non-nil ctx is checked every
// ctxCheckInterval expansions.
func (g *graph) searchLayer(ctx context.Context, s *searcher, v vecs, q []float32, eps []cand, ef, l int) error {
	s.reset()
	for _, e := range eps {
		if s.seen[e.row] == s.gen {
			continue
		}
		s.seen[e.row] = s.gen
		s.cands.push(e)
		s.res.push(e)
		if len(s.res.c) > ef {
			s.res.pop()
		}
	}
	for n := 0; len(s.cands.c) > 0; n++ {
		if ctx != nil && n%ctxCheckInterval == ctxCheckInterval-1 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		c := s.cands.pop()
		if len(s.res.c) >= ef && better(s.res.c[0], c) {
			break
		}
		for _, nb := range g.links(c.row, l) {
			if nb < 0 {
				break
			}
			if s.seen[nb] == s.gen {
				continue
			}
			s.seen[nb] = s.gen
			x := cand{dot(q, v.row(nb)), nb}
			if len(s.res.c) < ef || better(x, s.res.c[0]) {
				s.cands.push(x)
				s.res.push(x)
				if len(s.res.c) > ef {
					s.res.pop()
				}
			}
		}
	}
	return nil
}

// search returns up to ef rows nearest q, best first.
func (g *graph) search(ctx context.Context, v vecs, q []float32, ef int) ([]cand, error) {
	s, _ := g.pool.Get().(*searcher)
	if s == nil {
		s = newSearcher(len(g.levels))
	}
	defer g.pool.Put(s)
	ep := cand{dot(q, v.row(g.entry)), g.entry}
	for l := g.maxLevel; l > 0; l-- {
		ep = g.greedy(v, q, ep, l)
	}
	if err := g.searchLayer(ctx, s, v, q, []cand{ep}, ef, 0); err != nil {
		return nil, err
	}
	out := slices.Clone(s.res.c)
	sortCands(out)
	return out, nil
}

func sortCands(c []cand) { sort.Slice(c, func(i, j int) bool { return better(c[i], c[j]) }) }

// graphConfig sets how a graph is built.
type graphConfig struct {
	m, efBuild, workers int
	seed                uint64
	progress            func(rows int) // rows linked since the last call
}

// builder holds a graph under construction with the score of every link,
// which pruning needs and the finished graph does not.
type builder struct {
	*graph
	v    vecs
	s0   []float32  // scores beside l0
	sup  []float32  // scores beside up
	plan [][][]cand // per batch row, per level: the links it chose
}

// buildGraph links the n rows of v.
func buildGraph(ctx context.Context, v vecs, cfg graphConfig) (*graph, error) {
	n := len(v.v) / v.dim
	m := cfg.m
	g := &graph{m: m, efBuild: cfg.efBuild, seed: cfg.seed, levels: make([]uint8, n),
		l0: make([]int32, n*2*m), upOff: make([]uint32, n+1)}
	for i := range g.l0 {
		g.l0[i] = -1
	}
	rng := rand.New(rand.NewPCG(cfg.seed, 0x6b677261672d686e))
	mL := 1 / math.Log(float64(m))
	for r := range n {
		lv := min(int(-math.Log(1-rng.Float64())*mL), maxGraphLevel)
		g.levels[r] = uint8(lv)
		g.upOff[r+1] = g.upOff[r] + uint32(lv*m)
	}
	g.up = make([]int32, g.upOff[n])
	for i := range g.up {
		g.up[i] = -1
	}
	b := &builder{graph: g, v: v, s0: make([]float32, n*2*m), sup: make([]float32, len(g.up))}
	g.maxLevel = int(g.levels[0])
	workers := max(1, cfg.workers)
	searchers := make([]*searcher, workers)
	for w := range searchers {
		searchers[w] = newSearcher(n)
	}
	b.plan = make([][][]cand, maxBatch)
	for lo := 1; lo < n; {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// Early on the graph is small and a batch would link its rows
		// mostly among themselves, so batches grow with the graph.
		hi := min(n, lo+min(maxBatch, max(1, lo/8)))
		var next atomic.Int64
		next.Store(int64(lo))
		parallel(min(workers, hi-lo), func(w int) {
			for i := next.Add(1) - 1; i < int64(hi); i = next.Add(1) - 1 {
				b.plan[int(i)-lo] = b.connect(searchers[w], int32(i), int32(lo))
			}
		})
		b.link(lo, hi, workers)
		for i := lo; i < hi; i++ {
			if int(g.levels[i]) > g.maxLevel {
				g.maxLevel, g.entry = int(g.levels[i]), int32(i)
			}
		}
		if cfg.progress != nil {
			cfg.progress(hi - lo)
		}
		lo = hi
	}
	return g, nil
}

func parallel(workers int, f func(w int)) {
	if workers <= 1 {
		f(0)
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { f(w) })
	}
	wg.Wait()
}

// connect chooses the links of row i on each of its levels from the graph
// as it was before the batch starting at row lo, and rows lo..i-1.
func (b *builder) connect(s *searcher, i, lo int32) [][]cand {
	g, v := b.graph, b.v
	q := v.row(i)
	li := int(g.levels[i])
	mates := make([]cand, 0, i-lo)
	for j := lo; j < i; j++ {
		mates = append(mates, cand{dot(q, v.row(j)), j})
	}
	plan := make([][]cand, li+1)
	ep := cand{dot(q, v.row(g.entry)), g.entry}
	for l := g.maxLevel; l > li; l-- {
		ep = g.greedy(v, q, ep, l)
	}
	eps := []cand{ep}
	for l := li; l >= 0; l-- {
		var found []cand
		if l <= g.maxLevel {
			g.searchLayer(nil, s, v, q, eps, g.efBuild, l)
			eps = slices.Clone(s.res.c)
			found = slices.Clone(eps)
		}
		for _, c := range mates {
			if int(g.levels[c.row]) >= l {
				found = append(found, c)
			}
		}
		sortCands(found)
		plan[l] = b.prune(found, g.m)
	}
	return plan
}

// prune keeps up to m of cands (best first) by HNSW's heuristic: a
// candidate is dropped when it is closer to one already kept than to the
// row being linked, so links spread in different directions instead of
// bunching in the nearest cluster.
func (b *builder) prune(cands []cand, m int) []cand {
	out := make([]cand, 0, m)
	for _, c := range cands {
		if len(out) == m {
			break
		}
		cv := b.v.row(c.row)
		keep := true
		for _, o := range out {
			if dot(cv, b.v.row(o.row)) > c.score {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, c)
		}
	}
	return out
}

// edge is a link to add from row src to row dst on level l.
type edge struct {
	l        int
	dst, src int32
	score    float32
}

// link writes the planned links of rows lo..hi-1 and the reverse links
// they imply; targets are independent, so they are updated in parallel,
// each taking its incoming links in row order.
func (b *builder) link(lo, hi, workers int) {
	var edges []edge
	for i := lo; i < hi; i++ {
		for l, sel := range b.plan[i-lo] {
			dst, sc := b.slot(int32(i), l)
			for k, c := range sel {
				dst[k], sc[k] = c.row, c.score
				edges = append(edges, edge{l, c.row, int32(i), c.score})
			}
		}
	}
	sort.Slice(edges, func(x, y int) bool {
		a, c := edges[x], edges[y]
		if a.l != c.l {
			return a.l < c.l
		}
		if a.dst != c.dst {
			return a.dst < c.dst
		}
		return a.src < c.src
	})
	var groups [][]edge
	for s := 0; s < len(edges); {
		e := s + 1
		for e < len(edges) && edges[e].l == edges[s].l && edges[e].dst == edges[s].dst {
			e++
		}
		groups = append(groups, edges[s:e])
		s = e
	}
	var next atomic.Int64
	parallel(min(workers, max(1, len(groups)/64)), func(int) {
		for i := next.Add(1) - 1; i < int64(len(groups)); i = next.Add(1) - 1 {
			for _, e := range groups[i] {
				b.reverse(e)
			}
		}
	})
}

// slot is the link list of row r on level l and the scores beside it.
func (b *builder) slot(r int32, l int) ([]int32, []float32) {
	if l == 0 {
		m0 := 2 * b.m
		return b.l0[int(r)*m0 : int(r+1)*m0], b.s0[int(r)*m0 : int(r+1)*m0]
	}
	o := int(b.upOff[r]) + (l-1)*b.m
	return b.up[o : o+b.m], b.sup[o : o+b.m]
}

// reverse adds the link e.dst -> e.src. A full list takes it in place of
// its worst link unless e.src is worse than that one, or (the heuristic
// again, tested against the new link only) it is closer to a link already
// kept than to e.dst.
func (b *builder) reverse(e edge) {
	dst, sc := b.slot(e.dst, e.l)
	n := 0
	for n < len(dst) && dst[n] >= 0 {
		n++
	}
	if n < len(dst) {
		dst[n], sc[n] = e.src, e.score
		return
	}
	worst, best := 0, 0
	for k := range dst {
		if better(cand{sc[worst], dst[worst]}, cand{sc[k], dst[k]}) {
			worst = k
		}
		if better(cand{sc[k], dst[k]}, cand{sc[best], dst[best]}) {
			best = k
		}
	}
	x := cand{e.score, e.src}
	if !better(x, cand{sc[worst], dst[worst]}) {
		return
	}
	if !better(x, cand{sc[best], dst[best]}) {
		sv := b.v.row(e.src)
		for k := range dst {
			if k != worst && dot(sv, b.v.row(dst[k])) > e.score {
				return
			}
		}
	}
	dst[worst], sc[worst] = e.src, e.score
}
