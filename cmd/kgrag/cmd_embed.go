package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/embedindex/elastic"
	"github.com/kgrag/kgrag/embedindex/flat"
	"github.com/kgrag/kgrag/embedindex/location"
	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/embedtext"
	"github.com/kgrag/kgrag/internal/redact"
	"github.com/kgrag/kgrag/internal/snapshot"
	"github.com/kgrag/kgrag/internal/tokens"
	"github.com/kgrag/kgrag/internal/ui"
	"github.com/urfave/cli/v3"
)

// Names inside the index directory.
const (
	defaultIndexDir = location.DefaultDir   // under --input when --index is unset
	entityIndexFile = location.EntitiesFile // the flat index of entity descriptions
)

// embedOptions is everything `kgrag embed` needs; the Action fills it from
// flags so tests can call runEmbed directly.
type embedOptions struct {
	input       string
	read        readOptions
	policy      graphrag.Policy // read's, parsed by validate
	index       string          // "" means input/kgrag-index
	batchSize   int
	concurrency int
	quiet       bool
	// reuse takes GraphRAG 0.2/0.3's description_embedding instead of
	// calling a model; modelSet says --embed-model was given (it must be,
	// to name the model that made them).
	reuse    bool
	modelSet bool
	// es, when its url is set, receives the vectors instead of the flat
	// file (the cache stays in the index folder); an index there changes
	// in place when at most esMaxChange of it changes.
	es          indexOptions
	esMaxChange float64
	// tables are the tables whose texts are embedded (--tables), in
	// embedTables' order.
	tables []string
	// ann says when the flat file gets an HNSW graph (--ann), from
	// annThreshold vectors in auto mode.
	ann          flat.ANNMode
	annThreshold int
	// snapshot writes the graph snapshot (graph.snap) beside the index,
	// which kgrag ask and serve open instead of the parquet tables.
	snapshot bool
	// noFolder: the index folder cannot be written, and the vectors go
	// to Elasticsearch, so the run keeps no cache there.
	noFolder bool

	llm llmOptions
}

