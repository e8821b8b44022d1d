package graphrag

// Degrees counts the degree of each entity title from relationship ends as
// GraphRAG computes it: the number of distinct undirected pairs among the
// relationships that the title is an end of, a self-pair counting twice
// (A -> B and B -> A count once; A -> A adds 2 to A). This is networkx's
// degree of the undirected graph GraphRAG builds from the relationships
// (create_graph before 3.x, _build_degree_map in 3.x). A title that no
// relationship names has degree 0. The zero value is ready to use; a
// Degrees is not safe for concurrent use.
type Degrees struct {
	seen   map[[2]string]struct{}
	degree map[string]int64
}

// Add counts the relationship source -> target.
func (d *Degrees) Add(source, target string) {
	if d.seen == nil {
		d.seen = make(map[[2]string]struct{})
		d.degree = make(map[string]int64)
	}
	lo, hi := source, target
	if hi < lo { // byte order is code point order, Python's sorted
		lo, hi = hi, lo
	}
	if _, ok := d.seen[[2]string{lo, hi}]; ok {
		return
	}
	d.seen[[2]string{lo, hi}] = struct{}{}
	d.degree[lo]++
	d.degree[hi]++
}

// Of returns the degree of title.
func (d *Degrees) Of(title string) int64 { return d.degree[title] }
