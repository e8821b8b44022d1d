package indexer_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kgrag/kgrag/internal/indexer"
	"github.com/kgrag/kgrag/internal/indexer/indexertest"
	"github.com/kgrag/kgrag/internal/test"
)

// TestRunChanges indexes a folder, changes it (one document added, one
// edited, one removed, one left alone) and indexes it again over the same
// output: the summary names each change, and a first run names none.
func TestRunChanges(t *testing.T) {
	ctx := context.Background()
	_, client := indexertest.Model(t)
	words := indexertest.FirstWords(test.ChristmasCarol(t), 1200)
	part := func(i int) string { return indexertest.FirstWords(words[i*1500:], 200) }
	tmp := t.TempDir()
	in := filepath.Join(tmp, "input")
	if err := os.MkdirAll(filepath.Join(in, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(in, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.txt", part(0))
	write("b.txt", part(1))
	write(filepath.Join("sub", "c.txt"), part(2))
	opts := indexer.DefaultOptions()
	opts.Input, opts.Output, opts.CacheDir = in, filepath.Join(tmp, "output"), filepath.Join(tmp, "cache")
	opts.Model = "m"
	opts.Chunk.Size, opts.Chunk.Overlap = 200, 20
	sum, err := indexer.Run(ctx, client, opts)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Changes != nil {
		t.Errorf("a first run: changes %+v; want none", *sum.Changes)
	}

	if err := os.Remove(filepath.Join(in, "a.txt")); err != nil {
		t.Fatal(err)
	}
	write("b.txt", part(1)+" And Scrooge said so.")
	write("d.txt", part(3))
	plan, err := indexer.PlanRun(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Changes == nil || plan.Cached >= plan.Conversations || plan.Cached == 0 {
		t.Errorf("plan: changes %v, %d of %d conversations cached; want the changes and some, not all, cached", plan.Changes, plan.Cached, plan.Conversations)
	}
	sum, err = indexer.Run(ctx, client, opts)
	if err != nil {
		t.Fatal(err)
	}
	c := sum.Changes
	if c == nil {
		t.Fatal("a second run over the same output reports no changes")
	}
	if plan.Changes != nil && fmt.Sprint(*plan.Changes) != fmt.Sprint(*c) {
		t.Errorf("the plan's changes %+v differ from the run's %+v", *plan.Changes, *c)
	}
	titles := func(names ...string) []string { return names }
	if !slices.Equal(c.Added, titles("d.txt")) || !slices.Equal(c.Changed, titles("b.txt")) ||
		!slices.Equal(c.Removed, titles("a.txt")) || c.Unchanged != 1 {
		t.Errorf("changes %+v; want d.txt added, b.txt changed, a.txt removed, 1 unchanged (sub/c.txt)", *c)
	}
}
