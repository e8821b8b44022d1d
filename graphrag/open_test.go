package graphrag_test

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/kgrag/kgrag/graphrag"
)

// The row counts are those of SCHEMAS.txt, which pyarrow wrote independently.
func TestOpenSamples(t *testing.T) {
	tests := []struct {
		dir     string
		release graphrag.Release
		rows    map[string]int64
		absent  []string
	}{
		{"v0.3.4", graphrag.Release03, map[string]int64{
			"documents": 1, "text_units": 42, "entities": 263, "relationships": 409,
			"communities": 35, "community_reports": 35, "nodes": 789,
		}, []string{"covariates"}},
		{"v1.0.1", graphrag.Release1, map[string]int64{
			"documents": 1, "text_units": 42, "entities": 301, "relationships": 465,
			"communities": 43, "community_reports": 43, "covariates": 102, "nodes": 552,
		}, nil},
		{"v2.5.0", graphrag.Release2, map[string]int64{
			"documents": 1, "text_units": 42, "entities": 139, "relationships": 192,
			"communities": 25, "community_reports": 25, "covariates": 120,
		}, nil},
		{"v3", graphrag.Release3, map[string]int64{
			"documents": 1, "text_units": 42, "entities": 529, "relationships": 978,
			"communities": 122, "community_reports": 122, "covariates": 406,
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			ds, err := graphrag.Open(context.Background(), sample(t, tt.dir))
			if err != nil {
				t.Fatal(err)
			}
			if ds.Release != tt.release {
				t.Errorf("Release = %q; want %q", ds.Release, tt.release)
			}
			got := map[string]int64{}
			for _, tb := range ds.Tables {
				got[tb.Name] = tb.Rows
			}
			if !mapsEqual(got, tt.rows) {
				t.Errorf("table rows = %v; want %v", got, tt.rows)
			}
			if !slices.Equal(ds.Absent, tt.absent) {
				t.Errorf("Absent = %v; want %v", ds.Absent, tt.absent)
			}
			real := 0
			for _, e := range ds.Entities {
				if !e.Placeholder {
					real++
				}
			}
			if int64(real) != tt.rows["entities"] {
				t.Errorf("real entities = %d; want %d", real, tt.rows["entities"])
			}
			if int64(len(ds.Relationships)) != tt.rows["relationships"] {
				t.Errorf("relationships = %d; want %d", len(ds.Relationships), tt.rows["relationships"])
			}
			ids := map[string]graphrag.Entity{}
			for _, e := range ds.Entities {
				ids[e.ID] = e
			}
			for _, r := range ds.Relationships {
				if s, ok := ids[r.SourceID]; !ok || s.Title != r.Source {
					t.Fatalf("relationship %s: source %q resolved to %q (%v)", r.ID, r.Source, r.SourceID, s)
				}
				if d, ok := ids[r.TargetID]; !ok || d.Title != r.Target {
					t.Fatalf("relationship %s: target %q resolved to %q (%v)", r.ID, r.Target, r.TargetID, d)
				}
			}
			if int64(len(ds.Communities)) != tt.rows["communities"] {
				t.Errorf("communities = %d; want %d", len(ds.Communities), tt.rows["communities"])
			}
			for _, c := range ds.Communities {
				if c.Report == nil {
					t.Errorf("community %s has no report", c.Community)
				}
				if c.Weight < 0 || c.Weight > 1 {
					t.Errorf("community %s weight = %v; want in [0,1]", c.Community, c.Weight)
				}
			}
		})
	}
}

