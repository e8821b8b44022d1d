package indexer_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/indexer"
	"github.com/kgrag/kgrag/internal/indexer/indexertest"
	"github.com/kgrag/kgrag/internal/llmcall"
)

func TestRunChristmasCarol(t *testing.T) {
	ctx := context.Background()
	srv, client := indexertest.Model(t)
	tmp := t.TempDir()
	opts := indexer.DefaultOptions()
	opts.Input = indexertest.CarolInput(t, 4000)
	opts.Output = filepath.Join(tmp, "output")
	opts.CacheDir = filepath.Join(tmp, "cache")
	opts.Model = "m"
	opts.Concurrency = 2
	opts.Chunk.Size, opts.Chunk.Overlap = 400, 50

	plan, err := indexer.PlanRun(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{opts.CacheDir, opts.Output} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("the plan made %s", p)
		}
	}
	sum, err := indexer.Run(ctx, client, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("plan %+v", *plan)
	t.Logf("summary %+v", *sum)
	calls := srv.Count("/chat/completions")
	if calls == 0 {
		t.Fatal("no model calls")
	}
	// The plan named the extraction calls exactly (one gleaning round:
	// two calls a unit) and the units.
	if x := sum.Stages[0]; x.Stage != indexer.StageExtraction || x.Calls != int64(plan.MaxCalls) || plan.MinCalls != plan.MaxCalls {
		t.Errorf("extraction made %d calls; plan said %d to %d", x.Calls, plan.MinCalls, plan.MaxCalls)
	}
	if plan.TextUnits != sum.TextUnits || plan.Documents != sum.Documents || plan.Cached != 0 || plan.Conversations != sum.TextUnits {
		t.Errorf("plan %+v; run %+v", *plan, *sum)
	}
	// After the run, every first call is in the cache.
	if plan, err = indexer.PlanRun(ctx, opts); err != nil {
		t.Fatal(err)
	} else if plan.Cached != plan.Conversations {
		t.Errorf("after the run the plan finds %d of %d first calls cached", plan.Cached, plan.Conversations)
	}
	var stageCalls int64
	for _, s := range sum.Stages {
		stageCalls += s.Calls
		if s.Calls == 0 {
			t.Errorf("stage %s made no call", s.Stage)
		}
	}
	if stageCalls != int64(calls) {
		t.Errorf("stages count %d calls, the server saw %d (%+v)", stageCalls, calls, sum.Stages)
	}

	ds, err := graphrag.Open(ctx, opts.Output)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Release != graphrag.Release3 {
		t.Errorf("release %q, want %q", ds.Release, graphrag.Release3)
	}
	if len(ds.Documents) != 1 || len(ds.TextUnits) < 5 || len(ds.Entities) < 3 || len(ds.Relationships) < 2 || len(ds.Communities) == 0 {
		t.Fatalf("documents %d, text units %d, entities %d, relationships %d, communities %d",
			len(ds.Documents), len(ds.TextUnits), len(ds.Entities), len(ds.Relationships), len(ds.Communities))
	}
	reportsN := 0
	for _, c := range ds.Communities {
		if c.Report != nil {
			reportsN++
		}
	}
	if reportsN == 0 || reportsN != sum.Reports {
		t.Errorf("%d communities with reports, run wrote %d", reportsN, sum.Reports)
	}
	titles := map[string]bool{}
	for _, e := range ds.Entities {
		titles[e.Title] = true
	}
	for _, want := range []string{"SCROOGE", "MARLEY"} {
		if !titles[want] {
			t.Errorf("no entity %s", want)
		}
	}
	// Every text unit naming Scrooge (the model named him wherever the
	// text does) lists his entity id.
	var scrooge string
	for _, e := range ds.Entities {
		if e.Title == "SCROOGE" {
			scrooge = e.ID
		}
	}
	withIDs := 0
	for _, u := range ds.TextUnits {
		if strings.Contains(strings.ToLower(u.Text), "scrooge") != contains(u.EntityIDs, scrooge) {
			t.Errorf("text unit %s: names Scrooge %v, entity ids %v", u.HumanReadableID,
				strings.Contains(strings.ToLower(u.Text), "scrooge"), u.EntityIDs)
		}
		if len(u.RelationshipIDs) > 0 {
			withIDs++
		}
	}
	if withIDs == 0 {
		t.Error("no text unit carries relationship ids")
	}

	// A second run with the same cache makes no call and writes the same.
	srv.Reset()
	sum2, err := indexer.Run(ctx, client, opts)
	if err != nil {
		t.Fatal(err)
	}
	if n := srv.Count("/chat/completions"); n != 0 {
		t.Errorf("second run made %d model calls, want 0", n)
	}
	for i, s := range sum2.Stages {
		if s.Calls != s.Cached {
			t.Errorf("second run, stage %s: %d calls, %d cached", s.Stage, s.Calls, s.Cached)
		}
		// Cached replies keep their call's usage, so the token counts of
		// a replay are the first run's.
		if f := sum.Stages[i]; s.PromptTokens != f.PromptTokens || s.CompletionTokens != f.CompletionTokens || f.PromptTokens == 0 {
			t.Errorf("stage %s tokens: first run %d+%d, cached run %d+%d", s.Stage,
				f.PromptTokens, f.CompletionTokens, s.PromptTokens, s.CompletionTokens)
		}
	}
	ds2, err := graphrag.Open(ctx, opts.Output)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds2.Entities) != len(ds.Entities) || len(ds2.Communities) != len(ds.Communities) {
		t.Errorf("second run: %d entities, %d communities; first %d, %d",
			len(ds2.Entities), len(ds2.Communities), len(ds.Entities), len(ds.Communities))
	}
	left, _ := filepath.Glob(filepath.Join(tmp, ".output.tmp-*"))
	if len(left) > 0 {
		t.Errorf("temporary folders left: %v", left)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestRunKeepsForeignOutput checks that an output folder holding other
// files than tables is not replaced, and that the run fails before any call.
func TestRunKeepsForeignOutput(t *testing.T) {
	srv, client := indexertest.Model(t)
	opts := indexer.DefaultOptions()
	opts.Input = indexertest.CarolInput(t, 300)
	opts.Output = opts.Input // the worst case: the input itself
	opts.Model = "m"
	_, err := indexer.Run(context.Background(), client, opts)
	if err == nil || !strings.Contains(err.Error(), "carol.txt") {
		t.Fatalf("err = %v, want one naming carol.txt", err)
	}
	if _, err := os.Stat(filepath.Join(opts.Input, "carol.txt")); err != nil {
		t.Errorf("input lost: %v", err)
	}
	if n := srv.Count("/chat/completions"); n != 0 {
		t.Errorf("%d model calls before failing", n)
	}
}

// sameVector embeds every text that starts with one of titles (the
// entity's "TITLE: descriptions") as the same vector, and each other text
// as a vector of its own, so that exactly those titles are alike.
type sameVector struct {
	titles []string
	calls  int
	dims   map[string]int
}

func (s *sameVector) Model() string { return "same" }

func (s *sameVector) Embed(_ context.Context, texts []string) ([][]float32, error) {
	s.calls++
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if s.dims == nil {
			s.dims = map[string]int{}
		}
		if _, ok := s.dims[t]; !ok {
			s.dims[t] = 1 + len(s.dims)
		}
		v := make([]float32, 64)
		v[s.dims[t]] = 1 // orthogonal to every other text
		for _, title := range s.titles {
			if strings.HasPrefix(t, title+":") {
				v = make([]float32, 64)
				v[0] = 1
			}
		}
		out[i] = v
	}
	return out, nil
}

