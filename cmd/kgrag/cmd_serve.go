package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/internal/engine"
	"github.com/kgrag/kgrag/internal/localsearch"
	"github.com/kgrag/kgrag/internal/serve"
	"github.com/kgrag/kgrag/internal/tokens"
	"github.com/kgrag/kgrag/loader"
	"github.com/kgrag/kgrag/ontology"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/urfave/cli/v3"
)

// defaultServeAddr is where kgrag serve listens: this machine only.
const defaultServeAddr = "127.0.0.1:8765"

// serveOptions are kgrag serve's: the graph and engines as ask reads
// them, and the server's own.
type serveOptions struct {
	ask   askOptions
	addr  string
	base  string // base IRI of entity IRIs read from --input
	drain time.Duration
	cfg   serve.Config
	warn  io.Writer // where opening the graph warns (stderr)
	// indexGiven says --index or --index-url was set: then a missing
	// index is an error rather than a graph served for global search only.
	indexGiven bool
}

// askOnlyFlags are ask's flags about one question, which serve has not.
var askOnlyFlags = []string{"mode", "sub-question", "context-only", "no-context", "json", "show-reasoning", "plan"}

// newServeOptions are serve's options before the flags: the libraries'
// defaults.
func newServeOptions() *serveOptions {
	return &serveOptions{ask: *newAskOptions(), addr: defaultServeAddr, base: defaultBase, drain: 30 * time.Second,
		cfg: serve.DefaultConfig()}
}

// serveFlags are serve's flags, bound to o's fields: the server's own,
// then ask's that are not about one question.
func serveFlags(o *serveOptions) []cli.Flag {
	c := &o.cfg
	const cat = "server"
	flags := slices.DeleteFunc(askFlags(&o.ask), func(f cli.Flag) bool { return slices.Contains(askOnlyFlags, f.Names()[0]) })
	return append([]cli.Flag{
		&cli.StringFlag{Name: "addr", Category: cat, Value: o.addr, Destination: &o.addr, Usage: "`HOST:PORT` to listen on (0.0.0.0:8765 to let other machines in: set --api-key then)", Sources: cli.EnvVars("KGRAG_SERVE_ADDR")},
		&cli.StringFlag{Name: "api-key", Category: cat, Destination: &c.APIKey, Usage: "key every request but /healthz and /readyz must send as Authorization: Bearer KEY (better: env KGRAG_SERVE_KEY or KGRAG_SERVE_KEY_FILE)", Sources: secretSource("KGRAG_SERVE_KEY")},
		&cli.StringSliceFlag{Name: "cors-origin", Category: cat, Destination: &c.CORSOrigins, Usage: "browser `ORIGIN` allowed to call the API from another site (repeat; * for any); none by default"},
		&cli.IntFlag{Name: "max-model-calls", Category: cat, Value: c.MaxModelCalls, Destination: &c.MaxModelCalls, Usage: "questions asking the model servers at once"},
		&cli.IntFlag{Name: "max-queued", Category: cat, Value: c.MaxQueued, Destination: &c.MaxQueued, Usage: "questions waiting for a turn; more are answered 429 with Retry-After"},
		&cli.DurationFlag{Name: "request-timeout", Category: cat, Value: c.RequestTimeout, Destination: &c.RequestTimeout, Usage: "longest a request may take, its model calls included"},
		&cli.IntFlag{Name: "max-question-chars", Category: cat, Value: c.MaxQuestionChars, Destination: &c.MaxQuestionChars, Usage: "longest question taken, in characters"},
		&cli.IntFlag{Name: "max-turns", Category: cat, Value: c.MaxTurns, Destination: &c.MaxTurns, Usage: "most messages taken in one conversation"},
		&cli.Int64Flag{Name: "max-body-bytes", Category: cat, Value: c.MaxBodyBytes, Destination: &c.MaxBodyBytes, Usage: "largest request body taken"},
		&cli.DurationFlag{Name: "drain-timeout", Category: cat, Value: o.drain, Destination: &o.drain, Usage: "on SIGTERM, how long requests in flight (streams too) may run on before they are cut"},
		&cli.BoolFlag{Name: "admin", Category: cat, Destination: &c.Admin, Usage: "serve POST /admin/reload (reload the graph and index, as SIGHUP does), /admin/stats and /admin/pprof/"},
		&cli.BoolFlag{Name: "log-questions", Category: cat, Destination: &c.LogQuestions, Usage: "put the question text in the access log (left out by default)"},
		&cli.StringFlag{Name: "base", Category: cat, Value: o.base, Destination: &o.base, Usage: "base `IRI` kgrag load used, for the entity IRIs shown with --input", Sources: cli.EnvVars("KGRAG_BASE")},
	}, flags...)
}

