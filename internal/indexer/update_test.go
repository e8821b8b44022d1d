package indexer_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/chunk"
	"github.com/kgrag/kgrag/internal/indexer"
	"github.com/kgrag/kgrag/internal/indexer/indexertest"
	"github.com/kgrag/kgrag/internal/leiden"
	"github.com/kgrag/kgrag/internal/leiden/leidentest"
	"github.com/kgrag/kgrag/internal/test"
)

// TestUpdateSequence follows A Christmas Carol's five staves as a folder
// changes (staves 1-3 indexed; stave 4 added; a sentence of stave 2
// edited; stave 1 deleted), re-indexing over the same output and cache of
// replies, and checks each step against what the change needs, counted
// at the test model server:
//
//   - extraction calls: exactly one first call and one gleaning round per
//     text unit that is new (its id, a hash of its text, was not in the
//     previous output), and none for the others;
//   - summary calls: at most one per entity or relationship whose set
//     of text units changed; report calls: at most one per community whose members, or
//     whose members' text units, changed;
//   - the text units, entities and relationships equal those of a fresh
//     index of the same folder, and every entity that persisted (by
//     title) kept its id;
//   - every community is connected in the relationship graph, and each
//     lies inside its parent.
//
// It runs with GraphRAG's token windows and with paragraph chunks; with
// the latter, the edit must cost the one or two chunks around it.
func TestUpdateSequence(t *testing.T) {
	for _, strategy := range []string{chunk.StrategyTokens, chunk.StrategyParagraphs} {
		t.Run(strategy, func(t *testing.T) { updateSequence(t, strategy) })
	}
}

