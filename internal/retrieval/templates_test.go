package retrieval_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/internal/tokens"
)

// runOracle runs a pyarrow script of scripts/oracle and decodes its JSON
// output into v.
func runOracle(t *testing.T, v any, script string, args ...string) {
	t.Helper()
	path := filepath.Join(test.RepoRoot(t), "scripts", "oracle", script)
	out, err := exec.Command("python3", append([]string{path}, args...)...).Output()
	if err != nil {
		test.SkipOrFail(t, "oracle %s (python3 with pyarrow): %v", script, err)
	}
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("oracle %s: %v", script, err)
	}
}

// retrievalOracle is the output of scripts/oracle/retrieval.py: the
// retrievals of the fixed queries, each fully ordered.
type retrievalOracle struct {
	Entities    [][]any            `json:"entities"`    // id, human_readable_id, title, type, degree
	Inside      [][]any            `json:"inside"`      // id, source_id, target_id, rank, weight
	Outside     [][]any            `json:"outside"`     // the same
	TextUnits   [][]any            `json:"text_units"`  // id, n_tokens, selected
	Communities map[string][][]any `json:"communities"` // level -> community, selected, rank
}

// seedOracle is the output of scripts/oracle/seed.py: what the RDF article's own
// queries read for the first N entities, unordered.
type seedOracle struct {
	IDs         []string `json:"ids"`
	Chunks      [][]any  `json:"chunks"`      // text, freq
	Communities [][]any  `json:"communities"` // community, rank, weight (all levels)
	Outside     [][]any  `json:"outside"`     // description, from_id, to_id, rank, weight
	Inside      [][]any  `json:"inside"`      // the same
	Entities    [][]any  `json:"entities"`    // id, description
}

func rows[T any](recs []T, f func(T) []any) [][]any {
	out := [][]any{}
	for _, r := range recs {
		out = append(out, f(r))
	}
	return out
}

func relRow(r retrieval.RelationshipRecord) []any {
	return []any{r.RelationshipID, r.SourceID, r.TargetID, float64(r.Rank), r.Weight}
}

// compareRows fails when got differs from want, or when want is empty
// (the comparison would prove nothing).
func compareRows(t *testing.T, what string, want, got [][]any, opts ...cmp.Option) {
	t.Helper()
	if len(want) == 0 {
		t.Errorf("%s: the oracle has no rows: the test would prove nothing", what)
	}
	if diff := cmp.Diff(want, got, opts...); diff != "" {
		t.Errorf("%s: %d rows, pyarrow %d (-pyarrow +memory):\n%s", what, len(got), len(want), diff)
	}
}

