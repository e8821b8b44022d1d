package graphbuild_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/graphbuild"
	"github.com/kgrag/kgrag/internal/test"
)

// Job and answer of testdata/graphrag_graph.py.
type (
	pyJob struct {
		Extractions []pyExtraction `json:"extractions,omitempty"`
		Summarize   *pySummarize   `json:"summarize,omitempty"`
		UUID5       []string       `json:"uuid5,omitempty"`
		ReadDir     string         `json:"read_dir,omitempty"`
	}
	pyExtraction struct {
		TextUnitID    string           `json:"text_unit_id"`
		Entities      []pyEntity       `json:"entities"`
		Relationships []pyRelationship `json:"relationships"`
	}
	pyEntity struct {
		Title       string `json:"title"`
		Type        string `json:"type"`
		Description string `json:"description"`
	}
	pyRelationship struct {
		Source      string  `json:"source"`
		Target      string  `json:"target"`
		Description string  `json:"description"`
		Weight      float64 `json:"weight"`
	}
	pySummarize struct {
		Budget    int    `json:"budget"`
		MaxLength int    `json:"max_length"`
		Encoding  string `json:"encoding"`
	}
	pyOut struct {
		MergedEntities      []mergedRow `json:"merged_entities"`
		MergedRelationships []mergedRow `json:"merged_relationships"`
		Orphans             int         `json:"orphans"`
		UUID5               []string    `json:"uuid5"`
		Calls               []struct {
			Key          []string `json:"key"`
			Occurrence   int      `json:"occurrence"`
			Descriptions []string `json:"descriptions"`
		} `json:"calls"`
		Entities      []finalRow `json:"entities"`
		Relationships []finalRow `json:"relationships"`
		Read          *struct {
			Entities      []readRow `json:"entities"`
			Relationships []readRow `json:"relationships"`
		} `json:"read"`
	}
	// mergedRow is a row of GraphRAG's merged entities or relationships.
	mergedRow struct {
		Title        string   `json:"title"`
		Type         string   `json:"type"`
		Source       string   `json:"source"`
		Target       string   `json:"target"`
		Descriptions []string `json:"description"`
		TextUnitIDs  []string `json:"text_unit_ids"`
		Frequency    int      `json:"frequency"`
		Weight       float64  `json:"weight"`
	}
	// finalRow is a row of finalize_graph's entities or relationships,
	// id aside.
	finalRow struct {
		HumanReadableID int64    `json:"human_readable_id"`
		Title           string   `json:"title"`
		Type            string   `json:"type"`
		Source          string   `json:"source"`
		Target          string   `json:"target"`
		Description     string   `json:"description"`
		TextUnitIDs     []string `json:"text_unit_ids"`
		Frequency       int64    `json:"frequency"`
		Degree          int64    `json:"degree"`
		Weight          float64  `json:"weight"`
		CombinedDegree  int64    `json:"combined_degree"`
	}
	// readRow is an Entity or Relationship of GraphRAG's query-side model.
	readRow struct {
		ID          string   `json:"id"`
		ShortID     string   `json:"short_id"`
		Title       string   `json:"title"`
		Type        string   `json:"type"`
		Source      string   `json:"source"`
		Target      string   `json:"target"`
		Description string   `json:"description"`
		Weight      float64  `json:"weight"`
		Rank        int64    `json:"rank"`
		TextUnitIDs []string `json:"text_unit_ids"`
	}
)

func toPy(exts []graphbuild.Extraction) []pyExtraction {
	out := make([]pyExtraction, len(exts))
	for i, x := range exts {
		p := pyExtraction{TextUnitID: x.TextUnitID, Entities: []pyEntity{}, Relationships: []pyRelationship{}}
		for _, e := range x.Entities {
			p.Entities = append(p.Entities, pyEntity(e))
		}
		for _, r := range x.Relationships {
			w := graphbuild.DefaultWeight
			if r.HasWeight {
				w = r.Weight
			}
			p.Relationships = append(p.Relationships, pyRelationship{r.Source, r.Target, r.Description, w})
		}
		out[i] = p
	}
	return out
}

// runGraphRAG runs jobs through testdata/graphrag_graph.py in one
// interpreter (a JSON value per job in, one per job out) and returns its
// answers in order.
func runGraphRAG(t *testing.T, py string, jobs []pyJob) []pyOut {
	t.Helper()
	return test.PythonJSONL[pyOut](t, py, []string{filepath.Join("testdata", "graphrag_graph.py")}, jobs)
}

type oracleSet struct {
	name   string
	exts   []graphbuild.Extraction
	budget int // tokens for descriptions in a summary call; 0: merge only
}

