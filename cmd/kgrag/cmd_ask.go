package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	answerjson "github.com/kgrag/kgrag/internal/answer"
	"github.com/kgrag/kgrag/internal/basicsearch"
	"github.com/kgrag/kgrag/internal/driftsearch"
	"github.com/kgrag/kgrag/internal/engine"
	"github.com/kgrag/kgrag/internal/globalsearch"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llmcall"
	"github.com/kgrag/kgrag/internal/localsearch"
	"github.com/kgrag/kgrag/internal/mode"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/internal/tokens"
	"github.com/kgrag/kgrag/internal/walksearch"
	"github.com/kgrag/kgrag/prompts"
	"github.com/urfave/cli/v3"
)

// Modes of `kgrag ask`.
const (
	modeLocal    = mode.Local
	modeGlobal   = mode.Global
	modeDrift    = mode.Drift
	modeBasic    = mode.Basic
	modeWalk     = mode.Walk
	modeSPARQL   = mode.SPARQLTemplates
	modeSeed     = "seed" // modeSPARQL's first name, still accepted
	modeSubgraph = mode.Subgraph
	modeThoughts = mode.GraphOfThoughts
)

// askModes are the modes --mode takes: the registry's.
func askModes() []string { return mode.Names() }

// askResult is what --json prints.
type askResult = answerjson.Result

// defaultChatModel is a chat model Ollama users are likely to have pulled.
const defaultChatModel = "llama3.2"

// askOptions is everything `kgrag ask` needs; the Action fills it from
// flags so tests can call runAsk directly.
type askOptions struct {
	question string
	mode     string
	// profile is --profile; profileErr what applying it found wrong.
	profile    string
	profileErr error
	input      string       // GraphRAG output read in memory, or ""
	read       readOptions  // how --input is read
	store      storeOptions // store.url "" when --input is used
	index      indexOptions
	params     retrieval.Params          // --mode local
	templates  retrieval.TemplatesParams // --mode sparql-templates
	subgraph   retrieval.SubgraphParams  // --mode subgraph and graph-of-thoughts
	global     globalOptions             // --mode global
	basic      retrieval.BasicParams     // --mode basic
	drift      driftsearch.Options       // --mode drift
	walk       walksearch.Params         // --mode walk
	// entityRetriever is how the entity modes find their start entities.
	entityRetriever string
	// rerankModel, when set, reranks basic's and the walk's first
	// rerankTop text units with the server's rerank endpoint.
	rerankModel string
	rerankTop   int

	subQuestions []string // --sub-question, with --mode graph-of-thoughts

	chatModel    string
	temperature  float64
	maxTokens    int
	responseType string

	contextOnly   bool // print the context, call no chat model
	noContext     bool // the baseline: the question alone, no graph
	showReasoning bool // print a reasoning model's thinking (stderr, or in --json)
	json          bool
	quiet         bool
	// fit cuts the budgets to the chat model's window (engine.Window):
	// ask and serve always, eval when it answers.
	fit bool

	llm llmOptions
}

