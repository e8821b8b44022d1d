package indexer_test

import (
	"cmp"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/graphbuild"
	"github.com/kgrag/kgrag/internal/indexer"
	"github.com/kgrag/kgrag/internal/indexer/indexertest"
	"github.com/kgrag/kgrag/internal/nounphrase"
	"github.com/kgrag/kgrag/internal/test"
)

// fastJob and fastOut are scripts/oracle/graphrag_fast.py's protocol.
type fastJob struct {
	Op        string     `json:"op"`
	Extractor string     `json:"extractor,omitempty"`
	Model     string     `json:"model,omitempty"`
	Units     []fastUnit `json:"units"`
}

type fastUnit struct {
	ID      string   `json:"id"`
	Text    string   `json:"text,omitempty"`
	Phrases []string `json:"phrases,omitempty"`
}

type fastEdge struct {
	Source      string   `json:"source"`
	Target      string   `json:"target"`
	Weight      float64  `json:"weight"`
	TextUnitIDs []string `json:"text_unit_ids"`
}

type fastOut struct {
	Error   string     `json:"error"`
	Units   []fastUnit `json:"units"`
	Seconds float64    `json:"seconds"`
	Nodes   []struct {
		Title       string   `json:"title"`
		Frequency   int      `json:"frequency"`
		TextUnitIDs []string `json:"text_unit_ids"`
	} `json:"nodes"`
	Edges          []fastEdge `json:"edges"`
	PrunedEntities []string   `json:"pruned_entities"`
	PrunedEdges    []fastEdge `json:"pruned_edges"`
}

// fastCarol indexes the whole of A Christmas Carol with the fast method
// and no reports (no model), and reads the output back.
func fastCarol(t *testing.T) (*indexer.Summary, *graphrag.Dataset) {
	t.Helper()
	opts := indexer.DefaultOptions()
	opts.Input = test.SourceText(t)
	opts.Output = filepath.Join(t.TempDir(), "output")
	opts.Method, opts.NoReports = indexer.MethodFast, true
	return runAndOpen(t, nil, opts)
}

// TestFastGraphRAGReads checks that PyPI graphrag's own readers accept
// the fast method's output without reports, and find in it every row
// kgrag wrote, each entity a noun phrase. GraphRAG's community reader
// keeps only communities that have a report, so it reads none of them
// (its local search then uses no community context); the rows are there,
// and the entities name their communities.
func TestFastGraphRAGReads(t *testing.T) {
	py := test.GraphRAGPython(t)
	sum, ds := fastCarol(t)
	got := readWithGraphRAG(t, py, ds.Dir)
	want := map[string]int{
		"documents": sum.Documents, "text_units": sum.TextUnits, "entities": sum.Entities,
		"noun_phrases": sum.Entities, "relationships": sum.Relationships, "community_rows": sum.Communities,
		"communities": 0, "reports": 0, "covariates": 0,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("graphrag read %d %s; kgrag wrote %d", got[k], k, v)
		}
	}
	if sum.Entities == 0 || sum.Communities == 0 || got["units_with_entities"] == 0 || got["entities_in_communities"] == 0 {
		t.Errorf("the fast graph is empty: %v", got)
	}
}