func updateSequence(t *testing.T, strategy string) {
	ctx := context.Background()
	staves, err := indexertest.SplitStaves(test.ChristmasCarol(t))
	if err != nil {
		t.Fatal(err)
	}
	steps, err := indexertest.UpdateSteps(staves)
	if err != nil {
		t.Fatal(err)
	}
	srv, client := indexertest.Model(t)
	tmp := t.TempDir()
	index := func(t *testing.T, dir string, files map[string]string, cached bool) *graphrag.Dataset {
		t.Helper()
		in := filepath.Join(dir, "input")
		if err := indexertest.WriteFolder(in, files); err != nil {
			t.Fatal(err)
		}
		opts := indexer.DefaultOptions()
		opts.Input, opts.Output, opts.Model, opts.Concurrency = in, filepath.Join(dir, "output"), "m", 2
		opts.Chunk.Strategy = strategy
		if cached {
			opts.CacheDir = filepath.Join(dir, "cache")
		}
		if _, err := indexer.Run(ctx, client, opts); err != nil {
			t.Fatal(err)
		}
		ds, err := graphrag.Open(ctx, opts.Output)
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	var prev *graphrag.Dataset
	for _, step := range steps {
		// The plan first: what the rehearsal on the cache finds unanswered.
		var again *indexer.Again
		if prev != nil {
			if err := indexertest.WriteFolder(filepath.Join(tmp, "live", "input"), step.Files); err != nil {
				t.Fatal(err)
			}
			opts := indexer.DefaultOptions()
			opts.Input, opts.Output, opts.Model = filepath.Join(tmp, "live", "input"), filepath.Join(tmp, "live", "output"), "m"
			opts.CacheDir, opts.Chunk.Strategy = filepath.Join(tmp, "live", "cache"), strategy
			srv.Reset()
			p, err := indexer.PlanRun(ctx, opts)
			if err != nil {
				t.Fatalf("%s: plan: %v", step.Name, err)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%s: the plan made %d model calls", step.Name, n)
			}
			again = p.Again
			if again == nil {
				t.Fatalf("%s: the plan over an earlier output says nothing of what is asked again", step.Name)
			}
		}
		srv.Reset()
		ds := index(t, filepath.Join(tmp, "live"), step.Files, true)
		calls := map[string]int{}
		for _, r := range srv.Requests() {
			calls[indexertest.Kind(r)]++
		}

		newUnits, changedEnts, changedComms := needs(prev, ds)
		t.Logf("%s: calls %v; new text units %d, entities and relationships with changed text units %d, changed communities %d",
			step.Name, calls, newUnits, changedEnts, changedComms)
		if calls[indexertest.KindExtraction] != newUnits || calls[indexertest.KindGleaning] != newUnits {
			t.Errorf("%s: %d extraction and %d gleaning calls; want %d each, one per new text unit",
				step.Name, calls[indexertest.KindExtraction], calls[indexertest.KindGleaning], newUnits)
		}
		if strategy == chunk.StrategyParagraphs && strings.HasPrefix(step.Name, "edit") && newUnits > 2 {
			t.Errorf("%s: %d new text units; want the one or two around the edit", step.Name, newUnits)
		}
		if calls[indexertest.KindSummary] > changedEnts {
			t.Errorf("%s: %d summary calls; want at most %d, one per entity or relationship whose text units changed", step.Name, calls[indexertest.KindSummary], changedEnts)
		}
		if calls[indexertest.KindReport] > changedComms {
			t.Errorf("%s: %d report calls; want at most %d, one per community whose context changed", step.Name, calls[indexertest.KindReport], changedComms)
		}
		if again != nil {
			t.Logf("%s: the plan said %+v", step.Name, *again)
			if again.Extractions != calls[indexertest.KindExtraction] {
				t.Errorf("%s: the plan said %d extractions; the run made %d", step.Name, again.Extractions, calls[indexertest.KindExtraction])
			}
			if newUnits == 0 && (again.Summaries != calls[indexertest.KindSummary] || again.Reports != calls[indexertest.KindReport]) {
				// Nothing new to extract: the plan knows the whole change.
				t.Errorf("%s: the plan said %d summaries and %d reports; the run made %d and %d",
					step.Name, again.Summaries, again.Reports, calls[indexertest.KindSummary], calls[indexertest.KindReport])
			}
		}
		if calls[""] != 0 {
			t.Errorf("%s: %d calls of no indexing kind", step.Name, calls[""])
		}

		fresh := index(t, filepath.Join(tmp, "fresh-"+fmt.Sprint(len(step.Files))+step.Name[:3]), step.Files, false)
		for _, d := range []struct {
			what      string
			got, want []string
		}{
			{"text units", unitKeys(ds), unitKeys(fresh)},
			{"entities", entityKeys(ds), entityKeys(fresh)},
			{"relationships", relationshipKeys(ds), relationshipKeys(fresh)},
		} {
			if !slices.Equal(d.got, d.want) {
				t.Errorf("%s: %s differ from a fresh index's:\n got %q\nwant %q", step.Name, d.what, d.got, d.want)
			}
		}
		if prev != nil {
			ids := map[string]string{}
			for _, e := range prev.Entities {
				ids[e.Title] = e.ID
			}
			for _, e := range ds.Entities {
				if id, ok := ids[e.Title]; ok && id != e.ID {
					t.Errorf("%s: entity %q changed id %s -> %s", step.Name, e.Title, id, e.ID)
				}
			}
		}
		checkCommunities(t, step.Name, ds)
		if prev != nil {
			// A community with the members it had keeps its number and id.
			was := map[string]graphrag.Community{}
			for _, c := range prev.Communities {
				was[memberTitles(prev, c)] = c
			}
			kept := 0
			for _, c := range ds.Communities {
				if p, ok := was[memberTitles(ds, c)]; ok {
					kept++
					if p.Community != c.Community || p.ID != c.ID {
						t.Errorf("%s: community of %s was %s (%s), now %s (%s)", step.Name, memberTitles(ds, c), p.Community, p.ID, c.Community, c.ID)
					}
				}
			}
			t.Logf("%s: %d of %d communities kept their members (and so number and id)", step.Name, kept, len(ds.Communities))
		}
		prev = ds
	}
}

// needs counts what a change from prev to ds needs asked of the model:
// the new text units, the entities and relationships (GraphRAG summarises
// both) whose text units changed, and the communities whose members or
// members' text units changed.
func needs(prev, ds *graphrag.Dataset) (units, ents, comms int) {
	old := map[string]bool{}
	oldEnt := map[string]string{} // title -> text units
	oldComm := map[string]bool{}  // members -> seen
	oldRel := map[string]string{} // ends -> text units
	if prev != nil {
		for _, r := range prev.Relationships {
			oldRel[r.Source+"|"+r.Target] = fmt.Sprint(sorted(r.TextUnitIDs))
		}
		for _, u := range prev.TextUnits {
			old[u.ID] = true
		}
		for _, e := range prev.Entities {
			oldEnt[e.Title] = fmt.Sprint(sorted(e.TextUnitIDs))
		}
		for _, c := range prev.Communities {
			oldComm[communityKey(prev, c)] = true
		}
	}
	for _, u := range ds.TextUnits {
		if !old[u.ID] {
			units++
		}
	}
	for _, e := range ds.Entities {
		if oldEnt[e.Title] != fmt.Sprint(sorted(e.TextUnitIDs)) {
			ents++
		}
	}
	for _, r := range ds.Relationships {
		if oldRel[r.Source+"|"+r.Target] != fmt.Sprint(sorted(r.TextUnitIDs)) {
			ents++
		}
	}
	for _, c := range ds.Communities {
		if !oldComm[communityKey(ds, c)] {
			comms++
		}
	}
	return units, ents, comms
}

// communityKey is a community's members with their text units.
func communityKey(ds *graphrag.Dataset, c graphrag.Community) string {
	byID := map[string]graphrag.Entity{}
	for _, e := range ds.Entities {
		byID[e.ID] = e
	}
	var ms []string
	for _, id := range c.EntityIDs {
		e := byID[id]
		ms = append(ms, e.Title+fmt.Sprint(sorted(e.TextUnitIDs)))
	}
	slices.Sort(ms)
	return fmt.Sprint(c.Level, ms)
}

func sorted(ss []string) []string {
	out := slices.Clone(ss)
	slices.Sort(out)
	return out
}

func unitKeys(ds *graphrag.Dataset) []string {
	var out []string
	for _, u := range ds.TextUnits {
		out = append(out, u.ID+"|"+u.Text)
	}
	slices.Sort(out)
	return out
}

func entityKeys(ds *graphrag.Dataset) []string {
	var out []string
	for _, e := range ds.Entities {
		out = append(out, fmt.Sprint(e.ID, "|", e.Title, "|", e.Type, "|", e.Description, "|", sorted(e.TextUnitIDs)))
	}
	slices.Sort(out)
	return out
}

func relationshipKeys(ds *graphrag.Dataset) []string {
	var out []string
	for _, r := range ds.Relationships {
		out = append(out, fmt.Sprint(r.ID, "|", r.Source, "|", r.Target, "|", r.Description, "|", r.Weight, "|", sorted(r.TextUnitIDs)))
	}
	slices.Sort(out)
	return out
}

// checkCommunities checks every community is connected in the graph of
// the output's relationships and lies inside its parent.
func checkCommunities(t *testing.T, step string, ds *graphrag.Dataset) {
	t.Helper()
	adj := map[string]map[string]bool{}
	for _, e := range leiden.GraphRAGEdges(leidentest.RelationshipEdges(ds), true) {
		for _, p := range [][2]string{{e.Source, e.Target}, {e.Target, e.Source}} {
			if adj[p[0]] == nil {
				adj[p[0]] = map[string]bool{}
			}
			adj[p[0]][p[1]] = true
		}
	}
	title := map[string]string{}
	for _, e := range ds.Entities {
		title[e.ID] = e.Title
	}
	members := map[string]map[string]bool{}
	for _, c := range ds.Communities {
		set := map[string]bool{}
		for _, id := range c.EntityIDs {
			set[title[id]] = true
		}
		members[c.Community] = set
		// Connected: a walk from one member inside the set reaches all.
		var start string
		for m := range set {
			start = m
			break
		}
		seen := map[string]bool{start: true}
		stack := []string{start}
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for u := range adj[v] {
				if set[u] && !seen[u] {
					seen[u] = true
					stack = append(stack, u)
				}
			}
		}
		if len(set) == 0 || len(seen) != len(set) {
			t.Errorf("%s: community %s (level %d) of %d members is not connected (%d reached)", step, c.Community, c.Level, len(set), len(seen))
		}
	}
	for _, c := range ds.Communities {
		if c.Parent == "" {
			continue
		}
		for m := range members[c.Community] {
			if !members[c.Parent][m] {
				t.Errorf("%s: community %s holds %q, which its parent %s does not", step, c.Community, m, c.Parent)
			}
		}
	}
}

// memberTitles is a community's level and member titles.
func memberTitles(ds *graphrag.Dataset, c graphrag.Community) string {
	title := map[string]string{}
	for _, e := range ds.Entities {
		title[e.ID] = e.Title
	}
	var ms []string
	for _, id := range c.EntityIDs {
		ms = append(ms, title[id])
	}
	slices.Sort(ms)
	return fmt.Sprint(c.Level, ms)
}