func newAskCommand(term terminal) *cli.Command {
	opts := newAskOptions()
	return &cli.Command{
		Name:      "ask",
		Usage:     "answer a question from the graph with a local LLM (GraphRAG local, global, DRIFT or basic search, a graph walk, or the articles' modes)",
		ArgsUsage: "QUESTION",
		Description: `Answers QUESTION from a GraphRAG knowledge graph, as GraphRAG's local search
does: the question is embedded, the nearest entities are found in the vector
index 'kgrag embed' wrote, and the context is built from those entities,
their relationships, the text they come from and the reports of their
communities, within --max-context-tokens. A chat model then answers from
that context, citing the records it used ("[Data: Entities (5, 7)]"). The
answer is streamed to stdout as it comes.

The graph is read from one of:
   --input DIR              GraphRAG's parquet output, read into memory (no server)
   --store URL --graph IRI  a SPARQL store that 'kgrag load' filled

The vector index is --index (default: kgrag-index inside --input), or an
Elasticsearch index (--index-url, --index-name). It must have been built with
the embedding model given here (--embed-model).

` + modesHelp() + `
With Ollama (the default server, http://localhost:11434/v1):
   ollama pull nomic-embed-text && ollama pull llama3.2
   kgrag embed --input ./ragtest/output
   kgrag ask --input ./ragtest/output "Who is Scrooge's clerk?"

With LM Studio (load a chat and an embedding model, start its server):
   export KGRAG_LLM_URL=http://localhost:1234/v1
   kgrag embed --input ./output --embed-model text-embedding-nomic-embed-text-v1.5
   kgrag ask --input ./output --embed-model text-embedding-nomic-embed-text-v1.5 \
       --chat-model qwen2.5-7b-instruct "What connects Marley and Scrooge?"

Against a store, with the index built beside the data:
   kgrag ask --store http://localhost:3030/ds --graph http://example.org/kg \
       --index ./output/kgrag-index "Who is Scrooge?"

Beyond local search (embed the texts these modes search first):
   kgrag embed --input ./output --tables all
   kgrag ask --mode basic --input ./output "What does Scrooge say about Christmas?"
   kgrag ask --mode drift --input ./output --plan "How do the ghosts change Scrooge?"
   kgrag ask --mode drift --input ./output --max-llm-calls 20 --json \
       "How do the ghosts change Scrooge?" | jq '.drift.actions[] | .query'

About the whole corpus (global search; a small local model: keep batches small):
   kgrag ask --mode global --input ./output --plan "What are the main themes?"
   kgrag ask --mode global --input ./output --max-context-tokens 4000 \
       --concurrency 2 "What are the main themes?"
   kgrag ask --mode global --input ./output --dynamic-community-selection \
       --json "How do the ghosts change Scrooge?" | jq .global.dynamic.levels

The NetworkX article's modes:
   kgrag ask --mode subgraph --input ./output --context-only "Who is Belle?"
   kgrag ask --mode graph-of-thoughts --input ./output --json \
       --sub-question "Whom did Belle marry?" "Why did Belle leave Scrooge?" | jq .graph_of_thoughts

Look before asking, or compare:
   kgrag ask --input ./output --context-only "Who is Scrooge?"   the context, no chat model
   kgrag ask --input ./output --json "Who is Scrooge?" | jq .timings_ms
   kgrag ask --no-context "Who is Scrooge?"                      the model alone, no graph
` + exitStatusHelp,
		Flags: askFlags(opts),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			opts.finish(cmd, term)
			return runAsk(ctx, *opts, term)
		},
	}
}

// defaultRerankTop is how many text units --rerank-model reranks: a
// cross-encoder reads each pair whole, so twenty cost some twenty short
// inferences a question.
const defaultRerankTop = 20

// newAskOptions are ask's options before the flags: the libraries'
// defaults.
func newAskOptions() *askOptions {
	return &askOptions{mode: modeLocal, params: retrieval.DefaultParams(), chatModel: defaultChatModel,
		responseType: prompts.DefaultResponseType,
		global:       globalOptions{params: retrieval.DefaultGlobalParams(), search: globalsearch.DefaultOptions()},
		basic:        retrieval.DefaultBasicParams(), drift: driftsearch.DefaultOptions(), walk: walksearch.DefaultParams(),
		rerankTop: defaultRerankTop}
}