func newEmbedCommand(term terminal) *cli.Command {
	o := &embedOptions{}
	var tables, ann string // parsed into o.tables and o.ann
	return &cli.Command{
		Name:      "embed",
		Usage:     "embed entity descriptions (and text units, community reports) with a local model into a vector index",
		ArgsUsage: " ",
		Description: `Reads the GraphRAG output in --input (any release; see 'kgrag inspect'),
embeds the text "title:description" of every entity the entities table
holds (GraphRAG's form) through an OpenAI-compatible /v1/embeddings
endpoint, by default Ollama on this machine, and writes a vector index of
them, keyed by entity id, to --index/entities.vec (--index defaults to
kgrag-index inside --input).

--tables embeds other texts too, each into its own index beside the
entities': the text of text units (text_units.vec; what --mode basic
searches) and the full content of community reports
(community_reports.vec; what --mode drift starts from), as GraphRAG 3.x
embeds them. The default is the entities alone, which the other modes need:

   kgrag embed --input ./output --tables all
   kgrag embed --input ./output --tables text_units

Vectors are cached by model and text in the index folder (embeddings.cache),
so a rerun sends only entities that are new or changed, and an interrupted
run keeps what it had embedded. With --index-url the folder holds only that
cache and the graph snapshot ask reads; where it cannot be written (a
read-only --input), embed warns and runs without them.

   ollama pull nomic-embed-text
   kgrag embed --input ./ragtest/output
   kgrag embed --input ./output --index ./idx --embed-model mxbai-embed-large
   KGRAG_LLM_URL=http://gpu-box:8000/v1 KGRAG_LLM_KEY_FILE=~/.vllm-key \
       kgrag embed --input ./output --batch-size 256 --concurrency 4

GraphRAG 0.2 and 0.3 stored the embeddings in the entities table
(description_embedding). --reuse-embeddings writes the index from them
without calling any model; name the model GraphRAG used (its settings.yaml,
embeddings.llm.model), since questions must be embedded with the same one:

   kgrag embed --input ./output --reuse-embeddings --embed-model text-embedding-3-small

An index of --ann-threshold vectors or more (default 20000) also gets an
approximate index, an HNSW graph stored in the same file, which kgrag ask
then searches in a fraction of a millisecond instead of scanning every
vector (8 ms at 100k vectors of 768 dimensions, ten times that at 1M). Its recall@10 against the exact scan is
measured on 200 of the index's own vectors with noise added, the search
widened (efSearch) until it reaches 0.98, and printed and kept in the
file. --ann on builds it whatever the size, --ann off never:

   kgrag embed --input ./output --ann off

With --index-url the vectors go to Elasticsearch 8 instead (alias
--index-name, default kgrag-entities), rebuilt under a new index and
swapped in at once, so searches never see half an index. Text units and
reports go to aliases named after it (kgrag-text_units and
kgrag-community_reports beside kgrag-entities):

   kgrag embed --input ./output --index-url http://localhost:9200
   kgrag ask --input ./output --index-url http://localhost:9200 "Who is Scrooge?"

On a cluster, name several nodes and give each shard a replica, so that a
search survives the loss of a node:

   kgrag embed --input ./output --index-replicas 1 \
       --index-url http://es1:9200,http://es2:9200,http://es3:9200
` + exitStatusHelp,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "input", Destination: &o.input, Aliases: []string{"i"}, Usage: "GraphRAG output `DIR` (the folder holding the .parquet files, or a project folder with output/)", Sources: cli.EnvVars("KGRAG_INPUT")},
			&cli.StringFlag{Name: "index", Destination: &o.index, Usage: "index `DIR` to write (default: kgrag-index inside --input)", Sources: cli.EnvVars("KGRAG_INDEX")},
			&cli.StringFlag{Name: "tables", Destination: &tables, Value: tableEntities, Usage: "comma-separated `TABLES` whose texts to embed: entities (for local search), text_units (--mode basic), community_reports (--mode drift), or all", Sources: cli.EnvVars("KGRAG_EMBED_TABLES")},
			&cli.IntFlag{Name: "batch-size", Destination: &o.batchSize, Value: embedindex.DefaultBatchSize, Usage: "texts per embedding request"},
			&cli.IntFlag{Name: "concurrency", Destination: &o.concurrency, Value: embedindex.DefaultConcurrency, Usage: "embedding requests in flight at once"},
			&cli.FloatFlag{Name: "index-update-max", Destination: &o.esMaxChange, Category: "vector index", Value: defaultESMaxChange, Usage: "with --index-url: change the live Elasticsearch index in place (bulk upserts and deletes) when at most this share of its vectors changes; rebuild it and swap the alias otherwise (0: always rebuild)"},
			&cli.IntFlag{Name: "index-shards", Destination: &o.es.shards, Category: "vector index", Value: 1, Usage: "with --index-url: primary shards of a new Elasticsearch index (Elastic advises shards of 10-50 GB; 1M vectors of 768 dimensions take about 3 GB)", Sources: cli.EnvVars("KGRAG_INDEX_SHARDS")},
			&cli.IntFlag{Name: "index-replicas", Destination: &o.es.replicas, Category: "vector index", Value: 0, Usage: "with --index-url: copies of each shard on other nodes; 0 keeps a single node green, 1 on a cluster of three lets searches go on when a node is lost", Sources: cli.EnvVars("KGRAG_INDEX_REPLICAS")},
			&cli.StringFlag{Name: "ann", Destination: &ann, Category: "vector index", Value: "auto", Usage: "approximate (HNSW) index in the flat file: auto (from --ann-threshold vectors), on or off (always search exactly)", Sources: cli.EnvVars("KGRAG_ANN")},
			&cli.IntFlag{Name: "ann-threshold", Destination: &o.annThreshold, Category: "vector index", Value: flat.DefaultANNThreshold, Usage: "with --ann auto: build the approximate index for this many vectors or more", Sources: cli.EnvVars("KGRAG_ANN_THRESHOLD")},
			&cli.BoolFlag{Name: "snapshot", Destination: &o.snapshot, Value: true, Usage: "also write graph.snap to the index folder: the graph's lookup tables, which kgrag ask --input and serve map in milliseconds instead of reading the parquet tables (--snapshot=false: leave it out)", Sources: cli.EnvVars("KGRAG_SNAPSHOT")},
			&cli.BoolFlag{Name: "reuse-embeddings", Destination: &o.reuse, Usage: "take the description_embedding vectors a GraphRAG 0.2/0.3 output holds instead of calling a model (--embed-model must name the model that made them)"},
		}, append(append(readFlags(&o.read), elasticFlags(&o.es)...), llmFlags(&o.llm)...)...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usagef("kgrag embed --input DIR", "embed takes no arguments, got %q", cmd.Args().First())
			}
			var err error
			if o.tables, err = parseTables(tables); err != nil {
				return usagef("kgrag embed --input DIR --tables all", "%v", err)
			}
			if o.ann, err = flat.ParseANNMode(ann); err != nil {
				return usagef("kgrag embed --input DIR --ann off", "--ann %q: want auto, on or off", ann)
			}
			o.quiet = term.isQuiet()
			o.modelSet = cmd.IsSet("embed-model")
			return runEmbed(ctx, *o, term)
		},
	}
}