// finish completes o once the flags are parsed.
func (o *serveOptions) finish(cmd *cli.Command, term terminal) {
	o.ask.finish(cmd, term)
	o.ask.mode, o.ask.question = modeLocal, "(served)"
	o.indexGiven = cmd.IsSet("index") || cmd.IsSet("index-url")
	o.cfg.Version = buildVersion()
}

// buildVersion is kgrag's module version, as go build recorded it.
func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

func newServeCommand(term terminal) *cli.Command {
	o := newServeOptions()
	return &cli.Command{
		Name:  "serve",
		Usage: "serve the graph to chat UIs, agents and scripts: OpenAI-compatible chat, a JSON API",
		Description: `Loads the graph and its vector index once, as kgrag ask reads them (--input DIR,
or --store URL --graph IRI, with --index), and answers over HTTP on --addr
(default ` + defaultServeAddr + `, this machine only) with the same retrieval:

   GET  /v1/models              one model per mode: ` + modelsHelp() + `
                                (kgrag-seed still names kgrag-sparql-templates); a mode
                                whose vector index kgrag embed did not build (DRIFT,
                                basic: --tables all) is left out
   POST /v1/chat/completions    OpenAI's chat API; streamed with "stream": true. Earlier
                                turns of the conversation join the question, as in
                                GraphRAG's local search. The records the answer cites come
                                back in "citations" (URLs) and "kgrag" (the ask --json record)
   POST /api/ask                {"question", "mode", "context_only", "plan", "history"}: the
                                record kgrag ask --json prints
   GET  /api/entities/ID        an entity with its relationships, text units, communities
                                and IRI (?by=title to name it by title)
   GET  /api/entities?q=TEXT    the entities nearest TEXT in the vector index
   GET  /api/communities/N      a community's report
   GET  /api/text-units/ID      a text unit
   GET  /healthz, /readyz       liveness, and which graph is loaded

Any OpenAI client talks to it:
   kgrag serve --input ./output
   curl http://127.0.0.1:8765/v1/chat/completions -H 'Content-Type: application/json' \
       -d '{"model": "kgrag-local", "messages": [{"role": "user", "content": "Who is Scrooge?"}]}'
   (Open WebUI: Settings, Connections, OpenAI API, URL http://127.0.0.1:8765/v1)

SIGHUP (or POST /admin/reload with --admin) reloads the graph and index and
swaps them in whole: requests in flight finish on the graph they started
with. SIGTERM stops taking requests and lets those in flight end, up to
--drain-timeout. At most --max-model-calls questions ask the model at once
and --max-queued wait; beyond that the answer is 429 with Retry-After.
--max-llm-calls bounds the model calls of each global or DRIFT question.
One access log line per request goes to stderr, without the question
unless --log-questions.
` + exitStatusHelp,
		Flags: serveFlags(o),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			o.finish(cmd, term)
			return runServe(ctx, *o, term)
		},
	}
}

func (o *serveOptions) validate() error {
	const try = "kgrag serve --input ./output"
	c := o.cfg
	if o.ask.profileErr != nil {
		return o.ask.profileErr
	}
	switch {
	case c.MaxModelCalls <= 0:
		return usagef("--max-model-calls 4", "--max-model-calls %d: must be at least 1", c.MaxModelCalls)
	case c.MaxQueued < 0:
		return usagef("--max-queued 64", "--max-queued %d is negative", c.MaxQueued)
	case c.RequestTimeout <= 0, o.drain <= 0:
		return usagef("--request-timeout 5m", "--request-timeout and --drain-timeout must be positive")
	case c.MaxQuestionChars <= 0 || c.MaxTurns <= 0 || c.MaxBodyBytes <= 0:
		return usagef(try, "--max-question-chars, --max-turns and --max-body-bytes must be positive")
	case o.ask.input != "" && ontology.ValidateBase(o.base) != nil:
		return usagef("--base http://example.org/my-dataset/", "--base: %v", ontology.ValidateBase(o.base))
	}
	if _, _, err := net.SplitHostPort(o.addr); err != nil {
		return usagef("--addr "+defaultServeAddr, "--addr %q: %v", o.addr, err)
	}
	if err := o.ask.validate(); err != nil {
		return err
	}
	return o.ask.checkGlobal()
}

