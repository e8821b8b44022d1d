package graphrag_test

import (
	"context"
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
			"communities": 43, "community_reports": 43, "covariates": 102,
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
