package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/embedindex/location"
	"github.com/kgrag/kgrag/internal/cliconfig"
	"github.com/kgrag/kgrag/internal/doctor"
	"github.com/kgrag/kgrag/internal/engine"
	"github.com/kgrag/kgrag/internal/mode"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/internal/tokens"
	"github.com/kgrag/kgrag/loader"
	"github.com/urfave/cli/v3"
)

// Statuses of a doctor check.
const (
	checkOK      = doctor.OK
	checkWarn    = doctor.Warn
	checkFailed  = doctor.Failed
	checkSkipped = doctor.Skipped
)

// doctorOptions is what `kgrag doctor` checks: the settings ask would use.
type doctorOptions struct {
	mode      string // ask's --mode: global needs reports, not an index
	level     int64  // ask's --community-level, for the reports check
	input     string
	store     storeOptions // url "" when no store is configured
	index     indexOptions
	llm       llmOptions
	chatModel string
	tryChat   bool
	json      bool
	// budget and maxTokens are ask's --max-context-tokens and
	// --max-tokens, which the chat window check measures.
	budget    int
	maxTokens int
	// showConfig: print every setting first (--show-config).
	showConfig bool

	// configFile says which config file was read; settings are printed
	// first when not nil (--show-config).
	configFile string
	settings   []setting
}

// checkResult is the outcome of one check.
type checkResult = doctor.Result

// doctorReport is the JSON form of `kgrag doctor --json`.
type doctorReport struct {
	ConfigFile string        `json:"config_file"`
	Settings   []setting     `json:"settings,omitempty"`
	Checks     []checkResult `json:"checks"`
}

// doctorFlags are doctor's flags, bound to o: ask's that say what it
// reads, and doctor's own.
func doctorFlags(o *doctorOptions) []cli.Flag {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "input", Aliases: []string{"i"}, Destination: &o.input, Usage: "GraphRAG output `DIR` that ask reads in memory (and whose kgrag-index is the default --index)", Sources: cli.EnvVars("KGRAG_INPUT")},
		&cli.StringFlag{Name: "mode", Value: modeLocal, Destination: &o.mode, Usage: "ask's " + mode.Help() + ": the indexes checked are those the mode searches (global: the community reports instead)", Sources: cli.EnvVars("KGRAG_ASK_MODE")},
		&cli.Int64Flag{Name: "community-level", Value: retrieval.DefaultGlobalParams().CommunityLevel, Destination: &o.level, Usage: "ask's deepest community `LEVEL`: the reports check counts the reports up to it"},
	}
	flags = append(flags, askStoreFlags(&o.store)...)
	flags = append(flags, indexFlags(&o.index)...)
	flags = append(flags, llmFlags(&o.llm)...)
	o.chatModel = defaultChatModel
	return append(flags,
		chatModelFlag("chat model `NAME` that writes ask's answers", &o.chatModel),
		chatWindowFlag(&o.llm.chatWindow),
		&cli.IntFlag{Name: "max-context-tokens", Value: retrieval.DefaultParams().MaxContextTokens, Destination: &o.budget, Usage: "ask's token budget of the context: the chat window check says what the window leaves of it"},
		&cli.IntFlag{Name: "max-tokens", Destination: &o.maxTokens, Usage: "ask's limit of the answer (0: an eighth of the chat model's window)"},
		&cli.BoolFlag{Name: "try-chat", Destination: &o.tryChat, Usage: "also ask the chat model for one token (slow while the server loads the model)"},
		&cli.BoolFlag{Name: "show-config", Destination: &o.showConfig, Usage: "first print every setting with its value (secrets hidden) and where it came from: flag, env, config file or default"},
		&cli.BoolFlag{Name: "json", Destination: &o.json, Usage: "print one JSON object: config file, settings (with --show-config) and checks"},
	)
}