// server checks the options and loads the graph, logging to stderr.
func (o *serveOptions) server(ctx context.Context, term terminal) (*serve.Server, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	o.cfg.Log = slog.New(slog.NewTextHandler(term.err, nil))
	o.warn = term.err
	return serve.New(ctx, o.cfg, o.load)
}

// runServe loads the graph, listens, and serves until ctx is done
// (SIGTERM, Ctrl-C); SIGHUP reloads.
func runServe(ctx context.Context, o serveOptions, term terminal) error {
	s, err := o.server(ctx, term)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("serve: listen on %s: %w (is another kgrag serve running? choose another --addr)", o.addr, err)
	}
	g := s.Graph()
	fmt.Fprintf(term.err, "kgrag: serving %s on http://%s (OpenAI API at http://%s/v1)\n", g.Name, ln.Addr(), ln.Addr())
	if g.Nearest == nil {
		fmt.Fprintln(term.err, "kgrag: warning: no vector index: only kgrag-global answers (build one with kgrag embed)")
	} else {
		for _, m := range engine.Modes() {
			if err := g.Missing[m.Name]; err != nil {
				fmt.Fprintf(term.err, "kgrag: %s is not served: %v\n", m.Model(), err)
			}
		}
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				if err := s.Reload(ctx); err != nil {
					o.cfg.Log.Error("reload failed: still serving the graph loaded before", "err", err)
				}
			}
		}
	}()
	err = s.Serve(ctx, ln, o.drain)
	if ctx.Err() != nil && err == nil {
		fmt.Fprintln(term.err, "kgrag: stopped")
		return nil
	}
	return err
}

// load opens the graph, the index and the engines: serve's Loader. The
// graph's Close releases the mapped snapshot and index, which a reload
// would otherwise keep mapped (and their disk space taken, once kgrag embed
// replaced the files) for the life of the process.
func (o serveOptions) load(ctx context.Context) (_ *serve.Graph, err error) {
	a := o.ask
	client, err := a.llm.client()
	if err != nil {
		return nil, err
	}
	src, err := openSource(ctx, a, o.warn)
	if err != nil {
		return nil, err
	}
	closers := []func() error{src.close}
	closeAll := func() error {
		var errs []error
		for _, c := range closers {
			errs = append(errs, c())
		}
		return errors.Join(errs...)
	}
	defer func() {
		if err != nil {
			closeAll()
		}
	}()
	g := &serve.Graph{Name: src.name, Source: src.retrieval(), Store: src.c, StoreGraph: src.graph, Close: closeAll,
		Engines: map[string]engine.Engine{}, Missing: map[string]error{}}
	if a.input != "" {
		g.Base = o.base
	}
	if src.c != nil {
		// Before anything is read: a load committing while the rest is
		// read then shows as a changed stamp (serve reads it again).
		// With copies of the store, queries that moved to another copy
		// may have read another load: the move changes the stamp too.
		g.Stamp = func(ctx context.Context) (string, error) {
			st, err := loader.Stamp(ctx, src.c, src.graph)
			return fmt.Sprintf("%s@%d", st, src.c.Moves()), err
		}
		if g.StampAtLoad, err = g.Stamp(ctx); err != nil {
			return nil, src.wrap(fmt.Errorf("serve: read the store's load record: %w", err))
		}
	}
	// One token encoder for every engine: building one parses the BPE
	// ranks (about 10 ms).
	enc, err := tokens.NewEncoder(a.params.Encoding)
	if err != nil {
		return nil, err
	}
	if g.Reports, err = src.retrieval().CommunityReports(ctx, math.MaxInt64); err != nil {
		return nil, src.wrap(fmt.Errorf("serve: read the community reports: %w", err))
	}
	deps := engine.Deps{Source: src.retrieval(), Name: src.name, Embedder: client.Embedder(), Chat: client, Encoder: enc, Rerank: a.reranker(client)}
	if deps.Window, err = chatWindow(ctx, client, a.chatModel); err != nil {
		return nil, err
	}
	missing := map[string]error{} // why a table's index is not there
	idx, err := a.index.open(ctx)
	switch {
	case err != nil && !o.indexGiven && a.index.url == "" && errors.Is(statErr(a.index.path), fs.ErrNotExist):
		// Global search only; runServe warns.
	case err != nil:
		return nil, err
	default:
		closers = append(closers, idx.Close)
		deps.Entities = idx
		emb := deps.Embedder
		g.Nearest = func(ctx context.Context, text string, k int) ([]embedindex.Hit, error) {
			return localsearch.Neighbours(ctx, idx, emb, text, k, map[string]float64{})
		}
		// The other tables' indexes serve DRIFT and basic search when
		// kgrag embed built them; without, those modes are left out.
		for _, t := range []string{tableTextUnits, tableReports} {
			ti, why, err := a.index.openOptional(ctx, t)
			if err != nil {
				return nil, err
			}
			if why != nil {
				missing[t] = errors.New(strings.TrimPrefix(why.Error(), "ask: "))
				continue
			}
			closers = append(closers, ti.Close)
			deps.SetIndex(t, ti)
		}
	}
	opts := a.engineOptions(src.name)
	for _, m := range engine.Modes() {
		e, err := engine.Open(m.Name, deps, opts)
		var mi *engine.MissingIndexError
		switch {
		case errors.As(err, &mi) && missing[mi.Table] != nil:
			g.Missing[m.Name] = missing[mi.Table]
		case errors.As(err, &mi):
			g.Missing[m.Name] = mi
		case err != nil:
			return nil, fmt.Errorf("serve: %s: %w", m.Name, err)
		default:
			g.Engines[m.Name] = e
		}
	}
	return g, nil
}

