// Command update measures what a small change to an indexed folder costs
// kgrag index today, stage by stage: the baseline issue 13 (re-indexing
// that pays only for what changed) is measured against. On A Christmas
// Carol cut into its five staves as five documents, with the project's
// scripted test model (internal/indexer/indexertest), it indexes staves
// 1-3, adds stave 4, edits a sentence of stave 2 and deletes stave 1,
// each time over the same output and cache of replies, as a user re-runs
// `kgrag index`. For each step it reports the model calls made and those
// the cache answered per stage, beside a fresh index of the same folder;
// and, against the previous step, how many entities kept their id and how
// many communities kept their exact membership.
//
//	go run ./bench/update -text ../shared/testdata/text/a-christmas-carol.txt
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/chunk"
	"github.com/kgrag/kgrag/internal/indexer"
	"github.com/kgrag/kgrag/internal/indexer/indexertest"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "update bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	text := flag.String("text", "", "the book `FILE` (text/a-christmas-carol.txt of the shared test data)")
	concurrency := flag.Int("concurrency", 4, "model calls at once")
	latency := flag.Duration("latency", 0, "time the test model takes per call (the wall-time columns are worth reading only with one, e.g. 500ms)")
	chunkBy := flag.String("chunk-by", chunk.StrategyTokens, "chunking `STRATEGY`: tokens (GraphRAG's) or paragraphs")
	flag.Parse()
	if *text == "" {
		return errors.New("-text is required")
	}
	b, err := os.ReadFile(*text)
	if err != nil {
		return err
	}
	st, err := indexertest.SplitStaves(string(b))
	if err != nil {
		return err
	}
	steps, err := indexertest.UpdateSteps(st)
	if err != nil {
		return err
	}

	srv := llmtest.New(llmtest.Config{Latency: *latency})
	indexertest.Script(srv)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	client, err := llm.New(llm.Config{BaseURL: hs.URL + "/v1", ChatModel: "bench-chat"})
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "kgrag-update-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	fmt.Println("| step | documents / text units | extraction calls: made (answered by the cache) | summaries | reports | a fresh index of the folder: extraction / summary / report calls | entities that kept their id | communities that kept their membership | equal to the fresh index | wall time (fresh index) |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	var prev *graphrag.Dataset
	for _, s := range steps {
		fmt.Fprintf(os.Stderr, "update bench: %s\n", s.Name)
		t0 := time.Now()
		sum, ds, err := index(ctx, client, filepath.Join(work, "live"), s.Files, true, *concurrency, *chunkBy)
		liveTime := time.Since(t0)
		if err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
		t0 = time.Now()
		fresh, fds, err := index(ctx, client, filepath.Join(work, "fresh"), s.Files, false, *concurrency, *chunkBy)
		freshTime := time.Since(t0)
		if err != nil {
			return fmt.Errorf("%s (fresh): %w", s.Name, err)
		}
		os.RemoveAll(filepath.Join(work, "fresh"))
		kept, comms := "", ""
		if prev != nil {
			kept, comms = keptIDs(prev, ds), keptCommunities(prev, ds)
		}
		c := func(sum *indexer.Summary, stage string) indexer.StageStats {
			for _, x := range sum.Stages {
				if x.Stage == stage {
					return x
				}
			}
			return indexer.StageStats{}
		}
		e, sm, r := c(sum, indexer.StageExtraction), c(sum, indexer.StageSummaries), c(sum, indexer.StageReports)
		fe, fs, fr := c(fresh, indexer.StageExtraction), c(fresh, indexer.StageSummaries), c(fresh, indexer.StageReports)
		fmt.Printf("| %s | %d / %d | %d (%d) | %d (%d) | %d (%d) | %d / %d / %d | %s | %s | %s | %.1f s (%.1f s) |\n", s.Name, sum.Documents, sum.TextUnits,
			e.Calls-e.Cached, e.Cached, sm.Calls-sm.Cached, sm.Cached, r.Calls-r.Cached, r.Cached, fe.Calls, fs.Calls, fr.Calls, kept, comms, same(ds, fds), liveTime.Seconds(), freshTime.Seconds())
		prev = ds
	}
	return nil
}

