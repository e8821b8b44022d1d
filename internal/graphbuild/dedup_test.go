package graphbuild_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/graphbuild"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/test"
)

// tableEmbedder gives each entity the vector of its title, finding the
// title by the text Dedup sends (DedupText of a merged row), and records
// the titles and vectors in the order asked.
type tableEmbedder struct {
	byText  map[string]string // DedupText -> title
	byTitle map[string][]float32
	calls   int
	titles  []string
	vecs    [][]float32
}

func newTableEmbedder(exts []graphbuild.Extraction, opts graphbuild.DedupOptions, byTitle map[string][]float32) *tableEmbedder {
	e := &tableEmbedder{byText: map[string]string{}, byTitle: byTitle}
	for _, m := range graphbuild.Merge(exts).Entities {
		e.byText[graphbuild.DedupText(m, opts)] = m.Title
	}
	return e
}

func (e *tableEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	e.calls++
	out := make([][]float32, len(texts))
	for i, s := range texts {
		title, ok := e.byText[s]
		if !ok {
			return nil, fmt.Errorf("text %q is no merged entity's DedupText", s)
		}
		if out[i], ok = e.byTitle[title]; !ok {
			return nil, fmt.Errorf("no vector for %q", title)
		}
		e.titles = append(e.titles, title)
		e.vecs = append(e.vecs, out[i])
	}
	return out, nil
}

// angle is the unit vector at deg degrees in a plane, padded to 4
// dimensions: two of them have the cosine of the angle between them.
func angle(deg float64) []float32 {
	r := deg * math.Pi / 180
	return []float32{float32(math.Cos(r)), float32(math.Sin(r)), 0, 0}
}

// dedupCase is a hand-made case: records, a vector per title, the
// threshold, and the groups wanted (kept title first, then the joined).
type dedupCase struct {
	name      string
	exts      []graphbuild.Extraction
	vecs      map[string][]float32
	threshold float64
	want      [][]string
	// wantCounts, when set, is Repointed, SelfLoops, Combined.
	wantCounts []int
}

