package graphrag_test

import (
	"context"
	"errors"
	"io/fs"
	"reflect"
	"slices"
	"testing"

	"github.com/kgrag/kgrag/graphrag"
)

// TestEntityCommunities: every entity lists exactly the communities whose
// members include it, in community order, for every sample (0.3.4 takes
// membership from create_final_nodes, the others from entity_ids).
func TestEntityCommunities(t *testing.T) {
	tests := []struct {
		dir         string
		memberships int // sum of len(EntityIDs) over communities
	}{
		{"v0.3.4", 495},
		{"v1.0.1", -1},
		{"v2.5.0", -1},
		{"v3", -1},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			ds, err := graphrag.Open(context.Background(), sample(t, tt.dir))
			if err != nil {
				t.Fatal(err)
			}
			want := map[string][]string{}
			total := 0
			for _, c := range ds.Communities {
				for _, id := range c.EntityIDs {
					want[id] = append(want[id], c.Community)
				}
				total += len(c.EntityIDs)
			}
			if tt.memberships >= 0 && total != tt.memberships {
				t.Errorf("memberships = %d; want %d", total, tt.memberships)
			}
			if total == 0 {
				t.Fatal("no community has members")
			}
			listed := 0
			for _, e := range ds.Entities {
				if !slices.Equal(e.Communities, want[e.ID]) {
					t.Errorf("entity %s Communities = %v; want %v", e.ID, e.Communities, want[e.ID])
				}
				listed += len(e.Communities)
			}
			if listed != total {
				t.Errorf("entities list %d memberships; communities hold %d", listed, total)
			}
		})
	}
}

// recorder is a Visitor that records the order of the calls and the rows.
type recorder struct {
	calls []string
	ds    graphrag.Dataset
}

func (r *recorder) visitor() graphrag.Visitor {
	return graphrag.Visitor{
		Documents: func(_ context.Context, v []graphrag.Document) error {
			r.calls, r.ds.Documents = append(r.calls, "documents"), v
			return nil
		},
		TextUnits: func(_ context.Context, v []graphrag.TextUnit) error {
			r.calls, r.ds.TextUnits = append(r.calls, "text_units"), v
			return nil
		},
		Entities: func(_ context.Context, v []graphrag.Entity) error {
			r.calls, r.ds.Entities = append(r.calls, "entities"), v
			return nil
		},
		Relationships: func(_ context.Context, v []graphrag.Relationship) error {
			r.calls, r.ds.Relationships = append(r.calls, "relationships"), v
			return nil
		},
		Communities: func(_ context.Context, v []graphrag.Community) error {
			r.calls, r.ds.Communities = append(r.calls, "communities"), v
			return nil
		},
		Covariates: func(_ context.Context, v []graphrag.Covariate) error {
			r.calls, r.ds.Covariates = append(r.calls, "covariates"), v
			return nil
		},
	}
}

// TestWalkOrder: Walk calls each callback once, in mapping order, also for
// an absent table (0.3.4 has no covariates), and skips nil callbacks; the
// Dataset it returns describes the output and holds no rows.
func TestWalkOrder(t *testing.T) {
	all := []string{"documents", "text_units", "entities", "relationships", "communities", "covariates"}
	tests := []struct {
		dir  string
		drop func(*graphrag.Visitor)
		want []string
	}{
		{"v3", func(*graphrag.Visitor) {}, all},
		{"v0.3.4", func(*graphrag.Visitor) {}, all},
		{"v1.0.1", func(v *graphrag.Visitor) { v.Documents, v.Communities = nil, nil },
			[]string{"text_units", "entities", "relationships", "covariates"}},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			ctx := context.Background()
			var r recorder
			v := r.visitor()
			tt.drop(&v)
			ds, err := graphrag.Walk(ctx, sample(t, tt.dir), v)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(r.calls, tt.want) {
				t.Errorf("callbacks = %v; want %v", r.calls, tt.want)
			}
			if ds.Documents != nil || ds.Entities != nil || ds.Communities != nil {
				t.Errorf("Walk returned rows; want metadata only")
			}
			whole, err := graphrag.Open(ctx, sample(t, tt.dir))
			if err != nil {
				t.Fatal(err)
			}
			if ds.Release != whole.Release || len(ds.Tables) != len(whole.Tables) ||
				!slices.Equal(ds.Notes, whole.Notes) || ds.PlaceholderRelationships != whole.PlaceholderRelationships {
				t.Errorf("Walk dataset %+v; want the metadata of Open's %+v", ds, whole.Summary())
			}
			if len(r.ds.Entities) != len(whole.Entities) || len(r.ds.Relationships) != len(whole.Relationships) {
				t.Errorf("Walk handed over %d entities, %d relationships; Open has %d, %d",
					len(r.ds.Entities), len(r.ds.Relationships), len(whole.Entities), len(whole.Relationships))
			}
		})
	}
}