func newDoctorCommand(term terminal, cfg *appConfig) *cli.Command {
	opts := &doctorOptions{}
	return &cli.Command{
		Name:      "doctor",
		Usage:     "check the store, vector index, embedding model and chat model that ask would use",
		ArgsUsage: " ",
		Description: `Checks, one line each, what 'kgrag ask' needs, with the same flags, env
variables and config file settings (doctor also reads the ask: section of
the config file):

   store      the SPARQL store answers at its query endpoint, accepts the
              credentials, and --graph holds gr:Entity triples
   index      the vector index exists and is readable, and records its
              model and dimension (a flat file, or an Elasticsearch alias);
              a flat file's vectors all match their checksum (which ask
              checks only for small files: at 1M vectors this reads 3 GB)
   embedder   the model server lists --embed-model, and a test embedding
              has the index's dimension
   chat       the model server lists --chat-model (--try-chat: and answers)
   chat window
              the chat model's context window, where it comes from (the
              server: Ollama, llama-server, LM Studio, vLLM; a flag; a
              server's earlier refusal), and what it leaves of
              --max-context-tokens once the prompt and the answer's reserve
              are counted
   embedding window
              the embedding model's window as the server says it, and as
              kgrag embed measured it (texts longer are embedded in
              overlapping windows)

With --mode global (ask's global search) the index and embedder are not
needed and are skipped; instead:

   reports    the graph (--input or --store) holds community reports up to
              --community-level, which global search reads

With --mode basic the index checked is the text units' (kgrag embed
--tables text_units); with --mode drift the community reports' index is
checked too, and must be of the entities' embedding model.

Each line says ok, warn, FAIL or skipped; a failure says what is wrong and
which flag, env variable or config key fixes it. warn works now but is one
fault from failing: an Elasticsearch index whose cluster is yellow (a node
lost, a replica missing). A red cluster, or one that elects no master, fails. Checks of things not configured
are skipped, with what would enable them.

   kgrag doctor --input ./ragtest/output
   kgrag doctor --store http://localhost:3030/ds --graph http://example.org/kg --index ./idx
   kgrag doctor --show-config            every setting, and where it came from
` + exitStatusHelp + `   Status 1 also means that a check failed.
`,
		Flags: doctorFlags(opts),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usagef("kgrag doctor", "doctor takes no arguments, got %q", cmd.Args().First())
			}
			if _, ok := mode.Lookup(opts.mode); !ok {
				return usagef("kgrag doctor --mode "+modeLocal, "--mode must be one of %s, not %q", strings.Join(askModes(), ", "), opts.mode)
			}
			opts.configFile = cfg.DescribeFile()
			if opts.showConfig {
				opts.settings = cfg.Settings(cmd)
			}
			return runDoctor(ctx, *opts, term)
		},
	}
}

// doctorError says how many checks failed; the report above it says which.
type doctorError struct{ failed, total int }

func (e *doctorError) Error() string {
	return fmt.Sprintf("doctor: %d of %d checks failed", e.failed, e.total)
}

func runDoctor(ctx context.Context, opts doctorOptions, term terminal) error {
	results := runChecks(ctx, opts)
	if err := ctx.Err(); err != nil {
		return err
	}
	var err error
	if opts.json {
		enc := json.NewEncoder(term.out)
		enc.SetIndent("", "  ")
		err = enc.Encode(doctorReport{ConfigFile: opts.configFile, Settings: opts.settings, Checks: results})
	} else {
		err = printDoctor(term.out, opts, results)
	}
	if err != nil {
		return fmt.Errorf("doctor: write the report: %w", err)
	}
	failed := 0
	for _, r := range results {
		if r.Status == checkFailed {
			failed++
		}
	}
	if failed > 0 {
		return &doctorError{failed: failed, total: len(results)}
	}
	return nil
}

// printDoctor writes the report for people: the config file, the settings
// with --show-config, then a line per check, and what to do below it.
func printDoctor(w io.Writer, opts doctorOptions, results []checkResult) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "config file: %s\n", opts.configFile)
	if opts.settings != nil {
		fmt.Fprintln(tw, "\nSETTING\tVALUE\tFROM")
		for _, s := range opts.settings {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Name, s.Value, s.Origin)
		}
		fmt.Fprintln(tw)
	}
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Status, r.Name, r.Detail)
		if r.Fix != "" {
			label := "fix:"
			if r.Status != checkFailed {
				label = "hint:"
			}
			fmt.Fprintf(tw, "\t\t%s %s\n", label, r.Fix)
		}
	}
	return tw.Flush()
}