func dedupCases() []dedupCase {
	e1 := []float32{1, 0, 0, 0}
	e2 := []float32{0, 1, 0, 0}
	e3 := []float32{0, 0, 1, 0}
	return []dedupCase{
		{
			name: "identical vectors, names differing in case",
			exts: []graphbuild.Extraction{
				ents("t1", ent("Scrooge", "PERSON", "A miser."), ent("MARLEY", "PERSON", "Dead.")),
				ents("t2", ent("SCROOGE", "PERSON", "A miser."), ent("SCROOGE", "PERSON", "Rich.")),
			},
			vecs:      map[string][]float32{"Scrooge": e1, "SCROOGE": e1, "MARLEY": e2},
			threshold: 0.9,
			want:      [][]string{{"SCROOGE", "Scrooge"}}, // two mentions against one
		},
		{
			name: "near duplicates join, a distant title stays",
			exts: []graphbuild.Extraction{
				ents("t1", ent("BOB", "PERSON", "Clerk."), ent("BOB CRATCHIT", "PERSON", "Scrooge's clerk."), ent("FRED", "PERSON", "Nephew.")),
			},
			vecs:      map[string][]float32{"BOB": angle(0), "BOB CRATCHIT": angle(18), "FRED": angle(70)},
			threshold: 0.9,
			want:      [][]string{{"BOB", "BOB CRATCHIT"}}, // one mention each: least title
		},
		{
			name: "chain: a and c apart, joined through b",
			exts: []graphbuild.Extraction{
				ents("t1", ent("A", "X", "a"), ent("B", "X", "b"), ent("C", "X", "c")),
				ents("t2", ent("C", "X", "c2")),
			},
			vecs:      map[string][]float32{"A": angle(0), "B": angle(20), "C": angle(40)}, // cos 20° 0.94, cos 40° 0.77
			threshold: 0.9,
			want:      [][]string{{"C", "A", "B"}},
		},
		{
			name: "similarity exactly the threshold joins",
			exts: []graphbuild.Extraction{ents("t1", ent("P", "X", "p"), ent("Q", "X", "q"), ent("R", "X", "r"))},
			// 9/10 exactly: |(9,3,3,1)| = 10.
			vecs:      map[string][]float32{"P": e1, "Q": {9, 3, 3, 1}, "R": e3},
			threshold: 0.9,
			want:      [][]string{{"P", "Q"}},
		},
		{
			name:      "similarity just below the threshold stays apart",
			exts:      []graphbuild.Extraction{ents("t1", ent("P", "X", "p"), ent("Q", "X", "q"))},
			vecs:      map[string][]float32{"P": e1, "Q": {9, 3, 3, 1.001}}, // 0.899991
			threshold: 0.9,
		},
		{
			name: "threshold 1 joins identical vectors only",
			exts: []graphbuild.Extraction{ents("t1", ent("P", "X", "p"), ent("Q", "X", "q"), ent("R", "X", "r"))},
			// Q is P twice: lengths are normalised away. R is 0.9999992.
			vecs:      map[string][]float32{"P": {0.1, 0.2, 0.3, 0.4}, "Q": {0.2, 0.4, 0.6, 0.8}, "R": {0.1, 0.2, 0.3, 0.401}},
			threshold: 1,
			want:      [][]string{{"P", "Q"}},
		},
		{
			name: "self-loops after merging are dropped, an extracted one stays",
			exts: []graphbuild.Extraction{
				withRels(ents("t1", ent("GHOST", "SPIRIT", "g"), ent("SPIRIT", "SPIRIT", "s"), ent("SCROOGE", "PERSON", "m")),
					rel("GHOST", "SPIRIT", "is the spirit", 2), rel("SPIRIT", "GHOST", "is the ghost", 0),
					rel("SPIRIT", "SPIRIT", "haunts itself", 1), rel("GHOST", "SCROOGE", "visits", 3)),
			},
			vecs:       map[string][]float32{"GHOST": e1, "SPIRIT": e1, "SCROOGE": e2},
			threshold:  0.9,
			want:       [][]string{{"GHOST", "SPIRIT"}},
			wantCounts: []int{3, 2, 0}, // SPIRIT->SPIRIT is renamed: GHOST->GHOST
		},
		{
			name: "parallel relationships combine, directions stay apart",
			exts: []graphbuild.Extraction{
				withRels(ents("t1", ent("FRED", "PERSON", "f"), ent("SCROOGE", "PERSON", "s"), ent("EBENEZER", "PERSON", "e")),
					rel("FRED", "SCROOGE", "invites", 2), rel("FRED", "EBENEZER", "is nephew of", 0.5)),
				withRels(ents("t2", ent("SCROOGE", "PERSON", "s2")),
					rel("EBENEZER", "FRED", "refuses", 1), rel("FRED", "SCROOGE", "toasts", 4)),
			},
			vecs:       map[string][]float32{"FRED": e2, "SCROOGE": angle(5), "EBENEZER": e1},
			threshold:  0.9,
			want:       [][]string{{"SCROOGE", "EBENEZER"}},
			wantCounts: []int{2, 0, 1},
		},
		{
			name: "types differ: the kept title's type wins",
			exts: []graphbuild.Extraction{
				ents("t1", ent("LONDON", "GEO", "a city"), ent("LONDON CITY", "ORGANIZATION", "the city")),
				ents("t2", ent("LONDON", "GEO", "foggy"), ent("LONDON CITY", "GEO", "the place")),
			},
			vecs:      map[string][]float32{"LONDON": e1, "LONDON CITY": e1},
			threshold: 0.9,
			want:      [][]string{{"LONDON", "LONDON CITY"}},
		},
		{
			name:      "nothing alike",
			exts:      []graphbuild.Extraction{withRels(ents("t1", ent("P", "X", "p"), ent("Q", "X", "q"), ent("R", "X", "r")), rel("P", "Q", "pq", 1))},
			vecs:      map[string][]float32{"P": e1, "Q": e2, "R": e3},
			threshold: 0.5,
		},
	}
}