func ents(tu string, es ...graphbuild.Entity) graphbuild.Extraction {
	return graphbuild.Extraction{TextUnitID: tu, Entities: es}
}

func ent(title, typ, desc string) graphbuild.Entity {
	return graphbuild.Entity{Title: title, Type: typ, Description: desc}
}

func rel(s, t, desc string, w float64) graphbuild.Relationship {
	return graphbuild.Relationship{Source: s, Target: t, Description: desc, Weight: w, HasWeight: w != 0}
}

// withRels adds relationships to an extraction.
func withRels(x graphbuild.Extraction, rs ...graphbuild.Relationship) graphbuild.Extraction {
	x.Relationships = append(x.Relationships, rs...)
	return x
}

// oracleSets are the hand-written cases and the generated corpora.
func oracleSets() []oracleSet {
	long := func(i int) string {
		return "Scrooge " + strconv.Itoa(i) + " counts his money in the cold counting house while Bob Cratchit copies letters by a tiny fire."
	}
	var many []graphbuild.Entity
	for i := range 12 {
		many = append(many, ent("SCROOGE", "PERSON", long(i)))
	}
	// Weights whose sum depends on the order and way of adding.
	tricky := []float64{1e16, 1, 1, -1e16, 0.1, 0.2, 0.3, 2.5, 1e-3, 3.3333, 7.77, 1e8, -1e8, 0.7}
	var consecutive, interleaved []graphbuild.Extraction
	for i := range 300 { // beyond numpy's 8-sum blocks and 128-value halves
		w := tricky[i*7%len(tricky)]
		consecutive = append(consecutive, withRels(ents("c"+strconv.Itoa(i), ent("A", "P", "a"), ent("B", "P", "b"), ent("C", "P", "c")),
			rel("A", "B", "w", w), rel("A", "B", "w", w/3)))
		interleaved = append(interleaved, withRels(ents("i"+strconv.Itoa(i), ent("A", "P", "a"), ent("B", "P", "b"), ent("C", "P", "c")),
			rel("A", "B", "w", w), rel("B", "C", "v", w/3)))
	}
	objects := append(interleaved[:len(interleaved):len(interleaved)], ents("none", ent("A", "P", "a2")))
	return []oracleSet{
		{"two units", []graphbuild.Extraction{
			withRels(ents("t1", ent("SCROOGE", "PERSON", "A miser."), ent("MARLEY", "PERSON", "Dead partner.")),
				rel("SCROOGE", "MARLEY", "Partners.", 2), rel("SCROOGE", "FRED", "Uncle of Fred.", 1)),
			withRels(ents("t2", ent("SCROOGE", "PERSON", "Owns a counting house."), ent("SCROOGE", "MISER", "Mean."),
				ent("MARLEY", "PERSON", "Dead partner.")),
				rel("MARLEY", "SCROOGE", "Haunts him.", 1.5), rel("SCROOGE", "SCROOGE", "Talks to himself.", 0),
				rel("SCROOGE", "MARLEY", "Shared a firm.", 3)),
		}, 200},
		{"same title two types, both summarised", []graphbuild.Extraction{
			withRels(ents("t1", ent("LONDON", "GEO", "A city."), ent("LONDON", "ORGANIZATION", "A firm."), ent("FOG", "EVENT", "Thick.")),
				rel("FOG", "LONDON", "Covers it.", 1)),
			withRels(ents("t2", ent("LONDON", "ORGANIZATION", "Trades in London."), ent("LONDON", "GEO", "Foggy.")),
				rel("FOG", "LONDON", "Every winter.", 1)),
		}, 200},
		{"one unit names a record twice", []graphbuild.Extraction{
			withRels(ents("t1", ent("A", "P", "x"), ent("A", "P", "x"), ent("B", "P", "y")),
				rel("A", "B", "r", 1), rel("A", "B", "r", 1)),
		}, 200},
		{"descriptions over the budget", []graphbuild.Extraction{
			withRels(ents("t1", many[:6]...), rel("SCROOGE", "SCROOGE", "self", 1)),
			ents("t2", many[6:]...),
		}, 60},
		{"weights: numpy's pairwise sum (pairs consecutive)", consecutive, 200},
		{"weights: Kahan (pairs interleaved)", interleaved, 200},
		{"weights: plain (a unit without relationships)", objects, 200},
		{"empty title", []graphbuild.Extraction{
			withRels(ents("t1", ent("", "P", "nobody"), ent("", "P", "no one"), ent("A", "P", "a")),
				rel("", "A", "x", 1), rel("A", "", "y", 1)),
		}, 200},
		{"no relationships", []graphbuild.Extraction{ents("t1", ent("A", "P", "a")), ents("t2", ent("A", "P", "b"))}, 0},
		{"no entities", []graphbuild.Extraction{withRels(graphbuild.Extraction{TextUnitID: "t1"}, rel("A", "B", "r", 1))}, 0},
		{"generated, some units without relationships", generate(1, genConfig{units: 150, maxRecords: 7, titles: 60, orphans: 10, descs: 40, emptyTitles: true}), 80},
		{"generated, every unit relates", generate(2, genConfig{units: 150, maxRecords: 7, titles: 40, orphans: 5, descs: 30, allRelate: true}), 150},
		{"generated, tight budget", generate(3, genConfig{units: 120, maxRecords: 8, titles: 25, orphans: 5, descs: 50}), 30},
	}
}

