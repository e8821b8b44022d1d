package communities

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/leiden"
)

// Options tune Build. The zero value is ready to use.
type Options struct {
	// Period fills the period column, which GraphRAG sets to the UTC date
	// of the run (YYYY-MM-DD) for incremental updates; "" means today's
	// UTC date.
	Period string
}

// Build returns GraphRAG 3.3.0's communities table (create_communities)
// for a clustering of the relationship graph g: rows are the (node,
// community, level, parent) rows of a leiden.Hierarchy of g
// (Hierarchy.Rows), entities and rels the final entities and
// relationships tables (graphbuild.Finalize's, or a dataset's). Every row
// must name a node of g, and community numbers must be unique across
// levels, as Hierarchical numbers them.
//
// As GraphRAG does it:
//
//   - the rows are grouped as cluster_graph groups graspologic's output:
//     per level, a node keeps its first position and its last community;
//     a community's parent is the last one given for it;
//   - EntityIDs are the ids of the entities whose title is a member's
//     name, in member order (a name no entity has is left out; where two
//     entities share a title, the last one's id);
//   - RelationshipIDs and TextUnitIDs are those of the relationships
//     whose source and target are both members of the community at its
//     level, deduplicated and sorted (titles are compared as written:
//     with GraphRAG's use_lcc the graph's names are upper-cased, so a
//     relationship whose titles are not fails to match, in GraphRAG too);
//   - a community without such a relationship or without an entity id is
//     dropped (a lone member without a self-loop, or members no entity is
//     titled by);
//   - rows are ordered by level, then community number; Children are the
//     kept communities whose parent it is, ascending; Title is
//     "Community N", HumanReadableID the number N, Size len(EntityIDs).
//
// GraphRAG's ids are random (uuid4); ID here is CommunityID of the number
// and the entity ids, so the same graph clustered with the same seed
// gets the same ids. Where GraphRAG fails (no community keeps any
// relationship: pandas cannot concatenate nothing) Build returns no rows;
// a relationship without text units adds none (GraphRAG adds a NaN: a
// community whose relationships have none gets [NaN], and one where
// others have some fails with a TypeError sorting them).
func Build(entities []graphrag.Entity, rels []graphrag.Relationship, g *leiden.Graph, rows []leiden.Row, opts Options) []graphrag.Community {
	period := opts.Period
	if period == "" {
		period = time.Now().UTC().Format(time.DateOnly)
	}
	levels, parent := group(g, rows)

	entityID := make(map[string]string, len(entities))
	for _, e := range entities {
		entityID[e.Title] = e.ID
	}
	// members holds each community's entity ids, keyed by number across
	// levels as GraphRAG's groupby("community") keys them.
	members := make(map[int][]string)
	for _, lv := range levels {
		for _, c := range lv.clusters {
			for _, title := range c.titles {
				if id, ok := entityID[title]; ok {
					members[c.id] = append(members[c.id], id)
				}
			}
		}
	}

	var out []graphrag.Community
	for _, lv := range levels {
		intra := intraCommunity(rels, lv.community)
		ids := slices.Sorted(maps.Keys(intra))
		for _, id := range ids {
			eids, ok := members[id]
			if !ok {
				continue
			}
			in := intra[id]
			n := strconv.Itoa(id)
			out = append(out, graphrag.Community{
				ID:              CommunityID(n, eids),
				HumanReadableID: n,
				Community:       n,
				Level:           int64(lv.level),
				Parent:          parentText(parent[id]),
				Title:           "Community " + n,
				EntityIDs:       eids,
				RelationshipIDs: sortedSet(in.relationships),
				TextUnitIDs:     sortedSet(in.textUnits),
				Period:          period,
				Size:            int64(len(eids)),
				HasSize:         true,
			})
		}
	}
	// Children in row order: ascending, as all of a parent's children
	// are on the next level.
	index := make(map[string]int, len(out))
	for i, c := range out {
		index[c.Community] = i
	}
	for _, c := range out {
		if i, ok := index[c.Parent]; ok {
			out[i].Children = append(out[i].Children, c.Community)
		}
	}
	return out
}

// level is one level of a clustering as cluster_graph hands it over.
type level struct {
	level     int
	community map[string]int // member name -> community number
	clusters  []cluster      // in order of their first member
}

type cluster struct {
	id     int
	titles []string
}

// group does what cluster_graph does with graspologic's rows: a dict per
// level from node to community (insertion order, last value wins) and a
// dict from community to parent (last value wins), then per level, in
// level order, the members of each community in dict order.
func group(g *leiden.Graph, rows []leiden.Row) ([]level, map[int]int) {
	byLevel := make(map[int]*level)
	order := make(map[int][]string) // per level: names in first-seen order
	parent := make(map[int]int)
	for _, r := range rows {
		lv, ok := byLevel[r.Level]
		if !ok {
			lv = &level{level: r.Level, community: make(map[string]int)}
			byLevel[r.Level] = lv
		}
		name := g.Name(r.Node)
		if _, seen := lv.community[name]; !seen {
			order[r.Level] = append(order[r.Level], name)
		}
		lv.community[name] = r.Cluster
		parent[r.Cluster] = r.Parent
	}
	levels := make([]level, 0, len(byLevel))
	for _, l := range slices.Sorted(maps.Keys(byLevel)) {
		lv := byLevel[l]
		pos := make(map[int]int)
		for _, name := range order[l] {
			id := lv.community[name]
			i, ok := pos[id]
			if !ok {
				i = len(lv.clusters)
				pos[id] = i
				lv.clusters = append(lv.clusters, cluster{id: id})
			}
			lv.clusters[i].titles = append(lv.clusters[i].titles, name)
		}
		levels = append(levels, *lv)
	}
	return levels, parent
}

