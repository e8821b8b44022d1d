package retrieval_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/internal/tokens"
)

// encoder builds one cl100k encoder for the whole test binary run of a test.
var encoderOnce = sync.OnceValues(func() (*tokens.Encoder, error) {
	return tokens.NewEncoder(tokens.EncodingCL100K)
})

func newBuilder(t *testing.T, b retrieval.Backend, p retrieval.Params) *retrieval.Builder {
	t.Helper()
	enc, err := encoderOnce()
	if err != nil {
		t.Fatal(err)
	}
	bld, err := retrieval.NewBuilderWithEncoder(b, p, enc)
	if err != nil {
		t.Fatal(err)
	}
	return bld
}

// sampleTitles are the fixed selection on the v3 sample, in "kNN" order.
var sampleTitles = []string{
	"SCROOGE", "EBENEZER SCROOGE", "BOB CRATCHIT", "CHRISTMAS", "TINY TIM",
	"JACOB MARLEY", "FRED", "FEZZIWIG", "CRATCHIT FAMILY", "GHOST OF CHRISTMAS PRESENT",
}

func openV3(t *testing.T) (*graphrag.Dataset, []string) {
	t.Helper()
	ds, err := graphrag.Open(context.Background(), filepath.Join(test.GraphRAGSamples(t), "v3"))
	if err != nil {
		t.Fatal(err)
	}
	byTitle := map[string]string{}
	for _, e := range ds.Entities {
		byTitle[e.Title] = e.ID
	}
	var ids []string
	for _, title := range sampleTitles {
		id, ok := byTitle[title]
		if !ok {
			t.Fatalf("v3 sample has no entity %q", title)
		}
		ids = append(ids, id)
	}
	return ds, ids
}

// TestLocalContextV3 runs the fixed selection on the v3 sample with
// GraphRAG's defaults and with twice the budget. With the defaults the
// sample's long descriptions crowd out the relationships (the entities
// table takes ~3400 of 4200 tokens and even the first entity's relationships
// do not fit beside it) and the best-ranked report (1900 tokens) is larger
// than the 1800-token report share, so GraphRAG, and kgrag, print no
// relationships and no reports; at 24000 tokens every section is filled.
func TestLocalContextV3(t *testing.T) {
	ds, selected := openV3(t)
	for _, max := range []int{12000, 24000} {
		p := retrieval.DefaultParams()
		p.MaxContextTokens = max
		got, err := newBuilder(t, retrieval.NewMemoryBackend(ds), p).LocalContext(context.Background(), selected)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Entities) != 10 || len(got.TextUnits) == 0 {
			t.Errorf("max %d: got %d entities, %d text units; want 10 and some", max, len(got.Entities), len(got.TextUnits))
		}
		if max == 12000 && (len(got.Reports) != 0 || len(got.Relationships) != 0) {
			t.Errorf("max %d: got %d reports, %d relationships; want none", max, len(got.Reports), len(got.Relationships))
		}
		if max == 24000 && (len(got.Reports) == 0 || got.RelationshipEntities == 0 || len(got.Relationships) == 0 || countInside(got.Relationships) == 0) {
			t.Errorf("max %d: got %d reports, %d relationships (%d inside); want some of each",
				max, len(got.Reports), len(got.Relationships), countInside(got.Relationships))
		}
		checkV3(t, got, selected, p)

		// Deterministic: a second run, on a fresh backend, gives the same context.
		again, err := newBuilder(t, retrieval.NewMemoryBackend(ds), p).LocalContext(context.Background(), selected)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(got, again); diff != "" {
			t.Errorf("max %d: second run differs (-first +second):\n%s", max, diff)
		}
	}
}