// runDedup runs Dedup with a tableEmbedder and checks what holds for
// every run: one Embed call of every distinct title, the report's counts
// adding up against the graph Finalize writes.
func runDedup(t *testing.T, exts []graphbuild.Extraction, vecs map[string][]float32, opts graphbuild.DedupOptions) (*graphbuild.Graph, graphbuild.DedupReport, *tableEmbedder) {
	t.Helper()
	emb := newTableEmbedder(exts, opts, vecs)
	g, rep, err := graphbuild.Dedup(context.Background(), exts, emb, opts)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := graphbuild.Finalize(graphbuild.Merge(exts))
	after, rels := graphbuild.Finalize(g)
	if emb.calls != 1 || rep.Embedded != len(before) || len(emb.titles) != len(before) {
		t.Errorf("%d Embed calls of %d texts, Embedded %d; want 1 of %d (one per title)", emb.calls, len(emb.titles), rep.Embedded, len(before))
	}
	joined := 0
	for _, grp := range rep.Groups {
		joined += len(grp.Joined)
	}
	if rep.EntitiesBefore != len(before) || rep.EntitiesAfter != len(after) || len(after) != len(before)-joined {
		t.Errorf("entities before %d after %d; Finalize writes %d and %d, %d joined", rep.EntitiesBefore, rep.EntitiesAfter, len(before), len(after), joined)
	}
	if rep.RelationshipsAfter != len(rels) || rep.RelationshipsAfter != rep.RelationshipsBefore-rep.SelfLoops-rep.Combined {
		t.Errorf("relationships %d -> %d (Finalize %d), self-loops %d, combined %d: counts do not add up",
			rep.RelationshipsBefore, rep.RelationshipsAfter, len(rels), rep.SelfLoops, rep.Combined)
	}
	return g, rep, emb
}

func groupTitles(rep graphbuild.DedupReport) [][]string {
	var out [][]string
	for _, g := range rep.Groups {
		out = append(out, append([]string{g.Kept}, g.Joined...))
	}
	return out
}

// TestDedupCases checks the groups and kept titles of the hand-made
// cases against hand-written answers (TestDedupMatchesNumpy checks them
// against numpy and networkx).
func TestDedupCases(t *testing.T) {
	for _, tt := range dedupCases() {
		t.Run(tt.name, func(t *testing.T) {
			_, rep, _ := runDedup(t, tt.exts, tt.vecs, graphbuild.DedupOptions{Threshold: tt.threshold})
			if d := cmp.Diff(tt.want, groupTitles(rep)); d != "" {
				t.Errorf("groups (-want +got):\n%s", d)
			}
			if tt.wantCounts != nil {
				got := []int{rep.Repointed, rep.SelfLoops, rep.Combined}
				if !slices.Equal(got, tt.wantCounts) {
					t.Errorf("repointed, self-loops, combined = %v; want %v", got, tt.wantCounts)
				}
			}
		})
	}
}