// askFlags are ask's flags, bound to o's fields (their defaults are o's
// values); serve takes those that are not about one question.
func askFlags(o *askOptions) []cli.Flag {
	p := &o.params
	flags := []cli.Flag{
		&cli.StringFlag{Name: "input", Aliases: []string{"i"}, Destination: &o.input, Usage: "GraphRAG output `DIR` to read into memory (instead of --store)", Sources: cli.EnvVars("KGRAG_INPUT")},
		&cli.StringFlag{Name: "mode", Value: o.mode, Destination: &o.mode, Usage: mode.Help() + " (each is described above)", Sources: cli.EnvVars("KGRAG_ASK_MODE")},
		profileFlag(&o.profile),
		&cli.StringSliceFlag{Name: "sub-question", Destination: &o.subQuestions, Usage: "with --mode graph-of-thoughts, a further `QUESTION` the graph is built for beside the one asked (repeatable)"},
		&cli.Int64Flag{Name: "community-level", Category: "retrieval", Value: p.CommunityLevel, Destination: &p.CommunityLevel, Usage: "deepest community `LEVEL` whose reports are used (sparql-templates mode: the one level ranked, default 0)"},
		&cli.BoolFlag{Name: "roll-up-reports", Category: "retrieval", Destination: &p.RollUpReports, Usage: "offer only each entity's deepest community report up to --community-level, as GraphRAG 1.x did (2.x and 3.x offer every report up to the level)"},
		&cli.IntFlag{Name: "max-context-tokens", Category: "retrieval", Value: p.MaxContextTokens, Destination: &p.MaxContextTokens, Usage: "token budget of the context (reports, entities, relationships, sources)"},
		&cli.StringFlag{Name: "entity-retriever", Category: "retrieval", Value: localsearch.EntityRetrieverVector, Destination: &o.entityRetriever,
			Usage: "`HOW` local, sparql-templates, subgraph and graph-of-thoughts find their start entities: vector (the nearest in the entity index, GraphRAG's) or hybrid (those and the entities of highest BM25 score over titles and descriptions, joined by reciprocal rank fusion)"},
		&cli.StringFlag{Name: "rerank-model", Category: "retrieval", Destination: &o.rerankModel, Sources: cli.EnvVars("KGRAG_RERANK_MODEL"),
			Usage: "reranker `NAME` at --llm-url's /rerank endpoint (llama-server with reranking on, vLLM, Jina- and Cohere-style APIs) that reorders the text units --mode walk and basic (--basic-retriever vector, bm25 or hybrid) found, before the context takes them; off when empty"},
		&cli.IntFlag{Name: "rerank-top", Category: "retrieval", Value: o.rerankTop, Destination: &o.rerankTop, Usage: "with --rerank-model: how many of the first text units are reranked (`N`)"},
		&cli.StringFlag{Name: "encoding", Category: "retrieval", Value: p.Encoding, Destination: &p.Encoding, Usage: "tiktoken `ENCODING` that counts the budget: " + tokens.EncodingCL100K + " (GPT-4, GraphRAG before 3.x) or " + tokens.EncodingO200K + " (GPT-4o, GraphRAG 3.x's default)"},
		&cli.IntFlag{Name: "top-k-entities", Category: "retrieval", Value: p.TopKEntities, Destination: &p.TopKEntities, Usage: "entities taken from the vector index (it is asked for twice as many; subgraph modes: the nearest nodes, default 12)"},
		&cli.IntFlag{Name: "top-k-relationships", Category: "retrieval", Value: p.TopKRelationships, Destination: &p.TopKRelationships, Usage: "outside relationships kept per selected entity (sparql-templates: inside and outside relationships kept; subgraph modes: each, default 12)"},
		chatModelFlag("chat model `NAME` that writes the answer", &o.chatModel),
		chatWindowFlag(&o.llm.chatWindow),
		&cli.FloatFlag{Name: "temperature", Category: "model server", Value: o.temperature, Destination: &o.temperature, Usage: "sampling temperature of the answer (0: the most repeatable)"},
		&cli.IntFlag{Name: "max-tokens", Category: "model server", Destination: &o.maxTokens, Usage: "stop the answer after `N` tokens (0: an eighth of the chat model's window, 256 to 2048 tokens, or 2048 when the window is unknown); the context is cut to leave room for it"},
		&cli.StringFlag{Name: "response-type", Value: o.responseType, Destination: &o.responseType, Usage: "shape of the answer, in words (e.g. \"a single sentence\", \"a list of points\")"},
		&cli.BoolFlag{Name: "context-only", Destination: &o.contextOnly, Usage: "print the context that would be sent and stop: no chat model is called (the embedding model is)"},
		&cli.BoolFlag{Name: "no-context", Destination: &o.noContext, Usage: "ask the chat model the question alone, without the graph (a baseline to compare with)"},
		&cli.BoolFlag{Name: "show-reasoning", Category: "model server", Destination: &o.showReasoning, Usage: "print a reasoning model's thinking (its <think> block or reasoning_content) to stderr as it comes; with --json, put it in the object. It is never part of the answer"},
		&cli.BoolFlag{Name: "json", Destination: &o.json, Usage: "print one JSON object: question, answer, context records, token counts, timings"},
	}
	flags = append(flags, readFlags(&o.read)...)
	flags = append(flags, globalFlags(&o.global)...)
	flags = append(flags, basicFlags(o)...)
	flags = append(flags, walkFlags(o)...)
	flags = append(flags, driftFlags(&o.drift)...)
	flags = append(flags, askStoreFlags(&o.store)...)
	flags = append(flags, indexFlags(&o.index)...)
	return append(flags, llmFlags(&o.llm)...)
}

// finish completes o once the flags are parsed: the question, the global
// --quiet, and what the modes share.
func (o *askOptions) finish(cmd *cli.Command, term terminal) {
	o.profileErr = applyProfile(cmd, o.profile)
	o.question = strings.TrimSpace(strings.Join(cmd.Args().Slice(), " "))
	o.quiet = term.isQuiet()
	o.mode = mode.Canonical(o.mode)
	o.templates = templatesParams(o.params, cmd.IsSet("community-level"))
	o.subgraph = subgraphParams(o.params, cmd.IsSet("top-k-entities"), cmd.IsSet("top-k-relationships"))
	g := &o.global.params
	g.CommunityLevel, g.RollUpReports, g.MaxContextTokens, g.Encoding = o.params.CommunityLevel, o.params.RollUpReports, o.params.MaxContextTokens, o.params.Encoding
}