// TestWalkStops: a callback's error and a canceled context stop the walk
// before the next table.
func TestWalkStops(t *testing.T) {
	errStop := errors.New("stop")
	tests := []struct {
		name      string
		documents func(cancel context.CancelFunc) error
		want      error
	}{
		{"callback error", func(context.CancelFunc) error { return errStop }, errStop},
		{"canceled", func(cancel context.CancelFunc) error { cancel(); return nil }, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var r recorder
			v := r.visitor()
			v.Documents = func(context.Context, []graphrag.Document) error { return tt.documents(cancel) }
			if _, err := graphrag.Walk(ctx, sample(t, "v3"), v); !errors.Is(err, tt.want) {
				t.Errorf("Walk = %v; want %v", err, tt.want)
			}
			if len(r.calls) != 0 {
				t.Errorf("callbacks after the stop: %v; want none", r.calls)
			}
		})
	}
}

// TestWalker: a Walker describes the output before it walks, walks once,
// and bad input fails in NewWalker.
func TestWalker(t *testing.T) {
	ctx := context.Background()
	w, err := graphrag.NewWalker(ctx, sample(t, "v3"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if ds := w.Dataset(); ds.Release != graphrag.Release3 || ds.Placeholders != 79 {
		t.Errorf("Dataset() = %s with %d placeholders; want 3.x with 79", ds.Release, ds.Placeholders)
	}
	if err := w.Walk(ctx, graphrag.Visitor{}); err != nil {
		t.Fatal(err)
	}
	if err := w.Walk(ctx, graphrag.Visitor{}); err == nil {
		t.Error("second Walk succeeded; want an error")
	}
	if _, err := graphrag.NewWalker(ctx, sample(t, "nope")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("NewWalker(missing dir) = %v; want fs.ErrNotExist", err)
	}
}

// TestWalkOmitReportJSON: with OmitReportJSON the reports come without
// full_content_json and otherwise as Open reads them.
func TestWalkOmitReportJSON(t *testing.T) {
	dir := sample(t, "v3")
	ds, err := graphrag.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []graphrag.Community
	_, err = graphrag.Walk(context.Background(), dir, graphrag.Visitor{
		Communities:    func(_ context.Context, cs []graphrag.Community) error { got = cs; return nil },
		OmitReportJSON: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(ds.Communities) {
		t.Fatalf("%d communities; want %d", len(got), len(ds.Communities))
	}
	withJSON := 0
	for i := range got {
		want := ds.Communities[i]
		if want.Report == nil || got[i].Report == nil {
			if (want.Report == nil) != (got[i].Report == nil) {
				t.Errorf("community %s: report %v; want %v", want.Community, got[i].Report, want.Report)
			}
			continue
		}
		if want.Report.FullContentJSON != "" {
			withJSON++
		}
		if got[i].Report.FullContentJSON != "" {
			t.Errorf("community %s: full_content_json read", want.Community)
		}
		w := *want.Report
		w.FullContentJSON = ""
		if !reflect.DeepEqual(*got[i].Report, w) {
			t.Errorf("community %s: report differs from Open's beyond full_content_json", want.Community)
		}
	}
	if withJSON == 0 {
		t.Fatal("the sample's reports have no full_content_json: the test checks nothing")
	}
}