// runChecks runs the checks in order: the embedder compares its dimension
// with the index's.
func runChecks(ctx context.Context, opts doctorOptions) []checkResult {
	how := howToSet(doctorFlags(&doctorOptions{}))
	store := checkStore(ctx, opts, how)
	m, _ := mode.Lookup(cmp.Or(opts.mode, modeLocal))
	tables := engine.Tables(m)
	if len(tables) == 0 {
		reports := checkReports(ctx, opts, store, how)
		emb, chat := checkModels(ctx, opts, embedindex.Info{}, how)
		if emb.Status == checkFailed && chat.Status == checkFailed && chat.Fix == "" {
			// The server itself failed: the embedder check says how, and
			// it is not shown in this mode.
			chat.Detail, chat.Fix = emb.Detail, emb.Fix
		}
		skip := func(name string) checkResult {
			return checkResult{Name: name, Status: checkSkipped, Detail: "not needed by --mode " + m.Name}
		}
		return append([]checkResult{store, reports, skip("index"), skip("embedder"), chat}, checkWindows(ctx, opts, m.Name, emb, chat, how)...)
	}
	// The first table's index is the one the question is embedded for;
	// the others (DRIFT's reports) must be of the same embedder.
	index, info := checkIndex(ctx, opts, how, tables[0])
	emb, chat := checkModels(ctx, opts, info, how)
	out := []checkResult{store, index}
	for _, t := range tables[1:] {
		r, rinfo := checkIndex(ctx, opts, how, t)
		if r.Status == checkOK && info.Model != "" && (rinfo.Model != info.Model || rinfo.Dim != info.Dim) {
			r.Status = checkFailed
			r.Detail += fmt.Sprintf("; the %s' index is of %s, dimension %d", tableNoun(tables[0]), info.Model, info.Dim)
			r.Fix = "embed both with one model: kgrag embed --input DIR --tables all --embed-model " + info.Model
		}
		out = append(out, r)
	}
	out = append(out, emb, chat)
	return append(out, checkWindows(ctx, opts, m.Name, emb, chat, how)...)
}

// checkWindows reports the models' windows when the server answered.
func checkWindows(ctx context.Context, opts doctorOptions, mode string, emb, chat checkResult, how doctor.How) []checkResult {
	skip := func(name string) checkResult {
		return checkResult{Name: name, Status: checkSkipped, Detail: "not checked: the model server failed (see embedder and chat)"}
	}
	client, err := opts.llm.client()
	if err != nil || (emb.Status == checkFailed && chat.Status == checkFailed) {
		return []checkResult{skip("chat window"), skip("embedding window")}
	}
	ao := newAskOptions()
	ao.chatModel, ao.maxTokens = opts.chatModel, opts.maxTokens
	if opts.budget > 0 {
		ao.params.MaxContextTokens = opts.budget
	}
	ao.templates, ao.subgraph = templatesParams(ao.params, false), subgraphParams(ao.params, false, false)
	eo := ao.engineOptions("")
	enc, err := tokens.NewEncoder(ao.params.Encoding)
	if err != nil {
		return []checkResult{skip("chat window"), skip("embedding window")}
	}
	cw, ew := doctor.Windows(ctx, client, opts.chatModel, mode, eo, enc, how)
	return []checkResult{cw, ew}
}

// howToSet says, for each flag, every way to set it: "--store (env
// KGRAG_STORE, config key store)".
func howToSet(flags []cli.Flag) doctor.How {
	out := map[string]string{}
	for _, f := range flags {
		name := f.Names()[0]
		var ways []string
		envs := []string{}
		if ef, ok := f.(interface{ GetEnvVars() []string }); ok {
			envs = ef.GetEnvVars()
		}
		chain := cliconfig.FlagSources(f)
		secret := chain != nil && cliconfig.IsSecret(name, chain)
		if secret && len(envs) > 0 {
			envs = append(envs, envs[0]+"_FILE")
		}
		if len(envs) > 0 {
			ways = append(ways, "env "+strings.Join(envs, " or "))
		}
		key := "config key " + name
		if secret {
			key += " or " + name + cliconfig.SecretFileSuffix
		}
		ways = append(ways, key)
		out[name] = "--" + name + " (" + strings.Join(ways, ", ") + ")"
	}
	return out
}

func checkStore(ctx context.Context, opts doctorOptions, how doctor.How) checkResult {
	r := checkResult{Name: "store"}
	o := opts.store
	if o.url == "" {
		r.Status = checkSkipped
		if opts.input != "" {
			r.Detail = "no store: ask reads --input " + opts.input + " in memory"
			detail, fix := snapshotStatus(askOptions{input: opts.input, index: opts.index})
			r.Detail += ", " + detail
			r.Fix = fix
		} else {
			r.Detail = "no store configured"
			r.Fix = "set " + how["store"] + " and " + how["graph"] + ", or --input DIR"
		}
		return r
	}
	fail := func(fix, format string, args ...any) checkResult {
		r.Status, r.Detail, r.Fix = checkFailed, fmt.Sprintf(format, args...), fix
		return r
	}
	if err := validateAskStore(&o); err != nil {
		return fail(usageFix(err), "%v", err)
	}
	eps := o.endpoints()
	if len(eps) > 1 {
		// Copies of the store: each is checked, and their load records
		// compared (a copy that missed a load answers from the last).
		var copies []doctor.Copy
		for _, u := range eps {
			cp := doctor.Copy{URL: u}
			c, _, err := storeClient(o.at(u))
			if err != nil {
				return fail(usageFix(err), "%v", err)
			}
			if cp.Result = doctor.Store(ctx, c, o.storeType, u, o.graph, how); cp.Result.Status == checkOK {
				cp.Stamp, _ = loader.Stamp(ctx, c, o.graph)
			}
			copies = append(copies, cp)
		}
		return doctor.Copies(copies, how)
	}
	c, _, err := storeClient(o)
	if err != nil {
		return fail(usageFix(err), "%v", err)
	}
	return doctor.Store(ctx, c, o.storeType, o.url, o.graph, how)
}

