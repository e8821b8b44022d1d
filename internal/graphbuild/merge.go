package graphbuild

import "math"

// Entity is one entity record the model extracted from a text unit. Title
// and Type are the names as the extraction parser normalised them.
type Entity struct {
	Title       string
	Type        string
	Description string
}

// Relationship is one relationship record the model extracted from a text
// unit. Weight counts when HasWeight is set; otherwise the record weighs
// DefaultWeight, as GraphRAG weighs a strength it cannot read.
type Relationship struct {
	Source      string
	Target      string
	Description string
	Weight      float64
	HasWeight   bool
}

// DefaultWeight is the weight of a relationship record without one.
const DefaultWeight = 1.0

// Extraction is what the model extracted from one text unit, all gleaning
// rounds together, records in reply order.
type Extraction struct {
	TextUnitID    string
	Entities      []Entity
	Relationships []Relationship
}

// MergedEntity is one (title, type) pair over all text units: GraphRAG's
// extracted entity row before summaries.
type MergedEntity struct {
	Title string
	Type  string
	// Descriptions and TextUnitIDs hold one element per record merged, in
	// record order; duplicates are kept (GraphRAG keeps a text unit id
	// twice when the unit names the entity twice).
	Descriptions []string
	TextUnitIDs  []string
	// Frequency is the number of records merged.
	Frequency int
	// Description is the one description Finalize writes: set by
	// Summarizer.Summarize, "" until then.
	Description string
}

// MergedRelationship is one directed (source, target) pair over all text
// units. A -> B and B -> A stay two relationships, as in GraphRAG.
type MergedRelationship struct {
	Source       string
	Target       string
	Descriptions []string
	TextUnitIDs  []string
	// Weight is the sum of the records' weights (see Merge for how).
	Weight float64
	// Description is set by Summarizer.Summarize, "" until then.
	Description string
}

// Graph is the merged extraction of a corpus. Finalize turns it into
// GraphRAG's entities and relationships tables.
type Graph struct {
	Entities      []MergedEntity
	Relationships []MergedRelationship
	// Orphans counts the merged relationships dropped because the source
	// or the target is not the title of any entity; OrphanRecords counts
	// the records they merged.
	Orphans       int
	OrphanRecords int
}

type entityKey struct{ title, typ string }

type pairKey struct{ source, target string }

// Merge merges the records of all text units as GraphRAG 3.3.0's
// extract_graph does (_merge_entities, _merge_relationships,
// filter_orphan_relationships): entities grouped by (title, type) and
// relationships by (source, target), each in order of first appearance,
// descriptions and text unit ids gathered in record order, entity
// frequency the record count, relationship weights summed; then the
// relationships whose ends are not both entity titles are dropped.
//
// Weights are summed as GraphRAG's pandas 3 sums its weight column, to the
// last bit: which of three ways it takes depends on the data (see
// weightRows); they differ only in rounding.
//
// The result shares no memory with exts. An empty input gives an empty
// Graph (GraphRAG stops with an error there; the caller decides).
func Merge(exts []Extraction) *Graph {
	g := &Graph{}
	entities := make(map[entityKey]int)
	for _, x := range exts {
		for _, e := range x.Entities {
			i, isNew := groupOf(entities, entityKey{e.Title, e.Type})
			if isNew {
				g.Entities = append(g.Entities, MergedEntity{Title: e.Title, Type: e.Type})
			}
			m := &g.Entities[i]
			m.Descriptions = append(m.Descriptions, e.Description)
			m.TextUnitIDs = append(m.TextUnitIDs, x.TextUnitID)
			m.Frequency++
		}
	}

	pairs := make(map[pairKey]int)
	var rows weightRows
	for _, x := range exts {
		rows.objects = rows.objects || len(x.Relationships) == 0
		for _, r := range x.Relationships {
			i, isNew := groupOf(pairs, pairKey{r.Source, r.Target})
			if isNew {
				g.Relationships = append(g.Relationships, MergedRelationship{Source: r.Source, Target: r.Target})
			}
			m := &g.Relationships[i]
			m.Descriptions = append(m.Descriptions, r.Description)
			m.TextUnitIDs = append(m.TextUnitIDs, x.TextUnitID)
			w := DefaultWeight
			if r.HasWeight {
				w = r.Weight
			}
			rows.add(i, w)
		}
	}
	for i, w := range rows.sums(len(g.Relationships)) {
		g.Relationships[i].Weight = w
	}
	g.dropOrphans()
	return g
}