func (o *askOptions) validate() error {
	const try = `kgrag ask --input ./output "Who is Scrooge?"`
	o.mode = mode.Canonical(o.mode)
	if o.profileErr != nil {
		return o.profileErr
	}
	switch {
	case o.question == "":
		return usagef(try, "ask needs a question")
	case !slices.Contains(askModes(), o.mode):
		return usagef(`kgrag ask --mode local --input ./output "Who is Scrooge?"`, "--mode must be one of %s (or seed, the old name of sparql-templates), not %q",
			strings.Join(askModes(), ", "), o.mode)
	case len(o.subQuestions) > 0 && o.mode != modeThoughts:
		return usagef(`kgrag ask --mode graph-of-thoughts --sub-question "Whom does he employ?" "Who is Scrooge?"`,
			"--sub-question is for --mode graph-of-thoughts (the mode is %s)", o.mode)
	case o.contextOnly && o.noContext:
		return usagef(try, "--context-only and --no-context exclude each other: one prints the context, the other leaves it out")
	case !o.contextOnly && !o.global.plan && o.chatModel == "":
		return usagef("--chat-model "+defaultChatModel, "--chat-model is empty: name the chat model that writes the answer")
	case o.temperature < 0 || o.temperature > 2:
		return usagef("--temperature 0", "--temperature %g is outside 0..2", o.temperature)
	case o.maxTokens < 0:
		return usagef("--max-tokens 512", "--max-tokens %d is negative", o.maxTokens)
	case o.responseType == "":
		return usagef(`--response-type "multiple paragraphs"`, "--response-type is empty")
	case o.params.Encoding != tokens.EncodingCL100K && o.params.Encoding != tokens.EncodingO200K:
		return usagef("--encoding "+tokens.EncodingO200K, "--encoding must be %s or %s, not %q",
			tokens.EncodingCL100K, tokens.EncodingO200K, o.params.Encoding)
	}
	if err := o.validateGlobal(); err != nil {
		return err
	}
	if err := o.llm.validate(); err != nil {
		return err
	}
	if o.noContext {
		return nil // no graph, index or embedder involved
	}
	switch {
	case o.input == "" && o.store.url == "":
		return usagef(try, "ask needs the graph: --input DIR (GraphRAG's output) or --store URL --graph IRI")
	case o.input != "" && o.store.url != "":
		return usagef(try, "give either --input or --store, not both")
	case o.mode == modeGlobal:
		// Global search reads community reports: no index, no embedder.
		if o.store.url != "" {
			return validateAskStore(&o.store)
		}
		return nil
	case o.llm.embedModel == "":
		return usagef("--embed-model "+defaultEmbedModel, "--embed-model is empty: name the model the index was built with")
	}
	if err := o.params.Validate(); err != nil {
		return usagef("kgrag ask --help", "%s", flagNames(err.Error()))
	}
	if err := o.basic.Validate(); err != nil && o.mode == modeBasic {
		return usagef("kgrag ask --mode basic --top-k-text-units 10", "%s", flagNames(err.Error()))
	}
	if o.mode == modeBasic && o.rerankModel != "" && !o.basic.ByRank() {
		return usagef("kgrag ask --mode basic --basic-retriever hybrid --rerank-model bge-reranker-v2-m3", "--rerank-model reorders the text units, and basic search's default (GraphRAG's) prints them in table order: add --basic-retriever vector, bm25 or hybrid")
	}
	if o.rerankModel != "" && o.rerankTop < 2 {
		return usagef("--rerank-top 20", "--rerank-top %d: a rerank needs two text units or more", o.rerankTop)
	}
	if o.mode == modeWalk {
		if err := o.walkOptions("").Params.Validate(); err != nil {
			return usagef("kgrag ask --mode walk --help", "%s", err)
		}
	}
	if o.mode == modeDrift {
		if err := o.driftOptions("").Validate(); err != nil {
			return usagef("kgrag ask --mode drift --help", "%s", driftFlagNames(err.Error()))
		}
		if o.contextOnly {
			return usagef(`kgrag ask --mode drift --plan --input ./output "How do the ghosts change Scrooge?"`,
				"--context-only cannot show DRIFT's contexts without the model: each follow-up question comes from an answer; use --plan for what it can cost")
		}
	}
	if err := o.templates.Validate(); err != nil && o.mode == modeSPARQL {
		return usagef("kgrag ask --help", "%s", flagNames(err.Error()))
	}
	if err := o.subgraph.Validate(); err != nil && (o.mode == modeSubgraph || o.mode == modeThoughts) {
		return usagef("kgrag ask --help", "%s", flagNames(err.Error()))
	}
	if o.store.url != "" {
		if err := validateAskStore(&o.store); err != nil {
			return err
		}
	}
	return o.index.resolve(o.input)
}

// driftFlagNames turns driftsearch's option names into the flags that set
// them.
func driftFlagNames(msg string) string {
	return flagNames(strings.NewReplacer("driftsearch: ", "", "k follow-ups", "--drift-k-followups", "primer folds", "--drift-primer-folds",
		"depth", "--drift-depth", "concurrency", "--concurrency", "max LLM calls", "--max-llm-calls").Replace(msg))
}

