package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/internal/chunk"
	"github.com/kgrag/kgrag/internal/engine"
	"github.com/kgrag/kgrag/internal/extraction"
	"github.com/kgrag/kgrag/internal/graphbuild"
	"github.com/kgrag/kgrag/internal/indexer"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llmcall"
	"github.com/kgrag/kgrag/internal/prompttune"
	"github.com/kgrag/kgrag/internal/redact"
	"github.com/kgrag/kgrag/internal/ui"
	"github.com/kgrag/kgrag/prompts"
	"github.com/kgrag/kgrag/sparqlq"
	"github.com/urfave/cli/v3"
)

// defaultIndexCache is the model reply cache's folder, beside --output.
const defaultIndexCache = "kgrag-cache"

// Values of kgrag index --reports.
const (
	reportsModel = "model"
	reportsNone  = "none"
)

// indexRunOptions is everything `kgrag index` needs; the Action fills it from
// flags so tests can call runIndex directly.
type indexRunOptions struct {
	profile              string // --profile
	input, output, cache string
	chatModel            string
	concurrency          int
	chunkSize, overlap   int
	chunkBy              string
	freshCommunities     bool
	maxGleanings         int
	entityTypes          string
	// entityTypesSet says --entity-types was given: it then wins over
	// the entity types of a --prompts folder's prompt-tune.json.
	entityTypesSet   bool
	promptsDir       string
	textColumn       string
	titleColumn      string
	skipBad          bool
	claims           bool
	claimDescription string
	summaryJoinUnder int
	dedup            bool
	temperature      float64
	maxTokens        int
	reportMaxLength  int
	dedupThreshold   float64
	plan             bool
	quiet            bool
	// method is indexer.MethodStandard or MethodFast; reports is
	// reportsModel or reportsNone.
	method, reports string
	// prune is the fast method's pruning preset (graphbuild.PruneGraphRAG...).
	prune string
	llm   llmOptions
	// load and embed, when set, run kgrag load and kgrag embed on the
	// output once it is written.
	load  *loadOptions
	embed *embedOptions
}

