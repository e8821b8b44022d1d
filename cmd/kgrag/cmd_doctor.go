package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/embedindex/elastic"
	"github.com/kgrag/kgrag/embedindex/flat"
	"github.com/kgrag/kgrag/embedindex/location"
	"github.com/kgrag/kgrag/internal/cliconfig"
	"github.com/kgrag/kgrag/internal/engine"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/mode"
	"github.com/kgrag/kgrag/internal/redact"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/loader"
	"github.com/kgrag/kgrag/sparqlq"
	"github.com/urfave/cli/v3"
)

// Statuses of a doctor check.
const (
	checkOK      = "ok"
	checkFailed  = "FAIL"
	checkSkipped = "skipped"
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
	// showConfig: print every setting first (--show-config).
	showConfig bool

	// configFile says which config file was read; settings are printed
	// first when not nil (--show-config).
	configFile string
	settings   []setting
}

// checkResult is the outcome of one check.
type checkResult struct {
	Name   string `json:"name"`
	Status string `json:"status"`        // checkOK, checkFailed or checkSkipped
	Detail string `json:"detail"`        // what was found, or what is wrong
	Fix    string `json:"fix,omitempty"` // on failure, what to change; when skipped, how to enable it
}

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

With --mode global (ask's global search) the index and embedder are not
needed and are skipped; instead:

   reports    the graph (--input or --store) holds community reports up to
              --community-level, which global search reads

With --mode basic the index checked is the text units' (kgrag embed
--tables text_units); with --mode drift the community reports' index is
checked too, and must be of the entities' embedding model.

Each line says ok, FAIL or skipped; a failure says what is wrong and which
flag, env variable or config key fixes it. Checks of things not configured
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
	results := doctor(ctx, opts)
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

// doctor runs the checks in order: the embedder compares its dimension
// with the index's.
func doctor(ctx context.Context, opts doctorOptions) []checkResult {
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
		return []checkResult{store, reports, skip("index"), skip("embedder"), chat}
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
	return append(out, emb, chat)
}

