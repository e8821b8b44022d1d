package leiden

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Defaults of Options and HierOptions.
const (
	DefaultResolution     = 1.0
	DefaultRandomness     = 0.01  // θ of the paper and of leidenalg
	DefaultIterations     = 2     // as leidenalg's find_partition
	DefaultMaxClusterSize = 10    // GraphRAG's cluster_graph.max_cluster_size
	DefaultHierRandomness = 0.001 // GraphRAG's randomness for hierarchical_leiden
	DefaultTrials         = 1     // Leiden runs per community split, as graspologic
	// maxStableIterations bounds Iterations < 0 (until stable), which can
	// take dozens of iterations on a large graph.
	maxStableIterations = 1000
)

// Options tune Leiden. The zero value means resolution 1, randomness 0.01,
// seed 0 and two iterations.
type Options struct {
	// Resolution is γ of modularity; larger values give smaller communities.
	Resolution float64
	// Randomness is θ of the refinement phase: a node joins a community
	// with probability proportional to exp(ΔQ/θ), ΔQ the modularity gain.
	Randomness float64
	// Seed seeds the random source (PCG); the same graph, options and seed
	// always give the same partition.
	Seed uint64
	// Iterations is the number of Leiden iterations, each starting from the
	// partition the previous one returned; a negative value iterates until
	// an iteration leaves the partition unchanged (at most 1000 times).
	// Iterating stops early once an iteration changes nothing. Each
	// iteration costs about as much as the first; on a 100k-node planted
	// graph, modularity went 0.72, 0.76 and 0.77 for 1, 2 and until
	// stable (28 s).
	Iterations int
	// Initial, when not nil, is the starting partition (one community
	// number >= 0 per node); else every node starts alone.
	Initial Partition
}

func (o Options) withDefaults() Options {
	if o.Resolution == 0 {
		o.Resolution = DefaultResolution
	}
	if o.Randomness == 0 {
		o.Randomness = DefaultRandomness
	}
	if o.Iterations == 0 {
		o.Iterations = DefaultIterations
	}
	return o
}

func (o Options) validate(n int) error {
	if !(o.Resolution > 0) || math.IsInf(o.Resolution, 0) {
		return fmt.Errorf("leiden: resolution %v: must be a positive number", o.Resolution)
	}
	if !(o.Randomness > 0) || math.IsInf(o.Randomness, 0) {
		return fmt.Errorf("leiden: randomness %v: must be a positive number", o.Randomness)
	}
	if o.Initial != nil {
		if len(o.Initial) != n {
			return fmt.Errorf("leiden: initial partition has %d entries for %d nodes", len(o.Initial), n)
		}
		for v, c := range o.Initial {
			if c < 0 {
				return fmt.Errorf("leiden: initial partition: node %d has community %d", v, c)
			}
		}
	}
	return nil
}

// Partition gives each node's community: Partition[v] is the community of
// node v. Partitions that Leiden returns number communities 0..Count()-1 in
// the order of their first node.
type Partition []int

// Count returns the number of communities (the largest number plus one).
func (p Partition) Count() int {
	n := 0
	for _, c := range p {
		n = max(n, c+1)
	}
	return n
}

// Communities returns the nodes of each community, in node order.
func (p Partition) Communities() [][]int {
	out := make([][]int, p.Count())
	for v, c := range p {
		out[c] = append(out[c], v)
	}
	return out
}

// Leiden partitions g into communities of high modularity with the Leiden
// algorithm. Every community it returns is connected. It fails only for
// bad options or when ctx ends, which it checks between phases and every
// few thousand node moves.
func Leiden(ctx context.Context, g *Graph, opts Options) (Partition, error) {
	opts = opts.withDefaults()
	n := g.N()
	if err := opts.validate(n); err != nil {
		return nil, err
	}
	memb := make([]int32, n)
	for v := range memb {
		memb[v] = int32(v)
	}
	if opts.Initial != nil {
		ids := make(map[int]int32)
		for v, c := range opts.Initial {
			id, ok := ids[c]
			if !ok {
				id = int32(len(ids))
				ids[c] = id
			}
			memb[v] = id
		}
	}
	if n == 0 || g.total == 0 {
		// No edge weight: modularity is 0 whatever the partition; every
		// node stays alone, the only partition sure to be connected.
		for v := range memb {
			memb[v] = int32(v)
		}
		return toPartition(memb), ctx.Err()
	}
	o := newOptimizer(ctx, n, opts)
	prev := make([]int32, n)
	for it := 0; opts.Iterations < 0 && it < maxStableIterations || it < opts.Iterations; it++ {
		copy(prev, memb)
		if err := o.iterate(g, memb); err != nil {
			return nil, err
		}
		renumber(memb)
		if slices.Equal(prev, memb) {
			break
		}
	}
	return toPartition(memb), nil
}

