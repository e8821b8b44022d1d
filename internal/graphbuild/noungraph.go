package graphbuild

import (
	"fmt"
	"math"
	"slices"
)

// NounPhraseType is the type of every entity of a noun graph, as GraphRAG
// writes it.
const NounPhraseType = "NOUN PHRASE"

// NounPhrases are the distinct noun phrases found in one text unit.
type NounPhrases struct {
	TextUnitID string
	Phrases    []string
}

// NounGraph is GraphRAG 3.3.0's build_noun_graph: every phrase is an
// entity (type NounPhraseType, no description) whose frequency is the
// number of text units it is found in, and every two phrases found in
// the same text unit are related, source before target in byte order,
// weighing the number of text units they share. With pmi the weights
// are then GraphRAG's calculate_pmi_edge_weights instead: p(x,y) *
// log2(p(x,y) / (p(x) p(y))), where p(x,y) is the pair's count over
// the sum of all counts and p(x) a phrase's frequency over the sum of
// all frequencies.
//
// Entities come in order of first appearance, relationships by their
// ends; text unit ids are in the order of units. A unit id given twice
// counts once.
func NounGraph(units []NounPhrases, pmi bool) *Graph {
	g := &Graph{}
	at := map[string]int{} // title -> index in g.Entities
	type pair struct{ a, b string }
	edges := map[pair][]string{}
	seenUnit := map[string]bool{}
	for _, u := range units {
		if seenUnit[u.TextUnitID] {
			continue
		}
		seenUnit[u.TextUnitID] = true
		titles := slices.Clone(u.Phrases)
		slices.Sort(titles)
		titles = slices.Compact(titles)
		for _, t := range titles {
			i, ok := at[t]
			if !ok {
				i = len(g.Entities)
				at[t] = i
				g.Entities = append(g.Entities, MergedEntity{Title: t, Type: NounPhraseType})
			}
			g.Entities[i].TextUnitIDs = append(g.Entities[i].TextUnitIDs, u.TextUnitID)
			g.Entities[i].Frequency++
		}
		for i, a := range titles {
			for _, b := range titles[i+1:] {
				edges[pair{a, b}] = append(edges[pair{a, b}], u.TextUnitID)
			}
		}
	}
	for p, ids := range edges {
		g.Relationships = append(g.Relationships, MergedRelationship{Source: p.a, Target: p.b,
			TextUnitIDs: ids, Weight: float64(len(ids))})
	}
	slices.SortFunc(g.Relationships, func(x, y MergedRelationship) int {
		if x.Source != y.Source {
			return compareStrings(x.Source, y.Source)
		}
		return compareStrings(x.Target, y.Target)
	})
	if pmi {
		pmiWeights(g)
	}
	return g
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// pmiWeights is calculate_pmi_edge_weights, in its order of operations.
func pmiWeights(g *Graph) {
	var totalWeight, totalFreq float64
	for _, r := range g.Relationships {
		totalWeight += r.Weight
	}
	freq := make(map[string]float64, len(g.Entities))
	for _, e := range g.Entities {
		totalFreq += float64(e.Frequency)
	}
	for _, e := range g.Entities {
		freq[e.Title] = float64(e.Frequency) / totalFreq
	}
	for i := range g.Relationships {
		r := &g.Relationships[i]
		p := r.Weight / totalWeight
		r.Weight = p * math.Log2(p/(freq[r.Source]*freq[r.Target]))
	}
}

// PruneOptions are GraphRAG's prune_graph settings. Start from
// DefaultPruneOptions; the zero value prunes nothing but isolated
// entities' edges below the 0th percentile (none).
type PruneOptions struct {
	// MinNodeFreq drops entities found in fewer text units.
	MinNodeFreq int
	// MaxNodeFreqStd, when set, drops entities whose frequency is more
	// than this many standard deviations above the mean.
	MaxNodeFreqStd *float64
	// MinNodeDegree drops entities with fewer relationships.
	MinNodeDegree int
	// MaxNodeDegreeStd, when set, drops entities whose degree is more than
	// this many standard deviations above the mean.
	MaxNodeDegreeStd *float64
	// MinEdgeWeightPct drops the relationships (between kept entities)
	// whose weight is below this percentile of their weights.
	MinEdgeWeightPct float64
	// RemoveEgoNodes drops the entity of highest degree.
	RemoveEgoNodes bool
}

// DefaultPruneOptions returns GraphRAG 3.3.0's prune_graph defaults.
func DefaultPruneOptions() PruneOptions {
	return PruneOptions{MinNodeFreq: 2, MinNodeDegree: 1, MinEdgeWeightPct: 40, RemoveEgoNodes: true}
}

// The names of the pruning presets (kgrag index --prune).
const (
	PruneGraphRAG = "graphrag"
	PruneLight    = "light"
)

// PrunePreset returns the pruning options of a preset:
//   - graphrag: GraphRAG's defaults (DefaultPruneOptions), made for long
//     texts, where a phrase found once is mostly noise;
//   - light: the most connected phrase and the weakest 40% of
//     relationships still go, but a phrase found in one text unit stays.
//     On short passages (an encyclopedia's paragraphs, a question set's
//     corpus) most names are found once, and GraphRAG's pruning drops
//     them: 9,166 of HotpotQA's 10,546 phrases, the passages' titles
//     among them.
//
// There is no preset that keeps every relationship: co-occurrence weights
// (PMI) below the cut can be negative, and Leiden takes none.
func PrunePreset(name string) (PruneOptions, error) {
	switch name {
	case PruneGraphRAG:
		return DefaultPruneOptions(), nil
	case PruneLight:
		return PruneOptions{MinNodeFreq: 1, MinEdgeWeightPct: 40, RemoveEgoNodes: true}, nil
	}
	return PruneOptions{}, fmt.Errorf("graphbuild: no pruning preset %q: want %s or %s", name, PruneGraphRAG, PruneLight)
}

// PruneStats say what Prune removed.
type PruneStats struct {
	Entities, Relationships int
	// Ego is the entity of highest degree that RemoveEgoNodes dropped.
	Ego string
}

// Prune removes entities and relationships from g as GraphRAG 3.3.0's
// prune_graph does: degrees are counted over all relationships
// (graphrag.Degrees' rule); the ego node (highest degree, the first
// title in byte order among equals, as GraphRAG's sorted degree table
// gives it) and the entities below MinNodeDegree or above the degree
// bound go first; then, among the rest, those below MinNodeFreq or above
// the frequency bound; the relationships between kept entities stay when
// their weight is at least the MinEdgeWeightPct percentile of theirs
// (numpy's linear percentile). An entity whose relationships all went
// stays. GraphRAG's lcc_only (off by default) is not offered.
func Prune(g *Graph, o PruneOptions) PruneStats {
	degree := map[string]int{}
	type pair struct{ a, b string }
	seen := map[pair]bool{}
	for _, r := range g.Relationships {
		a, b := r.Source, r.Target
		if b < a {
			a, b = b, a
		}
		if seen[pair{a, b}] {
			continue
		}
		seen[pair{a, b}] = true
		degree[a]++
		degree[b]++
	}
	for _, e := range g.Entities {
		if _, ok := degree[e.Title]; !ok {
			degree[e.Title] = 0
		}
	}
	remove := map[string]bool{}
	var st PruneStats
	if o.RemoveEgoNodes && len(degree) > 0 {
		best, bestDeg := "", -1
		for t, d := range degree {
			if d > bestDeg || d == bestDeg && t < best {
				best, bestDeg = t, d
			}
		}
		remove[best] = true
		st.Ego = best
	}
	var degrees []float64
	for t, d := range degree {
		if d < o.MinNodeDegree {
			remove[t] = true
		}
		degrees = append(degrees, float64(d))
	}
	if o.MaxNodeDegreeStd != nil {
		upper := upperBound(degrees, *o.MaxNodeDegreeStd)
		for t, d := range degree {
			if float64(d) > upper {
				remove[t] = true
			}
		}
	}
	var remaining []MergedEntity
	for _, e := range g.Entities {
		if !remove[e.Title] {
			remaining = append(remaining, e)
		}
	}
	var kept []MergedEntity
	var freqs []float64
	for _, e := range remaining {
		if e.Frequency < o.MinNodeFreq {
			remove[e.Title] = true
			continue
		}
		kept = append(kept, e)
		freqs = append(freqs, float64(e.Frequency))
	}
	if o.MaxNodeFreqStd != nil && len(kept) > 0 {
		upper := upperBound(freqs, *o.MaxNodeFreqStd)
		k := kept[:0]
		for _, e := range kept {
			if float64(e.Frequency) > upper {
				remove[e.Title] = true
				continue
			}
			k = append(k, e)
		}
		kept = k
	}
	var rels []MergedRelationship
	for _, r := range g.Relationships {
		if !remove[r.Source] && !remove[r.Target] {
			rels = append(rels, r)
		}
	}
	if len(rels) > 0 && o.MinEdgeWeightPct > 0 {
		w := make([]float64, len(rels))
		for i, r := range rels {
			w[i] = r.Weight
		}
		min := percentile(w, o.MinEdgeWeightPct)
		k := rels[:0]
		for _, r := range rels {
			if r.Weight >= min {
				k = append(k, r)
			}
		}
		rels = k
	}
	st.Entities = len(g.Entities) - len(kept)
	st.Relationships = len(g.Relationships) - len(rels)
	g.Entities, g.Relationships = kept, rels
	return st
}

// upperBound is mean + k standard deviations (population, numpy's std).
func upperBound(v []float64, k float64) float64 {
	var sum float64
	for _, x := range v {
		sum += x
	}
	mean := sum / float64(len(v))
	var sq float64
	for _, x := range v {
		sq += (x - mean) * (x - mean)
	}
	return mean + k*math.Sqrt(sq/float64(len(v)))
}

// percentile is numpy's percentile with the default linear method, in
// its floating-point steps: the virtual index (n-1)*q, q = pct/100, and
// _lerp, which interpolates from the upper value when the fraction is at
// least 0.5.
func percentile(v []float64, pct float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	q := pct / 100
	vi := float64(n-1) * q
	prev := math.Floor(vi)
	gamma := vi - prev
	lo := int(prev)
	hi := lo + 1
	if vi >= float64(n-1) {
		return s[n-1]
	}
	a, b := s[lo], s[hi]
	d := b - a
	if gamma >= 0.5 {
		return b - d*(1-gamma)
	}
	return a + d*gamma
}