// TestMatchesGraphRAG feeds the same per-text-unit records to GraphRAG
// 3.3.0's own code (extract_graph's _merge_entities, _merge_relationships
// and filter_orphan_relationships, the workflow's summary step with a fake
// model, finalize_graph) and to Merge, Summarize (against the test server
// with the same fake replies) and Finalize, and requires the same tables
// row for row: titles, types, description lists, text unit ids,
// frequencies, weights to the bit, orphans dropped, summary calls and the
// descriptions in each, final descriptions, degrees, combined degrees and
// human readable ids. Ids are checked against Python's uuid.uuid5.
//
// Its last subtest writes a built graph with graphrag.Write3x and reads it
// with pandas and GraphRAG's query-side adapters (read_indexer_entities,
// read_indexer_relationships), which must accept it and see the same
// rows. One interpreter runs every job: starting it takes seconds.
func TestMatchesGraphRAG(t *testing.T) {
	py := test.GraphRAGPython(t)
	sets := oracleSets()
	var jobs []pyJob
	records := 0
	for _, s := range sets {
		j := pyJob{Extractions: toPy(s.exts)}
		if s.budget > 0 {
			j.Summarize = &pySummarize{Budget: s.budget, MaxLength: 120, Encoding: "o200k_base"}
		}
		for _, x := range s.exts {
			records += len(x.Entities) + len(x.Relationships)
			for _, e := range x.Entities {
				j.UUID5 = append(j.UUID5, "entity\x00"+e.Title)
			}
		}
		jobs = append(jobs, j)
	}
	readJob, wantE, wantR := readersJob(t)
	jobs = append(jobs, readJob)
	t.Logf("%d sets, %d records", len(sets), records)
	outs := runGraphRAG(t, py, jobs)
	for i, s := range sets {
		t.Run(s.name, func(t *testing.T) {
			checkAgainst(t, s, jobs[i], outs[i])
		})
	}
	t.Run("GraphRAG's readers", func(t *testing.T) {
		got := outs[len(outs)-1].Read
		// read_indexer_entities groups by id: its order is not the table's.
		byID := cmpopts.SortSlices(func(a, b readRow) bool { return a.ID < b.ID })
		if d := cmp.Diff(wantE, got.Entities, byID); d != "" {
			t.Errorf("GraphRAG's read_indexer_entities (-written +read):\n%s", d)
		}
		if d := cmp.Diff(wantR, got.Relationships); d != "" {
			t.Errorf("GraphRAG's read_indexer_relationships (-written +read):\n%s", d)
		}
	})
}