// TestDedupMergesRecords checks the merged graph of a case with a
// self-loop, parallel relationships and two types, written out by hand.
func TestDedupMergesRecords(t *testing.T) {
	exts := []graphbuild.Extraction{
		withRels(ents("t1", ent("FRED", "PERSON", "f"), ent("EBENEZER", "MISER", "e"), ent("SCROOGE", "PERSON", "s")),
			rel("FRED", "SCROOGE", "invites", 2), rel("FRED", "EBENEZER", "is nephew of", 0.5),
			rel("EBENEZER", "SCROOGE", "is", 7), rel("SCROOGE", "FRED", "refuses", 0)),
		withRels(ents("t2", ent("SCROOGE", "PERSON", "s2"), ent("EBENEZER", "PERSON", "e2")),
			rel("FRED", "SCROOGE", "toasts", 4), rel("EBENEZER", "EBENEZER", "talks to himself", 1)),
	}
	vecs := map[string][]float32{"FRED": {0, 1}, "SCROOGE": {1, 0}, "EBENEZER": {1, 0.1}}
	g, rep, _ := runDedup(t, exts, vecs, graphbuild.DedupOptions{Threshold: 0.9})
	wantE := []graphbuild.MergedEntity{
		{Title: "FRED", Type: "PERSON", Descriptions: []string{"f"}, TextUnitIDs: []string{"t1"}, Frequency: 1},
		// EBENEZER's records of both types join SCROOGE's first type.
		{Title: "SCROOGE", Type: "PERSON", Descriptions: []string{"e", "s", "s2", "e2"},
			TextUnitIDs: []string{"t1", "t1", "t2", "t2"}, Frequency: 4},
	}
	wantR := []graphbuild.MergedRelationship{
		{Source: "FRED", Target: "SCROOGE", Descriptions: []string{"invites", "is nephew of", "toasts"},
			TextUnitIDs: []string{"t1", "t1", "t2"}, Weight: 6.5},
		{Source: "SCROOGE", Target: "FRED", Descriptions: []string{"refuses"}, TextUnitIDs: []string{"t1"}, Weight: 1},
		{Source: "SCROOGE", Target: "SCROOGE", Descriptions: []string{"talks to himself"}, TextUnitIDs: []string{"t2"}, Weight: 1},
	}
	if d := cmp.Diff(wantE, g.Entities); d != "" {
		t.Errorf("entities (-want +got):\n%s", d)
	}
	if d := cmp.Diff(wantR, g.Relationships); d != "" {
		t.Errorf("relationships (-want +got):\n%s", d)
	}
	want := graphbuild.DedupReport{
		Threshold: 0.9, Embedded: 3, EntitiesBefore: 3, EntitiesAfter: 2,
		Groups: []graphbuild.DedupGroup{{Kept: "SCROOGE", Type: "PERSON", Joined: []string{"EBENEZER"},
			Links: []graphbuild.DedupLink{{A: "EBENEZER", B: "SCROOGE", Similarity: 1 / math.Sqrt(1.01)}}, MinSimilarity: 1 / math.Sqrt(1.01)}},
		RelationshipsBefore: 5, RelationshipsAfter: 3,
		Repointed: 3, SelfLoops: 1, Combined: 1, SelfLoopRecords: 1,
	}
	if d := cmp.Diff(want, rep, cmpopts.EquateApprox(0, 1e-6)); d != "" {
		t.Errorf("report (-want +got):\n%s", d)
	}
	if s := rep.Groups[0].String(); s != `"SCROOGE" <- "EBENEZER" (similarity >= 0.995)` {
		t.Errorf("String() = %s", s)
	}
	if s := rep.String(); s != "similarity >= 0.9: 3 entities -> 2 in 1 groups; relationships 5 -> 3 (3 re-pointed, 1 self-loops dropped, 1 combined)" {
		t.Errorf("report String() = %s", s)
	}
}

// TestDedupText checks the embedded text: distinct non-blank descriptions
// in order, and the cut at a token on a character boundary.
func TestDedupText(t *testing.T) {
	enc := encoder(t)
	e := graphbuild.MergedEntity{Title: "東京", Descriptions: []string{"A city.", " ", "A city.", "Capital of Japan.", "東京都"}}
	tests := []struct {
		opts graphbuild.DedupOptions
		want string
	}{
		{graphbuild.DedupOptions{}, "東京: A city.\nCapital of Japan.\n東京都"},
		{graphbuild.DedupOptions{Encoder: enc, MaxTokens: 4}, "東京: A city"},
		{graphbuild.DedupOptions{Encoder: enc, MaxTokens: 1000}, "東京: A city.\nCapital of Japan.\n東京都"},
	}
	for _, tt := range tests {
		if got := graphbuild.DedupText(e, tt.opts); got != tt.want {
			t.Errorf("DedupText(max %d) = %q; want %q", tt.opts.MaxTokens, got, tt.want)
		}
		if tt.opts.Encoder != nil && enc.Count(tt.want) > tt.opts.MaxTokens {
			t.Errorf("%q has %d tokens; want at most %d", tt.want, enc.Count(tt.want), tt.opts.MaxTokens)
		}
	}
	if got := graphbuild.DedupText(graphbuild.MergedEntity{Title: "X", Descriptions: []string{""}}, graphbuild.DedupOptions{}); got != "X" {
		t.Errorf("DedupText without descriptions = %q; want the title", got)
	}
}

// failEmbedder answers with a fixed result.
type failEmbedder struct {
	vecs [][]float32
	err  error
}