func checkV3(t *testing.T, got *retrieval.Context, selected []string, p retrieval.Params) {
	t.Helper()
	enc, _ := encoderOnce()
	if n := enc.Count(got.Text); n != got.Tokens || n > p.MaxContextTokens {
		t.Errorf("Tokens = %d, counted %d; want equal and <= %d", got.Tokens, n, p.MaxContextTokens)
	}
	if max := int(float64(p.MaxContextTokens) * p.TextUnitProp); got.TextUnitTokens > max {
		t.Errorf("TextUnitTokens = %d; want <= %d", got.TextUnitTokens, max)
	}
	if max := int(float64(p.MaxContextTokens) * p.CommunityProp); got.ReportTokens > max {
		t.Errorf("ReportTokens = %d; want <= %d", got.ReportTokens, max)
	}
	for i, e := range got.Entities {
		if e.EntityID != selected[i] {
			t.Errorf("Entities[%d] = %s; want %s (kNN order)", i, e.EntityID, selected[i])
		}
	}
	// Inside relationships first, both ends selected; outside ones after,
	// ranked by links then combined degree.
	sel := map[string]bool{}
	for _, id := range selected[:got.RelationshipEntities] {
		sel[id] = true
	}
	seenOutside := false
	for i, r := range got.Relationships {
		inside := sel[r.SourceID] && sel[r.TargetID]
		if inside != r.Inside {
			t.Errorf("Relationships[%d] (%s) Inside = %v; want %v", i, r.ID, r.Inside, inside)
		}
		if !inside && !sel[r.SourceID] && !sel[r.TargetID] {
			t.Errorf("Relationships[%d] (%s) touches no selected entity", i, r.ID)
		}
		if inside && seenOutside {
			t.Errorf("Relationships[%d] (%s) is inside after an outside one", i, r.ID)
		}
		seenOutside = seenOutside || !inside
		if i > 0 {
			prev := got.Relationships[i-1]
			if prev.Inside == r.Inside && (prev.Links < r.Links || prev.Links == r.Links && prev.Rank < r.Rank) {
				t.Errorf("Relationships[%d] (links %d, rank %d) ranks above Relationships[%d] (links %d, rank %d)",
					i, r.Links, r.Rank, i-1, prev.Links, prev.Rank)
			}
		}
	}
	if n := len(got.Relationships); n > p.TopKRelationships*got.RelationshipEntities+countInside(got.Relationships) {
		t.Errorf("%d relationships exceed top_k_relationships per entity", n)
	}
	for i := 1; i < len(got.TextUnits); i++ {
		a, b := got.TextUnits[i-1], got.TextUnits[i]
		if a.EntityOrder > b.EntityOrder || a.EntityOrder == b.EntityOrder && a.Relationships < b.Relationships {
			t.Errorf("TextUnits[%d] (order %d, rels %d) after TextUnits[%d] (order %d, rels %d)",
				i, b.EntityOrder, b.Relationships, i-1, a.EntityOrder, a.Relationships)
		}
	}
	for i := 1; i < len(got.Reports); i++ {
		a, b := got.Reports[i-1], got.Reports[i]
		if len(a.Members) < len(b.Members) || len(a.Members) == len(b.Members) && a.Rank < b.Rank {
			t.Errorf("Reports[%d] (%d members, rank %g) after Reports[%d] (%d members, rank %g)",
				i, len(b.Members), b.Rank, i-1, len(a.Members), a.Rank)
		}
	}
	headers := []struct {
		n    int
		text string
	}{
		{len(got.Reports), "-----Reports-----\nid|title|content\n"},
		{len(got.Entities), "-----Entities-----\nid|entity|description|number of relationships\n"},
		{len(got.Relationships), "-----Relationships-----\nid|source|target|description|weight\n"},
		{len(got.TextUnits), "-----Sources-----\nid|text\n"},
	}
	for _, h := range headers {
		if strings.Contains(got.Text, h.text) != (h.n > 0) {
			t.Errorf("context holds %q: %v; want %v", h.text, !(h.n > 0), h.n > 0)
		}
	}
	for _, e := range got.Entities {
		if !strings.Contains(got.Text, "\n"+e.ID+"|"+e.Title+"|") {
			t.Errorf("context lacks entity row %s|%s", e.ID, e.Title)
		}
	}
	for _, r := range got.Relationships {
		if !strings.Contains(got.Text, "\n"+r.ID+"|"+r.Source+"|"+r.Target+"|") {
			t.Errorf("context lacks relationship row %s", r.ID)
		}
	}
	for _, u := range got.TextUnits {
		if !strings.Contains(got.Text, "\n"+u.ID+"|") {
			t.Errorf("context lacks text unit row %s", u.ID)
		}
	}
	for _, r := range got.Reports {
		if !strings.Contains(got.Text, "\n"+r.ID+"|") {
			t.Errorf("context lacks report row %s", r.ID)
		}
	}
	if testing.Verbose() {
		t.Logf("max %d: tokens %d (reports %d, local %d, units %d); %d reports, %d relationships (%d inside, of %d entities), %d text units",
			p.MaxContextTokens, got.Tokens, got.ReportTokens, got.LocalTokens, got.TextUnitTokens,
			len(got.Reports), len(got.Relationships), countInside(got.Relationships), got.RelationshipEntities, len(got.TextUnits))
	}
}

func countInside(rels []retrieval.RelationshipRecord) int {
	n := 0
	for _, r := range rels {
		if r.Inside {
			n++
		}
	}
	return n
}