func newIndexCommand(term terminal) *cli.Command {
	o := &indexRunOptions{chatModel: defaultChatModel}
	var load, embed bool
	// With --load and --embed: kgrag load's and kgrag embed's settings.
	lo := &loadOptions{}
	emb := &embedOptions{batchSize: embedindex.DefaultBatchSize, concurrency: embedindex.DefaultConcurrency}
	return &cli.Command{
		Name:      "index",
		Usage:     "build a GraphRAG knowledge graph from a folder of text with a local model",
		ArgsUsage: " ",
		Description: `Reads the .txt, .md, .csv and .pdf files under --input, splits them into
token chunks, asks the chat model for the entities and relationships of
each chunk, merges and summarises them, finds communities (hierarchical
Leiden) and has the model write a report on each, as Microsoft GraphRAG
3.3.0 indexes. The result is GraphRAG 3.x parquet output in --output, ready
for 'kgrag load' and 'kgrag ask'; it is written to a temporary folder and
moved into place at the end, so a failed run leaves no half-written output.

Model replies are cached by request in --cache (default: kgrag-cache beside
--output), so a run that was interrupted, or is repeated, pays for no call
twice.

   kgrag index --input ./books --output ./ragtest/output --chat-model qwen2.5:7b

With prompts tuned to the corpus by kgrag prompt-tune (its entity types
too, unless --entity-types is given):

   kgrag prompt-tune --input ./books --output ./prompts --chat-model qwen2.5:7b
   kgrag index --input ./books --output ./ragtest/output --prompts ./prompts

See what a run will cost first (no model is called):

   kgrag index --input ./books --output ./ragtest/output --plan

--method fast is GraphRAG's fast method: entities are the noun phrases of
the text, found by a part-of-speech tagger built into kgrag, relationships
join the phrases that share a text unit, weighted by pointwise mutual
information, and the graph is pruned as GraphRAG prunes it. No model is
called until the community reports, which the model writes from the
community's text units (its passages, GraphRAG's text-unit reports; the
prompt is index_report_text.tmpl), one call per community:

   kgrag index --input ./books --output ./ragtest/output --method fast --chat-model qwen2.5:7b

With --reports none, no model is called at all, so a graph of a book takes
seconds and needs no model server:

   kgrag index --input ./books --output ./ragtest/output --method fast --reports none

Go straight on to a SPARQL store and the vector index, as 'kgrag load
--embed' would, once the output is written:

   kgrag index --input ./books --output ./ragtest/output \
       --load --store http://localhost:3030/ds --graph http://example.org/books --embed
` + exitStatusHelp,
		Flags: append([]cli.Flag{
			profileFlag(&o.profile),
			&cli.StringFlag{Name: "input", Destination: &o.input, Aliases: []string{"i"}, Usage: "`DIR` of documents to index"},
			&cli.StringFlag{Name: "output", Destination: &o.output, Aliases: []string{"o"}, Usage: "`DIR` to write the GraphRAG tables to (replaced when the run succeeds)"},
			&cli.StringFlag{Name: "method", Destination: &o.method, Value: indexer.MethodStandard, Usage: "`HOW` entities and relationships are found: standard (the chat model extracts them, GraphRAG's standard method) or fast (noun phrases and their co-occurrence in a text unit, no model: GraphRAG's fast method)"},
			&cli.StringFlag{Name: "prune", Destination: &o.prune, Value: indexer.PruneAuto, Usage: "with --method fast: `HOW` the noun graph is pruned: graphrag (GraphRAG's defaults: phrases found in one text unit go; for long texts), light (phrases found once stay; for short passages, where most names are found once) or auto (light when the text units average under 300 words, else graphrag)"},
			&cli.StringFlag{Name: "reports", Destination: &o.reports, Value: reportsModel, Usage: "`WHO` writes the community reports: model (the chat model) or none (no reports: with --method fast, no model is called at all)"},
			&cli.StringFlag{Name: "cache", Destination: &o.cache, Usage: "`DIR` of cached model replies (default: kgrag-cache beside --output)"},
			&cli.FloatFlag{Name: "temperature", Destination: &o.temperature, Category: "model server", Value: 0, Usage: "sampling temperature of every call (GraphRAG's 0: the most repeatable)"},
			&cli.IntFlag{Name: "max-tokens", Destination: &o.maxTokens, Category: "model server", Usage: "stop each reply after `N` tokens (0: an eighth of the chat model's window, 256-2048 tokens, when the window is known); bounds the time a small model that rambles takes per call"},
			chatWindowFlag(&o.llm.chatWindow),
			chatModelFlag("chat model `NAME` that extracts and writes", &o.chatModel),
			&cli.StringFlag{Name: "text-column", Destination: &o.textColumn, Value: "text", Usage: "CSV `COLUMN` holding a row's text (each row is a document)"},
			&cli.StringFlag{Name: "title-column", Destination: &o.titleColumn, Usage: "CSV `COLUMN` holding a row's title (default: the file name and row number)"},
			&cli.BoolFlag{Name: "skip-bad-input", Destination: &o.skipBad, Usage: "leave out, and list, files and CSV rows that cannot be read instead of stopping at the first"},
			&cli.IntFlag{Name: "concurrency", Destination: &o.concurrency, Value: 4, Usage: "model calls in flight at once"},
			&cli.IntFlag{Name: "chunk-size", Destination: &o.chunkSize, Value: chunk.DefaultSize, Usage: "tokens per chunk"},
			&cli.IntFlag{Name: "chunk-overlap", Destination: &o.overlap, Value: chunk.DefaultOverlap, Usage: "tokens a chunk shares with the next"},
			&cli.StringFlag{Name: "chunk-by", Destination: &o.chunkBy, Value: chunk.StrategyTokens, Usage: "`HOW` chunks are cut: tokens (GraphRAG's fixed windows: editing a document re-extracts every chunk after the edit) or paragraphs (whole paragraphs, boundaries set by the text: an edit re-extracts the chunk or two around it)"},
			&cli.BoolFlag{Name: "fresh-communities", Destination: &o.freshCommunities, Usage: "over an earlier output, cluster from scratch as GraphRAG does; by default Leiden starts from the earlier communities, and those that persist keep their numbers and ids, so a small change moves few communities and asks few reports again"},
			&cli.IntFlag{Name: "max-gleanings", Destination: &o.maxGleanings, Value: extraction.DefaultMaxGleanings, Usage: "extra extraction rounds per chunk"},
			&cli.StringFlag{Name: "entity-types", Destination: &o.entityTypes, Value: strings.Join(extraction.DefaultEntityTypes(), ","), Usage: "comma-separated entity `TYPES` to extract (default with --prompts: those kgrag prompt-tune found)"},
			&cli.StringFlag{Name: "prompts", Destination: &o.promptsDir, Usage: "`DIR` of prompt templates replacing kgrag's own (index_extract.tmpl, index_summarize.tmpl, index_report.tmpl, ...), as kgrag prompt-tune writes them", Sources: cli.EnvVars("KGRAG_PROMPTS")},
			&cli.IntFlag{Name: "summary-threshold", Destination: &o.summaryJoinUnder, Usage: "join an entity's descriptions without a model call when together they fit in `TOKENS` (the NetworkX article uses 300; 0 summarises every entity described more than once, as GraphRAG does)"},
			&cli.IntFlag{Name: "report-max-length", Destination: &o.reportMaxLength, Value: 2000, Usage: "`WORDS` a community report may have; with llama.cpp's servers the reply's JSON schema enforces a share of it per field (GraphRAG's max_length)"},
			&cli.BoolFlag{Name: "dedup", Destination: &o.dedup, Usage: "join entities whose embedded \"title: descriptions\" are alike (the NetworkX article's de-duplication; needs --embed-model), and list what was joined"},
			&cli.FloatFlag{Name: "dedup-threshold", Destination: &o.dedupThreshold, Value: graphbuild.DefaultDedupThreshold, Usage: "with --dedup: the cosine `SIMILARITY` that joins two entities; alike entities join in chains, so check the list and raise it if unrelated entities were joined (the right value depends on the embedding model)"},
			&cli.BoolFlag{Name: "plan", Destination: &o.plan, Usage: "read and chunk the input, print the model calls and tokens the run would take (exact for extraction, estimated after it) and how many are cached, and stop without calling the model"},
			&cli.BoolFlag{Name: "claims", Destination: &o.claims, Usage: "also extract claims about entities (GraphRAG's covariates table; one more conversation per chunk)"},
			&cli.StringFlag{Name: "claim-description", Destination: &o.claimDescription, Value: extraction.DefaultClaimDescription, Usage: "what claims to look for, with --claims"},
			&cli.BoolFlag{Name: "load", Destination: &load, Category: "store", Usage: "then load the output into --store as --graph, as kgrag load does"},
			&cli.StringFlag{Name: "base", Destination: &lo.base, Category: "store", Value: defaultBase, Usage: "with --load: base `IRI` of the dataset's instances", Sources: cli.EnvVars("KGRAG_BASE")},
			&cli.BoolFlag{Name: "embed", Destination: &embed, Category: "vector index", Usage: "then embed the entities into the vector index, as kgrag embed does"},
			&cli.StringFlag{Name: "index", Destination: &emb.index, Category: "vector index", Usage: "with --embed: index `DIR` to write (default: kgrag-index inside --output, kept across runs)", Sources: cli.EnvVars("KGRAG_INDEX")},
		}, append(append(withoutFlag(llmFlags(&o.llm), "retries"), withoutFlag(storeFlags(&lo.store), "retries")...), retriesAmbiguous("index"))...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usagef("kgrag index --input DIR --output DIR", "index takes no arguments, got %q", cmd.Args().First())
			}
			if err := applyProfile(cmd, o.profile); err != nil {
				return err
			}
			o.entityTypesSet = cmd.IsSet("entity-types")
			o.quiet = term.isQuiet()
			if load {
				lo.input, lo.quiet = o.output, o.quiet
				o.load = lo
			}
			if embed {
				emb.input, emb.quiet, emb.llm = o.output, o.quiet, o.llm
				o.embed = emb
			}
			return runIndex(ctx, *o, term)
		},
	}
}