// TestTemplatesMemoryOracle checks MemorySource's sparql-templates lookups on the v3 sample against
// two pyarrow oracles that read the parquet files directly: retrieval.py
// for the records and their order (the fixed queries' order, in full and
// cut at the RDF article's limits), and seed.py for what the RDF article's own queries
// read (descriptions, chunk texts and counts, community ranks and weights,
// relationships), with the RDF article's filters replaced by the fixed ones here.
func TestTemplatesMemoryOracle(t *testing.T) {
	ctx := context.Background()
	ds, byDegree := openV3(t)
	dir := filepath.Join(test.GraphRAGSamples(t), "v3")
	var seed seedOracle
	runOracle(t, &seed, "seed.py", dir, "10")
	b := retrieval.NewMemorySource(ds)

	for _, sel := range []struct {
		name string
		ids  []string
	}{{"first 10 entities", seed.IDs}, {"sampleTitles", byDegree}} {
		t.Run(sel.name, func(t *testing.T) {
			var want retrievalOracle
			runOracle(t, &want, "retrieval.py", append([]string{dir}, sel.ids...)...)

			ents, err := b.TemplateEntities(ctx, append(sel.ids, "no such entity"))
			if err != nil {
				t.Fatal(err)
			}
			compareRows(t, "entities", rows(want.Entities, func(r []any) []any { return []any{r[0], r[1], r[2], r[4]} }),
				rows(ents, func(e retrieval.EntityRecord) []any {
					return []any{e.EntityID, e.ID, e.Title, float64(e.Rank)}
				}))

			for _, limit := range []int{0, 10} {
				in, out, err := b.TemplateRelationships(ctx, sel.ids, limit)
				if err != nil {
					t.Fatal(err)
				}
				compareRows(t, fmt.Sprintf("inside relationships, limit %d", limit), first(want.Inside, limit), rows(in, relRow))
				compareRows(t, fmt.Sprintf("outside relationships, limit %d", limit), first(want.Outside, limit), rows(out, relRow))
			}
			for _, limit := range []int{0, 3} {
				chunks, err := b.TemplateChunks(ctx, sel.ids, limit)
				if err != nil {
					t.Fatal(err)
				}
				compareRows(t, fmt.Sprintf("chunks, limit %d", limit), first(want.TextUnits, limit),
					rows(chunks, func(c retrieval.TemplateChunk) []any {
						return []any{c.TextUnitID, float64(c.NTokens), float64(c.SelectedEntities)}
					}))
				for _, level := range []int64{0, 1} {
					comms, err := b.TemplateCommunities(ctx, sel.ids, level, limit)
					if err != nil {
						t.Fatal(err)
					}
					compareRows(t, fmt.Sprintf("communities at level %d, limit %d", level, limit),
						first(want.Communities[fmt.Sprint(level)], limit),
						rows(comms, func(c retrieval.TemplateCommunity) []any {
							if c.Level != level || c.Summary == "" || c.Title == "" {
								t.Errorf("community %s: level %d, summary %q, title %q", c.ID, c.Level, c.Summary, c.Title)
							}
							n, err := strconv.ParseFloat(c.ID, 64)
							if err != nil {
								t.Errorf("community id %q: %v", c.ID, err)
							}
							return []any{n, float64(c.SelectedEntities), c.Rank}
						}))
				}
			}
		})
	}

	t.Run("the RDF article's own reads", func(t *testing.T) {
		ids := seed.IDs
		ents, err := b.TemplateEntities(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		flat := strings.NewReplacer("\r\n", " ") // the RDF article's REPLACE
		sorted := func(r [][]any) [][]any {
			slices.SortFunc(r, func(x, y []any) int { return strings.Compare(fmt.Sprint(x...), fmt.Sprint(y...)) })
			return r
		}
		compareRows(t, "entity descriptions", sorted(seed.Entities), sorted(rows(ents, func(e retrieval.EntityRecord) []any {
			return []any{e.EntityID, flat.Replace(e.Description)}
		})))

		chunks, err := b.TemplateChunks(ctx, ids, 0)
		if err != nil {
			t.Fatal(err)
		}
		compareRows(t, "chunk texts and counts", sorted(seed.Chunks), sorted(rows(chunks, func(c retrieval.TemplateChunk) []any {
			return []any{flat.Replace(c.Text), float64(c.SelectedEntities)}
		})))

		// seed.py mixes levels, as the RDF article did: every level together.
		var comms []retrieval.TemplateCommunity
		for level := int64(0); level <= 3; level++ {
			cs, err := b.TemplateCommunities(ctx, ids, level, 0)
			if err != nil {
				t.Fatal(err)
			}
			comms = append(comms, cs...)
		}
		compareRows(t, "community ranks and weights", sorted(seed.Communities), sorted(rows(comms, func(c retrieval.TemplateCommunity) []any {
			return []any{c.ID, c.Rank, c.Weight}
		})), cmpopts.EquateApprox(0, 1e-12))

		// seed.py's inside and outside lists hold every relationship (its
		// filters look at the target only); the fixed ones are those with
		// both ends, and with exactly one, among the selected entities.
		sel := map[string]bool{}
		for _, id := range ids {
			sel[id] = true
		}
		var wantIn, wantOut [][]any
		for _, r := range append(seed.Inside, seed.Outside...) {
			switch n := btoi(sel[r[1].(string)]) + btoi(sel[r[2].(string)]); n {
			case 2:
				wantIn = append(wantIn, r)
			case 1:
				wantOut = append(wantOut, r)
			}
		}
		in, out, err := b.TemplateRelationships(ctx, ids, 0)
		if err != nil {
			t.Fatal(err)
		}
		seedRel := func(r retrieval.RelationshipRecord) []any {
			return []any{strings.ReplaceAll(r.Description, "\r\n", ""), r.SourceID, r.TargetID, float64(r.Rank), r.Weight}
		}
		compareRows(t, "inside relationships", sorted(wantIn), sorted(rows(in, seedRel)))
		compareRows(t, "outside relationships", sorted(wantOut), sorted(rows(out, seedRel)))
	})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// first returns the first limit rows (all when limit is 0), never nil.
func first(r [][]any, limit int) [][]any {
	if limit > 0 && len(r) > limit {
		r = r[:limit]
	}
	return append([][]any{}, r...)
}

// tinySeed is tiny() with the links graphrag.Open fills in: each text
// unit's entity ids and each entity's communities.
func tinySeed() *graphrag.Dataset {
	ds := tiny()
	units := map[string]*graphrag.TextUnit{}
	for i := range ds.TextUnits {
		units[ds.TextUnits[i].ID] = &ds.TextUnits[i]
	}
	ents := map[string]*graphrag.Entity{}
	for i := range ds.Entities {
		e := &ds.Entities[i]
		ents[e.ID] = e
		for _, u := range e.TextUnitIDs {
			units[u].EntityIDs = append(units[u].EntityIDs, e.ID)
		}
	}
	for _, c := range ds.Communities {
		for _, id := range c.EntityIDs {
			ents[id].Communities = append(ents[id].Communities, c.Community)
		}
	}
	return ds
}

// tinySeedText is the context of b and a at level 0 with the RDF article's
// defaults: A's description needs quoting.
const tinySeedText = `-----Reports-----
id|title|summary
0|Community 0|sum 0


-----Entities-----
id|entity|description|number of relationships
1|B|about B|3
0|A|"about A|""the first""
line 2"|3


-----Relationships-----
id|source|target|description|weight
0|A|B|a to b|1.0
3|A|D|a to d|1.0
1|A|C|a to c|1.0
5|E|B|e to b|1.0
2|B|C|b to c|1.0


-----Sources-----
id|text
1|unit one
0|unit zero
2|unit two
`

func TestTemplatesContextTiny(t *testing.T) {
	tests := []struct {
		name     string
		selected []string
		edit     func(*retrieval.TemplatesParams)
		text     string   // whole text, when given
		reports  []string // else the ids per table
		entities []string
		rels     []string
		chunks   []string
	}{
		{
			// Inside: r0 (A-B). Outside, by rank: r3 (20), r1 (10), r5 (7),
			// r2 (3); r4 (C-D) touches neither. Chunks: t1 holds both.
			// Entities in selection order.
			name: "defaults", selected: []string{"b", "a"}, text: tinySeedText,
		},
		{
			name: "unknown and repeated ids are ignored", selected: []string{"x", "b", "b", "a", "x"}, text: tinySeedText,
		},
		{
			// Level 1: A's community 1 (rank 9), B's community 2 (rank 1).
			name: "community level 1", selected: []string{"a", "b"},
			edit:    func(p *retrieval.TemplatesParams) { p.CommunityLevel = 1 },
			reports: []string{"1", "2"}, entities: []string{"0", "1"},
			rels: []string{"0", "3", "1", "5", "2"}, chunks: []string{"1", "0", "2"},
		},
		{
			name: "limits", selected: []string{"a", "b"},
			edit: func(p *retrieval.TemplatesParams) {
				p.TopInside, p.TopOutside, p.TopChunks, p.TopCommunities = 0, 2, 1, 0
			},
			entities: []string{"0", "1"}, rels: []string{"3", "1"}, chunks: []string{"1"},
		},
		{
			// C: r4 (C-D, 100) is outside now; community 0 holds C at
			// level 0, community 2 at level 1.
			name: "a neighbour", selected: []string{"c"},
			reports: []string{"0"}, entities: []string{"2"},
			rels: []string{"4", "1", "2"},
		},
		{
			name: "nothing selected", selected: []string{"x"}, text: "",
		},
	}
	enc, err := encoderOnce()
	if err != nil {
		t.Fatal(err)
	}
	ds := tinySeed()
	ds.Entities[0].Description = "about A|\"the first\"\nline 2"
	b := retrieval.NewMemorySource(ds)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := retrieval.DefaultTemplatesParams()
			if tt.edit != nil {
				tt.edit(&p)
			}
			sb, err := retrieval.NewTemplatesBuilder(b, p, enc)
			if err != nil {
				t.Fatal(err)
			}
			got, err := sb.TemplatesContext(context.Background(), tt.selected)
			if err != nil {
				t.Fatal(err)
			}
			if n := enc.Count(got.Text); n != got.Tokens {
				t.Errorf("Tokens = %d; the text has %d", got.Tokens, n)
			}
			if tt.text != "" || tt.reports == nil && tt.entities == nil {
				if diff := cmp.Diff(tt.text, got.Text); diff != "" {
					t.Errorf("TemplatesContext(%q) text (-want +got):\n%s", tt.selected, diff)
				}
				return
			}
			want := map[string][]string{"reports": tt.reports, "entities": tt.entities, "relationships": tt.rels, "chunks": tt.chunks}
			if diff := cmp.Diff(want, seedIDs(got), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("TemplatesContext(%q) record ids per table (-want +got):\n%s", tt.selected, diff)
			}
		})
	}
}

