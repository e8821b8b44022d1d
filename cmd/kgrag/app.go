package main

import (
	"context"
	"io"

	"github.com/urfave/cli/v3"
)

// terminal holds the streams a command talks to.
type terminal struct {
	in       io.Reader
	out, err io.Writer
	// tty says whether err is a terminal that can show progress.
	tty bool
	// quiet is the global --quiet, bound when the command line is parsed.
	quiet *bool
}

// isQuiet says --quiet was given: no progress.
func (t terminal) isQuiet() bool { return t.quiet != nil && *t.quiet }

const exitStatusHelp = `
EXIT STATUS:
   0    success
   1    failure (bad input, write error, store error)
   2    wrong usage (unknown flag, missing argument)
   3    the GraphRAG output holds malformed rows: any, with --strict, or more of
        a table than --max-bad-rows allows
   10   the store or the vector index could not be reached, or the index's
        Elasticsearch cluster cannot serve it (red, or no elected master)
   11   the model server could not be reached, failed (5xx after the
        retries), answered with no model's reply (an HTML page, a stream cut
        before the answer ended), or with a reply no fallback could use (see
        "degraded" in ask --json)
   130  interrupted
`

func newApp(in io.Reader, out, errw io.Writer) *cli.Command {
	term := terminal{in: in, out: out, err: errw, tty: isTerminal(errw), quiet: new(bool)}
	cfg := newAppConfig()
	app := &cli.Command{
		Name:  "kgrag",
		Usage: "GraphRAG knowledge graphs as linked data, and questions over them with a local LLM",
		Description: `kgrag reads the parquet output of Microsoft GraphRAG (any release from 0.2
to 3.x), maps it to the gr: ontology (http://ormynet.com/ns/msft-graphrag#)
and writes Turtle or N-Triples, or loads it into a SPARQL 1.1 store
(Fuseki, GraphDB, Oxigraph, Virtuoso, or any Graph Store Protocol endpoint).

Start with:
   kgrag inspect ./output                 what GraphRAG wrote there
   kgrag load --input ./output --turtle graph.ttl
   kgrag load --input ./output --store http://localhost:3030/ds --graph http://example.org/kg
` + configHelp,
		Writer:          out,
		ErrWriter:       errw,
		HideHelpCommand: true,
		// main prints errors and chooses the exit code.
		ExitErrHandler: func(context.Context, *cli.Command, error) {},
		Flags: append([]cli.Flag{
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Destination: term.quiet, Usage: "print no progress", Sources: cli.EnvVars("KGRAG_QUIET")},
		}, cfg.Flags()...),
		Commands: []*cli.Command{
			newAskCommand(term),
			newDoctorCommand(term, cfg),
			newEmbedCommand(term),
			newEvalCommand(term),
			newIndexCommand(term),
			newInspectCommand(term),
			newLoadCommand(term),
			newMCPCommand(term),
			newOntologyCommand(term),
			newPromptTuneCommand(term),
			newServeCommand(term),
		},
	}
	cfg.Attach(app) // after the commands: it walks their flags
	app.OnUsageError = onUsageError
	for _, c := range app.Commands {
		c.OnUsageError = onUsageError
	}
	return app
}

// onUsageError turns flag parsing errors into usage errors (exit 2) that
// point at the command's help.
func onUsageError(_ context.Context, cmd *cli.Command, err error, _ bool) error {
	name := "kgrag"
	if cmd.Name != "kgrag" {
		name += " " + cmd.Name
	}
	return usagef(name+" --help", "%v", err)
}
