package sparqlq_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/loader"
	"github.com/kgrag/kgrag/ontology"
	"github.com/kgrag/kgrag/rdf"
	"github.com/kgrag/kgrag/sparqlq"
)

// Integration tests of the templates against real stores, started by
// scripts/services.sh (or by hand, e.g. scripts/oxigraph.sh start) and named
// by KGRAG_TEST_OXIGRAPH, KGRAG_TEST_FUSEKI and KGRAG_TEST_VIRTUOSO. A store
// whose variable is unset is skipped, or fails the run under
// KGRAG_TEST_DISALLOW_SKIP=1.

var realStores = []struct{ name, service string }{
	{"oxigraph", "OXIGRAPH"},
	{"fuseki", "FUSEKI"},
	{"virtuoso", "VIRTUOSO"},
}

// forEachStore runs f as a subtest per real store, with a client set up
// as the loader's profile for that store sets it up (Virtuoso: GET or form
// POST).
func forEachStore(t *testing.T, f func(t *testing.T, st *loader.SPARQLStore)) {
	for _, rs := range realStores {
		t.Run(rs.name, func(t *testing.T) {
			url := test.Service(t, rs.service)
			p, err := loader.ProfileFor(rs.name, url)
			if err != nil {
				t.Fatal(err)
			}
			st, err := loader.Open(p, loader.Options{})
			if err != nil {
				t.Fatal(err)
			}
			f(t, st)
		})
	}
}

// tempGraph returns a graph IRI unique to this run, dropped at cleanup.
func tempGraph(t *testing.T, st *loader.SPARQLStore, name string) string {
	t.Helper()
	g := fmt.Sprintf("http://kgrag.test/sparqlq/%x/%s", rand.Uint64(), name)
	t.Cleanup(func() {
		if err := st.Drop(context.Background(), g); err != nil {
			t.Errorf("drop %s: %v", g, err)
		}
	})
	return g
}

// insertTpl writes one entity with a relationship to a hub entity, a chunk
// and a community of its own: the same neighbourhood for every id, so that
// every id must find the same number of rows.
const insertTpl = `# param graph iri
# param e iri
# param id string
# param rel iri
# param relid string
# param chunk iri
# param chunkid string
# param comm iri
# param commid string
# param n integer
PREFIX gr: <http://ormynet.com/ns/msft-graphrag#>
INSERT DATA { GRAPH {{graph}} {
  {{e}} a gr:Entity ; gr:id {{id}} ; gr:title {{id}} ; gr:degree 1 ; gr:in_community {{comm}} .
  {{rel}} a gr:related_to ; gr:id {{relid}} ; gr:source {{e}} ; gr:target <urn:kgrag:test:hub> ;
    gr:weight 1.0 ; gr:rank 2 ; gr:description {{id}} .
  {{chunk}} a gr:Chunk ; gr:id {{chunkid}} ; gr:text {{id}} ; gr:n_tokens 5 ; gr:has_entity {{e}} .
  {{comm}} a gr:Community ; gr:id {{commid}} ; gr:community {{n}} ; gr:level 0 ; gr:weight 0.5 ;
    gr:rank 1.0 ; gr:title {{id}} ; gr:summary {{id}} ; gr:full_content {{id}} .
  <urn:kgrag:test:hub> a gr:Entity ; gr:id "hub" ; gr:title "HUB" .
} }
`

// counts is how many rows each retrieval returned for one id.
type counts struct {
	Entities, Inside, Outside, TextUnits, Communities int
}

func retrieveCounts(ctx context.Context, t *testing.T, c *sparqlq.Client, graph string, ids []string) (counts, []sparqlq.EntityRow) {
	t.Helper()
	var n counts
	ents, err := sparqlq.Entities(ctx, c, graph, ids)
	if err != nil {
		t.Fatalf("Entities(%q): %v", ids, err)
	}
	in, out, err := sparqlq.Relationships(ctx, c, graph, ids)
	if err != nil {
		t.Fatalf("Relationships(%q): %v", ids, err)
	}
	tus, err := sparqlq.TextUnits(ctx, c, graph, ids, 0)
	if err != nil {
		t.Fatalf("TextUnits(%q): %v", ids, err)
	}
	cs, err := sparqlq.Communities(ctx, c, graph, ids, 0, 0)
	if err != nil {
		t.Fatalf("Communities(%q): %v", ids, err)
	}
	n = counts{len(ents), len(in), len(out), len(tus), len(cs)}
	return n, ents
}