func (f failEmbedder) Embed(context.Context, []string) ([][]float32, error) { return f.vecs, f.err }

// TestDedupErrors checks refused options and bad embedder answers.
func TestDedupErrors(t *testing.T) {
	exts := []graphbuild.Extraction{ents("t1", ent("A", "X", "a"), ent("B", "X", "b"))}
	boom := errors.New("boom")
	tests := []struct {
		name string
		opts graphbuild.DedupOptions
		emb  graphbuild.Embedder
		want string
	}{
		{"zero threshold", graphbuild.DedupOptions{}, failEmbedder{}, "threshold 0"},
		{"threshold above 1", graphbuild.DedupOptions{Threshold: 1.5}, failEmbedder{}, "threshold 1.5"},
		{"NaN threshold", graphbuild.DedupOptions{Threshold: math.NaN()}, failEmbedder{}, "threshold NaN"},
		{"embedder fails", graphbuild.DedupOptions{Threshold: 0.9}, failEmbedder{err: boom}, "embed 2 entities: boom"},
		{"too few vectors", graphbuild.DedupOptions{Threshold: 0.9}, failEmbedder{vecs: [][]float32{{1}}}, "1 vectors for 2 texts"},
		{"dimensions differ", graphbuild.DedupOptions{Threshold: 0.9}, failEmbedder{vecs: [][]float32{{1, 0}, {1}}}, "vector 1 has 1 dimensions"},
		{"zero vector", graphbuild.DedupOptions{Threshold: 0.9}, failEmbedder{vecs: [][]float32{{1, 0}, {0, 0}}}, "vector 1 has length 0"},
	}
	for _, tt := range tests {
		_, _, err := graphbuild.Dedup(context.Background(), exts, tt.emb, tt.opts)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v; want one containing %q", tt.name, err, tt.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := graphbuild.Dedup(ctx, exts, failEmbedder{vecs: [][]float32{{1}, {1}}}, graphbuild.DedupOptions{Threshold: 0.9}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: error %v; want context.Canceled", err)
	}
}

// sampleCorpus turns GraphRAG 0.3.4's final entities and relationships
// back into extraction records (an entity record in each of its text
// units, a relationship record in its first) and returns them with the
// entities' description_embedding vectors.
func sampleCorpus(t *testing.T) ([]graphbuild.Extraction, map[string][]float32) {
	t.Helper()
	ds, err := graphrag.Open(context.Background(), filepath.Join(test.GraphRAGSamples(t), "v0.3.4"))
	if err != nil {
		t.Fatal(err)
	}
	units := map[string]*graphbuild.Extraction{}
	var order []string
	unit := func(id string) *graphbuild.Extraction {
		if units[id] == nil {
			units[id] = &graphbuild.Extraction{TextUnitID: id}
			order = append(order, id)
		}
		return units[id]
	}
	vecs := map[string][]float32{}
	for _, e := range ds.Entities {
		if e.Placeholder || len(e.DescriptionEmbedding) == 0 {
			continue
		}
		v := make([]float32, len(e.DescriptionEmbedding))
		for i, f := range e.DescriptionEmbedding {
			v[i] = float32(f)
		}
		vecs[e.Title] = v
		for _, tu := range e.TextUnitIDs {
			x := unit(tu)
			x.Entities = append(x.Entities, graphbuild.Entity{Title: e.Title, Type: e.Type, Description: e.Description})
		}
	}
	for _, r := range ds.Relationships {
		if len(r.TextUnitIDs) > 0 {
			x := unit(r.TextUnitIDs[0])
			x.Relationships = append(x.Relationships, graphbuild.Relationship{Source: r.Source, Target: r.Target,
				Description: r.Description, Weight: r.Weight, HasWeight: r.HasWeight})
		}
	}
	exts := make([]graphbuild.Extraction, len(order))
	for i, id := range order {
		exts[i] = *units[id]
	}
	if len(vecs) < 100 {
		t.Fatalf("v0.3.4 sample: %d entities with embeddings; want the whole table", len(vecs))
	}
	return exts, vecs
}