func mapsEqual[K comparable, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// The 3.x sample has relationships whose source or target is no entity
// title. Checked independently with pyarrow:
//
//	e = pq.read_table("v3/entities.parquet").to_pydict(); r = pq.read_table("v3/relationships.parquet").to_pydict()
//	t = set(e["title"]); sum(s not in t or d not in t for s, d in zip(r["source"], r["target"]))  # 84
//	len({x for x in r["source"] + r["target"] if x not in t})                                       # 32
//
// Claims name more unknown entities: with claim_end() of
// scripts/oracle/counts.py false for the ways of writing none and for
// sentences (20 claim ends in this sample are prose, such as "There are no
// named entities that match ..."), 55 claims name one, and the union of
// unknown titles of relationships and claims is 79.
func TestOpenPlaceholders(t *testing.T) {
	ds, err := graphrag.Open(context.Background(), sample(t, "v3"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ds.PlaceholderRelationships, 84; got != want {
		t.Errorf("PlaceholderRelationships = %d; want %d", got, want)
	}
	if got, want := ds.PlaceholderCovariates, 55; got != want {
		t.Errorf("PlaceholderCovariates = %d; want %d", got, want)
	}
	if got, want := ds.Placeholders, 79; got != want {
		t.Errorf("Placeholders = %d; want %d", got, want)
	}
	placeholders := ds.Entities[529:]
	if len(placeholders) != 79 {
		t.Fatalf("entities after the 529 real ones = %d; want 79", len(placeholders))
	}
	// Relationship ends come first, in row order: 32 of them.
	for _, e := range placeholders[:32] {
		if !e.Placeholder {
			t.Fatalf("entity %s after the real ones is not a placeholder", e.ID)
		}
	}
	for _, e := range placeholders {
		want := graphrag.Entity{ID: "title:" + e.Title, Title: e.Title, Placeholder: true}
		if !entityEqual(e, want) || e.HumanReadableID != "" || e.HasDegree {
			t.Errorf("placeholder = %+v; want %+v", e, want)
		}
	}
	for _, e := range ds.Entities[:529] {
		if e.Placeholder {
			t.Fatalf("real entity %s marked Placeholder", e.ID)
		}
	}
	s := ds.Summary()
	if s.Placeholders != 79 || s.PlaceholderRelationships != 84 || s.PlaceholderCovariates != 55 || s.Release != graphrag.Release3 || len(s.Tables) != 7 || s.Rows["entities"] != 608 {
		t.Errorf("Summary() = %+v; want 79 placeholders, 84 relationships, 55 claims, 3.x, 7 tables, 608 entities", s)
	}
}

// In 0.3.4 membership is only in create_final_nodes; pyarrow counts 495
// distinct (community, title) pairs over 35 communities, 29 in community 8.
func TestOpenMembershipFromNodes(t *testing.T) {
	ds, err := graphrag.Open(context.Background(), sample(t, "v0.3.4"))
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	ids := map[string]bool{}
	for _, e := range ds.Entities {
		ids[e.ID] = true
	}
	for _, c := range ds.Communities {
		if len(c.EntityIDs) == 0 {
			t.Errorf("community %s has no members", c.Community)
		}
		for _, id := range c.EntityIDs {
			if !ids[id] {
				t.Errorf("community %s member %s is no entity", c.Community, id)
			}
		}
		total += len(c.EntityIDs)
		if c.Community == "8" && len(c.EntityIDs) != 29 {
			t.Errorf("community 8 members = %d; want 29", len(c.EntityIDs))
		}
		if c.Level > 0 && c.Parent == "" {
			t.Errorf("community %s at level %d has no parent derived from nodes", c.Community, c.Level)
		}
	}
	if total != 495 {
		t.Errorf("memberships = %d; want 495", total)
	}
}

func TestOpenCommunityFields(t *testing.T) {
	tests := []struct {
		dir                string
		community, parent  string
		children           []string
		explanationPresent bool
	}{
		// 1.x has parent only: children derived. 2.x and 3.x write children.
		{"v1.0.1", "0", "", []string{"11", "12"}, true},
		{"v2.5.0", "10", "0", []string{"19", "20"}, true},
		{"v3", "1", "", []string{"27", "28", "29", "30", "31", "32", "33", "34", "35", "36", "37", "38"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			ds, err := graphrag.Open(context.Background(), sample(t, tt.dir))
			if err != nil {
				t.Fatal(err)
			}
			var c *graphrag.Community
			for i := range ds.Communities {
				if ds.Communities[i].Community == tt.community {
					c = &ds.Communities[i]
				}
			}
			if c == nil {
				t.Fatalf("no community %s", tt.community)
			}
			if c.Parent != tt.parent || !slices.Equal(c.Children, tt.children) {
				t.Errorf("community %s parent %q children %v; want %q %v", tt.community, c.Parent, c.Children, tt.parent, tt.children)
			}
			if (c.Report.RankExplanation != "") != tt.explanationPresent || len(c.Report.Findings) == 0 {
				t.Errorf("report = %+v; want explanation and findings", c.Report)
			}
			max := 0.0
			for _, c := range ds.Communities {
				max = math.Max(max, c.Weight)
			}
			if max != 1 {
				t.Errorf("largest weight = %v; want 1", max)
			}
		})
	}
}
