package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/loader"
	"github.com/kgrag/kgrag/sparqlq"
)

// The RDF article's queries, as its Python builds them for a list of
// entity ids (its f-strings paste the ids in; these ids are GraphRAG hex and
// UUID ids, which need no escaping). They are the contract: kgrag's graph
// must answer them unchanged. Only a FROM clause is added, because the
// RDF article loaded into the default graph and the tests load into named graphs.

func seedChunksQuery(ids []string) string {
	q := `PREFIX gr: <http://ormynet.com/ns/msft-graphrag#>
SELECT ?chunkText (COUNT(?entity_uri) AS ?freq)
WHERE {
    ?chunk_uri gr:has_entity ?entity_uri;
    gr:text ?chunk_text .
`
	for i, id := range ids {
		if i > 0 {
			q += " UNION "
		}
		q += fmt.Sprintf("{ ?entity_uri a gr:Entity; gr:id \"%s\" . }\n", id)
	}
	return q + `    BIND(REPLACE(?chunk_text, "\r\n", " ") as ?chunkText)
}
GROUP BY ?chunk_uri ?chunkText
ORDER BY DESC(?freq)
LIMIT 3`
}

func seedCommunitiesQuery(ids []string) string {
	q := `PREFIX gr: <http://ormynet.com/ns/msft-graphrag#>
SELECT ?community_uri ?rank ?weight ?summary
WHERE {
    ?community_uri a gr:Community;
      gr:rank ?rank;
      gr:weight ?weight;
      gr:summary ?community_summary .
    BIND(REPLACE(?community_summary, "\r\n", " ", "i") AS ?summary)
    ?entity_uri gr:in_community ?community_uri;
`
	for i, id := range ids {
		if i > 0 {
			q += " UNION "
		}
		q += fmt.Sprintf("{ ?entity_uri a gr:Entity; gr:id \"%s\" . }\n", id)
	}
	return q + `}
GROUP BY ?rank ?weight ?community_uri ?summary
ORDER BY DESC(?rank) DESC(?weight)
LIMIT 3`
}

// seedRelationshipsQuery is the RDF article's outside (op "!=", join "&&") and
// inside (op "=", join "||") relationships query.
func seedRelationshipsQuery(ids []string, op, join string) string {
	q := `PREFIX gr: <http://ormynet.com/ns/msft-graphrag#>
SELECT ?description ?entity_from_id ?entity_to_id ?rank ?weight
WHERE {
    ?related_to_uri a gr:related_to;
        gr:id ?id;
        gr:rank ?rank;
        gr:description ?desc;
        gr:weight ?weight .
    BIND(REPLACE(?desc, "\r\n", "") as ?description)
    ?entity_from_uri ?related_to_uri ?entity_to_uri .
    ?entity_from_uri gr:id ?entity_from_id .
    ?entity_to_uri gr:id ?entity_to_id .
`
	for i, id := range ids {
		if i == 0 {
			q += " FILTER( "
		} else {
			q += " " + join + " "
		}
		q += fmt.Sprintf("?entity_to_id %s \"%s\"", op, id)
	}
	return q + ` )
}
ORDER BY DESC(?rank) DESC(?weight)
LIMIT 10`
}

func seedEntitiesQuery(ids []string) string {
	q := `PREFIX gr: <http://ormynet.com/ns/msft-graphrag#>
SELECT ?id ?description
WHERE {
    ?entity_uri a gr:Entity;
    gr:id ?id;
    gr:description ?entity_desc .
    BIND(REPLACE(?entity_desc, "\r\n", " ", "i") AS ?description)
`
	for i, id := range ids {
		if i == 0 {
			q += " FILTER( "
		} else {
			q += " || "
		}
		q += fmt.Sprintf("?id = \"%s\" ", id)
	}
	return q + " )\n}"
}

// fromGraph adds a FROM clause before the first WHERE.
func fromGraph(q, graph string) string {
	i := strings.Index(q, "\nWHERE")
	return q[:i] + "\nFROM <" + graph + ">" + q[i:]
}

type seedOracle struct {
	IDs         []string `json:"ids"`
	Chunks      [][]any  `json:"chunks"`
	Communities [][]any  `json:"communities"`
	Outside     [][]any  `json:"outside"`
	Inside      [][]any  `json:"inside"`
	Entities    [][]any  `json:"entities"`
}

// row is a result row reduced to a sort key and the fields identifying it.
type row struct {
	key []float64 // descending sort key
	id  string
}

func (r row) String() string { return fmt.Sprintf("%v %q", r.key, r.id) }

