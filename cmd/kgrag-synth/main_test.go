package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kgrag/kgrag/graphrag"
)

func TestRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	err := run([]string{"-out", dir, "-seed", "5", "-entities", "300", "-relationships", "900", "-text-units", "60", "-communities", "20"})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := graphrag.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Release != graphrag.Release3 || len(ds.Entities) != 300 || len(ds.Relationships) != 900 || len(ds.TextUnits) != 60 || len(ds.Communities) != 20 {
		t.Errorf("Open(out) = %s with %d entities, %d relationships, %d text units, %d communities; want 3.x 300/900/60/20",
			ds.Release, len(ds.Entities), len(ds.Relationships), len(ds.TextUnits), len(ds.Communities))
	}
	if err := run([]string{"-seed", "1"}); err == nil {
		t.Errorf("run without -out = nil; want an error")
	}
}
