package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/export"
	"github.com/kgrag/kgrag/internal/redact"
	"github.com/kgrag/kgrag/internal/ui"
	"github.com/kgrag/kgrag/ontology"
	"github.com/urfave/cli/v3"
)

// defaultBase is the base IRI of instances when the user sets none. It is
// a placeholder in the example.org domain: real datasets should name their
// own with --base.
const defaultBase = "http://example.org/graphrag/"

// withoutFlag returns flags less the one named name.
func withoutFlag(flags []cli.Flag, name string) []cli.Flag {
	var out []cli.Flag
	for _, f := range flags {
		if !slices.Contains(f.Names(), name) {
			out = append(out, f)
		}
	}
	return out
}

// loadOptions is everything `kgrag load` needs; the Action fills it from
// flags so tests can call runLoad directly.
type loadOptions struct {
	input            string
	read             readOptions
	turtle           string // file or "-"
	ntriples         string // file or "-"
	base             string
	withOntology     bool
	omitDocumentText bool
	quiet            bool
	iris             string // "ids" or "keys": what instance IRIs are made from
	// serial writes a file on one goroutine, reading, mapping and
	// encoding in turn, as with GOMAXPROCS=1: the reference that tests
	// compare the concurrent path (internal/convert) with.
	serial bool
	// policy is read's, parsed by validate.
	policy graphrag.Policy

	store storeOptions
	// embed, when set, runs kgrag embed on the input after the load.
	embed *embedOptions
}