// flagNames turns retrieval's parameter names into the flags that set them.
func flagNames(msg string) string {
	return strings.NewReplacer("retrieval: params: ", "", "retrieval: sparql-templates params: ", "", "retrieval: subgraph params: ", "", "retrieval: basic params: k", "--top-k-text-units", "community level", "--community-level", "top_k_entities", "--top-k-entities",
		"top_k_relationships", "--top-k-relationships", "max_context_tokens", "--max-context-tokens").Replace(msg)
}

func runAsk(ctx context.Context, opts askOptions, term terminal) error {
	if err := opts.validate(); err != nil {
		return err
	}
	opts.fit = true
	client, err := opts.llm.client()
	if err != nil {
		return err
	}
	start := time.Now()
	res := &askResult{Question: opts.question, Mode: opts.mode, Timings: map[string]float64{}}
	if err := ask(ctx, opts, client, res, term); err != nil {
		if opts.json && res.AnswerPartial {
			// What came before the cut is still reported, as partial;
			// the error follows on stderr and sets the exit status.
			res.Timings["total"] = ms(time.Since(start))
			if werr := res.Write(term.out); werr != nil {
				return errors.Join(err, werr)
			}
		}
		return err
	}
	if !opts.json {
		return nil
	}
	res.Timings["total"] = ms(time.Since(start))
	return res.Write(term.out)
}

// ask retrieves the context, unless --no-context, and answers, unless
// --context-only or --plan, filling res. The mode's engine does the work;
// ask shows it on the terminal.
func ask(ctx context.Context, opts askOptions, client *llm.Client, res *askResult, term terminal) error {
	if opts.noContext {
		res.Mode = "no-context"
		system, err := prompts.Render("plain_answer", prompts.PlainAnswer{ResponseType: opts.responseType})
		if err != nil {
			return err
		}
		return answer(ctx, opts, client, system, res, term)
	}
	t := time.Now()
	eng, src, closeAll, err := openEngine(ctx, opts, client, res, term)
	if err != nil {
		return err
	}
	defer closeAll()
	res.Timings["open"] = ms(time.Since(t))

	q := engine.Question{Text: opts.question, SubQuestions: opts.subQuestions}
	before := src.requests()
	switch {
	case opts.global.plan:
		if err := eng.Plan(ctx, q, res); err != nil {
			return modeError(opts, src, err)
		}
		if opts.json {
			return nil
		}
		return writeModePlan(term.out, res.Plan, opts)
	case opts.contextOnly:
		if err := eng.Context(ctx, q, res); err != nil {
			return modeError(opts, src, err)
		}
		if res.Global != nil {
			return printBatches(opts, src, before, res, term)
		}
		_, err := retrieved(opts, src, before, res, term, res.Context.Text)
		return err
	}

	p := newProgress(term, opts, res)
	hooks := engine.Hooks{Progress: p.show, Answer: p.answer(opts, term), Reasoning: p.reasoningHook(),
		Retrieved: func(*askResult) error {
			_, err := retrieved(opts, src, before, res, term, "")
			return err
		}}
	err = eng.Search(ctx, q, hooks, res)
	p.clear()
	p.reasoning.record(res, res.ReasoningChars)
	switch opts.mode {
	case modeGlobal, modeDrift:
		if err != nil {
			return modeError(opts, src, err)
		}
		answered(opts, src, before, res, term, p)
		return nil
	}
	return answeredOnce(opts, src, res, term, p, err)
}

// openEngine opens the vector indexes the mode searches, the graph and
// the mode's engine over them, and records the source in res. closeAll
// releases them. The indexes come first: a missing one is named before a
// large graph is read.
func openEngine(ctx context.Context, opts askOptions, client *llm.Client, res *askResult, term terminal) (_ engine.Engine, _ source, closeAll func(), err error) {
	deps, closeIdx, err := modeDeps(ctx, opts, client)
	if err != nil {
		return nil, source{}, nil, err
	}
	src, err := openSource(ctx, opts, term.err)
	if err != nil {
		closeIdx()
		return nil, source{}, nil, err
	}
	eng, err := engineOver(opts, deps, src, res)
	if err != nil {
		closeIdx()
		src.close()
		return nil, source{}, nil, err
	}
	return eng, src, func() { closeIdx(); src.close() }, nil
}

// modeDeps opens the vector indexes opts.mode searches; closeIdx releases
// them.
func modeDeps(ctx context.Context, opts askOptions, client *llm.Client) (_ engine.Deps, closeIdx func(), err error) {
	var closers []func() error
	release := func() {
		for _, c := range closers {
			c()
		}
	}
	m, _ := mode.Lookup(opts.mode)
	deps := engine.Deps{Embedder: client.Embedder(), Chat: client, Rerank: opts.reranker(client)}
	if opts.fit {
		if deps.Window, err = chatWindow(ctx, client, opts.chatModel); err != nil {
			return engine.Deps{}, nil, err
		}
	}
	for _, t := range engine.Tables(m) {
		idx, err := opts.index.openTable(ctx, t)
		if err != nil {
			release()
			return engine.Deps{}, nil, err
		}
		closers = append(closers, idx.Close)
		deps.SetIndex(t, idx)
	}
	return deps, release, nil
}