// TestRunDedup checks the wiring of de-duplication: the alike entities
// (MARLEY is made to embed as SCROOGE does) become one, their relationship
// to each other goes, and the run reports the group. Which entities join
// for given vectors is checked against networkx in internal/graphbuild.
func TestRunDedup(t *testing.T) {
	_, client := indexertest.Model(t)
	opts := carolOptions(t, 3000)
	plain, before := runAndOpen(t, client, opts)
	emb := &sameVector{titles: []string{"SCROOGE", "MARLEY"}}
	opts.Embedder, opts.EmbedBatch = emb, 4
	opts.Dedup.Threshold = 0.9
	sum, after := runAndOpen(t, client, opts)
	if sum.Dedup == nil || len(sum.Dedup.Groups) != 1 {
		t.Fatalf("dedup report %+v; want one group", sum.Dedup)
	}
	if g := sum.Dedup.Groups[0].String(); !strings.Contains(g, `"SCROOGE"`) || !strings.Contains(g, `"MARLEY"`) {
		t.Errorf("group %s; want SCROOGE and MARLEY", g)
	}
	if len(after.Entities) != len(before.Entities)-1 || sum.Entities != plain.Entities-1 {
		t.Errorf("%d entities after dedup, %d before; want one fewer", len(after.Entities), len(before.Entities))
	}
	var units []string
	for _, e := range before.Entities {
		if e.Title == "SCROOGE" || e.Title == "MARLEY" {
			units = append(units, e.TextUnitIDs...)
		}
	}
	for _, e := range after.Entities {
		if e.Title == "MARLEY" {
			t.Error("MARLEY is still an entity")
		}
		if e.Title == "SCROOGE" {
			for _, u := range units {
				if !contains(e.TextUnitIDs, u) {
					t.Errorf("joined SCROOGE lacks text unit %s of SCROOGE or MARLEY", u)
				}
			}
		}
	}
	for _, r := range after.Relationships {
		if r.Source == "MARLEY" || r.Target == "MARLEY" || r.Source == r.Target {
			t.Errorf("relationship %s -> %s after joining MARLEY into SCROOGE", r.Source, r.Target)
		}
	}
	if n := sum.Dedup.Embedded; n != len(before.Entities) || emb.calls != (n+3)/4 {
		t.Errorf("embedded %d texts in %d requests; want %d in batches of 4", n, emb.calls, len(before.Entities))
	}
	if st := sum.Stages[1]; st.Stage != indexer.StageDedup || st.Calls != int64(emb.calls) {
		t.Errorf("stage %+v; want dedup with %d calls", st, emb.calls)
	}
}

// carolOptions indexes the first words of A Christmas Carol in chunks of
// 300 tokens with the scripted model "m", into a fresh output folder.
func carolOptions(t *testing.T, words int) indexer.Options {
	opts := indexer.DefaultOptions()
	opts.Input = indexertest.CarolInput(t, words)
	opts.Output = filepath.Join(t.TempDir(), "output")
	opts.Model = "m"
	opts.Chunk.Size, opts.Chunk.Overlap = 300, 30
	return opts
}

// runAndOpen runs the indexer and reads its output back.
func runAndOpen(t *testing.T, model llmcall.Chatter, opts indexer.Options) (*indexer.Summary, *graphrag.Dataset) {
	t.Helper()
	sum, err := indexer.Run(t.Context(), model, opts)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := graphrag.Open(t.Context(), opts.Output)
	if err != nil {
		t.Fatal(err)
	}
	return sum, ds
}