// TestDedupSample runs Dedup on GraphRAG 0.3.4's entities with their own
// description embeddings and logs the groups (TestDedupMatchesNumpy
// checks them).
func TestDedupSample(t *testing.T) {
	exts, vecs := sampleCorpus(t)
	_, rep, _ := runDedup(t, exts, vecs, graphbuild.DedupOptions{Threshold: graphbuild.DefaultDedupThreshold})
	t.Logf("v0.3.4: %s", rep)
	for _, g := range rep.Groups {
		t.Log(g)
	}
	if len(rep.Groups) == 0 {
		t.Error("no groups: the sample has near-duplicate entities at 0.9")
	}
}

// clustered gives n titles vectors around k random centres in dim
// dimensions, with noise so that some pairs fall on either side of 0.9.
func clustered(seed uint64, titles []string, k, dim int) map[string][]float32 {
	r := rand.New(rand.NewPCG(seed, 7))
	centres := make([][]float64, k)
	for i := range centres {
		centres[i] = make([]float64, dim)
		for d := range centres[i] {
			centres[i][d] = r.NormFloat64()
		}
	}
	out := map[string][]float32{}
	for _, title := range titles {
		c := centres[r.IntN(k)]
		v := make([]float32, dim)
		for d := range v {
			v[d] = float32(c[d] + 0.3*r.NormFloat64())
		}
		out[title] = v
	}
	return out
}

// Job and answer of testdata/dedup_groups.py.
type (
	dedupJob struct {
		Titles      []string       `json:"titles"`
		Vectors     [][]float64    `json:"vectors"` // float32 values, exactly (JSON of float32 is not)
		Threshold   float64        `json:"threshold"`
		Extractions []pyExtraction `json:"extractions,omitempty"`
	}
	dedupOut struct {
		Groups        [][]string                 `json:"groups"`
		Links         [][3]any                   `json:"links"`
		MinSimilarity []float64                  `json:"min_similarity"`
		Entities      map[string]dedupPyEntity   `json:"entities"`
		Relationships map[string]dedupPyRelation `json:"relationships"`
	}
	dedupPyEntity struct {
		Type         string   `json:"type"`
		Descriptions []string `json:"descriptions"`
		TextUnitIDs  []string `json:"text_unit_ids"`
		Frequency    int      `json:"frequency"`
	}
	dedupPyRelation struct {
		Descriptions []string `json:"descriptions"`
		TextUnitIDs  []string `json:"text_unit_ids"`
		Weight       float64  `json:"weight"`
	}
)

// dedupRun is one Dedup run to check against numpy and networkx.
type dedupRun struct {
	name string
	exts []graphbuild.Extraction
	g    *graphbuild.Graph
	rep  graphbuild.DedupReport
	emb  *tableEmbedder
}

// TestDedupMatchesNumpy checks Dedup against numpy's cosine similarities
// and networkx's connected components on the same vectors (groups,
// links and their similarities, least similarity per group), and the
// merged graph against plain Python renaming and merging the records:
// on the hand-made cases, on a generated corpus of clustered vectors,
// and on GraphRAG 0.3.4's entities with their description embeddings.
func TestDedupMatchesNumpy(t *testing.T) {
	py := test.GraphRAGPython(t)
	var runs []dedupRun
	add := func(name string, exts []graphbuild.Extraction, vecs map[string][]float32, th float64) {
		g, rep, emb := runDedup(t, exts, vecs, graphbuild.DedupOptions{Threshold: th})
		runs = append(runs, dedupRun{name, exts, g, rep, emb})
	}
	for _, c := range dedupCases() {
		add(c.name, c.exts, c.vecs, c.threshold)
	}
	gen := generate(11, genConfig{units: 120, maxRecords: 6, titles: 300, orphans: 5, descs: 40})
	var titles []string
	for _, e := range graphbuild.Merge(gen).Entities {
		titles = append(titles, e.Title)
	}
	add("generated", gen, clustered(3, titles, 120, 32), 0.9)
	add("generated at 0.8", gen, clustered(3, titles, 120, 32), 0.8)
	exts, vecs := sampleCorpus(t)
	add("v0.3.4", exts, vecs, 0.9)
	add("v0.3.4 at 0.85", exts, vecs, 0.85)
	runs = append(runs, llmClientRun(t))

	jobs := make([]dedupJob, len(runs))
	for i, r := range runs {
		jobs[i] = dedupJob{Titles: r.emb.titles, Vectors: widen(r.emb.vecs), Threshold: r.rep.Threshold, Extractions: toPy(r.exts)}
	}
	outs := test.PythonJSONL[dedupOut](t, py, []string{filepath.Join("testdata", "dedup_groups.py")}, jobs)
	for i, r := range runs {
		t.Run(r.name, func(t *testing.T) { checkDedup(t, r, outs[i]) })
	}
}