func (o *embedOptions) validate() error {
	if len(o.tables) == 0 {
		o.tables = []string{tableEntities}
	}
	switch {
	case o.input == "":
		return usagef("kgrag embed --input ./output", "--input is required: the folder GraphRAG wrote its parquet files to")
	case o.batchSize <= 0:
		return usagef(fmt.Sprintf("--batch-size %d", embedindex.DefaultBatchSize), "--batch-size must be positive")
	case o.concurrency <= 0:
		return usagef(fmt.Sprintf("--concurrency %d", embedindex.DefaultConcurrency), "--concurrency must be positive")
	case o.llm.embedModel == "":
		return usagef("--embed-model "+defaultEmbedModel, "--embed-model is empty: name the embedding model")
	case o.annThreshold < 0:
		return usagef(fmt.Sprintf("--ann-threshold %d", flat.DefaultANNThreshold), "--ann-threshold must not be negative")
	case o.esMaxChange < 0 || o.esMaxChange > 1:
		return usagef("--index-update-max 0.1", "--index-update-max %g is outside 0..1", o.esMaxChange)
	case o.reuse && !slices.Equal(o.tables, []string{tableEntities}):
		return usagef("--reuse-embeddings --tables entities", "--reuse-embeddings reads the entities' description_embedding vectors: it cannot embed %s; run kgrag embed again without it for them", strings.Join(slices.DeleteFunc(slices.Clone(o.tables), func(t string) bool { return t == tableEntities }), " and "))
	case o.reuse && !o.modelSet:
		return usagef("--reuse-embeddings --embed-model text-embedding-3-small",
			"--reuse-embeddings needs --embed-model: the model GraphRAG embedded the descriptions with (embeddings.llm.model in its settings.yaml)")
	}
	pol, err := o.read.policy()
	if err != nil {
		return err
	}
	o.policy = pol
	if o.index == "" {
		o.index = filepath.Join(o.input, defaultIndexDir)
	}
	if o.es.url != "" {
		if err := o.es.resolve(o.input); err != nil {
			return err
		}
	}
	return o.llm.validate()
}

// embedChunk is how many texts go to the cache layer at once: the cache
// keeps each chunk's vectors as soon as it is done, so an interrupted run
// loses at most one chunk.
func embedChunk(opts embedOptions) int { return opts.batchSize * opts.concurrency * 4 }