func newLoadCommand(term terminal) *cli.Command {
	o := &loadOptions{}
	var embed bool
	// With --embed: kgrag embed's defaults, and the model flags.
	emb := &embedOptions{batchSize: embedindex.DefaultBatchSize, concurrency: embedindex.DefaultConcurrency}
	return &cli.Command{
		Name:      "load",
		Usage:     "map GraphRAG output to the gr: ontology and write Turtle, N-Triples or a SPARQL store",
		ArgsUsage: " ",
		Description: `Reads the parquet tables GraphRAG wrote (any release from 0.2 to 3.x; see
'kgrag inspect') and maps documents, chunks, entities, relationships,
communities with their reports and findings, and claims to the gr: ontology
('kgrag ontology' prints it).

Write a file (FILE may be '-' for stdout; a file appears only when complete):
   kgrag load --input ./output --turtle graph.ttl
   kgrag load --input ./output --ntriples - | gzip > graph.nt.gz
A file is written on every core (the next table is read while the last is
mapped and encoded in batches), byte for byte as on one; GOMAXPROCS=1 uses
one core:
   GOMAXPROCS=1 kgrag load --input ./output --turtle graph.ttl

Or replace a named graph in a SPARQL 1.1 store. The new graph is uploaded
beside the old one and swapped in with one update, so a failed or
interrupted load leaves the previous graph as it was:
   kgrag load --input ./output --store http://localhost:3030/ds --graph http://example.org/kg
   kgrag load --input ./output --store-type graphdb --store http://localhost:7200/repositories/kg \
       --graph http://example.org/kg --with-ontology
Oxigraph holds a transaction in memory, so there no update writes more than
--max-transaction triples (1,000,000, about 3 GB of its memory): an empty
graph goes to its bulk loader, which adds it all at once, and a full one is
read back and changed by its difference, atomically either way; a change
too large for one transaction fails before anything is sent.
--upload stream sends the whole graph instead as one streamed Graph Store
Protocol PUT, which Fuseki's TDB2 runs as one transaction: no temporary
graph and no copy, several times faster (1.13 times tdb2.tdbloader on 6.8 M
triples), and other updates of the dataset wait until it commits. It is not
the default: Fuseki commits whatever part of the body arrived when the
connection drops. A failed or interrupted load ends the body so that Fuseki
refuses it, but a kill or a network cut mid-write can leave a shorter graph,
as --in-place can leave it incomplete, so use it for input you trust:
   kgrag load --input ./output --store http://localhost:3030/ds --graph http://example.org/kg --upload stream
Batches go up one request at a time; on Virtuoso, which runs a request on
one core, two at once (--concurrent-batches sets how many on any store).
--in-place drops the graph and loads straight into it, not atomically: on
Oxigraph as one streamed request to its bulk loader, about as fast as
'oxigraph load' of a file (--upload batches sends batches instead):
   kgrag load --input ./output --store http://localhost:7878 --graph http://example.org/kg --in-place

After re-indexing, --diff sends only the triples that changed, in one
atomic update; the graph is read back and checked against what the last
--diff load recorded, and replaced whole when that does not match:
   kgrag load --input ./output --store http://localhost:3030/ds --graph http://example.org/kg --diff

Instance IRIs are built from GraphRAG's ids under --base, percent-encoded,
so two runs over the same input give byte-identical output. Microsoft
GraphRAG makes new ids (UUIDs) each time it indexes; --iris keys names
entities by title and relationships by their end titles instead, so that
IRIs last across its runs (gr:id still holds the run's id).

--embed then builds the vector index kgrag ask needs, as 'kgrag embed' does
(same cache, --index and model server flags), so one command prepares a
graph for questions:
   kgrag load --input ./output --store http://localhost:3030/ds --graph http://example.org/kg --embed
` + exitStatusHelp,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "input", Destination: &o.input, Aliases: []string{"i"}, Usage: "GraphRAG output `DIR` (the folder holding the .parquet files, or a project folder with output/)", Sources: cli.EnvVars("KGRAG_INPUT")},
			&cli.StringFlag{Name: "turtle", Destination: &o.turtle, Usage: "write Turtle to `FILE` ('-' for stdout)"},
			&cli.StringFlag{Name: "ntriples", Destination: &o.ntriples, Usage: "write N-Triples to `FILE` ('-' for stdout)"},
			&cli.StringFlag{Name: "base", Destination: &o.base, Value: defaultBase, Usage: "base `IRI` of the dataset's instances (must end in / or #)", Sources: cli.EnvVars("KGRAG_BASE")},
			&cli.BoolFlag{Name: "with-ontology", Destination: &o.withOntology, Usage: "also write the gr: ontology (into the Turtle file, or into --ontology-graph of the store)"},
			&cli.StringFlag{Name: "iris", Destination: &o.iris, Value: "ids", Usage: "what entity and relationship IRIs are made from: `ids` (GraphRAG's ids: exact, but Microsoft GraphRAG makes new UUIDs each run) or keys (titles, and a relationship's end titles: the same IRIs across runs and re-indexes; see docs/load.md)"},
			&cli.BoolFlag{Name: "omit-document-text", Destination: &o.omitDocumentText, Usage: "leave out the full text of documents (their chunks still carry it)"},
			&cli.BoolFlag{Name: "embed", Destination: &embed, Category: "vector index", Usage: "after loading, embed the entities into the vector index, as kgrag embed does"},
			&cli.StringFlag{Name: "index", Destination: &emb.index, Category: "vector index", Usage: "with --embed: index `DIR` to write (default: kgrag-index inside --input)", Sources: cli.EnvVars("KGRAG_INDEX")},
		}, append(append(readFlags(&o.read), storeFlags(&o.store)...), withoutFlag(llmFlags(&emb.llm), "retries")...)...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usagef("kgrag load --input DIR --turtle FILE", "load takes no arguments, got %q", cmd.Args().First())
			}
			o.quiet = term.isQuiet()
			if embed {
				emb.input, emb.read, emb.quiet = o.input, o.read, o.quiet
				o.embed = emb
			}
			return runLoad(ctx, *o, term)
		},
	}
}