func checkDedup(t *testing.T, r dedupRun, want dedupOut) {
	pos := map[string]int{}
	for i, title := range r.emb.titles {
		pos[title] = i
	}
	var got [][]string
	var links [][3]any
	var mins []float64
	for _, g := range r.rep.Groups {
		m := append([]string{g.Kept}, g.Joined...)
		slices.SortFunc(m, func(a, b string) int { return pos[a] - pos[b] })
		got = append(got, m)
		for _, l := range g.Links {
			links = append(links, [3]any{l.A, l.B, l.Similarity})
		}
		mins = append(mins, g.MinSimilarity)
	}
	slices.SortFunc(links, func(a, b [3]any) int {
		return cmpPos(pos, a, b)
	})
	slices.SortFunc(want.Links, func(a, b [3]any) int { return cmpPos(pos, a, b) })
	approx := cmpopts.EquateApprox(0, 1e-12)
	if d := cmp.Diff(want.Groups, got, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("groups (-networkx +Dedup):\n%s", d)
	}
	if d := cmp.Diff(want.Links, links, approx, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("links (-numpy +Dedup):\n%s", d)
	}
	if d := cmp.Diff(want.MinSimilarity, mins, approx, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("least similarity per group (-numpy +Dedup):\n%s", d)
	}

	ents, rels := graphbuild.Finalize(r.g)
	gotE := map[string]dedupPyEntity{}
	for _, e := range ents {
		gotE[e.Title] = dedupPyEntity{Type: e.Type, TextUnitIDs: sorted(e.TextUnitIDs), Frequency: int(e.Frequency)}
	}
	for _, m := range r.g.Entities {
		if x, ok := gotE[m.Title]; ok && x.Descriptions == nil {
			x.Descriptions = sorted(m.Descriptions)
			gotE[m.Title] = x
		}
	}
	delete(want.Entities, "")
	if d := cmp.Diff(want.Entities, gotE, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("entities (-python +Dedup):\n%s", d)
	}
	gotR := map[string]dedupPyRelation{}
	for i, x := range rels {
		gotR[x.Source+"\x00"+x.Target] = dedupPyRelation{Descriptions: sorted(r.g.Relationships[i].Descriptions),
			TextUnitIDs: sorted(x.TextUnitIDs), Weight: x.Weight}
	}
	if d := cmp.Diff(want.Relationships, gotR, cmpopts.EquateApprox(0, 1e-9), cmpopts.EquateEmpty()); d != "" {
		t.Errorf("relationships (-python +Dedup):\n%s", d)
	}
	t.Logf("%d groups, %d titles joined, %d relationships re-pointed", len(r.rep.Groups), r.rep.EntitiesBefore-r.rep.EntitiesAfter, r.rep.Repointed)
}

func widen(vs [][]float32) [][]float64 {
	out := make([][]float64, len(vs))
	for i, v := range vs {
		out[i] = make([]float64, len(v))
		for k, f := range v {
			out[i][k] = float64(f)
		}
	}
	return out
}

func cmpPos(pos map[string]int, a, b [3]any) int {
	pa, pb := [2]int{pos[a[0].(string)], pos[a[1].(string)]}, [2]int{pos[b[0].(string)], pos[b[1].(string)]}
	if pa[0] != pb[0] {
		return pa[0] - pb[0]
	}
	return pa[1] - pb[1]
}

func sorted(ss []string) []string {
	out := slices.Clone(ss)
	slices.Sort(out)
	return out
}

