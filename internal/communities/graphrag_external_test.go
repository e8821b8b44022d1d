package communities_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/communities"
	"github.com/kgrag/kgrag/internal/leiden"
	"github.com/kgrag/kgrag/internal/test"
)

// This file runs GraphRAG 3.3.0's own create_communities (PyPI graphrag in
// the venv of scripts/graphrag-py.sh) on the clustering Build is given:
// graspologic's hierarchical_leiden, which cluster_graph calls, is
// replaced by a function returning kgrag's leiden rows, so both sides
// group, join and number the same clustering. Ids are compared too: the
// driver replaces GraphRAG's uuid4 ids by the uuid5 CommunityID defines.

// graphragCommunities reads JSON lines on stdin and answers one per line.
// A job {"entities": [{"id", "title"}], "relationships": [{"id", "source",
// "target", "weight", "text_unit_ids"}], "rows": [{"node", "cluster",
// "level", "parent", "final"}], "max_cluster_size", "use_lcc", "seed"}
// runs create_communities over in-memory tables and answers the rows it
// wrote ("communities", with "uuid4": whether GraphRAG's id was one) and
// the edge list cluster_graph handed to hierarchical_leiden ("edges").
// A job {"read_dir": DIR} reads DIR's communities and entities parquet
// files with pandas and GraphRAG's query-side read_indexer_communities
// (every community given a report, which it requires; it does not read
// entity_ids and relationship_ids) and read_indexer_entities (which reads
// entity_ids), and answers what they made of them ("read").
const graphragCommunities = `
import asyncio, json, logging, os, sys, types, uuid
logging.disable(logging.WARNING)
import pandas as pd
from graphrag.index.operations import cluster_graph as cg
from graphrag.index.workflows import create_communities as cc
from graphrag.query.indexer_adapters import read_indexer_communities, read_indexer_entities

# uuid5(NAMESPACE_URL, "https://github.com/kgrag/kgrag/graphbuild")
KGRAG_NS = uuid.UUID("0789e9f7-091e-51f2-813b-9a5b190f25de")

class Table(list):
    """Stands in for a graphrag_storage Table: yields its rows, keeps those written."""
    async def __aiter__(self):
        for r in self:
            yield dict(r)
    async def write(self, row):
        self.append(row)

async def build(job):
    seen = {}
    def fake_leiden(edges, max_cluster_size, random_seed):
        seen["edges"] = [list(e) for e in edges]
        return [types.SimpleNamespace(node=r["node"], cluster=r["cluster"], level=r["level"],
                                      parent_cluster=None if r["parent"] < 0 else r["parent"],
                                      is_final_cluster=r["final"]) for r in job["rows"]]
    cg.hierarchical_leiden = fake_leiden
    rels = pd.DataFrame(job["relationships"], columns=["id", "source", "target", "weight", "text_unit_ids"])
    out = Table()
    await cc.create_communities(out, Table(job["entities"]), rels,
                                max_cluster_size=job["max_cluster_size"], use_lcc=job["use_lcc"], seed=job["seed"])
    rows = []
    for r in out:
        r = dict(r)
        r["uuid4"] = uuid.UUID(r["id"]).version == 4
        name = "community\x00" + str(r["community"]) + "\x00" + "\x00".join(r["entity_ids"])
        r["id"] = str(uuid.uuid5(KGRAG_NS, name))
        rows.append(r)
    return {"edges": seen["edges"], "communities": rows}

def read(d):
    comms = pd.read_parquet(os.path.join(d, "communities.parquet"))
    ents = pd.read_parquet(os.path.join(d, "entities.parquet"))
    cs = read_indexer_communities(comms, comms[["community"]])
    es = read_indexer_entities(ents, comms, None)
    return {
        "communities": [{"id": c.id, "short_id": c.short_id, "title": c.title, "level": c.level,
                         "parent": c.parent, "children": [str(x) for x in c.children],
                         "text_unit_ids": c.text_unit_ids} for c in cs],
        "entities": [{"id": e.id, "community_ids": sorted(e.community_ids or [], key=int)} for e in es],
    }

for line in sys.stdin:
    job = json.loads(line)
    res = {"read": read(job["read_dir"])} if "read_dir" in job else asyncio.run(build(job))
    sys.stdout.write(json.dumps(res, default=lambda v: v.tolist()) + "\n")
    sys.stdout.flush()
`

