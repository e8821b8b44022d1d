package leiden

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"

	"golang.org/x/sync/errgroup"
)

// HierOptions tune Hierarchical. The zero value means GraphRAG's
// parameters for graspologic's hierarchical_leiden (maximum cluster size
// 10, resolution 1, randomness 0.001, one iteration), seed 0 and one
// Leiden run per split.
type HierOptions struct {
	// MaxClusterSize: a community of at least this many nodes is split by
	// Leiden on its own subgraph (graspologic's rule, ">= max_cluster_size").
	MaxClusterSize int
	// Seed seeds level 0 as Options.Seed does; the Leiden run that splits
	// community ID gets a seed derived from Seed and ID.
	Seed uint64
	// Resolution, Randomness and Iterations are passed to every Leiden
	// run; Randomness defaults to 0.001 and Iterations to 1, GraphRAG's
	// values. (Two iterations raise level 0's modularity, by 5% on a
	// 100k-node planted-partition graph, but lower the deepest level's by
	// 2% there and on two of GraphRAG's samples: the recursion then
	// splits differently.)
	Resolution float64
	Randomness float64
	Iterations int
	// Trials is the number of Leiden runs on each community to split
	// (default 1, as graspologic; further runs are seeded apart). When
	// several runs split it, the split kept is the one that keeps the most
	// modularity of the whole graph. Over 60 seeds on GraphRAG's samples,
	// 5 trials raise the mean modularity of levels 1 and 2 by 1-5% but can
	// lower the deepest level's (by 2.7% on v1.0.1): keeping more at one
	// level leaves larger communities to split further down.
	Trials int
	// Workers bounds the subgraphs clustered at once; 0 means GOMAXPROCS.
	// The result does not depend on it.
	Workers int
	// Previous, when set, warm-starts the clustering from an earlier one
	// of a graph much like this one: Previous[l][v] is the community node
	// v had at level l, or -1 (a new node, or one that was not that deep).
	// Level 0's Leiden run starts from Previous[0] rather than from every
	// node alone, and the run that splits a community starts from its
	// nodes' communities one level down, so that a small change to the
	// graph moves fewer communities. Levels beyond len(Previous) start
	// cold.
	Previous [][]int
}

// initial is the starting partition of nodes (positions in nodes) from
// prev (community per graph node, -1 for none): nil when prev says
// nothing of them; a node without a community starts alone.
func initial(prev []int, nodes []int) Partition {
	if prev == nil {
		return nil
	}
	p := make(Partition, len(nodes))
	fresh := 0 // above every community these nodes had: Leiden renumbers
	for _, v := range nodes {
		fresh = max(fresh, prev[v]+1)
	}
	known := false
	for i, v := range nodes {
		if c := prev[v]; c >= 0 {
			p[i], known = c, true
		} else {
			p[i] = fresh
			fresh++
		}
	}
	if !known {
		return nil
	}
	return p
}

// previousAt returns Previous at level, or nil.
func (o HierOptions) previousAt(level, n int) []int {
	if level >= len(o.Previous) || len(o.Previous[level]) != n {
		return nil
	}
	return o.Previous[level]
}

// Community is one community of a Hierarchy.
type Community struct {
	// ID numbers communities across all levels: level 0 from 0 in order of
	// each community's first node, then each next level's, grouped by
	// parent in ID order (as graspologic_native numbers them, and so
	// GraphRAG's community column).
	ID     int
	Level  int
	Parent int   // the parent's ID, -1 at level 0
	Nodes  []int // node indices, ascending
	// Final is set when the community has no children: it is smaller than
	// MaxClusterSize, or it could not be split: Leiden on its subgraph
	// returned it whole (every one of HierOptions.Trials runs), as
	// graspologic decides. Such communities are stars and the like: a hub
	// and its leaves, which no split improves much.
	Final bool
}

// Hierarchy is the result of Hierarchical: communities ordered by ID (and
// so by level). Level 0 partitions the whole graph; each community of
// level k+1 lies inside its parent of level k. It is a plain value.
type Hierarchy struct {
	Communities []Community
	Levels      int // number of levels (0 for an empty graph)
	nodes       int
}