// TestFastGraphMatchesGraphRAG gives GraphRAG 3.3.0's own build_noun_graph
// (co-occurrence edges, PMI weights) and prune_graph the noun phrases
// kgrag found in each text unit of the book, and checks that kgrag built
// the same graph from them: every edge, its weight (to 1e-12) and text
// units, and the entities and relationships left after pruning, which
// are the tables kgrag wrote.
func TestFastGraphMatchesGraphRAG(t *testing.T) {
	py := test.GraphRAGPython(t)
	_, ds := fastCarol(t)
	x, err := nounphrase.New(nounphrase.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var units []fastUnit
	var found []graphbuild.NounPhrases
	for _, u := range ds.TextUnits {
		p := x.Extract(u.Text)
		units = append(units, fastUnit{ID: u.ID, Phrases: p})
		found = append(found, graphbuild.NounPhrases{TextUnitID: u.ID, Phrases: p})
	}
	want := test.PythonJSONL[fastOut](t, py, []string{filepath.Join(test.RepoRoot(t), "scripts", "oracle", "graphrag_fast.py")},
		[]fastJob{{Op: "graph", Units: units}})[0]

	g := graphbuild.NounGraph(found, true)
	if len(g.Entities) != len(want.Nodes) {
		t.Errorf("%d noun phrases; GraphRAG has %d nodes", len(g.Entities), len(want.Nodes))
	}
	freq := map[string]int{}
	for _, e := range g.Entities {
		freq[e.Title] = e.Frequency
	}
	for _, n := range want.Nodes {
		if freq[n.Title] != n.Frequency {
			t.Errorf("frequency of %q: %d; GraphRAG %d", n.Title, freq[n.Title], n.Frequency)
		}
	}
	checkEdges(t, "co-occurrence", g.Relationships, want.Edges, true)

	graphbuild.Prune(g, graphbuild.DefaultPruneOptions())
	var gotTitles []string
	for _, e := range ds.Entities {
		gotTitles = append(gotTitles, e.Title)
	}
	slices.Sort(gotTitles)
	slices.Sort(want.PrunedEntities)
	if !slices.Equal(gotTitles, want.PrunedEntities) {
		t.Errorf("entities after pruning: kgrag wrote %d, GraphRAG keeps %d; first difference %s",
			len(gotTitles), len(want.PrunedEntities), firstDiff(gotTitles, want.PrunedEntities))
	}
	var rels []graphbuild.MergedRelationship
	for _, r := range ds.Relationships {
		rels = append(rels, graphbuild.MergedRelationship{Source: r.Source, Target: r.Target, Weight: r.Weight})
	}
	checkEdges(t, "relationships written", rels, want.PrunedEdges, false)
	t.Logf("%d text units: %d noun phrases, %d co-occurrence edges; after pruning %d entities, %d relationships: all as GraphRAG's own code builds them",
		len(units), len(want.Nodes), len(want.Edges), len(want.PrunedEntities), len(want.PrunedEdges))
}

func checkEdges(t *testing.T, what string, got []graphbuild.MergedRelationship, want []fastEdge, units bool) {
	t.Helper()
	type key struct{ s, t string }
	at := map[key]graphbuild.MergedRelationship{}
	for _, r := range got {
		at[key{r.Source, r.Target}] = r
	}
	if len(got) != len(want) {
		t.Errorf("%s: %d edges; GraphRAG %d", what, len(got), len(want))
	}
	bad := 0
	for _, w := range want {
		r, ok := at[key{w.Source, w.Target}]
		switch {
		case !ok:
			t.Errorf("%s: no edge %s -> %s", what, w.Source, w.Target)
		case math.Abs(r.Weight-w.Weight) > 1e-12*math.Max(1, math.Abs(w.Weight)):
			t.Errorf("%s: weight of %s -> %s is %v; GraphRAG %v", what, w.Source, w.Target, r.Weight, w.Weight)
		case units && !slices.Equal(sorted(r.TextUnitIDs), sorted(w.TextUnitIDs)):
			t.Errorf("%s: text units of %s -> %s are %v; GraphRAG %v", what, w.Source, w.Target, r.TextUnitIDs, w.TextUnitIDs)
		default:
			continue
		}
		if bad++; bad > 10 {
			t.Fatalf("%s: more than 10 differences", what)
		}
	}
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("at %d: %q against %q", i, a[i], b[i])
		}
	}
	return "at the end"
}

// agreement counts how alike two extractions of the same units are.
type agreement struct {
	kgrag, graphrag, both   int // distinct phrases
	pairsK, pairsG, pairsKG int // (text unit, phrase) occurrences
}