type (
	pyJob struct {
		Entities       []pyEntity       `json:"entities,omitempty"`
		Relationships  []pyRelationship `json:"relationships,omitempty"`
		Rows           []pyRow          `json:"rows,omitempty"`
		MaxClusterSize int              `json:"max_cluster_size,omitempty"`
		UseLCC         bool             `json:"use_lcc"`
		Seed           uint64           `json:"seed,omitempty"`
		ReadDir        string           `json:"read_dir,omitempty"`
	}
	pyEntity struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	pyRelationship struct {
		ID          string   `json:"id"`
		Source      string   `json:"source"`
		Target      string   `json:"target"`
		Weight      float64  `json:"weight"`
		TextUnitIDs []string `json:"text_unit_ids"`
	}
	// pyRow is a graspologic HierarchicalCluster.
	pyRow struct {
		Node    string `json:"node"`
		Cluster int    `json:"cluster"`
		Level   int    `json:"level"`
		Parent  int    `json:"parent"`
		Final   bool   `json:"final"`
	}
	pyOut struct {
		Edges       [][3]any      `json:"edges"`
		Communities []pyCommunity `json:"communities"`
		Read        *pyRead       `json:"read"`
	}
	// pyCommunity is a row of GraphRAG's communities table.
	pyCommunity struct {
		ID              string   `json:"id"`
		HumanReadableID int64    `json:"human_readable_id"`
		Community       int64    `json:"community"`
		Level           int64    `json:"level"`
		Parent          int64    `json:"parent"`
		Children        []int64  `json:"children"`
		Title           string   `json:"title"`
		EntityIDs       []string `json:"entity_ids"`
		RelationshipIDs []string `json:"relationship_ids"`
		TextUnitIDs     []string `json:"text_unit_ids"`
		Period          string   `json:"period"`
		Size            int64    `json:"size"`
		UUID4           bool     `json:"uuid4,omitempty"`
	}
	// pyRead is what GraphRAG's query-side readers made of a table.
	pyRead struct {
		Communities []struct {
			ID          string   `json:"id"`
			ShortID     string   `json:"short_id"`
			Title       string   `json:"title"`
			Level       string   `json:"level"`
			Parent      string   `json:"parent"`
			Children    []string `json:"children"`
			TextUnitIDs []string `json:"text_unit_ids"`
		} `json:"communities"`
		Entities []struct {
			ID           string   `json:"id"`
			CommunityIDs []string `json:"community_ids"`
		} `json:"entities"`
	}
)

// runGraphRAG answers jobs with GraphRAG's code, in one interpreter.
func runGraphRAG(t *testing.T, py string, jobs []pyJob) []pyOut {
	t.Helper()
	return test.PythonJSONL[pyOut](t, py, []string{"-c", graphragCommunities}, jobs)
}

// clusterCase is a graph to cluster and build communities for.
type clusterCase struct {
	name     string
	entities []graphrag.Entity
	rels     []graphrag.Relationship
	useLCC   bool
	maxSize  int // leiden.HierOptions.MaxClusterSize; 0: GraphRAG's 10
	// rows gives the clustering by hand; nil: leiden.Hierarchical's.
	rows func(g *leiden.Graph) []leiden.Row
	// check asserts what the case is there for on Build's output.
	check func(t *testing.T, got []graphrag.Community)
}

const seed = 0xDEADBEEF // GraphRAG's default cluster_graph seed