// Membership returns, for each node, the ID of its community at level, or
// of its final community when that ends above level: a partition of the
// whole graph at every level (with community IDs as numbers), which is
// how the per-level modularity is measured.
func (h *Hierarchy) Membership(level int) Partition {
	p := make(Partition, h.nodes)
	for _, c := range h.Communities {
		if c.Level > level {
			break
		}
		for _, v := range c.Nodes {
			p[v] = c.ID
		}
	}
	return p
}

// Row is one (node, community) pair of a Hierarchy, shaped like
// graspologic_native's HierarchicalCluster, which GraphRAG's cluster_graph
// reads.
type Row struct {
	Node    int
	Cluster int
	Level   int
	Parent  int // -1 at level 0 (GraphRAG writes -1 for None)
	Final   bool
}

// Rows lists every community's nodes, by community ID then node.
func (h *Hierarchy) Rows() []Row {
	var rows []Row
	for _, c := range h.Communities {
		for _, v := range c.Nodes {
			rows = append(rows, Row{Node: v, Cluster: c.ID, Level: c.Level, Parent: c.Parent, Final: c.Final})
		}
	}
	return rows
}

// Hierarchical clusters g as GraphRAG does with graspologic's
// hierarchical_leiden: Leiden on the whole graph gives level 0; every
// community of at least MaxClusterSize nodes is split by Leiden on its
// induced subgraph (its own total weight and strengths) into the next
// level's communities, level after level, until no community is that
// large or Leiden returns a large one whole (it cannot be split: it is
// then final at its level and has no children). Communities of a level are
// split concurrently; the result depends only on g and opts. It fails for
// bad options or when ctx ends.
func Hierarchical(ctx context.Context, g *Graph, opts HierOptions) (*Hierarchy, error) {
	if opts.MaxClusterSize == 0 {
		opts.MaxClusterSize = DefaultMaxClusterSize
	}
	if opts.MaxClusterSize < 1 {
		return nil, fmt.Errorf("leiden: max cluster size %d: must be positive", opts.MaxClusterSize)
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if opts.Iterations == 0 {
		opts.Iterations = 1
	}
	if opts.Randomness == 0 {
		opts.Randomness = DefaultHierRandomness
	}
	opts.Trials = cmp.Or(opts.Trials, DefaultTrials)
	if opts.Trials < 0 {
		return nil, fmt.Errorf("leiden: trials %d: must be positive", opts.Trials)
	}
	lopts := Options{Resolution: opts.Resolution, Randomness: opts.Randomness, Iterations: opts.Iterations, Seed: opts.Seed}
	h := &Hierarchy{nodes: g.N()}
	if g.N() == 0 {
		return h, nil
	}
	all := make([]int, g.N())
	for v := range all {
		all[v] = v
	}
	first := lopts
	first.Initial = initial(opts.previousAt(0, g.N()), all)
	p, err := Leiden(ctx, g, first)
	if err != nil {
		return nil, err
	}
	for _, nodes := range p.Communities() {
		h.Communities = append(h.Communities, Community{ID: len(h.Communities), Parent: -1, Nodes: nodes})
	}
	h.Levels = 1
	// level holds the IDs of the current level's communities.
	level := make([]int, len(h.Communities))
	for i := range level {
		level[i] = i
	}
	for len(level) > 0 {
		var split []int // IDs to split, ascending
		for _, id := range level {
			c := &h.Communities[id]
			c.Final = len(c.Nodes) < opts.MaxClusterSize
			if !c.Final {
				split = append(split, id)
			}
		}
		children := make([][][]int, len(split))
		eg, ctx := errgroup.WithContext(ctx)
		eg.SetLimit(workers)
		for i, id := range split {
			nodes := h.Communities[id].Nodes
			o := lopts
			o.Initial = initial(opts.previousAt(h.Communities[id].Level+1, g.N()), nodes)
			eg.Go(func() error {
				p, err := splitCommunity(ctx, g, nodes, o, mix(opts.Seed, uint64(id)), opts.Trials)
				if err != nil {
					return err
				}
				for _, local := range p.Communities() {
					global := make([]int, len(local))
					for j, v := range local {
						global[j] = nodes[v]
					}
					children[i] = append(children[i], global)
				}
				return nil
			})
		}
		if err := eg.Wait(); err != nil {
			return nil, err
		}
		level = level[:0]
		for i, id := range split {
			if len(children[i]) < 2 {
				h.Communities[id].Final = true // could not be split
				continue
			}
			for _, nodes := range children[i] {
				level = append(level, len(h.Communities))
				h.Communities = append(h.Communities, Community{
					ID: len(h.Communities), Level: h.Communities[id].Level + 1, Parent: id, Nodes: nodes,
				})
			}
		}
		if len(level) > 0 {
			h.Levels++
		}
	}
	return h, nil
}

// splitCommunity runs Leiden on the subgraph of g induced by nodes and
// returns a partition (of positions in nodes), running it trials times.
// When several runs split it, the split kept is the one
// that keeps the most modularity of the whole graph g: the largest sum
// over its communities c of in_c − γ·K_c²/(4m), with K_c and m taken from
// g (the terms of g's modularity that the split changes).
func splitCommunity(ctx context.Context, g *Graph, nodes []int, o Options, seed uint64, trials int) (Partition, error) {
	sub := g.induced(nodes)
	gamma := o.withDefaults().Resolution
	var best Partition
	bestScore := math.Inf(-1)
	for t := range trials {
		o.Seed = seed
		if t > 0 {
			o.Seed = mix(seed, uint64(t))
		}
		p, err := Leiden(ctx, sub, o)
		if err != nil {
			return nil, err
		}
		k := p.Count()
		if k >= 2 && trials == 1 {
			return p, nil
		}
		if k < 2 {
			if best == nil {
				best = p
			}
			continue
		}
		in := make([]float64, k)
		strength := make([]float64, k)
		for v, c := range p {
			strength[c] += g.k[nodes[v]]
			in[c] += sub.self[v]
			for e := sub.off[v]; e < sub.off[v+1]; e++ {
				if u := int(sub.adj[e]); u > v && p[u] == c {
					in[c] += sub.w[e]
				}
			}
		}
		score := 0.0
		for c := range in {
			score += in[c] - gamma*strength[c]*strength[c]/(2*g.total)
		}
		if score > bestScore {
			best, bestScore = p, score
		}
	}
	return best, nil
}

// mix derives a seed from a seed and a community ID (SplitMix64's
// finaliser), so that each subgraph gets its own stream whatever order the
// workers run in.
func mix(seed, id uint64) uint64 {
	z := seed + (id+1)*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// induced returns the subgraph of g on nodes (ascending), numbered by
// position in nodes; strengths count only the edges kept.
func (g *Graph) induced(nodes []int) *Graph {
	if !slices.IsSorted(nodes) {
		panic("leiden: induced: nodes not ascending")
	}
	deg := 0
	for _, v := range nodes {
		deg += int(g.off[v+1] - g.off[v])
	}
	sub := &Graph{off: make([]int32, len(nodes)+1), self: make([]float64, len(nodes)), k: make([]float64, len(nodes)),
		adj: make([]int32, 0, deg), w: make([]float64, 0, deg)}
	for i, v := range nodes {
		sub.self[i] = g.self[v]
		kv := 2 * g.self[v]
		for e := g.off[v]; e < g.off[v+1]; e++ {
			u := int(g.adj[e])
			if j, ok := slices.BinarySearch(nodes, u); ok {
				sub.adj = append(sub.adj, int32(j))
				sub.w = append(sub.w, g.w[e])
				kv += g.w[e]
			}
		}
		sub.off[i+1] = int32(len(sub.adj))
		sub.k[i] = kv
		sub.total += kv
	}
	return sub
}