// TestLocalContextBudgets shrinks the budget: every section keeps to its
// share and the whole to the maximum.
func TestLocalContextBudgets(t *testing.T) {
	ds, selected := openV3(t)
	enc, _ := encoderOnce()
	for _, max := range []int{500, 2000, 4000, 8000} {
		p := retrieval.DefaultParams()
		p.MaxContextTokens = max
		got, err := newBuilder(t, retrieval.NewMemoryBackend(ds), p).LocalContext(context.Background(), selected)
		if err != nil {
			t.Fatal(err)
		}
		if n := enc.Count(got.Text); n > max {
			t.Errorf("max %d: context has %d tokens", max, n)
		}
		if u := int(float64(max) * p.TextUnitProp); got.TextUnitTokens > u {
			t.Errorf("max %d: text units %d tokens; want <= %d", max, got.TextUnitTokens, u)
		}
		if c := int(float64(max) * p.CommunityProp); got.ReportTokens > c {
			t.Errorf("max %d: reports %d tokens; want <= %d", max, got.ReportTokens, c)
		}
		if l := int(float64(max) * (1 - p.CommunityProp - p.TextUnitProp)); got.LocalTokens > l+2 {
			// +2: the blank line joining entities and relationships is
			// not counted, as in GraphRAG.
			t.Errorf("max %d: entities and relationships %d tokens; want <= %d", max, got.LocalTokens, l)
		}
	}
}

// tiny is a hand-made graph:
//
//	entities A B C D E (ids a..e, human_readable_id 0..4)
//	r0 A-B rank 5, r1 A-C rank 10, r2 B-C rank 3, r3 A-D rank 20,
//	r4 C-D rank 100, r5 E-B rank 7
//	units t0 t1 t2; A in [t0 t1], B in [t2 t1]
//	communities: 0 (level 0: A B C, rank 5), 1 (level 1: A, rank 9),
//	2 (level 1: B C, rank 1), 3 (level 0: D E, rank 10)
func tiny() *graphrag.Dataset {
	ent := func(id, hr, title string, deg int64, tus ...string) graphrag.Entity {
		return graphrag.Entity{ID: id, HumanReadableID: hr, Title: title, Description: "about " + title,
			Degree: deg, HasDegree: true, TextUnitIDs: tus}
	}
	rel := func(hr, src, dst string, rank int64, tus ...string) graphrag.Relationship {
		return graphrag.Relationship{ID: "r" + hr, HumanReadableID: hr,
			Source: strings.ToUpper(src), Target: strings.ToUpper(dst), SourceID: src, TargetID: dst,
			Description: src + " to " + dst, Weight: 1, HasWeight: true, Rank: rank, HasRank: true, TextUnitIDs: tus}
	}
	comm := func(n string, level int64, rank float64, members ...string) graphrag.Community {
		return graphrag.Community{ID: "c" + n, HumanReadableID: n, Community: n, Level: level, EntityIDs: members,
			Report: &graphrag.CommunityReport{Community: n, Level: level, Title: "Community " + n,
				Summary: "sum " + n, FullContent: "full " + n, Rank: rank, HasRank: true}}
	}
	return &graphrag.Dataset{
		Entities: []graphrag.Entity{
			ent("a", "0", "A", 3, "t0", "t1"), ent("b", "1", "B", 3, "t2", "t1"),
			ent("c", "2", "C", 3), ent("d", "3", "D", 2), ent("e", "4", "E", 1),
		},
		Relationships: []graphrag.Relationship{
			rel("0", "a", "b", 5, "t1"), rel("1", "a", "c", 10, "t1"), rel("2", "b", "c", 3, "t2"),
			rel("3", "a", "d", 20, "t0"), rel("4", "c", "d", 100), rel("5", "e", "b", 7),
		},
		TextUnits: []graphrag.TextUnit{
			{ID: "t0", HumanReadableID: "0", Text: "unit zero"},
			{ID: "t1", HumanReadableID: "1", Text: "unit one"},
			{ID: "t2", HumanReadableID: "2", Text: "unit two"},
		},
		Communities: []graphrag.Community{
			comm("0", 0, 5, "a", "b", "c"), comm("1", 1, 9, "a"), comm("2", 1, 1, "b", "c"), comm("3", 0, 10, "d", "e"),
		},
	}
}