func toPartition(m []int32) Partition {
	p := make(Partition, len(m))
	for i, c := range m {
		p[i] = int(c)
	}
	return p
}

// renumber numbers the communities of m 0..k-1 in order of first node and
// returns k. Community numbers must be below len(m).
func renumber(m []int32) int {
	ids := make([]int32, len(m))
	for i := range ids {
		ids[i] = -1
	}
	k := int32(0)
	for i, c := range m {
		if ids[c] < 0 {
			ids[c] = k
			k++
		}
		m[i] = ids[c]
	}
	return int(k)
}

// optimizer holds the parameters, the random source and scratch arrays
// sized to the input graph (aggregates are never larger). It is used by one
// goroutine.
type optimizer struct {
	ctx   context.Context
	gamma float64
	theta float64
	rng   *rand.Rand

	commK   []float64 // total strength per community
	commN   []int32   // nodes per community
	empty   []int32   // stack of unused community numbers
	queue   []int32   // ring buffer of nodes to visit
	inQ     []bool
	neighW  []float64 // weight from the current node to each community
	seen    []bool
	touched []int32 // communities with seen set
	order   []int32

	refK   []float64 // refined communities: total strength,
	refExt []float64 // weight to the rest of their community,
	refN   []int32   // size
	nodeIn []float64 // weight from each node to the rest of its community
	cand   []int32
	candW  []float64
	steps  int
}

func newOptimizer(ctx context.Context, n int, opts Options) *optimizer {
	return &optimizer{
		ctx:   ctx,
		gamma: opts.Resolution,
		theta: opts.Randomness,
		// The second PCG word is fixed: any constant works, the seed
		// varies the stream.
		rng:    rand.New(rand.NewPCG(opts.Seed, 0x9e3779b97f4a7c15)),
		commK:  make([]float64, n),
		commN:  make([]int32, n),
		queue:  make([]int32, n),
		inQ:    make([]bool, n),
		neighW: make([]float64, n),
		seen:   make([]bool, n),
		order:  make([]int32, n),
		refK:   make([]float64, n),
		refExt: make([]float64, n),
		refN:   make([]int32, n),
		nodeIn: make([]float64, n),
	}
}

// tick counts work and reports ctx's error every 4096 calls.
func (o *optimizer) tick() error {
	o.steps++
	if o.steps&4095 == 0 {
		return o.ctx.Err()
	}
	return nil
}

// iterate runs one iteration of the Leiden algorithm (the paper's
// function Leiden, Fig. A.1) on g from partition memb, which it replaces
// with the result: move nodes, refine, aggregate by the refined partition
// with the unrefined one as the start, until every community is one node
// of the aggregate graph.
func (o *optimizer) iterate(g *Graph, memb []int32) error {
	cur := g
	comm := append([]int32(nil), memb...)
	// nodeOf maps each node of g to the node of cur that holds it.
	var nodeOf []int32
	for {
		if err := o.moveNodes(cur, comm); err != nil {
			return err
		}
		k := renumber(comm)
		if k == cur.N() {
			break
		}
		ref, nref := o.refine(cur, comm)
		if nref == cur.N() {
			// No node merged (possible on tiny graphs, where staying alone
			// has a fair chance): aggregate by the connected parts of the
			// communities instead, which still keeps them connected.
			ref, nref = components(cur, comm, o.queue)
		}
		if nref == cur.N() {
			break // cannot happen after moveNodes; guards against a loop
		}
		if err := o.ctx.Err(); err != nil {
			return err
		}
		agg, aggComm := o.aggregate(cur, ref, nref, comm)
		if nodeOf == nil {
			nodeOf = ref
		} else {
			for v, a := range nodeOf {
				nodeOf[v] = ref[a]
			}
		}
		cur, comm = agg, aggComm
	}
	if nodeOf == nil {
		copy(memb, comm)
		return nil
	}
	for v, a := range nodeOf {
		memb[v] = comm[a]
	}
	return nil
}

