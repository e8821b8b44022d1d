package engine_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/answer"
	"github.com/kgrag/kgrag/internal/basicsearch"
	"github.com/kgrag/kgrag/internal/driftsearch"
	"github.com/kgrag/kgrag/internal/embedtext"
	"github.com/kgrag/kgrag/internal/engine"
	"github.com/kgrag/kgrag/internal/globalsearch"
	"github.com/kgrag/kgrag/internal/localsearch"
	"github.com/kgrag/kgrag/internal/mode"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/internal/test"
)

// TestRegistry: every mode of the mode package has an engine, in the
// same order, and each mode's tables follow from what it needs.
func TestRegistry(t *testing.T) {
	var all, engines []string
	for _, m := range mode.All() {
		all = append(all, m.Name)
	}
	for _, m := range engine.Modes() {
		engines = append(engines, m.Name)
	}
	if !slices.Equal(all, engines) {
		t.Errorf("engines %q; modes %q", engines, all)
	}
	tables := map[string][]string{
		mode.Local:  {embedtext.Entities},
		mode.Global: nil,
		mode.Drift:  {embedtext.Entities, embedtext.Reports},
		mode.Basic:  {embedtext.TextUnits},
	}
	for name, want := range tables {
		m, _ := mode.Lookup(name)
		if got := engine.Tables(m); !slices.Equal(got, want) {
			t.Errorf("Tables(%s) = %q; want %q", name, got, want)
		}
	}
}

func options() engine.Options {
	return engine.Options{
		Local:        localsearch.Options{Params: retrieval.DefaultParams(), Templates: retrieval.DefaultTemplatesParams(), Subgraph: retrieval.DefaultSubgraphParams()},
		Global:       globalsearch.DefaultOptions(),
		GlobalParams: retrieval.DefaultGlobalParams(),
		Basic:        basicsearch.Options{Params: retrieval.DefaultBasicParams()},
		Drift:        driftsearch.DefaultOptions(),
	}
}

// TestOpenWithoutIndexes: on a graph without vector indexes, every mode
// that searches one is refused naming the table and the kgrag embed that
// builds it; global search, which needs none, opens and plans.
func TestOpenWithoutIndexes(t *testing.T) {
	ds, err := graphrag.Open(context.Background(), filepath.Join(test.GraphRAGSamples(t), "v3"))
	if err != nil {
		t.Fatal(err)
	}
	d := engine.Deps{Source: retrieval.NewMemorySource(ds), Name: "v3"}
	for _, m := range engine.Modes() {
		e, err := engine.Open(m.Name, d, options())
		tables := engine.Tables(m)
		if len(tables) == 0 {
			if err != nil {
				t.Fatalf("%s: %v", m.Name, err)
			}
			res := &answer.Result{}
			if err := e.Plan(context.Background(), engine.Question{Text: "What are the main themes?"}, res); err != nil || res.Plan == nil {
				t.Errorf("%s: plan %v, %v; want one", m.Name, res.Plan, err)
			}
			continue
		}
		var mi *engine.MissingIndexError
		if !errors.As(err, &mi) || mi.Table != tables[0] || !strings.Contains(err.Error(), "kgrag embed") {
			t.Errorf("%s: %v; want the index of %s missing, with the command that builds it", m.Name, err, tables[0])
		}
	}
	if _, err := engine.Open("deep", d, options()); err == nil {
		t.Error("Open(deep) opened a mode that does not exist")
	}
}