// seedIDs returns the printed ids of r's records per table.
func seedIDs(r *retrieval.TemplatesResult) map[string][]string {
	return map[string][]string{
		"reports":       ids(r.Communities, func(c retrieval.TemplateCommunity) string { return c.ID }),
		"entities":      ids(r.Entities, func(e retrieval.EntityRecord) string { return e.ID }),
		"relationships": ids(r.Relationships, func(r retrieval.RelationshipRecord) string { return r.ID }),
		"chunks":        ids(r.Chunks, func(c retrieval.TemplateChunk) string { return c.ID }),
	}
}

// TestTemplatesContextBudget shrinks the budget on the v3 sample: the text
// keeps to it, each table keeps a prefix of its unlimited rows, every
// record kept is printed, and the generous default budget keeps all.
func TestTemplatesContextBudget(t *testing.T) {
	ctx := context.Background()
	ds, selected := openV3(t)
	enc, err := encoderOnce()
	if err != nil {
		t.Fatal(err)
	}
	b := retrieval.NewMemorySource(ds)
	build := func(max int) *retrieval.TemplatesResult {
		t.Helper()
		p := retrieval.DefaultTemplatesParams()
		p.MaxContextTokens = max
		sb, err := retrieval.NewTemplatesBuilder(b, p, enc)
		if err != nil {
			t.Fatal(err)
		}
		r, err := sb.TemplatesContext(ctx, selected)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	all := build(1 << 30)
	if len(all.Entities) != 10 || len(all.Chunks) != 3 || len(all.Communities) != 3 || len(all.Relationships) != 20 {
		t.Fatalf("unlimited: %d entities, %d chunks, %d communities, %d relationships; want 10, 3, 3, 20",
			len(all.Entities), len(all.Chunks), len(all.Communities), len(all.Relationships))
	}
	for _, max := range []int{50, 300, 1000, 3000, 6000, retrieval.DefaultTemplatesParams().MaxContextTokens} {
		got := build(max)
		if n := enc.Count(got.Text); n != got.Tokens || n > max {
			t.Errorf("max %d: Tokens = %d, counted %d; want equal and <= max", max, got.Tokens, n)
		}
		prefix := func(what string, n, of int) {
			if n > of {
				t.Errorf("max %d: %d %s of %d", max, n, what, of)
			}
		}
		prefix("entities", len(got.Entities), len(all.Entities))
		prefix("relationships", len(got.Relationships), len(all.Relationships))
		prefix("communities", len(got.Communities), len(all.Communities))
		prefix("chunks", len(got.Chunks), len(all.Chunks))
		if diff := cmp.Diff(all.Entities[:len(got.Entities)], got.Entities); diff != "" {
			t.Errorf("max %d: entities are not a prefix:\n%s", max, diff)
		}
		if diff := cmp.Diff(all.Relationships[:len(got.Relationships)], got.Relationships); diff != "" {
			t.Errorf("max %d: relationships are not a prefix:\n%s", max, diff)
		}
		if diff := cmp.Diff(all.Communities[:len(got.Communities)], got.Communities); diff != "" {
			t.Errorf("max %d: communities are not a prefix:\n%s", max, diff)
		}
		if diff := cmp.Diff(all.Chunks[:len(got.Chunks)], got.Chunks); diff != "" {
			t.Errorf("max %d: chunks are not a prefix:\n%s", max, diff)
		}
		for _, id := range slices.Concat(
			ids(got.Entities, func(r retrieval.EntityRecord) string { return r.ID + "|" + r.Title }),
			ids(got.Relationships, func(r retrieval.RelationshipRecord) string { return r.ID + "|" + r.Source }),
			ids(got.Communities, func(r retrieval.TemplateCommunity) string { return r.ID + "|" }),
			ids(got.Chunks, func(r retrieval.TemplateChunk) string { return r.ID + "|" }),
		) {
			if !strings.Contains(got.Text, "\n"+id) {
				t.Errorf("max %d: no row starts with %q", max, id)
			}
		}
		if max == retrieval.DefaultTemplatesParams().MaxContextTokens && got.Retrieved != len(got.Entities)+len(got.Relationships)+len(got.Communities)+len(got.Chunks) {
			t.Errorf("default budget: %d of %d records kept; want all", len(got.Entities)+len(got.Relationships)+len(got.Communities)+len(got.Chunks), got.Retrieved)
		}
		t.Logf("max %d: %d tokens; %d entities, %d relationships, %d communities, %d chunks",
			max, got.Tokens, len(got.Entities), len(got.Relationships), len(got.Communities), len(got.Chunks))
	}
}

// failingSeed fails the lookup named fail.
type failingSeed struct {
	retrieval.TemplatesBackend
	fail string
}

var errLookup = errors.New("lookup failed")

func (f failingSeed) TemplateChunks(ctx context.Context, ids []string, limit int) ([]retrieval.TemplateChunk, error) {
	if f.fail == "chunks" {
		return nil, errLookup
	}
	return f.TemplatesBackend.TemplateChunks(ctx, ids, limit)
}

func (f failingSeed) TemplateCommunities(ctx context.Context, ids []string, level int64, limit int) ([]retrieval.TemplateCommunity, error) {
	if f.fail == "communities" {
		return nil, errLookup
	}
	return f.TemplatesBackend.TemplateCommunities(ctx, ids, level, limit)
}

func TestTemplatesContextErrors(t *testing.T) {
	enc, err := encoderOnce()
	if err != nil {
		t.Fatal(err)
	}
	build := func(b retrieval.TemplatesBackend) *retrieval.TemplatesBuilder {
		sb, err := retrieval.NewTemplatesBuilder(b, retrieval.DefaultTemplatesParams(), enc)
		if err != nil {
			t.Fatal(err)
		}
		return sb
	}
	for _, fail := range []string{"chunks", "communities"} {
		_, err := build(failingSeed{retrieval.NewMemorySource(tinySeed()), fail}).TemplatesContext(context.Background(), []string{"a"})
		if !errors.Is(err, errLookup) || !strings.Contains(err.Error(), fail) {
			t.Errorf("failing %s: error %v; want one naming %s and wrapping %v", fail, err, fail, errLookup)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := build(retrieval.NewMemorySource(tinySeed())).TemplatesContext(ctx, []string{"a"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: error %v; want context.Canceled", err)
	}
}

func TestTemplatesParamsValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*retrieval.TemplatesParams)
		ok   bool
	}{
		{"defaults", func(*retrieval.TemplatesParams) {}, true},
		{"no chunks", func(p *retrieval.TemplatesParams) { p.TopChunks = 0 }, true},
		{"negative limit", func(p *retrieval.TemplatesParams) { p.TopOutside = -1 }, false},
		{"negative level", func(p *retrieval.TemplatesParams) { p.CommunityLevel = -1 }, false},
		{"no budget", func(p *retrieval.TemplatesParams) { p.MaxContextTokens = 0 }, false},
		{"no delimiter", func(p *retrieval.TemplatesParams) { p.ColumnDelimiter = "" }, false},
	}
	for _, tt := range tests {
		p := retrieval.DefaultTemplatesParams()
		tt.edit(&p)
		if err := p.Validate(); (err == nil) != tt.ok {
			t.Errorf("%s: Validate() = %v; want ok %v", tt.name, err, tt.ok)
		}
	}
	p := retrieval.DefaultTemplatesParams()
	p.Encoding = "nope"
	if _, err := retrieval.NewTemplatesBuilder(retrieval.NewMemorySource(tinySeed()), p, nil); err == nil {
		t.Errorf("NewTemplatesBuilder with encoding %q: nil error; want one", p.Encoding)
	}
	enc, err := encoderOnce()
	if err != nil {
		t.Fatal(err)
	}
	p = retrieval.DefaultTemplatesParams()
	p.Encoding = tokens.EncodingO200K
	if _, err := retrieval.NewTemplatesBuilder(retrieval.NewMemorySource(tinySeed()), p, enc); err == nil {
		t.Errorf("NewTemplatesBuilder with a cl100k encoder for %s: nil error; want one", p.Encoding)
	}
}

// BenchmarkTemplatesContext measures sparql-templates mode in memory on the v3 sample (no
// LLM, no embedding): the four lookups, ranking and token counting.
func BenchmarkTemplatesContext(b *testing.B) {
	ds, err := graphrag.Open(context.Background(), filepath.Join(test.GraphRAGSamples(b), "v3"))
	if err != nil {
		b.Fatal(err)
	}
	var selected []string
	for _, e := range ds.Entities[:10] {
		selected = append(selected, e.ID)
	}
	enc, err := encoderOnce()
	if err != nil {
		b.Fatal(err)
	}
	sb, err := retrieval.NewTemplatesBuilder(retrieval.NewMemorySource(ds), retrieval.DefaultTemplatesParams(), enc)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := sb.TemplatesContext(context.Background(), selected); err != nil {
			b.Fatal(err)
		}
	}
}