// reranker is the rerank model's scoring through client, or nil without
// --rerank-model.
func (o askOptions) reranker(client *llm.Client) llmcall.Reranker {
	if o.rerankModel == "" {
		return nil
	}
	return func(ctx context.Context, query string, docs []string) ([]float64, error) {
		return client.Rerank(ctx, o.rerankModel, query, docs)
	}
}

// engineOver opens the engine of opts.mode over a source already open (kgrag
// eval reads the graph once for all its modes) and records it in res.
func engineOver(opts askOptions, deps engine.Deps, src source, res *askResult) (engine.Engine, error) {
	res.Source, res.LeftOut = src.name, src.leftOut
	deps.Source, deps.Name = src.retrieval(), src.name
	return engine.Open(opts.mode, deps, opts.engineOptions(src.name))
}

// answeredOnce ends the answer of a mode that asks the model once (after
// any graph of thoughts): the line on stdout, the warnings, the summary.
func answeredOnce(opts askOptions, src source, res *askResult, term terminal, p *progress, err error) error {
	p.endAnswer(term)
	printDegraded(term, res)
	switch {
	case err != nil && res.AnswerPartial:
		return fmt.Errorf("ask: %w; the answer printed is incomplete", err)
	case err != nil:
		return modeError(opts, src, err)
	}
	if res.FinishReason == "length" {
		fmt.Fprintf(term.err, "warning: the answer was cut short by the token limit (finish_reason length): raise --max-tokens (now %s)\n", maxTokensNow(opts))
	}
	if term.tty && !opts.quiet && !opts.json {
		fmt.Fprintf(term.err, "%s\n", answerLine(res))
	}
	return nil
}

// printDegraded tells on stderr, with --json too, where the search did
// without a model reply it could not use (res.Degraded).
func printDegraded(term terminal, res *askResult) {
	for _, d := range res.Degraded {
		fmt.Fprintln(term.err, "kgrag: degraded:", d)
	}
}

// retrieved reports a context built: the store requests it took since
// before, the terminal's summary line, and with --context-only its text,
// and then says to stop.
func retrieved(opts askOptions, src source, before int, res *askResult, term terminal, text string) (stop bool, err error) {
	if src.counted() {
		n := src.requests() - before
		res.SPARQLRequests = &n
	}
	if term.tty && !opts.quiet && !opts.json {
		fmt.Fprintf(term.err, "%s\n", retrievalLine(res))
	}
	if !opts.contextOnly {
		return false, nil
	}
	if !opts.json {
		_, err = fmt.Fprintln(term.out, text)
	}
	return true, err
}

// localOptions are the search engine's options for the modes that start
// from the entities nearest the question.
func (o askOptions) localOptions(source string) localsearch.Options {
	return localsearch.Options{Mode: o.mode, Params: o.params, Templates: o.templates, Subgraph: o.subgraph, ResponseType: o.responseType,
		Chat: o.chatOptions(), JSONMode: o.global.search.JSONMode, Source: source, EntityRetriever: o.entityRetriever}
}

func (o askOptions) chatOptions() llm.ChatOptions {
	temp := float32(o.temperature)
	return llm.ChatOptions{Model: o.chatModel, Temperature: &temp, MaxTokens: o.maxTokens}
}

// maxTokensNow says what --max-tokens is, for the warning of an answer
// cut by it.
func maxTokensNow(opts askOptions) string {
	if opts.maxTokens > 0 {
		return fmt.Sprint(opts.maxTokens)
	}
	return "0, an eighth of the chat model's window"
}

// modeError says what to fix for a search that failed: the flag, for a
// call limit too low for the question, or which service.
func modeError(opts askOptions, src source, err error) error {
	var gle *globalsearch.LimitError
	var dle *driftsearch.LimitError
	var ie *localsearch.IndexError
	var se *localsearch.SourceError
	switch {
	case errors.As(err, &gle):
		return usagef(fmt.Sprintf("--max-llm-calls %d (or see the calls with --plan)", gle.Need),
			"the question needs %d model calls (%d map, 1 answer, %d rating), more than --max-llm-calls %d",
			gle.Need, gle.Batches, gle.Spent, gle.Max)
	case errors.As(err, &dle):
		return usagef(fmt.Sprintf("--max-llm-calls %d (or see the calls with --plan)", dle.Need),
			"--max-llm-calls %d is too low for DRIFT: it needs at least %d calls (1 expansion, %d primer, 1 answer) before any follow-up",
			dle.Max, dle.Need, dle.Folds)
	case errors.As(err, &ie):
		return indexError(opts.index, fmt.Errorf("ask: %w", err))
	case errors.As(err, &se):
		return src.wrap(fmt.Errorf("ask: %w", err))
	}
	return src.wrap(fmt.Errorf("ask: %w", err))
}