func TestLocalContextTiny(t *testing.T) {
	tests := []struct {
		name     string
		selected []string
		edit     func(*retrieval.Params)
		reports  []string
		entities []string
		rels     []string
		units    []string
	}{
		{
			// Inside r0; outside by links (C links to A and B) then rank:
			// r1, r2 (links 2), r3, r5 (links 1); r4 touches no selected
			// entity. Units: A's t1 (2 of A's relationships) before t0 (1),
			// then B's t2. Reports: every community up to level 2, by
			// members (0 holds both), then rank (1 before 2).
			name: "defaults", selected: []string{"a", "b"},
			reports: []string{"0", "1", "2"}, entities: []string{"0", "1"},
			rels: []string{"0", "1", "2", "3", "5"}, units: []string{"1", "0", "2"},
		},
		{
			// GraphRAG 1.x: A's deepest community 1, B's 2, equal members,
			// by rank; community 0 is nobody's deepest.
			name: "roll-up", selected: []string{"a", "b"},
			edit:    func(p *retrieval.Params) { p.RollUpReports = true },
			reports: []string{"1", "2"}, entities: []string{"0", "1"},
			rels: []string{"0", "1", "2", "3", "5"}, units: []string{"1", "0", "2"},
		},
		{
			name: "unknown and duplicate ids are skipped", selected: []string{"x", "a", "a", "b"},
			reports: []string{"0", "1", "2"}, entities: []string{"0", "1"},
			rels: []string{"0", "1", "2", "3", "5"}, units: []string{"1", "0", "2"},
		},
		{
			name: "top_k_relationships 1 keeps 2 outside", selected: []string{"a", "b"},
			edit:    func(p *retrieval.Params) { p.TopKRelationships = 1 },
			reports: []string{"0", "1", "2"}, entities: []string{"0", "1"},
			rels: []string{"0", "1", "2"}, units: []string{"1", "0", "2"},
		},
		{
			// A alone: r0, r1, r3 are outside with one link each: by rank.
			// A's communities 1 (rank 9) and 0 (rank 5).
			name: "top_k_entities 1", selected: []string{"a", "b"},
			edit:    func(p *retrieval.Params) { p.TopKEntities = 1 },
			reports: []string{"1", "0"}, entities: []string{"0"},
			rels: []string{"3", "1", "0"}, units: []string{"1", "0"},
		},
		{
			// At level 0 community 0 holds both selected entities. B's
			// units t1 and t2 support one of its relationships each, so
			// they keep text unit order (B lists them as t2, t1: backends
			// order by human_readable_id, as GraphRAG writes them).
			name: "community level 0", selected: []string{"b", "a"},
			edit:    func(p *retrieval.Params) { p.CommunityLevel = 0 },
			reports: []string{"0"}, entities: []string{"1", "0"},
			rels: []string{"0", "1", "2", "3", "5"}, units: []string{"1", "2", "0"},
		},
		{
			name: "nothing selected", selected: []string{"x"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := retrieval.DefaultParams()
			if tt.edit != nil {
				tt.edit(&p)
			}
			got, err := newBuilder(t, retrieval.NewMemoryBackend(tiny()), p).LocalContext(context.Background(), tt.selected)
			if err != nil {
				t.Fatal(err)
			}
			check := func(what string, got, want []string) {
				t.Helper()
				if !slices.Equal(got, want) {
					t.Errorf("LocalContext(%q) %s = %q; want %q", tt.selected, what, got, want)
				}
			}
			check("reports", ids(got.Reports, func(r retrieval.ReportRecord) string { return r.ID }), tt.reports)
			check("entities", ids(got.Entities, func(r retrieval.EntityRecord) string { return r.ID }), tt.entities)
			check("relationships", ids(got.Relationships, func(r retrieval.RelationshipRecord) string { return r.ID }), tt.rels)
			check("text units", ids(got.TextUnits, func(r retrieval.TextUnitRecord) string { return r.ID }), tt.units)
		})
	}
}

func ids[T any](recs []T, id func(T) string) []string {
	var out []string
	for _, r := range recs {
		out = append(out, id(r))
	}
	return out
}

func TestLocalContextTinyText(t *testing.T) {
	p := retrieval.DefaultParams()
	p.RollUpReports = true // reports 1 and 2 only, as in the "roll-up" case of TestLocalContextTiny
	got, err := newBuilder(t, retrieval.NewMemoryBackend(tiny()), p).
		LocalContext(context.Background(), []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	want := `-----Reports-----
id|title|content
1|Community 1|full 1
2|Community 2|full 2


-----Entities-----
id|entity|description|number of relationships
0|A|about A|3
1|B|about B|3


-----Relationships-----
id|source|target|description|weight
0|A|B|a to b|1.0
1|A|C|a to c|1.0
2|B|C|b to c|1.0
3|A|D|a to d|1.0
5|E|B|e to b|1.0


-----Sources-----
id|text
1|unit one
0|unit zero
2|unit two
`
	if diff := cmp.Diff(want, got.Text); diff != "" {
		t.Errorf("LocalContext text (-want +got):\n%s", diff)
	}
}

func TestParamsValidate(t *testing.T) {
	if err := retrieval.DefaultParams().Validate(); err != nil {
		t.Errorf("DefaultParams().Validate() = %v; want nil", err)
	}
	p := retrieval.DefaultParams()
	p.CommunityProp, p.TextUnitProp = 0.6, 0.6
	if err := p.Validate(); err == nil {
		t.Errorf("Validate() with props summing to 1.2 = nil; want an error")
	}
	if _, err := tokens.NewEncoder("nope"); err == nil {
		t.Errorf("tokens.NewEncoder(%q) = nil error; want one", "nope")
	}
}