// llmClientRun runs Dedup through a real *llm.Client and embedindex's
// Batcher against the test server, whose embeddings are deterministic:
// texts sharing most words are alike. It checks that the server got the
// texts DedupText gives, in batches of 3, and returns the run with the
// server's vectors.
func llmClientRun(t *testing.T) dedupRun {
	t.Helper()
	srv := llmtest.Start(t, llmtest.Config{})
	c, err := llm.New(llm.Config{BaseURL: srv.URL(), EmbedModel: "test-embed", HTTPClient: srv.Client(), Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	long := "an old miser who keeps a counting house in London and is visited by three spirits on Christmas Eve"
	exts := []graphbuild.Extraction{
		withRels(ents("t1", ent("SCROOGE", "PERSON", long), ent("EBENEZER SCROOGE", "PERSON", long),
			ent("BOB CRATCHIT", "PERSON", "Scrooge's underpaid clerk with a large family"),
			ent("TINY TIM", "PERSON", "Bob's youngest son, who is ill"), ent("LONDON", "GEO", "the city")),
			rel("EBENEZER SCROOGE", "BOB CRATCHIT", "employs", 3), rel("SCROOGE", "BOB CRATCHIT", "pays little", 2)),
		withRels(ents("t2", ent("SCROOGE", "PERSON", long), ent("MARLEY", "PERSON", "Scrooge's dead partner")),
			rel("MARLEY", "SCROOGE", "warns", 5)),
	}
	opts := graphbuild.DedupOptions{Threshold: 0.9, Encoder: encoder(t), MaxTokens: 64}
	b := embedindex.NewBatcher(c.Embedder(), embedindex.BatchOptions{Size: 3, Concurrency: 1})
	g, rep, err := graphbuild.Dedup(context.Background(), exts, b, opts)
	if err != nil {
		t.Fatal(err)
	}
	emb := &tableEmbedder{}
	var texts []string
	for _, r := range srv.Requests() {
		texts = append(texts, r.Inputs...)
		for _, in := range r.Inputs {
			emb.vecs = append(emb.vecs, llmtest.Embed("test-embed", in, srv.Dim("test-embed")))
		}
	}
	var want []string
	for _, e := range graphbuild.Merge(exts).Entities {
		want = append(want, graphbuild.DedupText(e, opts))
		emb.titles = append(emb.titles, e.Title) // one row per title here
	}
	if n := srv.Count("/embeddings"); n != 2 || !slices.Equal(texts, want) {
		t.Fatalf("%d embedding requests of %q; want 2 (6 titles, batches of 3) of %q", n, texts, want)
	}
	return dedupRun{"llm client", exts, g, rep, emb}
}

// TestDedupLLMClient checks the groups and the merged relationships of
// llmClientRun (TestDedupMatchesNumpy checks them against numpy).
func TestDedupLLMClient(t *testing.T) {
	r := llmClientRun(t)
	if d := cmp.Diff([][]string{{"SCROOGE", "EBENEZER SCROOGE"}}, groupTitles(r.rep)); d != "" {
		t.Errorf("groups (-want +got):\n%s", d)
	}
	if len(r.g.Relationships) != 2 || r.g.Relationships[0].Weight != 5 {
		t.Errorf("relationships %+v; want SCROOGE -> BOB CRATCHIT weighing 3+2, MARLEY -> SCROOGE", r.g.Relationships)
	}
}

// BenchmarkDedup measures the pair search: 2,000 titles of 768
// dimensions, each in one record, with a table embedder.
func BenchmarkDedup(b *testing.B) {
	titles := make([]string, 2000)
	exts := make([]graphbuild.Extraction, len(titles))
	for i := range titles {
		titles[i] = fmt.Sprintf("E%04d", i)
		exts[i] = ents(fmt.Sprintf("t%d", i), ent(titles[i], "X", "d"))
	}
	vecs := clustered(1, titles, 500, 768)
	opts := graphbuild.DedupOptions{Threshold: 0.9}
	emb := newTableEmbedder(exts, opts, vecs)
	for b.Loop() {
		if _, _, err := graphbuild.Dedup(context.Background(), exts, emb, opts); err != nil {
			b.Fatal(err)
		}
	}
}