func (o *loadOptions) validate() error {
	outputs := 0
	for _, s := range []string{o.turtle, o.ntriples, o.store.url} {
		if s != "" {
			outputs++
		}
	}
	switch {
	case o.input == "":
		return usagef("kgrag load --input ./output --turtle graph.ttl", "--input is required: the folder GraphRAG wrote its parquet files to")
	case outputs == 0:
		return usagef("kgrag load --input "+o.input+" --turtle graph.ttl", "say where to write: --turtle FILE, --ntriples FILE or --store URL")
	case outputs > 1:
		return usagef("", "choose one of --turtle, --ntriples and --store")
	case o.withOntology && o.ntriples != "":
		return usagef("kgrag ontology > gr.ttl", "--with-ontology goes with --turtle or --store; print the ontology with 'kgrag ontology'")
	}
	switch o.iris {
	case "", "ids", "keys":
	default:
		return usagef("--iris keys", "--iris must be ids or keys, not %q", o.iris)
	}
	if err := ontology.ValidateBase(o.base); err != nil {
		return usagef("--base http://example.org/my-dataset/", "--base: %v", err)
	}
	pol, err := o.read.policy()
	if err != nil {
		return err
	}
	o.policy = pol
	if o.embed != nil {
		if err := o.embed.validate(); err != nil { // a bad --llm-url fails before the load
			return err
		}
	}
	if o.store.url != "" {
		return o.store.validate()
	}
	return nil
}

func runLoad(ctx context.Context, opts loadOptions, term terminal) error {
	if err := opts.validate(); err != nil {
		return err
	}
	start := time.Now()
	eo := export.Options{Input: opts.input, Policy: opts.policy, Base: opts.base, OmitDocumentText: opts.omitDocumentText,
		Keys: opts.iris == "keys", WithOntology: opts.withOntology, Serial: opts.serial}
	showProgress := term.tty && !opts.quiet

	var (
		res  export.Result
		err  error
		dest string
	)
	switch {
	case opts.store.url != "":
		res, err = loadStore(ctx, opts, eo, term, showProgress)
		dest = fmt.Sprintf("graph <%s> of %s", opts.store.graph, redact.URLs(opts.store.url))
	default:
		// Store uploads count what the store accepted; files count what
		// was written.
		progress := ui.NewProgress(term.err, showProgress, "wrote", "triples")
		if progress != nil {
			eo.Progress = progress.Add
		}
		format, path := export.Turtle, opts.turtle
		if path == "" {
			format, path = export.NTriples, opts.ntriples
		}
		dest = path
		res, err = export.ToFile(ctx, path, term.out, format, eo)
		progress.Done()
	}
	if err != nil {
		return err
	}
	if !opts.quiet {
		what := fmt.Sprintf("%d triples", res.Stats.Triples)
		if opts.withOntology {
			// The count is of the data; the ontology's triples are not
			// counted, as kgrag copies its Turtle without parsing it.
			what = fmt.Sprintf("%d triples of data and the gr: ontology", res.Stats.Triples)
		}
		ds := res.Dataset
		fmt.Fprintf(term.err, "kgrag: wrote %s to %s in %.1fs\n", what, dest, time.Since(start).Seconds())
		fmt.Fprintf(term.err, "  %s\n", describeStats(ds, res.Stats))
		printLeftOut(term.err, ds.LeftOut, opts.input)
		// What the reader fixed or left out (duplicate ids, dangling
		// members, ...), as kgrag inspect lists it.
		for _, n := range ds.Notes {
			fmt.Fprintf(term.err, "  note: %s\n", n)
		}
	}
	if opts.embed != nil {
		return runEmbed(ctx, *opts.embed, term)
	}
	return nil
}

func describeStats(ds *graphrag.Dataset, st ontology.Stats) string {
	s := fmt.Sprintf("GraphRAG %s: %d documents, %d chunks, %d entities", ds.Release, st.Documents, st.Chunks, st.Entities)
	if st.Unresolved > 0 {
		s += fmt.Sprintf(" (%d unresolved: named by a relationship or claim, absent from the entities table)", st.Unresolved)
	}
	s += fmt.Sprintf(", %d relationships, %d communities, %d findings, %d covariates",
		st.Relationships, st.Communities, st.Findings, st.Covariates)
	if st.RepeatedLinks > 0 {
		s += fmt.Sprintf("; %d ids repeated within a link list (entity_ids, text_unit_ids, ...) were written once", st.RepeatedLinks)
	}
	return s
}