// index writes files as the input folder under dir (replacing what was
// there) and runs the indexer into dir/output, with the cache of replies
// in dir/cache when cached.
func index(ctx context.Context, client *llm.Client, dir string, files map[string]string, cached bool, concurrency int, chunkBy string) (*indexer.Summary, *graphrag.Dataset, error) {
	in := filepath.Join(dir, "input")
	if err := indexertest.WriteFolder(in, files); err != nil {
		return nil, nil, err
	}
	opts := indexer.DefaultOptions()
	opts.Input, opts.Output = in, filepath.Join(dir, "output")
	opts.CacheDir = ""
	if cached {
		opts.CacheDir = filepath.Join(dir, "cache")
	}
	opts.Model, opts.Concurrency = "bench-chat", concurrency
	opts.Chunk.Strategy = chunkBy
	sum, err := indexer.Run(ctx, client, opts)
	if err != nil {
		return nil, nil, err
	}
	ds, err := graphrag.Open(ctx, opts.Output)
	return sum, ds, err
}

// keptIDs is how many of the entities of both datasets (by title) have
// the same id in each.
func keptIDs(a, b *graphrag.Dataset) string {
	ids := map[string]string{}
	for _, e := range a.Entities {
		ids[e.Title] = e.ID
	}
	both, same := 0, 0
	for _, e := range b.Entities {
		if id, ok := ids[e.Title]; ok {
			both++
			if id == e.ID {
				same++
			}
		}
	}
	return fmt.Sprintf("%d of %d", same, both)
}

// keptCommunities is how many communities of b have exactly the member
// titles of a community of a at the same level.
func keptCommunities(a, b *graphrag.Dataset) string {
	titles := func(ds *graphrag.Dataset) map[string]string {
		m := make(map[string]string, len(ds.Entities))
		for _, e := range ds.Entities {
			m[e.ID] = e.Title
		}
		return m
	}
	ta, tb := titles(a), titles(b)
	key := func(title map[string]string, c graphrag.Community) string {
		var ms []string
		for _, id := range c.EntityIDs {
			ms = append(ms, title[id])
		}
		slices.Sort(ms)
		return fmt.Sprint(c.Level, ms)
	}
	old := map[string]bool{}
	for _, c := range a.Communities {
		old[key(ta, c)] = true
	}
	same := 0
	for _, c := range b.Communities {
		if old[key(tb, c)] {
			same++
		}
	}
	return fmt.Sprintf("%d of %d", same, len(b.Communities))
}

// same says whether two outputs hold the same text units, entities (id,
// title, type, description) and relationships (id, ends, description,
// weight), or what differs.
func same(a, b *graphrag.Dataset) string {
	units := func(ds *graphrag.Dataset) []string {
		var out []string
		for _, u := range ds.TextUnits {
			out = append(out, u.ID)
		}
		slices.Sort(out)
		return out
	}
	ents := func(ds *graphrag.Dataset) []string {
		var out []string
		for _, e := range ds.Entities {
			out = append(out, e.ID+"|"+e.Title+"|"+e.Type+"|"+e.Description)
		}
		slices.Sort(out)
		return out
	}
	rels := func(ds *graphrag.Dataset) []string {
		var out []string
		for _, r := range ds.Relationships {
			out = append(out, fmt.Sprint(r.ID, "|", r.SourceID, "|", r.TargetID, "|", r.Description, "|", r.Weight))
		}
		slices.Sort(out)
		return out
	}
	var diff []string
	if !slices.Equal(units(a), units(b)) {
		diff = append(diff, "text units")
	}
	if !slices.Equal(ents(a), ents(b)) {
		diff = append(diff, "entities")
	}
	if !slices.Equal(rels(a), rels(b)) {
		diff = append(diff, "relationships")
	}
	if len(diff) == 0 {
		return "yes"
	}
	return "no: " + strings.Join(diff, ", ") + " differ"
}