// checkTopK checks that got is a correct top-k answer drawn from all: its
// keys are the k largest keys of all, in order, and every row of got is a
// row of all with that key. Ties may come in any order.
func checkTopK(t *testing.T, name string, got, all []row, k int) {
	t.Helper()
	sort.SliceStable(all, func(i, j int) bool { return lessKey(all[j].key, all[i].key) })
	if len(all) < k {
		k = len(all)
	}
	if len(got) != k {
		t.Errorf("%s: %d rows; want %d", name, len(got), k)
		return
	}
	ids := map[string][]float64{}
	for _, r := range all {
		ids[r.id] = r.key
	}
	for i := range got {
		if !equalKey(got[i].key, all[i].key) {
			t.Errorf("%s: row %d key %v; want %v", name, i, got[i].key, all[i].key)
		}
		if key, ok := ids[got[i].id]; !ok || !equalKey(key, got[i].key) {
			t.Errorf("%s: row %d %v is not in the data with that key", name, i, got[i])
		}
	}
}

func lessKey(a, b []float64) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

func equalKey(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-9 {
			return false
		}
	}
	return true
}

func num(t *testing.T, v string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		t.Fatalf("not a number: %q", v)
	}
	return f
}

// TestArticleQueries runs the RDF article's five queries with real entity ids on the
// loaded 0.3.4 and 3.x samples in Oxigraph and Fuseki, and checks the rows
// against answers computed from the parquet files by scripts/oracle/seed.py.
func TestArticleQueries(t *testing.T) {
	samples := test.GraphRAGSamples(t)
	for _, s := range testStores()[:2] {
		t.Run(s.profile, func(t *testing.T) {
			url := test.Service(t, s.env)
			st := openTestStore(t, s.profile, url)
			for _, v := range []string{"v0.3.4", "v3"} {
				t.Run(v, func(t *testing.T) {
					ctx := context.Background()
					dir := filepath.Join(samples, v)
					out, err := exec.Command("python3", filepath.Join(test.RepoRoot(t), "scripts", "oracle", "seed.py"), dir, "10").Output()
					if err != nil {
						test.SkipOrFail(t, "seed oracle (python3 with pyarrow): %v", err)
					}
					var want seedOracle
					if err := json.Unmarshal(out, &want); err != nil {
						t.Fatal(err)
					}
					graph := "http://kgrag.test/seed/" + v
					term, _, _ := testTerminal()
					opts := loadOptions{input: dir, base: defaultBase, quiet: true,
						store: storeOptions{url: url, graph: graph, storeType: s.profile, authScheme: "basic",
							batchSize: loader.DefaultBatchSize, timeout: loader.DefaultTimeout}}
					if err := runLoad(ctx, opts, term); err != nil {
						t.Fatal(err)
					}
					runSeedQueries(ctx, t, st.Client(), graph, want)
				})
			}
		})
	}
}

func runSeedQueries(ctx context.Context, t *testing.T, c *sparqlq.Client, graph string, want seedOracle) {
	sel := func(q string) []map[string]sparqlq.Term {
		t.Helper()
		res, err := c.Select(ctx, fromGraph(q, graph))
		if err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
		return res.Bindings
	}

	var got, all []row
	for _, b := range sel(seedChunksQuery(want.IDs)) {
		got = append(got, row{[]float64{num(t, b["freq"].Value)}, b["chunkText"].Value})
	}
	for _, c := range want.Chunks {
		all = append(all, row{[]float64{c[1].(float64)}, c[0].(string)})
	}
	checkTopK(t, "chunks", got, all, 3)

	got, all = nil, nil
	for _, b := range sel(seedCommunitiesQuery(want.IDs)) {
		uri := b["community_uri"].Value
		got = append(got, row{[]float64{num(t, b["rank"].Value), num(t, b["weight"].Value)}, uri[strings.LastIndex(uri, "/")+1:]})
	}
	for _, c := range want.Communities {
		all = append(all, row{[]float64{c[1].(float64), c[2].(float64)}, c[0].(string)})
	}
	checkTopK(t, "communities", got, all, 3)

	for _, tc := range []struct {
		name     string
		op, join string
		rows     [][]any
	}{
		{"outside relationships", "!=", "&&", want.Outside},
		{"inside relationships", "=", "||", want.Inside},
	} {
		got, all = nil, nil
		for _, b := range sel(seedRelationshipsQuery(want.IDs, tc.op, tc.join)) {
			got = append(got, row{[]float64{num(t, b["rank"].Value), num(t, b["weight"].Value)},
				b["entity_from_id"].Value + "|" + b["entity_to_id"].Value + "|" + b["description"].Value})
		}
		for _, r := range tc.rows {
			all = append(all, row{[]float64{r[3].(float64), r[4].(float64)}, r[1].(string) + "|" + r[2].(string) + "|" + r[0].(string)})
		}
		checkTopK(t, tc.name, got, all, 10)
	}

	gotEnt := map[string]string{}
	for _, b := range sel(seedEntitiesQuery(want.IDs)) {
		gotEnt[b["id"].Value] = b["description"].Value
	}
	for _, e := range want.Entities {
		if d, ok := gotEnt[e[0].(string)]; !ok || d != e[1].(string) {
			t.Errorf("entities: %s has description %q; want %q", e[0], d, e[1])
		}
	}
	if len(gotEnt) != len(want.Entities) {
		t.Errorf("entities: %d rows; want %d", len(gotEnt), len(want.Entities))
	}
}