// cluster builds c's graph as GraphRAG's cluster_graph does and clusters it.
func (c clusterCase) cluster(t *testing.T) (*leiden.Graph, []leiden.Row) {
	t.Helper()
	g, err := leiden.NewGraph(leiden.GraphRAGEdges(relEdges(c.rels), c.useLCC))
	if err != nil {
		t.Fatal(err)
	}
	if c.rows != nil {
		return g, c.rows(g)
	}
	h, err := leiden.Hierarchical(context.Background(), g, leiden.HierOptions{MaxClusterSize: c.maxSize, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return g, h.Rows()
}

func (c clusterCase) job(g *leiden.Graph, rows []leiden.Row) pyJob {
	j := pyJob{MaxClusterSize: c.maxSize, UseLCC: c.useLCC, Seed: seed,
		Entities: []pyEntity{}, Relationships: []pyRelationship{}, Rows: []pyRow{}}
	if j.MaxClusterSize == 0 {
		j.MaxClusterSize = leiden.DefaultMaxClusterSize
	}
	for _, e := range c.entities {
		j.Entities = append(j.Entities, pyEntity{e.ID, e.Title})
	}
	for _, r := range c.rels {
		j.Relationships = append(j.Relationships, pyRelationship{r.ID, r.Source, r.Target, weight(r), r.TextUnitIDs})
	}
	for _, r := range rows {
		j.Rows = append(j.Rows, pyRow{g.Name(r.Node), r.Cluster, r.Level, r.Parent, r.Final})
	}
	return j
}

// toPy writes Build's rows as GraphRAG's table holds them.
func toPy(t *testing.T, cs []graphrag.Community) []pyCommunity {
	t.Helper()
	num := func(s string) int64 {
		if s == "" {
			return -1
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	out := make([]pyCommunity, len(cs))
	for i, c := range cs {
		p := pyCommunity{ID: c.ID, HumanReadableID: num(c.HumanReadableID), Community: num(c.Community), Level: c.Level,
			Parent: num(c.Parent), Children: []int64{}, Title: c.Title, EntityIDs: c.EntityIDs,
			RelationshipIDs: c.RelationshipIDs, TextUnitIDs: c.TextUnitIDs, Period: c.Period, Size: c.Size}
		for _, ch := range c.Children {
			p.Children = append(p.Children, num(ch))
		}
		out[i] = p
	}
	return out
}

// sampleCase is a GraphRAG sample's entities and relationships.
func sampleCase(t *testing.T, sample string, maxSize int) clusterCase {
	t.Helper()
	ds, err := graphrag.Open(context.Background(), filepath.Join(test.GraphRAGSamples(t), sample))
	if err != nil {
		t.Fatal(err)
	}
	es := slices.DeleteFunc(slices.Clone(ds.Entities), func(e graphrag.Entity) bool { return e.Placeholder })
	name := sample
	if maxSize != 0 {
		name = fmt.Sprintf("%s max %d", sample, maxSize)
	}
	return clusterCase{name: name, entities: es, rels: ds.Relationships, useLCC: true, maxSize: maxSize,
		check: func(t *testing.T, got []graphrag.Community) {
			levels := map[int64]int{}
			for _, c := range got {
				levels[c.Level]++
			}
			if len(got) < 20 || len(levels) < 2 {
				t.Errorf("%d communities on %d levels; want a hierarchy (at least 20 on 2 levels)", len(got), len(levels))
			}
		}}
}

// writeSample builds the v3 sample's communities and writes the sample
// with them (no reports) as GraphRAG 3.x parquet into a new directory.
func writeSample(t *testing.T) (string, clusterCase, []graphrag.Community) {
	t.Helper()
	c := sampleCase(t, "v3", 0)
	g, rows := c.cluster(t)
	built := communities.Build(c.entities, c.rels, g, rows, communities.Options{})
	ds := &graphrag.Dataset{Entities: c.entities, Relationships: c.rels, Communities: built}
	dir := t.TempDir()
	if err := graphrag.Write3x(context.Background(), dir, ds); err != nil {
		t.Fatal(err)
	}
	return dir, c, built
}

// TestWrite3xOpen writes the v3 sample with kgrag's communities:
// graphrag.Open reads every field back and derives each entity's
// communities from them.
func TestWrite3xOpen(t *testing.T) {
	dir, _, built := writeSample(t)
	back, err := graphrag.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if back.Release != graphrag.Release3 {
		t.Errorf("Open: release %q; want %q", back.Release, graphrag.Release3)
	}
	if d := cmp.Diff(built, back.Communities, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(graphrag.Community{}, "Weight")); d != "" {
		t.Errorf("communities after Write3x and Open (-written +read):\n%s", d)
	}
	member := memberships(built)
	for _, e := range back.Entities {
		if !slices.Equal(e.Communities, member[e.ID]) {
			t.Errorf("Open: entity %s in communities %v; want %v", e.Title, e.Communities, member[e.ID])
		}
	}
}

// TestGraphRAG runs GraphRAG's code once for two checks:
//
//   - build: the communities of GraphRAG's v3 and v2.5.0 samples (default
//     and small maximum cluster sizes), of the hand-made graphs and of a
//     planted one, built both ways: every row alike, ids included;
//   - read: the v3 sample written with kgrag's communities is read by
//     GraphRAG's read_indexer_communities and read_indexer_entities.
func TestGraphRAG(t *testing.T) {
	py := test.GraphRAGPython(t)
	cases := append([]clusterCase{
		sampleCase(t, "v3", 0), sampleCase(t, "v2.5.0", 0), sampleCase(t, "v3", 4),
	}, handCases()...)
	period := "2026-01-09"
	var jobs []pyJob
	var built [][]graphrag.Community
	var edges [][]leiden.Edge
	for _, c := range cases {
		g, rows := c.cluster(t)
		jobs = append(jobs, c.job(g, rows))
		built = append(built, communities.Build(c.entities, c.rels, g, rows, communities.Options{Period: period}))
		edges = append(edges, leiden.GraphRAGEdges(relEdges(c.rels), c.useLCC))
	}
	dir, sample, written := writeSample(t)
	outs := runGraphRAG(t, py, append(jobs, pyJob{ReadDir: dir}))
	for i, c := range cases {
		t.Run("build/"+c.name, func(t *testing.T) {
			checkBuild(t, outs[i], edges[i], built[i], period)
			if c.check != nil {
				c.check(t, built[i])
			}
			levels := map[int64]int{}
			for _, c := range built[i] {
				levels[c.Level]++
			}
			t.Logf("%d entities, %d relationships, %d edges clustered: %d communities (per level %v)",
				len(c.entities), len(c.rels), len(edges[i]), len(built[i]), levels)
		})
	}
	t.Run("read", func(t *testing.T) { checkRead(t, outs[len(cases)].Read, sample.entities, written) })
}

// checkBuild compares GraphRAG's answer to a build job with kgrag's.
func checkBuild(t *testing.T, out pyOut, edges []leiden.Edge, built []graphrag.Community, period string) {
	t.Helper()
	// The clustering fed to GraphRAG is of the graph it would have
	// clustered.
	if len(out.Edges) != len(edges) {
		t.Fatalf("GraphRAG clusters %d edges; kgrag's graph has %d", len(out.Edges), len(edges))
	}
	for j, e := range out.Edges {
		if want := [3]any{edges[j].Source, edges[j].Target, edges[j].Weight}; e != want {
			t.Fatalf("edge %d: GraphRAG %v; kgrag %v", j, e, want)
		}
	}
	for j := range out.Communities {
		if !out.Communities[j].UUID4 {
			t.Fatalf("GraphRAG's community id %d is no uuid4: the driver did not see GraphRAG's ids", j)
		}
		out.Communities[j].UUID4 = false
		out.Communities[j].Period = period // GraphRAG's is today's date
	}
	if d := cmp.Diff(out.Communities, toPy(t, built), cmpopts.EquateEmpty()); d != "" {
		t.Errorf("communities (-GraphRAG +kgrag):\n%s", d)
	}
}

// checkRead compares what GraphRAG's readers made of the written tables
// with what was written.
func checkRead(t *testing.T, read *pyRead, entities []graphrag.Entity, built []graphrag.Community) {
	t.Helper()
	if len(read.Communities) != len(built) {
		t.Fatalf("read_indexer_communities read %d communities; want %d", len(read.Communities), len(built))
	}
	for i, got := range read.Communities {
		w := built[i]
		parent := w.Parent
		if parent == "" {
			parent = "-1"
		}
		if got.ID != w.ID || got.ShortID != w.Community || got.Title != w.Title || got.Level != strconv.FormatInt(w.Level, 10) ||
			got.Parent != parent || !equalEmpty(got.Children, w.Children) || !slices.Equal(got.TextUnitIDs, w.TextUnitIDs) {
			t.Errorf("read_indexer_communities row %d = %s %s level %s parent %s children %v; want %s %s level %d parent %s children %v",
				i, got.ID, got.Title, got.Level, got.Parent, got.Children, w.ID, w.Title, w.Level, parent, w.Children)
		}
	}
	if len(read.Entities) != len(entities) {
		t.Errorf("read_indexer_entities read %d entities; want %d", len(read.Entities), len(entities))
	}
	member := memberships(built)
	for _, e := range read.Entities {
		want := member[e.ID]
		if len(want) == 0 {
			want = []string{"-1"} // GraphRAG's "in no community"
		}
		if !slices.Equal(e.CommunityIDs, want) {
			t.Errorf("read_indexer_entities: entity %s in %v; want %v", e.ID, e.CommunityIDs, want)
		}
	}
}

// memberships lists, per entity id, the communities holding it, in
// community order.
func memberships(cs []graphrag.Community) map[string][]string {
	m := map[string][]string{}
	for _, c := range cs {
		for _, id := range c.EntityIDs {
			m[id] = append(m[id], c.Community)
		}
	}
	for _, v := range m {
		slices.SortFunc(v, func(a, b string) int { return atoi(a) - atoi(b) })
	}
	return m
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func equalEmpty(a, b []string) bool { return len(a) == 0 && len(b) == 0 || slices.Equal(a, b) }