func (a agreement) String() string {
	return fmt.Sprintf("distinct phrases: kgrag %d, GraphRAG %d, both %d (Jaccard %.2f); occurrences: precision %.2f, recall %.2f against GraphRAG",
		a.kgrag, a.graphrag, a.both, float64(a.both)/float64(a.kgrag+a.graphrag-a.both),
		float64(a.pairsKG)/float64(a.pairsK), float64(a.pairsKG)/float64(a.pairsG))
}

func compareExtractions(kg, gr []fastUnit) agreement {
	var a agreement
	all := func(us []fastUnit) (map[string]bool, map[[2]string]bool) {
		ph, pairs := map[string]bool{}, map[[2]string]bool{}
		for _, u := range us {
			for _, p := range u.Phrases {
				ph[p] = true
				pairs[[2]string{u.ID, p}] = true
			}
		}
		return ph, pairs
	}
	pk, ok := all(kg)
	pg, og := all(gr)
	a.kgrag, a.graphrag, a.pairsK, a.pairsG = len(pk), len(pg), len(ok), len(og)
	for p := range pk {
		if pg[p] {
			a.both++
		}
	}
	for p := range ok {
		if og[p] {
			a.pairsKG++
		}
	}
	return a
}

// TestFastPhrasesAgainstGraphRAG runs GraphRAG 3.3.0's own noun-phrase
// extractors on the book's text units and measures how far kgrag's
// agree with them. GraphRAG's default, regex_english (TextBlob's fast
// extractor), cannot run here: it needs NLTK's Brown and Treebank corpora
// and taggers, which no package registry serves; the test checks that it
// still cannot, so that the comparison is redone if it ever can. Its two
// spaCy extractors run with en_core_web_md, GraphRAG's default model,
// from PyPI (scripts/spacy-models.sh): syntactic_parser (noun chunks of
// the dependency parse and named entities) and cfg (the regex_english
// grammar over spaCy's tags, and named entities).
//
// The differences come from three places, counted in the log: the
// tagger (prose's perceptron against spaCy's), the tokeniser (spaCy
// splits "door-nail" into three tokens, so it never finds GraphRAG's
// hyphenated compounds that kgrag and NLTK keep whole) and named
// entities, which only the spaCy extractors add (dates left out, and
// numbers such as "ONE" or "TWO"). The names that matter are found by
// all: the test asserts the book's characters.
func TestFastPhrasesAgainstGraphRAG(t *testing.T) {
	py := test.GraphRAGPython(t)
	model := test.SpacyModel(t)
	_, ds := fastCarol(t)
	x, err := nounphrase.New(nounphrase.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var in, kg []fastUnit
	for _, u := range ds.TextUnits {
		in = append(in, fastUnit{ID: u.ID, Text: u.Text})
		kg = append(kg, fastUnit{ID: u.ID, Phrases: x.Extract(u.Text)})
	}
	jobs := []fastJob{
		{Op: "phrases", Extractor: "regex_english", Units: in[:1]},
		{Op: "phrases", Extractor: "syntactic_parser", Model: model, Units: in},
		{Op: "phrases", Extractor: "cfg", Model: model, Units: in},
	}
	out := test.PythonJSONL[fastOut](t, py, []string{filepath.Join(test.RepoRoot(t), "scripts", "oracle", "graphrag_fast.py")}, jobs)
	if out[0].Error == "" {
		t.Errorf("GraphRAG's regex_english extractor ran: NLTK's data is there now, so compare with it (it is GraphRAG's default)")
	} else {
		t.Logf("regex_english did not run: %s", out[0].Error)
	}
	// Characters of the book, as the fast method names them.
	// (Belle, named twice, is one that kgrag's tagger misses.)
	names := []string{"BOB CRATCHIT", "TINY TIM", "JACOB MARLEY", "FEZZIWIG", "SCROOGE", "MARLEY", "FRED", "DICK WILKINS", "CHRISTMAS PAST"}
	// Measured (prose v2.0.0, spaCy 3.8.18, en_core_web_md 3.8.0, 42
	// units): syntactic_parser Jaccard 0.44, precision 0.62, recall 0.55;
	// cfg Jaccard 0.55, precision 0.71, recall 0.66 (0.61 and 0.70
	// precision without the initial-capital correction). The floors are a
	// little below.
	floors := map[string][2]float64{"syntactic_parser": {0.4, 0.55}, "cfg": {0.5, 0.65}}
	for i, name := range []string{"syntactic_parser", "cfg"} {
		o := out[i+1]
		if o.Error != "" {
			t.Fatalf("%s: %s", name, o.Error)
		}
		a := compareExtractions(kg, o.Units)
		t.Logf("%s: %v; %d units in %.2f s", name, a, len(in), o.Seconds)
		jac := float64(a.both) / float64(a.kgrag+a.graphrag-a.both)
		prec := float64(a.pairsKG) / float64(a.pairsK)
		if jac < floors[name][0] || prec < floors[name][1] {
			t.Errorf("%s: agreement fell: Jaccard %.2f (floor %.2f), precision %.2f (floor %.2f)", name, jac, floors[name][0], prec, floors[name][1])
		}
		theirs := map[string]int{}
		for _, u := range o.Units {
			for _, p := range u.Phrases {
				theirs[p]++
			}
		}
		ours := map[string]int{}
		for _, u := range kg {
			for _, p := range u.Phrases {
				ours[p]++
			}
		}
		for _, n := range names {
			if ours[n] == 0 || theirs[n] == 0 {
				t.Errorf("%s: %q in %d text units for kgrag, %d for GraphRAG", name, n, ours[n], theirs[n])
			}
		}
		logDifferences(t, name, ours, theirs)
	}
}

// logDifferences logs the phrases found most often by one side only, by
// kind: hyphenated (the tokeniser), numbers and other.
func logDifferences(t *testing.T, name string, ours, theirs map[string]int) {
	t.Helper()
	type item struct {
		p string
		n int
	}
	only := func(a, b map[string]int) (items []item, hyphen int) {
		for p, n := range a {
			if b[p] == 0 {
				items = append(items, item{p, n})
				if strings.Contains(p, "-") {
					hyphen++
				}
			}
		}
		slices.SortFunc(items, func(x, y item) int { return cmp.Or(y.n-x.n, strings.Compare(x.p, y.p)) })
		return items, hyphen
	}
	k, kh := only(ours, theirs)
	g, gh := only(theirs, ours)
	top := func(items []item) string {
		var s []string
		for _, it := range items[:min(15, len(items))] {
			s = append(s, fmt.Sprintf("%s (%d)", it.p, it.n))
		}
		return strings.Join(s, ", ")
	}
	t.Logf("%s: only kgrag: %d phrases, %d hyphenated; most often: %s", name, len(k), kh, top(k))
	t.Logf("%s: only GraphRAG: %d phrases, %d hyphenated; most often: %s", name, len(g), gh, top(g))
}

// TestFastReportsGraphRAGReads indexes the book with the fast method and
// the scripted model writing the reports from text-unit contexts, and
// checks that PyPI graphrag's readers take every report, and every
// community (its community reader keeps those with a report).
func TestFastReportsGraphRAGReads(t *testing.T) {
	py := test.GraphRAGPython(t)
	srv, client := indexertest.Model(t)
	opts := indexer.DefaultOptions()
	opts.Input = test.SourceText(t)
	opts.Output = filepath.Join(t.TempDir(), "output")
	opts.Method = indexer.MethodFast
	sum, _ := runAndOpen(t, client, opts)
	if sum.Reports == 0 || sum.Reports != srv.Count("/chat/completions") {
		t.Errorf("%d reports from %d model calls", sum.Reports, srv.Count("/chat/completions"))
	}
	got := readWithGraphRAG(t, py, opts.Output)
	for k, v := range map[string]int{"reports": sum.Reports, "communities": sum.Communities, "community_rows": sum.Communities, "entities": sum.Entities} {
		if got[k] != v {
			t.Errorf("graphrag read %d %s; kgrag wrote %d", got[k], k, v)
		}
	}
}