// usageFix returns the Try: line of a usage error as the fix, if it has one.
func usageFix(err error) string {
	var ue *usageError
	if errors.As(err, &ue) && ue.try != "" {
		return ue.try
	}
	return ""
}

// checkIndex opens table's vector index, which ask would search, and
// returns its description for the embedder check (zero when it could not
// be read).
func checkIndex(ctx context.Context, opts doctorOptions, how doctor.How, table string) (checkResult, embedindex.Info) {
	r := checkResult{Name: "index"}
	if table != tableEntities {
		r.Name = "index (" + tableNoun(table) + ")"
	}
	o := opts.index
	if o.url == "" && o.path == "" && opts.input == "" {
		r.Status, r.Detail = checkSkipped, "no vector index configured"
		r.Fix = "set " + how["index"] + ", --input DIR (the index kgrag embed wrote inside it), or " + how["index-url"]
		return r, embedindex.Info{}
	}
	fail := func(fix, format string, args ...any) (checkResult, embedindex.Info) {
		r.Status, r.Detail, r.Fix = checkFailed, fmt.Sprintf(format, args...), fix
		return r, embedindex.Info{}
	}
	if err := o.resolve(opts.input); err != nil {
		return fail(usageFix(err), "%v", err)
	}
	o = o.forTable(table)
	build := "kgrag embed --input DIR"
	if table != tableEntities {
		build += " " + tableFlag(table)
	}
	return doctor.Index(ctx, doctor.IndexTarget{Name: r.Name, Path: o.path, Elastic: o.location().Elastic,
		Build: build, File: location.File(table), DefaultDir: defaultIndexDir}, how)
}

// checkModels checks the embedding model against the index and the chat
// model, with one listing of the server's models.
func checkModels(ctx context.Context, opts doctorOptions, index embedindex.Info, how doctor.How) (emb, chat checkResult) {
	emb, chat = checkResult{Name: "embedder"}, checkResult{Name: "chat"}
	fail := func(r *checkResult, fix, format string, args ...any) {
		r.Status, r.Detail, r.Fix = checkFailed, fmt.Sprintf(format, args...), fix
	}
	if err := opts.llm.validate(); err != nil {
		fail(&emb, usageFix(err), "%v", err)
		fail(&chat, usageFix(err), "%v", err)
		return emb, chat
	}
	client, err := opts.llm.client()
	if err != nil {
		fail(&emb, how["llm-url"], "%v", err)
		fail(&chat, how["llm-url"], "%v", err)
		return emb, chat
	}
	return doctor.Models(ctx, client, opts.chatModel, opts.tryChat, index, how)
}

// checkReports counts the community reports global search would read, up
// to the community level, in the store's graph or the --input folder.
func checkReports(ctx context.Context, opts doctorOptions, store checkResult, how doctor.How) checkResult {
	r := checkResult{Name: "reports"}
	var src retrieval.ReportSource
	where := ""
	switch {
	case opts.store.url != "":
		if store.Status != checkOK {
			r.Status, r.Detail = checkSkipped, "the store check failed"
			return r
		}
		o := opts.store
		c, _, err := storeClient(o)
		if err != nil {
			r.Status, r.Detail = checkFailed, err.Error()
			return r
		}
		src, where = retrieval.NewSPARQLSource(c, o.graph), "<"+o.graph+">"
	case opts.input != "":
		// As ask reads it: through a current graph.snap, else the tables.
		ms, _, err := openMemory(ctx, askOptions{input: opts.input, index: opts.index}, io.Discard)
		if err != nil {
			r.Status, r.Detail, r.Fix = checkFailed, err.Error(), "correct "+how["input"]
			return r
		}
		src, where = ms, opts.input
	default:
		r.Status, r.Detail = checkSkipped, "no graph configured"
		r.Fix = "set " + how["input"] + ", or " + how["store"] + " and " + how["graph"]
		return r
	}
	return doctor.Reports(ctx, src, where, opts.level, how)
}