// groupOf returns the number of k's group, numbering new keys from 0 in
// order of first appearance (pandas' groupby with sort=False), and
// whether k is new.
func groupOf[K comparable](index map[K]int, k K) (int, bool) {
	if i, ok := index[k]; ok {
		return i, false
	}
	i := len(index)
	index[k] = i
	return i, true
}

// dropOrphans removes the relationships with an end that no entity bears
// as its title, keeping the order of the rest.
func (g *Graph) dropOrphans() {
	titles := make(map[string]struct{}, len(g.Entities))
	for _, e := range g.Entities {
		titles[e.Title] = struct{}{}
	}
	kept := g.Relationships[:0]
	for _, r := range g.Relationships {
		_, s := titles[r.Source]
		_, t := titles[r.Target]
		if s && t {
			kept = append(kept, r)
			continue
		}
		g.Orphans++
		g.OrphanRecords += len(r.Descriptions)
	}
	clear(g.Relationships[len(kept):])
	g.Relationships = kept
}

// weightRows holds the relationship records' weights in row order, and
// sums them per pair as pandas 3.1 sums the weight column of GraphRAG's
// merged relationships (groupby(["source", "target"],
// sort=False).agg(weight=("weight", "sum"))), which takes one of three
// ways (pandas/core/groupby/ops.py _cython_operation):
//
//   - objects: some text unit had no relationships, and its empty frame
//     (object columns) made the concatenated column one of Python
//     objects: Cython's group_sum adds them plainly in row order;
//   - else, when the group ids are monotonic (every pair's records are
//     consecutive) and no weight is NaN: numpy's add.reduceat, which per
//     pair adds the pairwise sum of the later records to the first;
//   - else: Cython's group_sum, Kahan-compensated in row order, skipping
//     NaN and resetting a compensation that is not finite (GH#53606).
type weightRows struct {
	objects bool
	group   []int // per record, in row order
	weight  []float64
}

func (r *weightRows) add(group int, w float64) {
	r.group = append(r.group, group)
	r.weight = append(r.weight, w)
}

// sums returns the n groups' sums.
func (r *weightRows) sums(n int) []float64 {
	out := make([]float64, n)
	if r.objects {
		for k, i := range r.group {
			if w := r.weight[k]; !math.IsNaN(w) {
				out[i] += w
			}
		}
		return out
	}
	if r.reduceat() {
		for k := 0; k < len(r.group); {
			end := k + 1
			for end < len(r.group) && r.group[end] == r.group[k] {
				end++
			}
			out[r.group[k]] = r.weight[k] + pairwiseSum(r.weight[k+1:end])
			k = end
		}
		return out
	}
	comp := make([]float64, n)
	for k, i := range r.group {
		w := r.weight[k]
		if math.IsNaN(w) {
			continue
		}
		y := w - comp[i]
		t := out[i] + y
		comp[i] = t - out[i] - y
		if math.IsInf(comp[i], 0) || math.IsNaN(comp[i]) {
			comp[i] = 0
		}
		out[i] = t
	}
	return out
}

// reduceat says whether pandas takes numpy's path: the group ids are
// monotonic (each pair's records consecutive) and no weight is NaN.
func (r *weightRows) reduceat() bool {
	for k, i := range r.group {
		if k > 0 && i < r.group[k-1] || math.IsNaN(r.weight[k]) {
			return false
		}
	}
	return true
}

// pairwiseSum is numpy's pairwise summation of float64
// (DOUBLE_pairwise_sum, numpy/_core/src/umath/loops_utils.h.src): a plain
// loop from -0.0 below 8 values, eight running sums up to 128, halves
// (cut at a multiple of 8) above.
func pairwiseSum(a []float64) float64 {
	n := len(a)
	switch {
	case n < 8:
		s := math.Copysign(0, -1)
		for _, v := range a {
			s += v
		}
		return s
	case n <= 128:
		var r [8]float64
		copy(r[:], a)
		i := 8
		for ; i < n-n%8; i += 8 {
			for j := range r {
				r[j] += a[i+j]
			}
		}
		s := ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
		for ; i < n; i++ {
			s += a[i]
		}
		return s
	}
	n2 := n / 2
	n2 -= n2 % 8
	return pairwiseSum(a[:n2]) + pairwiseSum(a[n2:])
}