func runEmbed(ctx context.Context, opts embedOptions, term terminal) (err error) {
	if err := opts.validate(); err != nil {
		return err
	}
	// The files as they are before reading: one rewritten meanwhile makes
	// the snapshot stale rather than wrong.
	files, serr := snapshot.Stat(opts.input)
	ds, err := graphrag.OpenWith(ctx, opts.input, opts.policy)
	if err != nil {
		return err
	}
	if !opts.quiet {
		if s := leftOutSummary(ds.LeftOut, opts.input); s != "" {
			fmt.Fprintf(term.err, "kgrag: %s\n", s)
		}
	}
	if opts.es.url != "" {
		// The vectors go to Elasticsearch; the folder keeps only the cache
		// and the snapshot, and a read-only --input should not stop that.
		if _, serr := os.Stat(opts.index); serr != nil {
			defer func() {
				if err != nil {
					os.Remove(opts.index) // only if still empty
				}
			}()
		}
		if err := os.MkdirAll(opts.index, 0o755); err != nil {
			fmt.Fprintf(term.err, "warning: %v: embedding without a cache or graph snapshot, so a rerun embeds every text again and ask reads the parquet files; name a writable --index to keep them\n", err)
			opts.noFolder, opts.snapshot = true, false
		}
	}
	if opts.snapshot && serr == nil {
		defer func() {
			if err == nil {
				err = writeSnapshot(ctx, opts, ds, files, term)
			}
		}()
	}
	if opts.reuse {
		return reuseEmbeddings(ctx, ds, opts, term)
	}
	client, err := opts.llm.client()
	if err != nil {
		return err
	}
	// Every table is read before any model call, so that a table with
	// nothing to embed is refused before anything is paid for.
	type work struct {
		table      string
		ids, texts []string
	}
	var todo []work
	for _, t := range opts.tables {
		ids, texts, empty := embedtext.Of(ds, t)
		if len(ids) == 0 {
			return fmt.Errorf("embed: %s holds no %s to embed%s", opts.input, tableNoun(t), emptyNote(empty))
		}
		if empty > 0 {
			fmt.Fprintf(term.err, "warning: %d %s have no text and are left out of the index\n", empty, tableNoun(t))
		}
		todo = append(todo, work{t, ids, texts})
	}
	if _, serr := os.Stat(opts.index); serr != nil {
		// A folder this run makes is not left behind empty by a run that
		// failed before it cached anything (Remove leaves a full one).
		defer func() {
			if err != nil {
				os.Remove(opts.index)
			}
		}()
	}
	cachePath := filepath.Join(opts.index, embedindex.CacheFile)
	if opts.noFolder {
		cachePath = ""
	} else if err := os.MkdirAll(opts.index, 0o755); err != nil {
		return fmt.Errorf("embed: create index folder: %w", err)
	}
	cache, err := embedindex.OpenCache(cachePath)
	if err != nil {
		return err
	}
	enc, err := tokens.NewEncoder(embedEncoding)
	if err != nil {
		return err
	}
	var all [][]string
	for _, w := range todo {
		all = append(all, w.texts)
	}
	size, win, err := embedSize(ctx, client, client.Embedder(), enc, longestTexts(all...))
	if err != nil {
		return err
	}
	if !opts.quiet {
		if size > 0 {
			fmt.Fprintf(term.err, "embedding window of %s: %s; longer texts are embedded in windows of %d tokens\n", client.EmbedModel(), win, size)
		} else if win.Known() {
			fmt.Fprintf(term.err, "embedding window of %s: %s; every text is read whole\n", client.EmbedModel(), win)
		}
	}
	for _, w := range todo {
		split := embedindex.SplitAll(enc, w.ids, w.texts, size)
		if err := embedTable(ctx, opts, client.Embedder(), cache, w.table, split, len(w.ids), term); err != nil {
			// Keep what was paid for, even when interrupted.
			return errors.Join(err, cache.Save(context.WithoutCancel(ctx)))
		}
	}
	// Only a run over every table knows which entries are still used.
	if len(opts.tables) == len(embedTables) {
		cache.Prune()
	}
	return cache.Save(context.WithoutCancel(ctx))
}

