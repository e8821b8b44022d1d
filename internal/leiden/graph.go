package leiden

import (
	"fmt"
	"math"
	"strconv"
)

// Edge is an undirected weighted edge between two named nodes.
type Edge struct {
	Source, Target string
	Weight         float64
}

// Graph is an undirected weighted graph in compressed sparse row form.
// Parallel edges are summed; a self-loop of weight w adds w to the node's
// internal weight and 2w to its strength, so that the strengths add up to
// twice the total weight, as modularity needs. A Graph is immutable once
// built and safe for concurrent use; the zero value is an empty graph.
type Graph struct {
	names []string  // node names; nil for a graph built from indices alone
	off   []int32   // adjacency of node v: adj[off[v]:off[v+1]]
	adj   []int32   // neighbour indices, never v itself
	w     []float64 // weights, parallel to adj
	self  []float64 // self-loop weight per node
	k     []float64 // strength: sum of w over adj plus 2*self
	total float64   // sum of k: twice the total edge weight
}

// N returns the number of nodes.
func (g *Graph) N() int { return len(g.k) }

// Name returns node v's name: the one it was built with, else v in decimal.
func (g *Graph) Name(v int) string {
	if g.names == nil {
		return strconv.Itoa(v)
	}
	return g.names[v]
}

// Index returns the index of the node named name, or -1. It scans the
// nodes: callers that look many names up should build their own map.
func (g *Graph) Index(name string) int {
	for i := range g.k {
		if g.Name(i) == name {
			return i
		}
	}
	return -1
}

// Strength returns node v's weighted degree (self-loops count twice).
func (g *Graph) Strength(v int) float64 { return g.k[v] }

// TotalWeight returns the sum of the edge weights (each edge once).
func (g *Graph) TotalWeight() float64 { return g.total / 2 }

// Neighbors calls fn for each neighbour u of v (v itself excluded) with
// the summed weight of the edges between them.
func (g *Graph) Neighbors(v int, fn func(u int, w float64)) {
	for e := g.off[v]; e < g.off[v+1]; e++ {
		fn(int(g.adj[e]), g.w[e])
	}
}

// Edges returns the graph's edges, each once (source index <= target
// index), self-loops included, in node order.
func (g *Graph) Edges() []Edge {
	var out []Edge
	for v := range g.k {
		if g.self[v] != 0 {
			out = append(out, Edge{g.Name(v), g.Name(v), g.self[v]})
		}
		for e := g.off[v]; e < g.off[v+1]; e++ {
			if u := int(g.adj[e]); u > v {
				out = append(out, Edge{g.Name(v), g.Name(u), g.w[e]})
			}
		}
	}
	return out
}

// Builder collects edges for a Graph. The zero value is ready to use; a
// Builder is not safe for concurrent use.
type Builder struct {
	names []string
	index map[string]int32
	n     int
	src   []int32
	dst   []int32
	w     []float64
	err   error
}

// NewBuilder returns a Builder whose nodes are the indices 0..n-1, named
// by their decimal form; AddEdge adds edges between indices.
func NewBuilder(n int) *Builder { return &Builder{n: n} }

// Node returns the index of the node named name, adding it when new. Nodes
// are numbered in the order they are first named.
func (b *Builder) Node(name string) int {
	if b.index == nil {
		b.index = make(map[string]int32)
	}
	if i, ok := b.index[name]; ok {
		return int(i)
	}
	i := int32(b.n)
	b.index[name] = i
	b.names = append(b.names, name)
	b.n++
	return int(i)
}

// AddNamed adds an edge between the nodes named a and b.
func (b *Builder) AddNamed(a, c string, w float64) { b.AddEdge(b.Node(a), b.Node(c), w) }

// AddEdge adds an undirected edge between nodes u and v. Weights must be
// finite and not negative (modularity is not defined otherwise); the
// first bad edge is reported by Graph.
func (b *Builder) AddEdge(u, v int, w float64) {
	switch {
	case b.err != nil:
		return
	case u < 0 || v < 0 || u >= b.n || v >= b.n:
		b.err = fmt.Errorf("leiden: edge %d-%d: node out of range [0,%d)", u, v, b.n)
		return
	case math.IsNaN(w) || math.IsInf(w, 0) || w < 0:
		b.err = fmt.Errorf("leiden: edge %d-%d: weight %v is not a finite non-negative number", u, v, w)
		return
	}
	b.src = append(b.src, int32(u))
	b.dst = append(b.dst, int32(v))
	b.w = append(b.w, w)
}

// Graph builds the graph. Each node's neighbours are listed in the order
// their first edge was added, which keeps runs repeatable.
func (b *Builder) Graph() (*Graph, error) {
	if b.err != nil {
		return nil, b.err
	}
	if b.n > math.MaxInt32 || 2*len(b.src) > math.MaxInt32 {
		return nil, fmt.Errorf("leiden: graph too large (%d nodes, %d edges)", b.n, len(b.src))
	}
	n := b.n
	self := make([]float64, n)
	deg := make([]int32, n+1)
	for i, u := range b.src {
		if v := b.dst[i]; u == v {
			self[u] += b.w[i]
		} else {
			deg[u+1]++
			deg[v+1]++
		}
	}
	for v := 0; v < n; v++ {
		deg[v+1] += deg[v]
	}
	// Scatter both directions, then merge parallel entries per node.
	raw := make([]int32, deg[n])
	rw := make([]float64, deg[n])
	pos := append([]int32(nil), deg[:n]...)
	for i, u := range b.src {
		v := b.dst[i]
		if u == v {
			continue
		}
		raw[pos[u]], rw[pos[u]] = v, b.w[i]
		pos[u]++
		raw[pos[v]], rw[pos[v]] = u, b.w[i]
		pos[v]++
	}
	g := &Graph{names: b.names, off: make([]int32, n+1), self: self, k: make([]float64, n)}
	g.adj = make([]int32, 0, deg[n])
	g.w = make([]float64, 0, deg[n])
	slot := make([]int32, n) // slot[u]-1: u's entry in the current node's list
	for v := 0; v < n; v++ {
		start := int32(len(g.adj))
		for e := deg[v]; e < deg[v+1]; e++ {
			u := raw[e]
			if s := slot[u]; s > start {
				g.w[s-1] += rw[e]
				continue
			}
			g.adj = append(g.adj, u)
			g.w = append(g.w, rw[e])
			slot[u] = int32(len(g.adj))
		}
		g.off[v+1] = int32(len(g.adj))
		kv := 2 * self[v]
		for e := start; e < g.off[v+1]; e++ {
			kv += g.w[e]
		}
		g.k[v] = kv
		g.total += kv
	}
	return g, nil
}

// NewGraph builds a graph from named edges; nodes are numbered in order of
// first appearance.
func NewGraph(edges []Edge) (*Graph, error) {
	var b Builder
	for _, e := range edges {
		b.AddNamed(e.Source, e.Target, e.Weight)
	}
	return b.Graph()
}