// answer asks the chat model: system prompt, then the question. The answer
// is streamed to stdout, or with --json kept for the JSON object. A
// reasoning model's thinking is never part of it: it goes to stderr (or
// the JSON object) with --show-reasoning, and is counted either way.
func answer(ctx context.Context, opts askOptions, client *llm.Client, system string, res *askResult, term terminal) error {
	p := newProgress(term, opts, res)
	res.ChatModel = opts.chatModel
	co := opts.chatOptions()
	w, err := client.Window(ctx, llm.WindowChat, opts.chatModel)
	if err != nil {
		return err
	}
	co.MaxTokens = llm.AnswerReserve(w, opts.maxTokens)
	t := time.Now()
	reply, err := localsearch.Answer(ctx, client, co, system, opts.question,
		localsearch.Hooks{Answer: p.answer(opts, term), Reasoning: p.reasoningHook()})
	res.Timings["llm"] = ms(time.Since(t))
	res.RecordReply(reply, err)
	p.reasoning.record(res, res.ReasoningChars)
	return answeredOnce(opts, source{}, res, term, p, err)
}

// reasoningOut puts a reasoning model's thinking where --show-reasoning
// wants it, in every mode: on stderr as it comes, or kept for the --json
// record. Without the flag it is only counted.
type reasoningOut struct {
	opts  askOptions
	term  terminal
	buf   strings.Builder
	shown bool // thinking printed to stderr, to be ended by a line break
}

// hook is the Reasoning hook of a search; nil without --show-reasoning.
func (r *reasoningOut) hook() func(string) error {
	if !r.opts.showReasoning {
		return nil
	}
	return func(piece string) error {
		if r.opts.json {
			r.buf.WriteString(piece)
			return nil
		}
		r.shown = true
		_, err := io.WriteString(r.term.err, piece)
		return err
	}
}

// endLine ends the thinking's line on stderr before the answer comes.
func (r *reasoningOut) endLine() {
	if r.shown {
		fmt.Fprintln(r.term.err)
		r.shown = false
	}
}

