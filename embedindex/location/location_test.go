package location_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/kgrag/kgrag/embedindex/elastic"
	"github.com/kgrag/kgrag/embedindex/flat"
	"github.com/kgrag/kgrag/embedindex/location"
	"github.com/kgrag/kgrag/internal/embedtext"
)

func TestTable(t *testing.T) {
	dir := filepath.Join("out", location.DefaultDir)
	flatLoc := location.Location{Path: filepath.Join(dir, location.EntitiesFile)}
	es := func(alias string) location.Location {
		return location.Location{Elastic: elastic.Config{URL: "http://127.0.0.1:9200", Index: alias}}
	}
	tests := []struct {
		loc   location.Location
		table string
		want  string
	}{
		{flatLoc, embedtext.Entities, filepath.Join(dir, "entities.vec")},
		{flatLoc, embedtext.TextUnits, filepath.Join(dir, "text_units.vec")},
		{flatLoc, embedtext.Reports, filepath.Join(dir, "community_reports.vec")},
		{es("kgrag-entities"), embedtext.Entities, "Elasticsearch alias kgrag-entities"},
		{es("kgrag-entities"), embedtext.TextUnits, "Elasticsearch alias kgrag-text_units"},
		{es("myset"), embedtext.Reports, "Elasticsearch alias myset-community_reports"},
	}
	for _, tt := range tests {
		if got := tt.loc.Table(tt.table).String(); got != tt.want {
			t.Errorf("%s.Table(%s) = %s; want %s", tt.loc, tt.table, got, tt.want)
		}
	}
}

func TestOpenFlat(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	loc := location.Location{Path: filepath.Join(dir, location.EntitiesFile)}
	if _, err := loc.Open(ctx); !errors.Is(err, location.ErrNoIndex) {
		t.Fatalf("Open of a missing index: %v; want ErrNoIndex", err)
	}
	b, err := flat.Create(loc.Path, "m", 2) // a run that embedded nothing
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := loc.Open(ctx); !errors.Is(err, location.ErrEmpty) {
		t.Fatalf("Open of an empty index: %v; want ErrEmpty", err)
	}
	if err := flat.Write(ctx, loc.Path, "m", []string{"a"}, [][]float32{{1, 0}}); err != nil {
		t.Fatal(err)
	}
	idx, err := loc.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	if n := idx.Info().Count; n != 1 {
		t.Errorf("%d vectors; want 1", n)
	}
	if _, err := loc.Table(embedtext.TextUnits).Open(ctx); !errors.Is(err, location.ErrNoIndex) {
		t.Errorf("Open of the text units' missing index: %v; want ErrNoIndex", err)
	}
}