type intraRels struct {
	relationships []string
	textUnits     []string
}

// intraCommunity gathers, per community of one level, the relationships
// whose two ends are members of it.
func intraCommunity(rels []graphrag.Relationship, community map[string]int) map[int]*intraRels {
	out := make(map[int]*intraRels)
	for _, r := range rels {
		cs, ok := community[r.Source]
		if !ok {
			continue
		}
		if ct, ok := community[r.Target]; !ok || ct != cs {
			continue
		}
		in := out[cs]
		if in == nil {
			in = &intraRels{}
			out[cs] = in
		}
		in.relationships = append(in.relationships, r.ID)
		in.textUnits = append(in.textUnits, r.TextUnitIDs...)
	}
	return out
}

// sortedSet is Python's sorted(set(x)): byte order of UTF-8 is code point
// order.
func sortedSet(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}

// parentText is graphrag.Community's Parent: "" for a root (-1).
func parentText(p int) string {
	if p < 0 {
		return ""
	}
	return strconv.Itoa(p)
}

// idNamespace is internal/graphbuild's UUID namespace for kgrag's ids:
// uuid5(NAMESPACE_URL, "https://github.com/kgrag/kgrag/graphbuild").
const idNamespace = "\x07\x89\xe9\xf7\x09\x1e\x51\xf2\x81\x3b\x9a\x5b\x19\x0f\x25\xde"

// CommunityID is the id of community number community whose entities are
// entityIDs (in row order): the name-based UUID (version 5, SHA-1) of
// "community\x00" + community + "\x00" + the entity ids joined by "\x00"
// in kgrag's namespace (graphbuild's), written as GraphRAG writes its
// uuid4 ids. Python's uuid.uuid5(ns, that name) gives the same. The
// members are part of the name so that a community number that comes to
// hold other entities (another graph or seed) does not keep its id.
func CommunityID(community string, entityIDs []string) string {
	name := "community\x00" + community + "\x00" + strings.Join(entityIDs, "\x00")
	return uuid.NewSHA1(uuid.UUID([]byte(idNamespace)), []byte(name)).String()
}

// Carry renumbers the communities of rows (a leiden.Hierarchy of g) so
// that those that persist from prev, the communities of an earlier output
// whose entities titleOf names, keep their numbers, and so their ids: a
// new community takes the number of the earlier one at its level with
// which it shares the most members, when they share at least half of
// their members together (Jaccard similarity >= 0.5), each earlier
// community given at most once, best matches first. The others are
// numbered after the largest earlier number, in their order. Parents are
// renumbered with them.
func Carry(rows []leiden.Row, g *leiden.Graph, prev []graphrag.Community, titleOf map[string]string) []leiden.Row {
	type key struct{ level, id int }
	members := map[key]map[string]bool{}
	for _, r := range rows {
		k := key{r.Level, r.Cluster}
		if members[k] == nil {
			members[k] = map[string]bool{}
		}
		members[k][g.Name(r.Node)] = true
	}
	old := map[key]map[string]bool{}
	next := 0
	for _, c := range prev {
		n, err := strconv.Atoi(c.Community)
		if err != nil {
			continue
		}
		next = max(next, n+1)
		set := map[string]bool{}
		for _, id := range c.EntityIDs {
			if t, ok := titleOf[id]; ok {
				set[leiden.NormaliseTitle(t)] = true
			}
		}
		old[key{int(c.Level), n}] = set
	}
	type match struct {
		j        float64
		new, old key
	}
	// The earlier communities each member name was in, per level, so
	// that only communities that share a member are compared.
	type at struct {
		level int
		name  string
	}
	oldOf := map[at][]key{}
	for ok, om := range old {
		for m := range om {
			oldOf[at{ok.level, m}] = append(oldOf[at{ok.level, m}], ok)
		}
	}
	var ms []match
	for nk, nm := range members {
		both := map[key]int{}
		for m := range nm {
			for _, ok := range oldOf[at{nk.level, m}] {
				both[ok]++
			}
		}
		for ok, b := range both {
			if j := float64(b) / float64(len(nm)+len(old[ok])-b); j >= 0.5 {
				ms = append(ms, match{j, nk, ok})
			}
		}
	}
	slices.SortFunc(ms, func(a, b match) int {
		switch {
		case a.j != b.j:
			if a.j > b.j {
				return -1
			}
			return 1
		case a.new.id != b.new.id:
			return a.new.id - b.new.id
		}
		return a.old.id - b.old.id
	})
	number := map[int]int{} // new cluster -> carried number
	taken := map[int]bool{}
	for _, m := range ms {
		if _, done := number[m.new.id]; done || taken[m.old.id] {
			continue
		}
		number[m.new.id], taken[m.old.id] = m.old.id, true
	}
	var fresh []int
	for k := range members {
		if _, ok := number[k.id]; !ok {
			fresh = append(fresh, k.id)
		}
	}
	slices.Sort(fresh)
	for _, id := range fresh {
		number[id] = next
		next++
	}
	out := make([]leiden.Row, len(rows))
	for i, r := range rows {
		r.Cluster = number[r.Cluster]
		if r.Parent >= 0 {
			r.Parent = number[r.Parent]
		}
		out[i] = r
	}
	return out
}