// neighbours sums the weights from v to each community of its neighbours
// (the community of u being part[u]) into neighW, listing them in touched.
// With within >= 0, only neighbours u with comm[u] == within count.
func (o *optimizer) neighbours(g *Graph, v int32, part, comm []int32, within int32) {
	seen, neighW, touched := o.seen, o.neighW, o.touched
	adj, w := g.adj[g.off[v]:g.off[v+1]], g.w[g.off[v]:g.off[v+1]]
	for i, u := range adj {
		if within >= 0 && comm[u] != within {
			continue
		}
		c := part[u]
		if !seen[c] {
			seen[c] = true
			touched = append(touched, c)
		}
		neighW[c] += w[i]
	}
	o.touched = touched
}

func (o *optimizer) clearNeighbours() {
	for _, c := range o.touched {
		o.seen[c] = false
		o.neighW[c] = 0
	}
	o.touched = o.touched[:0]
}

func (o *optimizer) shuffled(n int) []int32 {
	order := o.order[:n]
	for i := range order {
		order[i] = int32(i)
	}
	o.rng.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
	return order
}

// moveNodes is the paper's MoveNodesFast: visit nodes from a queue (all
// nodes in random order at first), move each to the community with the
// largest modularity gain (an empty one included; staying wins ties), and
// queue the neighbours of a moved node that are outside its new community.
// It ends when the queue is empty, so every node is then in its best
// community.
func (o *optimizer) moveNodes(g *Graph, comm []int32) error {
	n := g.N()
	commK, commN := o.commK[:n], o.commN[:n]
	clear(commK)
	clear(commN)
	for v, c := range comm {
		commK[c] += g.k[v]
		commN[c]++
	}
	o.empty = o.empty[:0]
	for c := n - 1; c >= 0; c-- {
		if commN[c] == 0 {
			o.empty = append(o.empty, int32(c))
		}
	}
	queue, inQ := o.queue[:n], o.inQ[:n]
	copy(queue, o.shuffled(n))
	for i := range inQ {
		inQ[i] = true
	}
	scale := o.gamma / g.total // γ/2m
	head, size := 0, n
	for size > 0 {
		if err := o.tick(); err != nil {
			return err
		}
		v := queue[head]
		head++
		if head == n {
			head = 0
		}
		size--
		inQ[v] = false

		cv, kv := comm[v], g.k[v]
		o.neighbours(g, v, comm, nil, -1)
		commK[cv] -= kv
		commN[cv]--
		best := cv
		bestGain := o.neighW[cv] - scale*kv*commK[cv]
		for _, c := range o.touched {
			if gain := o.neighW[c] - scale*kv*commK[c]; gain > bestGain {
				best, bestGain = c, gain
			}
		}
		o.clearNeighbours()
		switch {
		case bestGain >= 0:
		case commN[cv] == 0:
			// v was alone in cv, which is as good as any empty
			// community: its gain is 0 but for rounding (commK[cv] is
			// what is left of sums after subtracting kv, 1e-17 say).
			best = cv
		default:
			// Alone is better.
			best = o.empty[len(o.empty)-1]
			o.empty = o.empty[:len(o.empty)-1]
		}
		commK[best] += kv
		commN[best]++
		if best == cv {
			continue
		}
		if commN[cv] == 0 {
			o.empty = append(o.empty, cv)
		}
		comm[v] = best
		for e := g.off[v]; e < g.off[v+1]; e++ {
			if u := g.adj[e]; !inQ[u] && comm[u] != best {
				t := head + size
				if t >= n {
					t -= n
				}
				queue[t] = u
				inQ[u] = true
				size++
			}
		}
	}
	return nil
}