// emptyNote explains an empty table whose rows all lack text.
func emptyNote(empty int) string {
	if empty == 0 {
		return ""
	}
	return fmt.Sprintf(" (its %d rows have no text)", empty)
}

// embedTable embeds one table's texts through the cache and writes its
// index.
func embedTable(ctx context.Context, opts embedOptions, e embedindex.Embedder, cache *embedindex.Cache, table string, w embedindex.Windows, texts int, term terminal) error {
	ids := w.IDs
	progress := ui.NewProgress(term.err, term.tty && !opts.quiet, "embedded", tableNoun(table))
	var counter embedindex.Counter
	if progress != nil {
		counter = progress
	}
	batcher := embedindex.NewBatcher(e, embedindex.BatchOptions{
		Size: opts.batchSize, Concurrency: opts.concurrency, Counter: counter,
	})
	cached := embedindex.NewCached(batcher, cache, counter)
	vecs, err := embedAll(ctx, cached, w.Texts, embedChunk(opts))
	progress.Done()
	if err != nil {
		return fmt.Errorf("%w (%s)", err, tableNoun(table))
	}
	path, err := writeIndex(ctx, opts, table, cached.Model(), ids, vecs, term)
	if err != nil {
		return err
	}
	hits, misses := cached.Stats()
	split := ""
	if w.Split > 0 {
		split = fmt.Sprintf(" (counting windows: %d of the %d %s are longer than the window and were embedded as %d windows)", w.Split, texts, tableNoun(table), w.Split+len(w.IDs)-texts)
	}
	fmt.Fprintf(term.err, "embedded %d %s, %d from cache%s; model %s, dimension %d; index %s\n",
		misses, tableNoun(table), hits, split, cached.Model(), len(vecs[0]), path)
	return nil
}

// reuseEmbeddings writes the index from the description_embedding column
// of a 0.2/0.3 output. Every entity must have one of the same length.
func reuseEmbeddings(ctx context.Context, ds *graphrag.Dataset, opts embedOptions, term terminal) error {
	var ids []string
	var vecs [][]float32
	for i, e := range ds.Entities {
		if e.Placeholder {
			continue
		}
		if len(e.DescriptionEmbedding) == 0 {
			if ds.Release != graphrag.Release03 {
				return usagef("kgrag embed --input "+opts.input, "--reuse-embeddings: %s is GraphRAG %s output, whose entities table holds no description_embedding vectors (only 0.2 and 0.3 wrote them to parquet): leave out --reuse-embeddings to embed the descriptions with --embed-model",
					opts.input, ds.Release)
			}
			return fmt.Errorf("embed: --reuse-embeddings: %s: entities row %d (%q) has no description_embedding; leave out --reuse-embeddings to embed the descriptions with --embed-model", opts.input, i, e.Title)
		}
		if len(vecs) > 0 && len(e.DescriptionEmbedding) != len(vecs[0]) {
			return fmt.Errorf("embed: --reuse-embeddings: %s: entities row %d (%q): description_embedding has %d dimensions, earlier rows %d",
				opts.input, i, e.Title, len(e.DescriptionEmbedding), len(vecs[0]))
		}
		v := make([]float32, len(e.DescriptionEmbedding))
		for j, x := range e.DescriptionEmbedding {
			v[j] = float32(x)
		}
		ids = append(ids, e.ID)
		vecs = append(vecs, v)
	}
	if len(ids) == 0 {
		return fmt.Errorf("embed: %s holds no entities to embed", opts.input)
	}
	if err := os.MkdirAll(opts.index, 0o755); err != nil {
		return fmt.Errorf("embed: create index folder: %w", err)
	}
	path, err := writeIndex(ctx, opts, tableEntities, opts.llm.embedModel, ids, vecs, term)
	if err != nil {
		return err
	}
	fmt.Fprintf(term.err, "reused %d description_embedding vectors; model %s, dimension %d; index %s\n",
		len(ids), opts.llm.embedModel, len(vecs[0]), path)
	return nil
}