func (o *indexRunOptions) validate() error {
	if o.method == "" {
		o.method = indexer.MethodStandard
	}
	if o.reports == "" {
		o.reports = reportsModel
	}
	switch {
	case o.method != indexer.MethodStandard && o.method != indexer.MethodFast:
		return usagef("--method fast", "--method must be %s or %s, not %q", indexer.MethodStandard, indexer.MethodFast, o.method)
	case o.reports != reportsModel && o.reports != reportsNone:
		return usagef("--reports none", "--reports must be %s or %s, not %q", reportsModel, reportsNone, o.reports)
	case o.method == indexer.MethodFast && o.claims:
		return usagef("--method standard --claims", "--claims needs the model's extraction: it does not go with --method fast")
	case o.method == indexer.MethodFast && o.dedup:
		return usagef("--method standard --dedup", "--dedup joins the model's entities: it does not go with --method fast")
	case o.method == indexer.MethodFast && o.plan:
		return usagef("--method fast --reports none", "--plan counts the model's extraction calls, and --method fast makes none: run it (a book takes seconds); with --reports model, each community then costs one call")
	}
	switch {
	case o.input == "":
		return usagef("kgrag index --input ./docs --output ./output", "--input is required: the folder of documents to index")
	case o.output == "":
		return usagef("kgrag index --input ./docs --output ./output", "--output is required: the folder to write the GraphRAG tables to")
	case o.chatModel == "":
		return usagef("--chat-model "+defaultChatModel, "--chat-model is empty: name the chat model")
	case o.concurrency <= 0:
		return usagef("--concurrency 4", "--concurrency must be positive")
	case o.maxGleanings < 0:
		return usagef("--max-gleanings 1", "--max-gleanings must not be negative")
	case o.temperature < 0 || o.temperature > 2:
		return usagef("--temperature 0", "--temperature %v is out of range: 0 to 2", o.temperature)
	case o.reportMaxLength < 0:
		return usagef("--report-max-length 2000", "--report-max-length must not be negative")
	case o.maxTokens < 0:
		return usagef("--max-tokens 2000", "--max-tokens must not be negative")
	case o.summaryJoinUnder < 0:
		return usagef("--summary-threshold 300", "--summary-threshold must not be negative")
	}
	if o.dedup {
		if err := (graphbuild.DedupOptions{Threshold: o.dedupThreshold}).Validate(); err != nil {
			return usagef("--dedup-threshold 0.9", "--dedup-threshold %v must be a cosine similarity above 0 and at most 1", o.dedupThreshold)
		}
		if o.llm.embedModel == "" {
			return usagef("--embed-model "+defaultEmbedModel, "--dedup needs --embed-model: the model that embeds the entities")
		}
	}
	if o.cache == "" {
		o.cache = filepath.Join(filepath.Dir(filepath.Clean(o.output)), defaultIndexCache)
	}
	// What comes after the run is checked before it, so that no model
	// call is paid for a run whose load cannot start.
	if o.load != nil {
		if o.load.store.url == "" {
			return usagef("--load --store http://localhost:3030/ds --graph http://example.org/kg", "--load needs --store: the SPARQL store to load the output into")
		}
		if err := o.load.validate(); err != nil {
			return err
		}
	}
	if o.embed != nil {
		if err := o.embed.validate(); err != nil {
			return err
		}
	}
	return o.llm.validate()
}