// TestInjection stores an entity whose gr:id is exactly each injection
// string, and checks that each retrieval finds it by that id and nothing
// else: as many rows as for a harmless id, none for an absent one.
func TestInjection(t *testing.T) {
	ins, err := sparqlq.ParseTemplate("insert", insertTpl)
	if err != nil {
		t.Fatal(err)
	}
	ids := append([]string{"harmless"}, injections...)
	forEachStore(t, func(t *testing.T, st *loader.SPARQLStore) {
		ctx := context.Background()
		c := st.Client()
		graph := tempGraph(t, st, "injection")
		for i, id := range ids {
			iri := func(kind string) sparqlq.Value { return sparqlq.IRIParam(fmt.Sprintf("urn:kgrag:test:%s%d", kind, i)) }
			u, err := ins.Bind(sparqlq.Params{
				"graph": sparqlq.IRIParam(graph), "e": iri("e"), "id": sparqlq.StringParam(id),
				"rel": iri("r"), "relid": sparqlq.StringParam("r" + strconv.Itoa(i)),
				"chunk": iri("c"), "chunkid": sparqlq.StringParam("c" + strconv.Itoa(i)),
				"comm": iri("m"), "commid": sparqlq.StringParam("m" + strconv.Itoa(i)), "n": sparqlq.IntParam(int64(i)),
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Update(ctx, u); err != nil {
				t.Fatalf("insert %q: %v", id, err)
			}
		}
		before, err := st.Count(ctx, graph)
		if err != nil {
			t.Fatal(err)
		}
		want := counts{Entities: 1, Outside: 1, TextUnits: 1, Communities: 1}
		for _, id := range ids {
			got, ents := retrieveCounts(ctx, t, c, graph, []string{id})
			if got != want {
				t.Errorf("id %q: rows %+v; want %+v", id, got, want)
			}
			if len(ents) == 1 && ents[0].ID != strings.ToValidUTF8(id, "\uFFFD") {
				t.Errorf("id %q: found entity %q", id, ents[0].ID)
			}
			if got, _ := retrieveCounts(ctx, t, c, graph, []string{id + " absent"}); got != (counts{}) {
				t.Errorf("id %q: absent id gives rows %+v", id+" absent", got)
			}
		}
		all, ents := retrieveCounts(ctx, t, c, graph, ids)
		n := len(ids)
		if all != (counts{Entities: n, Outside: n, TextUnits: n, Communities: n}) {
			t.Errorf("all ids at once: rows %+v; want %d of each (none inside)", all, n)
		}
		if len(ents) == n {
			got := map[string]bool{}
			for _, e := range ents {
				got[e.ID] = true
			}
			for _, id := range ids {
				if !got[strings.ToValidUTF8(id, "\uFFFD")] {
					t.Errorf("all ids at once: %q missing", id)
				}
			}
		}
		// The hub is the other end of every relationship: all inside now.
		in, out, err := sparqlq.Relationships(ctx, c, graph, append([]string{"hub"}, ids...))
		if err != nil || len(in) != n || len(out) != 0 {
			t.Errorf("with the hub: %d inside, %d outside, %v; want %d, 0", len(in), len(out), err, n)
		}
		reps, err := sparqlq.CommunityReports(ctx, c, graph, 0, 0)
		if err != nil || len(reps) != n {
			t.Errorf("CommunityReports = %d rows, %v; want %d", len(reps), err, n)
		}
		after, err := st.Count(ctx, graph)
		if err != nil || after != before {
			t.Errorf("graph holds %d triples after the queries, %v; want %d", after, err, before)
		}
	})
}

// retrievalIDs are ten entities of the v3 sample: the four of highest
// degree, then lower ones down to degree 0.
var retrievalIDs = []string{
	"a02f511b-716c-4ca1-b1e9-f36aaea71659", // SCROOGE 148
	"2d479907-4039-49ab-9fc8-a7397653c2ea", // EBENEZER SCROOGE 75
	"54f9a066-50ac-4da8-a262-4e68f716e4f8", // BOB CRATCHIT 38
	"f9011ff1-45bb-4f1c-8724-36be0dad1385", // CHRISTMAS 31
	"a0d9230a-6f74-4351-ba60-b97de5e6b8f2", // PROJECT GUTENBERG 28
	"1c122b7a-0792-4ce2-b514-a584abd4eed3", // OLDER SCROOGE 4
	"5d603fe7-dadb-4942-b44a-595d7f51231c", // THE FATHER 4
	"8abfab75-d1f4-40f8-9d1f-94dbd2cdbced", // HOME 4
	"32fb6eae-25ff-441a-b136-c413025fd25e", // PG SEARCH FACILITY 1
	"8a97f84b-479d-47d8-826d-a32d7588ce7e", // MR. TOPPER 0
}

type retrievalOracle struct {
	Entities    [][]any            `json:"entities"`
	Inside      [][]any            `json:"inside"`
	Outside     [][]any            `json:"outside"`
	TextUnits   [][]any            `json:"text_units"`
	Communities map[string][][]any `json:"communities"`
	Reports     map[string][]int64 `json:"reports"`
}

func loadV3(ctx context.Context, t *testing.T, st *loader.SPARQLStore, graph string) {
	t.Helper()
	ds, err := graphrag.Open(ctx, filepath.Join(test.GraphRAGSamples(t), "v3"))
	if err != nil {
		t.Fatal(err)
	}
	m := ontology.Mapper{Base: "http://kgrag.test/tpl/"}
	if _, err := st.ReplaceGraph(ctx, graph, func(w rdf.Writer) error {
		_, err := m.Map(ctx, ds, w)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// TestRetrieval loads the v3 sample into each store and checks the five
// retrievals for ten entities against scripts/oracle/retrieval.py, which
// computes them from the parquet files with pyarrow: same rows, same order.
func TestRetrieval(t *testing.T) {
	dir := filepath.Join(test.GraphRAGSamples(t), "v3")
	script := filepath.Join(test.RepoRoot(t), "scripts", "oracle", "retrieval.py")
	out, err := exec.Command("python3", append([]string{script, dir}, retrievalIDs...)...).Output()
	if err != nil {
		test.SkipOrFail(t, "retrieval oracle (python3 with pyarrow): %v", err)
	}
	var want retrievalOracle
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	ids := append(append([]string(nil), retrievalIDs...), "no-such-entity")
	forEachStore(t, func(t *testing.T, st *loader.SPARQLStore) {
		ctx := context.Background()
		c := st.Client()
		graph := tempGraph(t, st, "v3")
		loadV3(ctx, t, st, graph)

		ents, err := sparqlq.Entities(ctx, c, graph, ids)
		if err != nil {
			t.Fatal(err)
		}
		var gotE [][]any
		for _, e := range ents {
			if e.Description == "" {
				t.Errorf("entity %s has no description", e.ID)
			}
			gotE = append(gotE, []any{e.ID, e.HumanReadableID, e.Title, e.Type, float64(e.Degree)})
		}
		check(t, "entities", want.Entities, gotE)

		in, outside, err := sparqlq.Relationships(ctx, c, graph, ids)
		if err != nil {
			t.Fatal(err)
		}
		rels := func(rs []sparqlq.RelationshipRow) [][]any {
			var out [][]any
			for _, r := range rs {
				if r.SourceTitle == "" || r.TargetTitle == "" || r.Description == "" || r.HumanReadableID == "" {
					t.Errorf("relationship %s lacks titles, description or human readable id: %+v", r.ID, r)
				}
				out = append(out, []any{r.ID, r.SourceID, r.TargetID, float64(r.Rank), r.Weight})
			}
			return out
		}
		check(t, "inside relationships", want.Inside, rels(in))
		check(t, "outside relationships", want.Outside, rels(outside))

		tus, err := sparqlq.TextUnits(ctx, c, graph, ids, 0)
		if err != nil {
			t.Fatal(err)
		}
		var gotT [][]any
		for _, u := range tus {
			if u.Text == "" || u.HumanReadableID == "" {
				t.Errorf("text unit %s lacks text or human readable id", u.ID)
			}
			gotT = append(gotT, []any{u.ID, float64(u.NTokens), float64(u.SelectedEntities)})
		}
		check(t, "text units", want.TextUnits, gotT)
		if top, err := sparqlq.TextUnits(ctx, c, graph, ids, 3); err != nil || !cmp.Equal(top, tus[:min(3, len(tus))]) {
			t.Errorf("TextUnits limit 3 = %d rows, %v; want the first 3 of all", len(top), err)
		}

		for level, lv := range map[string]int{"0": 0, "1": 1, "all": sparqlq.AllLevels} {
			cs, err := sparqlq.Communities(ctx, c, graph, ids, lv, 0)
			if err != nil {
				t.Fatal(err)
			}
			var gotC [][]any
			for _, cr := range cs {
				if lv != sparqlq.AllLevels && cr.Level != int64(lv) {
					t.Errorf("community %d at level %d; want %d", cr.Community, cr.Level, lv)
				}
				if cr.Summary == "" || cr.FullContent == "" || cr.Title == "" || cr.Weight <= 0 {
					t.Errorf("community %d lacks its report or weight: %+v", cr.Community, cr)
				}
				gotC = append(gotC, []any{float64(cr.Community), float64(cr.SelectedEntities), cr.Rank})
			}
			check(t, "communities at level "+level, want.Communities[level], gotC)
		}

		for level, wantR := range want.Reports {
			lv := sparqlq.AllLevels
			if level != "all" {
				lv, _ = strconv.Atoi(level)
			}
			rs, err := sparqlq.CommunityReports(ctx, c, graph, lv, 0)
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, r := range rs {
				got = append(got, r.Community)
			}
			if diff := cmp.Diff(wantR, got); diff != "" {
				t.Errorf("community reports at level %s (-pyarrow +store):\n%s", level, diff)
			}
		}
	})
}

func check(t *testing.T, what string, want, got [][]any) {
	t.Helper()
	if len(want) == 0 {
		t.Errorf("%s: the oracle has no rows: the test would prove nothing", what)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: %d rows, pyarrow %d (-pyarrow +store):\n%s", what, len(got), len(want), diff)
	}
}