func statErr(path string) error {
	_, err := os.Stat(path)
	return err
}

// serverOnlyFlags are serve's flags about HTTP, which kgrag mcp has not.
var serverOnlyFlags = []string{"addr", "api-key", "cors-origin", "drain-timeout", "admin", "log-questions", "max-body-bytes"}

func newMCPCommand(term terminal) *cli.Command {
	o := newServeOptions()
	return &cli.Command{
		Name:  "mcp",
		Usage: "serve the graph to an agent as Model Context Protocol tools over stdio",
		Description: `Loads the graph and index as kgrag serve does and speaks MCP (the Model
Context Protocol) on stdin and stdout, for agents and MCP clients that start
their tools as processes (Claude Desktop, VS Code, Cursor, mcp-cli). The same
tools are served over HTTP at kgrag serve's /mcp:

   search_entities   the entities nearest a text, by embedding
   get_entity        an entity by id or title, with relationships, text units, communities
   get_community     a community's report
   local_context     GraphRAG's local search context for a question (no chat model)
   global_answer     GraphRAG's global search answer (many model calls)
   ask               a question in any mode (local, global, drift, basic, ...): the
                     record kgrag ask --json prints
   sparql_select     a read-only SELECT or ASK on the store (with --store only)

An MCP client's configuration, for example:
   {"mcpServers": {"kgrag": {"command": "kgrag",
       "args": ["mcp", "--input", "/data/ragtest/output"]}}}

Logs go to stderr; stdout is the protocol's.
` + exitStatusHelp,
		Flags: slices.DeleteFunc(serveFlags(o), func(f cli.Flag) bool { return slices.Contains(serverOnlyFlags, f.Names()[0]) }),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			o.finish(cmd, term)
			return runMCP(ctx, *o, term)
		},
	}
}

// runMCP serves the MCP tools on term's stdin and stdout until the client
// closes them or ctx is done.
func runMCP(ctx context.Context, o serveOptions, term terminal) error {
	s, err := o.server(ctx, term)
	if err != nil {
		return err
	}
	t := &mcp.IOTransport{Reader: io.NopCloser(term.in), Writer: nopWriteCloser{term.out}}
	err = s.MCP().Run(ctx, t)
	if ctx.Err() != nil || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// modelsHelp lists the model names of the registry's modes, wrapped for
// serve --help's table.
func modelsHelp() string {
	var b strings.Builder
	width := len("one model per mode: ")
	for i, m := range engine.Modes() {
		name := m.Model()
		if i < len(engine.Modes())-1 {
			name += ","
		}
		if width+len(name)+1 > 58 {
			b.WriteString("\n" + strings.Repeat(" ", 32))
			width = 0
		} else if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(name)
		width += len(name) + 1
	}
	return b.String()
}