// howToSet says, for each flag, every way to set it: "--store (env
// KGRAG_STORE, config key store)".
func howToSet(flags []cli.Flag) map[string]string {
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

func checkStore(ctx context.Context, opts doctorOptions, how map[string]string) checkResult {
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
	c, _, err := storeClient(o)
	if err != nil {
		return fail(usageFix(err), "%v", err)
	}
	q, err := sparqlq.Bound("graph_count_entities", sparqlq.Params{"graph": sparqlq.IRIParam(o.graph)})
	if err != nil {
		return fail(how["graph"], "--graph: %v", err)
	}
	where := fmt.Sprintf("%s store at %s", o.storeType, redact.URL(o.url))
	res, err := c.Select(ctx, q)
	if err != nil {
		var se *sparqlq.StatusError
		switch {
		case loader.Unreachable(err) || errors.Is(err, context.DeadlineExceeded):
			return fail("start the store, or correct "+how["store"], "%s: no answer at %s: %v", where, c.QueryURL(), err)
		case errors.As(err, &se) && (se.StatusCode == http.StatusUnauthorized || se.StatusCode == http.StatusForbidden):
			return fail(how["user"]+" with "+how["password"]+", or "+how["token"],
				"%s refused the credentials (%s)", where, se.Status)
		case errors.As(err, &se) && se.StatusCode == http.StatusNotFound:
			return fail(how["store"]+" is the store's base URL; "+how["store-type"]+" says where its endpoints are",
				"%s: no SPARQL query endpoint at %s (%s)", where, se.URL, se.Status)
		}
		return fail(how["store"], "%s: %v", where, err)
	}
	var n int64
	if len(res.Bindings) == 1 {
		n, err = res.Bindings[0]["n"].Int()
	}
	if err != nil || len(res.Bindings) != 1 {
		return fail("", "%s: the count of entities did not come back as a number", where)
	}
	if n == 0 {
		fix := "correct " + how["graph"] + ", or load it: kgrag load --input DIR --store " + redact.URL(o.url) + " --graph " + o.graph
		if others := entityGraphs(ctx, c); len(others) > 0 {
			fix += "; graphs there with entities: " + strings.Join(others, " ")
		}
		return fail(fix, "%s: graph <%s> holds no gr:Entity", where, o.graph)
	}
	r.Status, r.Detail = checkOK, fmt.Sprintf("%s: graph <%s> holds %d entities", where, o.graph, n)
	return r
}

// entityGraphs names a few graphs of the store that hold entities, to
// suggest for --graph. Errors leave the hint out.
func entityGraphs(ctx context.Context, c *sparqlq.Client) []string {
	q, err := sparqlq.Bound("graphs_with_entities", sparqlq.Params{})
	if err != nil {
		return nil
	}
	res, err := c.Select(ctx, q)
	if err != nil {
		return nil
	}
	var out []string
	for _, row := range res.Bindings {
		if t, ok := row["g"]; ok && t.Type == sparqlq.TypeURI {
			out = append(out, "<"+t.Value+">")
		}
	}
	return out
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
func checkIndex(ctx context.Context, opts doctorOptions, how map[string]string, table string) (checkResult, embedindex.Info) {
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
	var info embedindex.Info
	if o.url != "" {
		x, err := elastic.Open(ctx, o.elasticConfig())
		var ee *elastic.Error
		switch {
		case elastic.Unreachable(err):
			return fail("start Elasticsearch, or correct "+how["index-url"], "%v", err)
		case errors.Is(err, elastic.ErrNotFound):
			return fail("correct "+how["index-name"]+", or build the index with "+build+" --index-url URL", "%v", err)
		case errors.As(err, &ee) && (ee.Status == http.StatusUnauthorized || ee.Status == http.StatusForbidden):
			return fail(how["index-api-key"]+", or "+how["index-user"]+" with "+how["index-password"], "%v", err)
		case err != nil:
			return fail(how["index-url"], "%v", err)
		}
		info = x.Info()
	} else {
		x, err := flat.Open(ctx, o.path, flat.Options{})
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return fail("build it with "+build+" (it writes DIR/"+defaultIndexDir+"/"+location.File(table)+"), or correct "+how["index"],
				"no vector index at %s", o.path)
		case errors.Is(err, flat.ErrCorrupt):
			return fail("rebuild it with kgrag embed, or correct "+how["index"], "%v", err)
		case err != nil:
			return fail(how["index"], "%v", err)
		}
		defer x.Close()
		// Open checks the vectors only of a small index; doctor reads
		// them all (3 GB at a million 768-dimensional vectors).
		if err := x.Verify(ctx); errors.Is(err, flat.ErrCorrupt) {
			return fail("rebuild it with kgrag embed", "%v", err)
		} else if err != nil {
			return fail(how["index"], "%v", err)
		}
		info = x.Info()
	}
	if info.Count == 0 {
		return fail("rebuild it with kgrag embed", "vector index %s is empty", info.Path)
	}
	r.Status = checkOK
	r.Detail = fmt.Sprintf("%s: %d vectors of %s, dimension %d", info.Path, info.Count, info.Model, info.Dim)
	if info.ANN != "" {
		r.Detail += fmt.Sprintf("; approximate index %s, recall@10 %.3f at efSearch %d", info.ANN, info.Recall, info.EfSearch)
	}
	return r, info
}

// checkModels checks the embedding model against the index and the chat
// model, with one listing of the server's models.
func checkModels(ctx context.Context, opts doctorOptions, index embedindex.Info, how map[string]string) (emb, chat checkResult) {
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
	server := client.BaseURL()
	models, err := client.Models(ctx)
	if err != nil {
		fix := how["llm-url"]
		switch {
		case llm.Unreachable(err):
			fix = "start the model server (ollama serve), or correct " + how["llm-url"]
		case errors.Is(err, llm.ErrAuth):
			fix = how["llm-key"]
		}
		fail(&emb, fix, "%v", err)
		chat.Status, chat.Detail = checkFailed, "not checked: the model server at "+server+" failed (see embedder)"
		return emb, chat
	}
	listed := func(model string) bool {
		// Ollama lists "name:latest" for a model pulled as "name".
		return len(models) == 0 || slices.Contains(models, model) || slices.Contains(models, model+":latest")
	}
	listing := fmt.Sprintf("it lists %d models", len(models))
	if len(models) <= 8 {
		listing = "it lists: " + strings.Join(models, ", ")
	}

	switch model := opts.llm.embedModel; {
	case !listed(model):
		fail(&emb, "pull it (ollama pull "+model+"), or correct "+how["embed-model"],
			"the model server at %s does not serve embedding model %s (%s)", server, model, listing)
	default:
		emb = checkEmbed(ctx, client, index, how)
	}

	switch model := opts.chatModel; {
	case model == "":
		chat.Status, chat.Detail, chat.Fix = checkSkipped, "no chat model configured", "set "+how["chat-model"]
	case !listed(model):
		fail(&chat, "pull it (ollama pull "+model+"), or correct "+how["chat-model"],
			"the model server at %s does not serve chat model %s (%s)", server, model, listing)
	case opts.tryChat:
		t := time.Now()
		_, _, err := client.Chat(ctx, []llm.Message{{Role: llm.RoleUser, Content: "Say OK."}}, llm.ChatOptions{Model: model, MaxTokens: 1})
		if err != nil {
			fail(&chat, how["chat-model"], "%v", err)
			break
		}
		chat.Status, chat.Detail = checkOK, fmt.Sprintf("%s at %s answered a one-token chat in %d ms", model, server, time.Since(t).Milliseconds())
	default:
		chat.Status, chat.Detail = checkOK, fmt.Sprintf("%s is served at %s (--try-chat to ask it)", model, server)
	}
	return emb, chat
}

// checkEmbed embeds one text and compares the vector with the index.
func checkEmbed(ctx context.Context, client *llm.Client, index embedindex.Info, how map[string]string) checkResult {
	r := checkResult{Name: "embedder"}
	model := client.EmbedModel()
	vecs, err := client.Embed(ctx, []string{"kgrag doctor: a test sentence"})
	if err != nil {
		r.Status, r.Detail, r.Fix = checkFailed, err.Error(), how["embed-model"]
		return r
	}
	dim := len(vecs[0])
	where := fmt.Sprintf("%s at %s", model, client.BaseURL())
	switch {
	case index.Dim == 0:
		r.Status, r.Detail = checkOK, fmt.Sprintf("%s: dimension %d (no index to compare with)", where, dim)
	case index.Model != "" && index.Model != model:
		r.Status = checkFailed
		r.Detail = fmt.Sprintf("%s: the index was built with %s, not %s", where, index.Model, model)
		r.Fix = fmt.Sprintf("set %s to %s, or rebuild the index with kgrag embed --embed-model %s", how["embed-model"], index.Model, model)
	case dim != index.Dim:
		r.Status = checkFailed
		r.Detail = fmt.Sprintf("%s: vectors of dimension %d, but the index holds dimension %d", where, dim, index.Dim)
		r.Fix = "rebuild the index with kgrag embed, using the same model and server as ask (" + how["embed-model"] + ", " + how["llm-url"] + ")"
	default:
		r.Status, r.Detail = checkOK, fmt.Sprintf("%s: dimension %d, as the index", where, dim)
	}
	return r
}

// checkReports counts the community reports global search would read, up
// to the community level, in the store's graph or the --input folder.
func checkReports(ctx context.Context, opts doctorOptions, store checkResult, how map[string]string) checkResult {
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
	all, err := src.CommunityReports(ctx, opts.level)
	if err != nil {
		r.Status, r.Detail = checkFailed, err.Error()
		return r
	}
	if len(all) == 0 {
		r.Status = checkFailed
		r.Detail = fmt.Sprintf("%s holds no community report up to level %d", where, opts.level)
		r.Fix = "global search reads community reports: index with them (GraphRAG's create_community_reports), or raise " + how["community-level"]
		return r
	}
	r.Status, r.Detail = checkOK, fmt.Sprintf("%s holds %d community reports up to level %d", where, len(all), opts.level)
	return r
}
