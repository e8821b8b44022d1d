package leiden

import (
	"cmp"
	"html"
	"slices"
	"strings"
	"unicode"
)

// GraphRAGEdges turns relationships (source and target titles, weight; in
// table order) into the edge list GraphRAG 3.x's cluster_graph hands to
// hierarchical_leiden, so that a Graph built from it has GraphRAG's nodes
// and edges:
//
//  1. each pair is put in order (lesser title first) and only the last row
//     of each pair is kept (networkx keeps the last attributes);
//  2. with useLCC (GraphRAG's default), stable_lcc: titles are normalised
//     (HTML entities unescaped, upper-cased, surrounding white space
//     removed), only the largest connected component is kept (among equal
//     sizes the one whose first title comes first, sources before
//     targets), pairs are put in order again and the first row of each is
//     kept;
//  3. the edges are sorted by (source, target).
//
// Upper-casing is Go's simple per-rune mapping; Python's str.upper also
// applies multi-rune mappings (ß becomes SS), so titles holding such
// letters may differ from GraphRAG's.
func GraphRAGEdges(rels []Edge, useLCC bool) []Edge {
	edges := lastPerPair(rels)
	if useLCC {
		for i := range edges {
			edges[i].Source = NormaliseTitle(edges[i].Source)
			edges[i].Target = NormaliseTitle(edges[i].Target)
		}
		edges = largestComponent(edges)
		for i := range edges {
			if edges[i].Source > edges[i].Target {
				edges[i].Source, edges[i].Target = edges[i].Target, edges[i].Source
			}
		}
		seen := make(map[[2]string]bool, len(edges))
		edges = slices.DeleteFunc(edges, func(e Edge) bool {
			k := [2]string{e.Source, e.Target}
			dup := seen[k]
			seen[k] = true
			return dup
		})
	}
	slices.SortStableFunc(edges, func(a, b Edge) int {
		return cmp.Or(strings.Compare(a.Source, b.Source), strings.Compare(a.Target, b.Target))
	})
	return edges
}

// lastPerPair orders each edge's ends and keeps the last edge of each
// unordered pair, at that last edge's position.
func lastPerPair(rels []Edge) []Edge {
	last := make(map[[2]string]int, len(rels))
	ordered := make([]Edge, len(rels))
	for i, e := range rels {
		if e.Source > e.Target {
			e.Source, e.Target = e.Target, e.Source
		}
		ordered[i] = e
		last[[2]string{e.Source, e.Target}] = i
	}
	out := make([]Edge, 0, len(last))
	for i, e := range ordered {
		if last[[2]string{e.Source, e.Target}] == i {
			out = append(out, e)
		}
	}
	return out
}

// NormaliseTitle is stable_lcc's _normalize_name: html.unescape, upper,
// strip (Python's white space includes the separators U+001C-U+001F).
func NormaliseTitle(s string) string {
	return strings.TrimFunc(strings.ToUpper(html.UnescapeString(s)), func(r rune) bool {
		return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f
	})
}

// largestComponent keeps the edges of the largest connected component.
// Components are ranked as GraphRAG's connected_components ranks them:
// by size, ties going to the one seen first when walking all sources,
// then all targets.
func largestComponent(edges []Edge) []Edge {
	id := make(map[string]int)
	var order []string
	add := func(s string) {
		if _, ok := id[s]; !ok {
			id[s] = len(order)
			order = append(order, s)
		}
	}
	for _, e := range edges {
		add(e.Source)
	}
	for _, e := range edges {
		add(e.Target)
	}
	parent := make([]int, len(order))
	for i := range parent {
		parent[i] = i
	}
	find := func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for _, e := range edges {
		if a, b := find(id[e.Source]), find(id[e.Target]); a != b {
			parent[a] = b
		}
	}
	size := make([]int, len(order))
	best := -1
	for i := range order {
		size[find(i)]++
	}
	for i := range order { // first-seen order breaks ties
		if r := find(i); best < 0 || size[r] > size[best] {
			best = r
		}
	}
	return slices.DeleteFunc(edges, func(e Edge) bool { return find(id[e.Source]) != best })
}
