package synth_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/synth"
)

// small is a dataset big enough to have every feature, small enough to be quick.
func small() synth.Sizes {
	return synth.Sizes{Entities: 2000, Relationships: 6000, TextUnits: 400, Communities: 100}
}

func TestGenerateDeterministic(t *testing.T) {
	a := synth.Generate(7, small())
	b := synth.Generate(7, small())
	if d := cmp.Diff(a, b); d != "" {
		t.Fatalf("Generate(7) twice differs (-first +second):\n%s", d)
	}
	if c := synth.Generate(8, small()); cmp.Equal(a.Entities, c.Entities) {
		t.Errorf("Generate(7) and Generate(8) give the same entities; want different")
	}
	ctx := context.Background()
	d1, d2 := t.TempDir(), t.TempDir()
	if err := graphrag.Write3x(ctx, d1, a); err != nil {
		t.Fatal(err)
	}
	if err := graphrag.Write3x(ctx, d2, b); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(d1, "*.parquet"))
	if got, want := len(files), 7; got != want {
		t.Fatalf("Write3x wrote %d files; want %d", got, want)
	}
	for _, f := range files {
		x, _ := os.ReadFile(f)
		y, err := os.ReadFile(filepath.Join(d2, filepath.Base(f)))
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two writes of the same seed", filepath.Base(f))
		}
	}
}

func TestGenerateShape(t *testing.T) {
	ds := synth.Generate(1, small())
	if got, want := len(ds.Entities), small().Entities; got != want {
		t.Errorf("entities = %d; want %d", got, want)
	}
	if got, want := len(ds.Relationships), small().Relationships; got != want {
		t.Errorf("relationships = %d; want %d", got, want)
	}
	if got, want := len(ds.TextUnits), small().TextUnits; got != want {
		t.Errorf("text units = %d; want %d", got, want)
	}
	if got, want := len(ds.Communities), small().Communities; got != want {
		t.Errorf("communities = %d; want %d", got, want)
	}
	degree := map[string]int64{}
	for _, e := range ds.Entities {
		degree[e.ID] = e.Degree
		if n := len(e.Description); n < 150 || n > 300 {
			t.Errorf("entity %s description has %d chars; want about 200", e.ID, n)
			break
		}
	}
	for _, r := range ds.Relationships {
		if r.Rank != degree[r.SourceID]+degree[r.TargetID] {
			t.Fatalf("relationship %s combined_degree = %d; want %d", r.ID, r.Rank, degree[r.SourceID]+degree[r.TargetID])
		}
	}
	levels := map[int64]int{}
	for _, c := range ds.Communities {
		levels[c.Level]++
		if c.Report == nil || len(c.Report.Findings) < 3 {
			t.Fatalf("community %s: report %v; want one with findings", c.Community, c.Report)
		}
		if c.Level > 0 && c.Parent == "" {
			t.Errorf("community %s at level %d has no parent", c.Community, c.Level)
		}
	}
	if len(levels) != 3 {
		t.Errorf("levels = %v; want 3", levels)
	}
	if len(ds.Covariates) == 0 {
		t.Errorf("no covariates; want some")
	}
}

// TestGenerateRoundTrip: what Write3x writes, Open reads back unchanged.
func TestGenerateRoundTrip(t *testing.T) {
	ctx := context.Background()
	want := synth.Generate(3, small())
	dir := t.TempDir()
	if err := graphrag.Write3x(ctx, dir, want); err != nil {
		t.Fatal(err)
	}
	got, err := graphrag.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	got.Dir, got.Tables = "", nil
	if d := cmp.Diff(got, want, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("Open(Write3x(Generate())) differs (-got +want):\n%s", d)
	}
}