func checkAgainst(t *testing.T, s oracleSet, job pyJob, want pyOut) {
	g := graphbuild.Merge(s.exts)
	var gotE, gotR []mergedRow
	for _, e := range g.Entities {
		gotE = append(gotE, mergedRow{Title: e.Title, Type: e.Type, Descriptions: e.Descriptions, TextUnitIDs: e.TextUnitIDs, Frequency: e.Frequency})
	}
	for _, r := range g.Relationships {
		gotR = append(gotR, mergedRow{Source: r.Source, Target: r.Target, Descriptions: r.Descriptions, TextUnitIDs: r.TextUnitIDs, Weight: r.Weight})
	}
	empty := cmpopts.EquateEmpty()
	if d := cmp.Diff(want.MergedEntities, gotE, empty); d != "" {
		t.Errorf("merged entities differ from GraphRAG's (-graphrag +kgrag):\n%s", d)
	}
	if d := cmp.Diff(want.MergedRelationships, gotR, empty); d != "" {
		t.Errorf("merged relationships differ from GraphRAG's (-graphrag +kgrag):\n%s", d)
	}
	if g.Orphans != want.Orphans {
		t.Errorf("Orphans = %d; GraphRAG dropped %d", g.Orphans, want.Orphans)
	}
	for i, name := range job.UUID5 {
		if got := graphbuild.EntityID(name[len("entity\x00"):]); got != want.UUID5[i] {
			t.Fatalf("EntityID(%q) = %s; uuid.uuid5 gives %s", name, got, want.UUID5[i])
		}
	}
	if s.budget == 0 {
		return
	}

	srv := summaryServer(t, llmConfig())
	sum := summarizer(t, srv, s.budget)
	st, err := sum.Summarize(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	// GraphRAG's calls for the first item of each key are ours; it also
	// summarises later rows of a title and empty titles, which its
	// finalize drops.
	wantCalls, wasted := map[string][][]string{}, 0
	for _, c := range want.Calls {
		if c.Occurrence > 0 || c.Key[0] == "e" && c.Key[1] == "" {
			wasted++
			continue
		}
		k, _ := json.Marshal(c.Key)
		wantCalls[string(k)] = append(wantCalls[string(k)], c.Descriptions)
	}
	gotCalls := map[string][][]string{}
	for _, c := range calls(t, srv) {
		k, _ := json.Marshal(c.Key)
		gotCalls[string(k)] = append(gotCalls[string(k)], c.Descriptions)
	}
	if d := cmp.Diff(wantCalls, gotCalls, empty); d != "" {
		t.Errorf("summary calls differ from GraphRAG's (-graphrag +kgrag):\n%s", d)
	}
	if st.Calls != len(want.Calls)-wasted {
		t.Errorf("Stats.Calls = %d; GraphRAG made %d (and %d it threw away)", st.Calls, len(want.Calls)-wasted, wasted)
	}
	t.Logf("%d summary calls for %d items (GraphRAG: %d more for rows it drops)", st.Calls, st.Summarised, wasted)

	es, rs := graphbuild.Finalize(g)
	var fe, fr []finalRow
	for _, e := range es {
		hr, _ := strconv.ParseInt(e.HumanReadableID, 10, 64)
		fe = append(fe, finalRow{HumanReadableID: hr, Title: e.Title, Type: e.Type, Description: e.Description,
			TextUnitIDs: e.TextUnitIDs, Frequency: e.Frequency, Degree: e.Degree})
		if !e.HasDegree || !e.HasFrequency || e.ID != graphbuild.EntityID(e.Title) {
			t.Errorf("entity %q: HasDegree %v, HasFrequency %v, ID %s", e.Title, e.HasDegree, e.HasFrequency, e.ID)
		}
	}
	for _, r := range rs {
		hr, _ := strconv.ParseInt(r.HumanReadableID, 10, 64)
		fr = append(fr, finalRow{HumanReadableID: hr, Source: r.Source, Target: r.Target, Description: r.Description,
			TextUnitIDs: r.TextUnitIDs, Weight: r.Weight, CombinedDegree: r.Rank})
		if r.SourceID != graphbuild.EntityID(r.Source) || r.TargetID != graphbuild.EntityID(r.Target) ||
			r.ID != graphbuild.RelationshipID(r.Source, r.Target) || !r.HasRank || !r.HasWeight {
			t.Errorf("relationship %q -> %q: ids %s %s %s, HasRank %v, HasWeight %v", r.Source, r.Target, r.ID, r.SourceID, r.TargetID, r.HasRank, r.HasWeight)
		}
	}
	if d := cmp.Diff(want.Entities, fe, empty); d != "" {
		t.Errorf("final entities differ from GraphRAG's (-graphrag +kgrag):\n%s", d)
	}
	if d := cmp.Diff(want.Relationships, fr, empty); d != "" {
		t.Errorf("final relationships differ from GraphRAG's (-graphrag +kgrag):\n%s", d)
	}
}

// readersJob writes a built graph with graphrag.Write3x for GraphRAG's
// query-side readers, and returns the job and the rows they must see.
func readersJob(t *testing.T) (pyJob, []readRow, []readRow) {
	es, rs := buildSmall(t)
	dir := t.TempDir()
	if err := graphrag.Write3x(context.Background(), dir, &graphrag.Dataset{Entities: es, Relationships: rs}); err != nil {
		t.Fatal(err)
	}
	var wantE, wantR []readRow
	for _, e := range es {
		wantE = append(wantE, readRow{ID: e.ID, ShortID: e.HumanReadableID, Title: e.Title, Type: e.Type,
			Description: e.Description, Rank: e.Degree, TextUnitIDs: e.TextUnitIDs})
	}
	for _, r := range rs {
		wantR = append(wantR, readRow{ID: r.ID, ShortID: r.HumanReadableID, Source: r.Source, Target: r.Target,
			Description: r.Description, Weight: r.Weight, Rank: r.Rank, TextUnitIDs: r.TextUnitIDs})
	}
	return pyJob{ReadDir: dir}, wantE, wantR
}