// refine is the paper's RefinePartition with MergeNodesSubset: start from
// singletons and, visiting nodes in random order, let each node that is
// still alone and well connected to its community S join a well-connected
// refined community inside S, chosen at random with probability
// proportional to exp(ΔQ/θ) among those with ΔQ >= 0 (staying alone, ΔQ =
// 0, included). It returns the refined partition numbered 0..nref-1 in
// node order.
func (o *optimizer) refine(g *Graph, comm []int32) ([]int32, int) {
	n := g.N()
	scale := o.gamma / g.total
	m := g.total / 2
	ref := make([]int32, n)
	refK, refExt, refN, nodeIn := o.refK[:n], o.refExt[:n], o.refN[:n], o.nodeIn[:n]
	for v := range ref {
		ref[v] = int32(v)
		refK[v] = g.k[v]
		refN[v] = 1
		in := 0.0
		for e := g.off[v]; e < g.off[v+1]; e++ {
			if comm[g.adj[e]] == comm[v] {
				in += g.w[e]
			}
		}
		nodeIn[v] = in
		refExt[v] = in
	}
	commK := o.commK[:n]
	clear(commK)
	for v, c := range comm {
		commK[c] += g.k[v]
	}
	for _, v := range o.shuffled(n) {
		if refN[v] != 1 || ref[v] != v {
			continue // no longer alone
		}
		s := comm[v]
		kv := g.k[v]
		if nodeIn[v] < scale*kv*(commK[s]-kv) {
			continue // not well connected to S
		}
		o.neighbours(g, v, ref, comm, s)
		o.cand, o.candW = append(o.cand[:0], v), append(o.candW[:0], 0)
		bestGain := 0.0
		for _, c := range o.touched {
			if c == v || refExt[c] < scale*refK[c]*(commK[s]-refK[c]) {
				continue
			}
			if gain := o.neighW[c] - scale*kv*refK[c]; gain >= 0 {
				o.cand = append(o.cand, c)
				o.candW = append(o.candW, gain)
				bestGain = max(bestGain, gain)
			}
		}
		chosen := v
		if len(o.cand) > 1 {
			// ΔQ = gain/m; weights relative to the best keep exp finite.
			sum := 0.0
			for i, gain := range o.candW {
				o.candW[i] = math.Exp((gain - bestGain) / (m * o.theta))
				sum += o.candW[i]
			}
			r := o.rng.Float64() * sum
			chosen = o.cand[len(o.cand)-1]
			for i, w := range o.candW {
				if r < w {
					chosen = o.cand[i]
					break
				}
				r -= w
			}
		}
		if chosen != v {
			ref[v] = chosen
			refN[chosen]++
			refN[v] = 0
			refK[chosen] += kv
			refExt[chosen] += nodeIn[v] - 2*o.neighW[chosen]
		}
		o.clearNeighbours()
	}
	return ref, renumber(ref)
}

// components numbers the connected parts of each community of comm
// (parts in node order) and returns them with their count; queue is
// scratch of at least g.N() entries.
func components(g *Graph, comm []int32, queue []int32) ([]int32, int) {
	n := g.N()
	part := make([]int32, n)
	for i := range part {
		part[i] = -1
	}
	k := int32(0)
	for s := range part {
		if part[s] >= 0 {
			continue
		}
		part[s] = k
		q := append(queue[:0], int32(s))
		for len(q) > 0 {
			v := q[len(q)-1]
			q = q[:len(q)-1]
			for e := g.off[v]; e < g.off[v+1]; e++ {
				if u := g.adj[e]; part[u] < 0 && comm[u] == comm[v] {
					part[u] = k
					q = append(q, u)
				}
			}
		}
		k++
	}
	return part, int(k)
}

// aggregate builds the graph whose nodes are the refined communities of
// ref (edge weights summed, inner weight kept as self-loops) and the
// partition of its nodes that comm induces.
func (o *optimizer) aggregate(g *Graph, ref []int32, nref int, comm []int32) (*Graph, []int32) {
	n := g.N()
	// Members of each refined community, by counting sort.
	start := make([]int32, nref+1)
	for _, a := range ref {
		start[a+1]++
	}
	for a := 0; a < nref; a++ {
		start[a+1] += start[a]
	}
	members := make([]int32, n)
	fill := append([]int32(nil), start[:nref]...)
	for v, a := range ref {
		members[fill[a]] = int32(v)
		fill[a]++
	}
	agg := &Graph{
		off:   make([]int32, nref+1),
		adj:   make([]int32, 0, len(g.adj)/2),
		w:     make([]float64, 0, len(g.adj)/2),
		self:  make([]float64, nref),
		k:     make([]float64, nref),
		total: g.total,
	}
	aggComm := make([]int32, nref)
	for a := int32(0); a < int32(nref); a++ {
		self, k := 0.0, 0.0
		for _, v := range members[start[a]:start[a+1]] {
			self += g.self[v]
			k += g.k[v]
			for e := g.off[v]; e < g.off[v+1]; e++ {
				b := ref[g.adj[e]]
				if b == a {
					self += g.w[e] / 2 // seen from both ends
					continue
				}
				if !o.seen[b] {
					o.seen[b] = true
					o.touched = append(o.touched, b)
				}
				o.neighW[b] += g.w[e]
			}
		}
		for _, b := range o.touched {
			agg.adj = append(agg.adj, b)
			agg.w = append(agg.w, o.neighW[b])
		}
		o.clearNeighbours()
		agg.off[a+1] = int32(len(agg.adj))
		agg.self[a], agg.k[a] = self, k
		aggComm[a] = comm[members[start[a]]]
	}
	return agg, aggComm
}