// record puts the thinking kept for --json into res, when the answer's
// call had any (chars, as the client counted it).
func (r *reasoningOut) record(res *askResult, chars int) {
	if chars > 0 {
		res.ReasoningChars = chars
	}
	if chars > 0 && r.opts.showReasoning && r.opts.json {
		s := strings.TrimSpace(r.buf.String())
		res.Reasoning = &s
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// templatesParams are sparql-templates mode's parameters from the flags local search shares
// with it. The community level is the RDF article's own default (0, the root
// level, where every entity has a community) unless the flag was given.
func templatesParams(p retrieval.Params, levelSet bool) retrieval.TemplatesParams {
	s := retrieval.DefaultTemplatesParams()
	if levelSet {
		s.CommunityLevel = p.CommunityLevel
	}
	s.MaxContextTokens = p.MaxContextTokens
	s.TopInside, s.TopOutside = p.TopKRelationships, p.TopKRelationships
	return s
}

// subgraphParams are the subgraph modes' parameters from the flags local
// search shares with them: the article's 12 nodes and 12 relationships of
// each kind unless --top-k-entities or --top-k-relationships was given.
func subgraphParams(p retrieval.Params, nodesSet, relsSet bool) retrieval.SubgraphParams {
	s := retrieval.DefaultSubgraphParams()
	if nodesSet {
		s.TopNodes = p.TopKEntities
	}
	if relsSet {
		s.TopInside, s.TopOutside = p.TopKRelationships, p.TopKRelationships
	}
	s.MaxContextTokens, s.Encoding = p.MaxContextTokens, p.Encoding
	return s
}

// engineOptions are every engine's options from the flags.
func (o askOptions) engineOptions(source string) engine.Options {
	so := o.global.search
	so.ResponseType, so.Chat = o.responseType, o.chatOptions()
	bp := o.basic
	bp.MaxContextTokens, bp.Encoding = o.params.MaxContextTokens, o.params.Encoding
	return engine.Options{Local: o.localOptions(source), Global: so, GlobalParams: o.global.params,
		Basic: basicsearch.Options{Params: bp, ResponseType: o.responseType, Chat: o.chatOptions(), Source: source, RerankTop: o.rerankTop},
		Drift: o.driftOptions(source), Walk: o.walkOptions(source)}
}

// modesHelp is the Modes section of ask --help: every mode of the
// registry, in its order, with what ask says of it at length, or the
// registry's own line for a mode ask says nothing more of.
func modesHelp() string {
	long := map[string]string{
		modeLocal: `   local   GraphRAG's local search context (the default): the --top-k-entities
           nearest entities, their relationships, text units and community
           reports, ranked as GraphRAG ranks them`,
		modeGlobal: `   global  GraphRAG's global search, for questions about the whole corpus
           ("What are the main themes?") that no handful of entities can
           answer: the community reports up to --community-level are
           shuffled (seed 86, as GraphRAG) and packed into batches of
           --max-context-tokens; the model lists the key points of each batch
           with 0-100 scores, --concurrency calls at a time; the best points,
           up to --reduce-context-tokens, go to one last call that writes the
           answer citing reports ("[Data: Reports (3, 12)]"). No vector index
           or embedding model is needed. With --dynamic-community-selection
           the model first rates reports 0-5 from the root communities down
           and only relevant ones (and their sub-communities) are read.
           Replies that are not valid JSON are repaired where safe, else
           skipped and counted, as are calls that keep failing. Look before
           spending: --plan counts the calls and tokens, --context-only
           prints the batches, --max-llm-calls refuses a costlier question`,
		modeDrift: `   drift   GraphRAG's DRIFT search, for questions that need both the overview
           of the reports and the detail of local search: the model writes a
           hypothetical answer shaped like a community report; the
           --drift-k-followups (20) reports nearest it are split over
           --drift-primer-folds (5) calls, which answer from them and ask
           follow-up questions; --drift-depth (3) rounds then answer up to 20
           open follow-ups each with local search (their own nearest
           entities), each answer asking more; one last call combines every
           answer. Up to 67 calls at the defaults: see --plan, cap them with
           --max-llm-calls (the follow-ups stop there). Needs the community
           reports' embeddings (kgrag embed --tables community_reports)`,
		modeBasic: `   basic   GraphRAG's basic search, plain RAG without the graph: the
           --top-k-text-units (10) text units nearest the question, their text
           as the context, one call. The baseline the graph modes are judged
           against, and enough when the answer sits in one passage. Needs
           the text units' embeddings (kgrag embed --tables text_units)`,
		modeSPARQL: `   sparql-templates  (formerly seed, a name still accepted) the templated
           SPARQL retrieval of the RDF article, "知识图谱简介" (the third part of a
           series on Microsoft GraphRAG's output in an RDF store, GraphDB),
           with its bugs fixed: the --top-k-entities nearest entities, the 3
           text units holding most of them, their 3 top communities by rank
           and weight at --community-level (default 0 in this mode), and the
           --top-k-relationships top inside and outside relationships by rank
           and weight. A small, fixed-size context: for small models, and to
           compare with SPARQL a user runs by hand in a workbench`,
		modeSubgraph: `   subgraph  the retrieval of the NetworkX article, "图表 RAG 揭秘" (GraphRAG
           demystified, built with Python's NetworkX), its section 9: the 12
           nearest nodes (--top-k-entities), all their text units, the 12 top
           relationships between two of them and the 12 top to other nodes by
           weight (--top-k-relationships), the nodes those touch with their
           descriptions, and each nearest node's deepest community summary.
           More source text than local search, no ranking of it: for questions
           whose answer is in the passages`,
		modeThoughts: `   graph-of-thoughts  the same article's "graph of thoughts" (section 10): the
           subgraph context, from which the chat model first builds a small
           knowledge graph (nodes and edges, JSON) for the question and any
           --sub-question, then answers from that graph alone in a second
           call. Two calls; for questions that need several facts put together
           (yes/no, multi-part), with a model that writes JSON well enough.
           --json shows the graph built`,
		modeWalk: `   walk    a walk over the graph on HippoRAG's design, for questions whose
           answer joins two passages ("the director of the film shot in
           Leland"): the entities the question names (its noun phrases,
           BM25 over titles and descriptions, the vector index) and the text
           units nearest it (vectors and BM25) are the seeds of a
           personalized PageRank over entities and text units; the context
           is the entities the walk went through most, then the text units
           it ranks highest, best first, within --max-context-tokens (at
           most --walk-text-units). No chat model until the answer; --json
           lists the seeds and the ranking. Needs the entities' and text
           units' embeddings (kgrag embed --tables entities,text_units);
           best on a fast graph indexed with --prune light`,
	}
	var b strings.Builder
	b.WriteString("Modes:\n")
	for _, m := range mode.All() {
		text, ok := long[m.Name]
		if !ok {
			text = "   " + m.Name + "  " + m.About
		}
		b.WriteString(text + "\n")
	}
	return b.String()
}