// defaultESMaxChange is the share of an Elasticsearch index that may
// change in place; a larger change rebuilds it.
const defaultESMaxChange = 0.1

// writeIndex writes the vectors to the flat file in the index folder
// (whole: entities that are gone leave it), or brings the Elasticsearch
// alias to them: in place when the change is small (new and changed
// vectors upserted, those of gone entities deleted), else rebuilt
// atomically (searches see the old vectors until the new ones are all
// in). It says where they went, and how; the approximate index of a
// flat file, when one is built, is reported on term.err.
func writeIndex(ctx context.Context, opts embedOptions, table, model string, ids []string, vecs [][]float32, term terminal) (string, error) {
	if opts.es.url == "" {
		path := filepath.Join(opts.index, location.File(table))
		bo := flat.BuildOptions{ANN: opts.ann, Threshold: opts.annThreshold}
		if bo.Threshold == 0 {
			bo.Threshold = flat.DefaultANNThreshold
		}
		progress := ui.NewProgress(term.err, term.tty && !opts.quiet && bo.ANN != flat.ANNOff && len(ids) >= bo.Threshold,
			"linked", "vectors into the approximate index (then 200 recall queries, 2-3 passes)")
		if progress != nil {
			bo.Counter = progress
		}
		rep, err := flat.WriteWith(ctx, path, model, ids, vecs, bo)
		progress.Done()
		if err != nil {
			return "", err
		}
		if rep.ANN {
			fmt.Fprintf(term.err, "approximate index (HNSW, M %d, efConstruction %d) of %d %s built in %s; recall@10 %.3f against the exact scan (%d queries) at efSearch %d, measured in %s\n",
				rep.M, rep.EfConstruction, len(ids), tableNoun(table), rep.Build.Round(time.Millisecond), rep.Recall, rep.Queries, rep.Ef, rep.Measure.Round(time.Millisecond))
			if !rep.Met {
				fmt.Fprintf(term.err, "warning: the approximate index of %s misses recall@10 0.98 even at efSearch %d; kgrag ask will use it anyway: rebuild with --ann off for exact search\n", path, rep.Ef)
			}
		}
		if rep.Exact {
			fmt.Fprintf(term.err, "approximate index (HNSW, M %d, efConstruction %d) of %d %s reached only recall@10 %.3f against the exact scan (%d queries) even at efSearch %d, below 0.98: "+
				"%s holds no graph and kgrag ask searches it exactly (--ann on keeps the graph anyway)\n",
				rep.M, rep.EfConstruction, len(ids), tableNoun(table), rep.Recall, rep.Queries, rep.Ef, path)
		}
		return path, nil
	}
	es := opts.es.forTable(table)
	st, err := elastic.Update(ctx, es.elasticConfig(), model, 0, ids, vecs, opts.esMaxChange)
	if err != nil {
		return "", indexError(es, fmt.Errorf("embed: %w", err))
	}
	how := fmt.Sprintf("updated in place: %d written, %d deleted, %d unchanged", st.Upserted, st.Deleted, st.Unchanged)
	if st.Rebuilt {
		how = "rebuilt (" + st.Reason + ")"
	}
	return fmt.Sprintf("%s alias %s, %s", redact.URLs(es.url), es.name, how), nil
}

// embedAll embeds texts chunk by chunk through e, stopping at the first
// error or when ctx is done.
func embedAll(ctx context.Context, e embedindex.Embedder, texts []string, chunk int) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for lo := 0; lo < len(texts); lo += chunk {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("embed: %w", err)
		}
		hi := min(lo+chunk, len(texts))
		vecs, err := e.Embed(ctx, texts[lo:hi])
		if err != nil {
			return nil, fmt.Errorf("embed: %w", err)
		}
		out = append(out, vecs...)
	}
	return out, nil
}