// stageUnit names what a stage's progress counts.
func stageUnit(stage string) string {
	switch stage {
	case indexer.StageDocuments:
		return "documents"
	case indexer.StageChunks, indexer.StageExtraction, indexer.StageNounPhrases:
		return "text units"
	case indexer.StageSummaries:
		return "descriptions"
	case indexer.StageDedup:
		return "entities embedded"
	case indexer.StageReports:
		return "communities"
	}
	return "steps"
}

func runIndex(ctx context.Context, o indexRunOptions, term terminal) error {
	if err := o.validate(); err != nil {
		return err
	}
	opts, err := o.indexerOptions()
	if err != nil {
		return err
	}
	if o.plan {
		// The plan asks no server: a window given by flag shapes its chunks.
		if o.llm.chatWindow > 0 {
			opts.Window = llm.Window{Tokens: o.llm.chatWindow, Source: "--chat-context-tokens"}
		}
		return printIndexPlan(ctx, opts, o, term)
	}
	if o.load != nil {
		// Found now, not after hours of model calls.
		if err := reachStore(ctx, o.load.store); err != nil {
			return err
		}
	}
	var model llmcall.Chatter
	var window *engine.Window
	client, err := o.llm.client()
	if err != nil {
		return err
	}
	if o.method == indexer.MethodStandard || o.reports != reportsNone {
		model = client
		// Every stage's prompt is cut to the window (indexer.Options.Window).
		w, err := chatWindow(ctx, client, o.chatModel)
		if err != nil {
			return err
		}
		window = w
		opts.Window, opts.WindowRatio = w.Window, w.Ratio
		if w.Known() && !o.quiet {
			fmt.Fprintf(term.err, "chat window: %s\n", w.Window)
		}
	}
	if o.dedup {
		opts.Embedder = client.Embedder()
		opts.EmbeddingModel = o.llm.embedModel
		opts.Dedup.Threshold = o.dedupThreshold
	}

	show := term.tty && !o.quiet
	var bar *ui.Progress
	stage, last := "", 0
	opts.Progress = func(s string, done, _ int) {
		if s != stage {
			bar.Done()
			stage, last = s, 0
			bar = ui.NewProgress(term.err, show, s, stageUnit(s))
		}
		bar.Add(int64(done - last))
		last = done
	}
	sum, err := indexer.Run(ctx, model, opts)
	var we *llm.WindowError
	if errors.As(err, &we) && we.Window > 0 && window != nil && (!opts.Window.Known() || we.Window < opts.Window.Tokens) {
		// The server named a window it had not said (llama-cpp-python
		// says none): learned, and the run made again with its prompts
		// cut to it. The replies cached so far are asked no more.
		bar.Done()
		stage = ""
		opts.Window = window.Learn(we.Window, we.Prompt)
		fmt.Fprintf(term.err, "kgrag: the server refused a prompt of %d tokens: its chat window is %s; indexing again with every prompt cut to fit\n",
			we.Prompt, opts.Window)
		sum, err = indexer.Run(ctx, model, opts)
	}
	bar.Done()
	if sum != nil {
		printIndexSummary(term.err, sum, o.quiet)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(term.err, "indexed %d documents: %d text units, %d entities, %d relationships, %d claims, %d communities, %d reports (%d text units failed extraction) in %s; output %s\n",
		sum.Documents, sum.TextUnits, sum.Entities, sum.Relationships, sum.Covariates, sum.Communities, sum.Reports, sum.ExtractionFailed, sum.Elapsed.Round(time.Millisecond), o.output)
	if sum.Entities == 0 && o.method == indexer.MethodFast {
		fmt.Fprintf(term.err, "kgrag: warning: no noun phrase was found in two text units, so the graph holds only documents and text units; "+
			"--method fast reads English text\n")
	} else if sum.Entities == 0 {
		fmt.Fprintf(term.err, "kgrag: warning: the model named no entity, so the graph holds only documents and text units; "+
			"the records dropped above show what it wrote (a model below a few billion parameters rarely keeps to the record format)\n")
	}
	for _, d := range sum.Degraded {
		fmt.Fprintln(term.err, "kgrag: degraded:", d)
	}
	switch {
	case o.load != nil:
		o.load.embed = o.embed
		return runLoad(ctx, *o.load, term)
	case o.embed != nil:
		return runEmbed(ctx, *o.embed, term)
	}
	return nil
}

// indexerOptions turns the flags into the indexer's options.
func (o indexRunOptions) indexerOptions() (indexer.Options, error) {
	opts := indexer.DefaultOptions()
	opts.Input, opts.Output, opts.CacheDir = o.input, o.output, o.cache
	opts.Model = o.chatModel
	opts.Version = buildVersion()
	temp := float32(o.temperature)
	opts.Temperature, opts.MaxTokens = &temp, o.maxTokens
	opts.ReportMaxLength = o.reportMaxLength
	opts.Documents.TextColumn, opts.Documents.TitleColumn = o.textColumn, o.titleColumn
	opts.Documents.SkipBad = o.skipBad
	opts.Concurrency = o.concurrency
	opts.Chunk.Size, opts.Chunk.Overlap, opts.Chunk.Strategy = o.chunkSize, o.overlap, o.chunkBy
	opts.FreshCommunities = o.freshCommunities
	if err := opts.Chunk.Validate(); err != nil {
		if o.chunkBy != chunk.StrategyTokens && o.chunkBy != chunk.StrategyParagraphs {
			return opts, usagef("--chunk-by paragraphs", "--chunk-by must be tokens or paragraphs, not %q", o.chunkBy)
		}
		return opts, usagef("--chunk-size 1200 --chunk-overlap 100", "%v", err)
	}
	opts.Extraction.MaxGleanings = o.maxGleanings
	var types []string
	for t := range strings.SplitSeq(o.entityTypes, ",") {
		if t = strings.TrimSpace(t); t != "" {
			types = append(types, t)
		}
	}
	if len(types) == 0 {
		return opts, usagef("--entity-types organization,person,geo,event", "--entity-types names no type")
	}
	opts.Extraction.EntityTypes = types
	if o.promptsDir != "" {
		set, err := prompts.Open(o.promptsDir)
		if err != nil {
			return opts, fmt.Errorf("--prompts: %w", err)
		}
		opts.Prompts = set
		man, err := prompttune.ReadManifest(o.promptsDir)
		if err != nil {
			return opts, fmt.Errorf("--prompts: %w", err)
		}
		if man != nil && len(man.EntityTypes) > 0 && !o.entityTypesSet {
			opts.Extraction.EntityTypes = man.EntityTypes
		}
	}
	opts.Extraction.Claims.Enabled = o.claims
	if o.claimDescription != "" {
		opts.Extraction.Claims.Description = o.claimDescription
	}
	opts.SummaryJoinUnder = o.summaryJoinUnder
	opts.Keep = []string{defaultIndexDir}
	opts.Method, opts.NoReports = o.method, o.reports == reportsNone
	if o.prune != "" && o.prune != indexer.PruneAuto {
		if _, err := graphbuild.PrunePreset(o.prune); err != nil {
			return opts, usagef("--prune light", "--prune: %v", err)
		}
	}
	opts.PrunePreset = o.prune
	return opts, nil
}

// changesLine says what changed in the input since the output the run
// replaced: "documents since the last run: 1 added (c.txt), 1 changed
// (b.txt), 1 removed (a.txt), 3 unchanged".
func changesLine(c *indexer.Changes) string {
	part := func(n []string, what string) string {
		if len(n) == 0 {
			return "0 " + what
		}
		shown := n
		if len(shown) > 3 {
			shown = shown[:3]
		}
		s := fmt.Sprintf("%d %s (%s", len(n), what, strings.Join(shown, ", "))
		if len(n) > 3 {
			s += ", ..."
		}
		return s + ")"
	}
	return fmt.Sprintf("documents since the last run: %s, %s, %s, %d unchanged",
		part(c.Added, "added"), part(c.Changed, "changed"), part(c.Removed, "removed"), c.Unchanged)
}

// printIndexSummary prints what the run found and did; what dedup joined
// and the input it skipped are printed even with --quiet.
func printIndexSummary(w io.Writer, sum *indexer.Summary, quiet bool) {
	for _, e := range sum.Input.Skipped {
		fmt.Fprintf(w, "skipped: %v\n", e)
	}
	if sum.Dedup != nil {
		fmt.Fprintf(w, "dedup: %s\n", sum.Dedup)
		for _, g := range sum.Dedup.Groups {
			fmt.Fprintf(w, "  %s\n", g)
		}
	}
	if quiet {
		return
	}
	if c := sum.Changes; c != nil {
		fmt.Fprintln(w, changesLine(c))
	}
	printExtraction(w, sum)
	if f := sum.Fast; f != nil {
		how := "as GraphRAG prunes"
		if f.Prune == graphbuild.PruneLight {
			how = "keeping phrases found once (--prune light)"
		}
		fmt.Fprintf(w, "noun graph  %d noun phrases, %d pairs in a text unit; pruned %d entities (the most connected: %q) and %d relationships, %s\n",
			f.Phrases, f.Pairs, f.Pruned.Entities, f.Pruned.Ego, f.Pruned.Relationships, how)
	}
	if n := len(sum.Input.Ignored); n > 0 {
		fmt.Fprintf(w, "ignored %d files that are not .txt, .md, .csv or .pdf (first: %s)\n", n, sum.Input.Ignored[0])
	}
	for _, s := range sum.Stages {
		if s.Stage == indexer.StageNounPhrases {
			fmt.Fprintf(w, "%-11s no model calls; %s\n", s.Stage, s.Elapsed.Round(time.Millisecond))
			continue
		}
		if s.Stage == indexer.StageDedup {
			fmt.Fprintf(w, "%-11s %d embedding requests, %d failed; %s\n", s.Stage, s.Calls, s.Failed, s.Elapsed.Round(time.Millisecond))
			continue
		}
		counted := ""
		if s.Counted > 0 {
			counted = fmt.Sprintf(" (%d calls counted by kgrag: the server gave no usage)", s.Counted)
		}
		if s.Reasoned > 0 {
			counted += fmt.Sprintf("; %d replies held reasoning (%d characters, left out)", s.Reasoned, s.ReasoningChars)
		}
		fmt.Fprintf(w, "%-11s %d model calls, %d from cache, %d failed; %d prompt + %d reply tokens%s; %s\n",
			s.Stage, s.Calls, s.Cached, s.Failed, s.PromptTokens, s.CompletionTokens, counted, s.Elapsed.Round(time.Millisecond))
	}
}

// printIndexPlan prints what the run would cost, calling no model.
func printIndexPlan(ctx context.Context, opts indexer.Options, o indexRunOptions, term terminal) error {
	p, err := indexer.PlanRun(ctx, opts)
	if err != nil {
		return err
	}
	w := term.out
	fmt.Fprintf(w, "plan for kgrag index of %s (no model is called)\n", o.input)
	fmt.Fprintf(w, "  documents    %d\n", p.Documents)
	if p.Changes != nil {
		fmt.Fprintf(w, "  %s: the cache answers the extraction of unchanged text units, and the\n"+
			"               summaries and reports whose input is unchanged\n", changesLine(p.Changes))
	}
	by := "token windows"
	if o.chunkBy == chunk.StrategyParagraphs {
		by = "whole paragraphs"
	}
	fmt.Fprintf(w, "  text units   %d (%d tokens; chunks of %d tokens, %d overlap, %s)\n", p.TextUnits, p.Tokens, o.chunkSize, o.overlap, by)
	calls := fmt.Sprintf("%d calls", p.MaxCalls)
	if p.MinCalls != p.MaxCalls {
		calls = fmt.Sprintf("%d to %d calls", p.MinCalls, p.MaxCalls)
	}
	claims := ""
	if o.claims {
		claims = " with claims"
	}
	fmt.Fprintf(w, "  extraction   %s%s (exact), first prompts %d tokens; %d of %d conversations already cached in %s\n",
		calls, claims, p.FirstTokens, p.Cached, p.Conversations, o.cache)
	if o.dedup {
		fmt.Fprintf(w, "  dedup        one embedding per entity, in batches of %d\n", embedindex.DefaultBatchSize)
	}
	if a := p.Again; a != nil {
		// Over an earlier output: what a rehearsal from the cache alone
		// could not answer, rather than the estimates.
		fmt.Fprintf(w, "  asked again  %d extraction conversations (the new text units'), %d summaries and %d reports\n", a.Extractions, a.Summaries, a.Reports)
		fmt.Fprintf(w, "The run was rehearsed on the cache of replies: summaries and reports are those whose prompts the\n"+
			"cache lacks once the graph is rebuilt without the new text units' records, which only the model can give;\n"+
			"with none new (a document removed) the counts are exact.\n")
		return nil
	}
	fmt.Fprintf(w, "  summaries    ~%d calls (estimate)\n", p.EstSummaries)
	fmt.Fprintf(w, "  reports      ~%d calls (estimate), contexts up to %d tokens in all\n", p.EstReports, p.EstReportTokens)
	fmt.Fprintf(w, "  total        ~%d calls\n", p.MaxCalls+p.EstSummaries+p.EstReports)
	fmt.Fprintf(w, "Estimates scale GraphRAG 3.3.0's own index of A Christmas Carol (gpt-4o-mini) by the input's tokens;\n"+
		"a smaller model usually finds fewer entities, and so needs fewer summaries and reports.\n")
	return nil
}

// printExtraction says what the extraction read from the model's replies,
// and shows the first records it had to drop: with a small model, that is
// where a poor graph shows first.
func printExtraction(w io.Writer, sum *indexer.Summary) {
	for _, st := range []struct {
		what string
		s    extraction.Stats
	}{
		{"graph", sum.Graph},
		{"claims", sum.Claims},
	} {
		if st.s.Calls == 0 {
			continue
		}
		kept := fmt.Sprintf("%d entities, %d relationships", st.s.Entities, st.s.Relationships)
		if st.what == "claims" {
			kept = fmt.Sprintf("%d claims", st.s.Claims)
		}
		fmt.Fprintf(w, "read %-6s %d records: %s; %d repaired, %d dropped", st.what, st.s.Records, kept, st.s.RepairCount(), st.s.Dropped)
		if st.s.UnclearAnswers > 0 {
			fmt.Fprintf(w, "; %d unclear answers to the gleaning question", st.s.UnclearAnswers)
		}
		fmt.Fprintln(w)
	}
	for _, d := range sum.Dropped {
		rec := d.Record
		if r := []rune(rec); len(r) > 100 {
			rec = string(r[:100]) + "..."
		}
		fmt.Fprintf(w, "  dropped (%s): %q\n", d.Reason, rec)
	}
}

// reachStore asks the store an empty question, so that a store that cannot
// be reached or refuses the credentials fails the command at once rather
// than after the run.
func reachStore(ctx context.Context, o storeOptions) error {
	st, err := o.open(nil, nil)
	if err != nil {
		return err
	}
	c := st.Client()
	if c.QueryURL() == "" {
		return nil // a Graph Store Protocol-only store: nothing to ask
	}
	q, err := sparqlq.Bound("store_ping", sparqlq.Params{})
	if err != nil {
		return err
	}
	if _, err := c.Ask(ctx, q); err != nil {
		return storeError(fmt.Errorf("store %s: %w", redact.URLs(o.url), err))
	}
	return nil
}
