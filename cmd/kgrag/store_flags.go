package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kgrag/kgrag/internal/export"
	"github.com/kgrag/kgrag/internal/redact"
	"github.com/kgrag/kgrag/internal/ui"
	"github.com/kgrag/kgrag/loader"
	"github.com/kgrag/kgrag/ontology"
	"github.com/kgrag/kgrag/sparqlq"
	"github.com/urfave/cli/v3"
)

// storeOptions say which store to reach and how.
type storeOptions struct {
	url           string
	graph         string
	storeType     string // a loader profile name, "" to guess from url
	user          string
	password      string
	authScheme    string // basic or digest
	token         string
	caCert        string
	batchSize     int
	concurrent    int // batch requests in flight
	retries       int
	timeout       time.Duration
	ontologyGraph string
	inPlace       bool
	diff          bool    // send only the difference (LoadDiff)
	diffMax       float64 // the largest change sent as one
	breakLock     bool    // remove other loads' locks of the graph first
	upload        string  // loader.UploadMode by name
	maxTx         int64   // most triples one update may write (0: the store's)
	replicatedBy  string  // with several endpoints: "kgrag" or "store"
}

// endpoints are the store's URLs: one store, or several copies of it
// (--store A,B).
func (o storeOptions) endpoints() []string {
	var out []string
	for _, u := range strings.Split(o.url, ",") {
		if u = strings.TrimSpace(u); u != "" && !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	return out
}

// at is o with the single endpoint u.
func (o storeOptions) at(u string) storeOptions {
	o.url = u
	return o
}

// Who copies a load to each of several endpoints (--replicated-by).
const (
	replicatedByKgrag = "kgrag"
	replicatedByStore = "store"
)

// storeFlags are the flags of the commands that write to a store, bound
// to o.
func storeFlags(o *storeOptions) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "store", Destination: &o.url, Category: "store", Usage: "SPARQL store base `URL` (e.g. http://localhost:3030/ds for Fuseki); copies of one store: comma-separated (queries go to the first that answers, and a load to each, see --replicated-by)", Sources: cli.EnvVars("KGRAG_STORE")},
		&cli.StringFlag{Name: "graph", Destination: &o.graph, Category: "store", Usage: "named graph `IRI` to replace", Sources: cli.EnvVars("KGRAG_GRAPH")},
		&cli.StringFlag{Name: "store-type", Destination: &o.storeType, Category: "store", Usage: "store `KIND`: " + strings.Join(loader.ProfileNames(), ", ") + " (guessed from the URL when unset)", Sources: cli.EnvVars("KGRAG_STORE_TYPE")},
		&cli.StringFlag{Name: "user", Destination: &o.user, Category: "store", Usage: "user `NAME` for the store", Sources: cli.EnvVars("KGRAG_STORE_USER")},
		&cli.StringFlag{Name: "password", Destination: &o.password, Category: "store", Usage: "store password (better: env KGRAG_STORE_PASSWORD or KGRAG_STORE_PASSWORD_FILE)", Sources: secretSource("KGRAG_STORE_PASSWORD")},
		&cli.StringFlag{Name: "auth", Destination: &o.authScheme, Category: "store", Value: "basic", Usage: "password `SCHEME`: basic or digest (Virtuoso)", Sources: cli.EnvVars("KGRAG_STORE_AUTH")},
		&cli.StringFlag{Name: "token", Destination: &o.token, Category: "store", Usage: "bearer token (better: env KGRAG_STORE_TOKEN or KGRAG_STORE_TOKEN_FILE)", Sources: secretSource("KGRAG_STORE_TOKEN")},
		&cli.StringFlag{Name: "ca-cert", Destination: &o.caCert, Category: "store", Usage: "PEM `FILE` of CA certificates to trust for https", Sources: cli.EnvVars("KGRAG_STORE_CA_CERT")},
		&cli.IntFlag{Name: "batch-size", Destination: &o.batchSize, Category: "store", Value: loader.DefaultBatchSize, Usage: "triples per upload request (batches)"},
		&cli.IntFlag{Name: "concurrent-batches", Destination: &o.concurrent, Category: "store", Usage: "batch requests in flight at once (batches; 0: the store's choice, 2 on Virtuoso, which runs each request on one core, else 1)"},
		&cli.StringFlag{Name: "upload", Destination: &o.upload, Category: "store", Value: "auto", Usage: "how the graph travels: batches (into a temporary graph, swapped in by one update), stream (the whole graph as one Graph Store Protocol PUT, which the store must run as one transaction) or auto (batches, as Fuseki commits the part of a stream that arrived when a connection drops; but --in-place on Oxigraph goes as one stream to its bulk loader)"},
		&cli.Int64Flag{Name: "max-transaction", Destination: &o.maxTx, Category: "store", Usage: "most `TRIPLES` one update may write (0: the store's limit, " + fmt.Sprint(loader.OxigraphMaxTransaction) + " on Oxigraph, which holds a transaction in memory, about 3 KB a triple; none elsewhere; -1: no limit). Under a limit an empty graph is filled by the bulk loader, atomically, and a full one changed by its difference; a load needing more fails before it changes anything"},
		&cli.IntFlag{Name: "store-retries", Destination: &o.retries, Category: "store", Value: 5, Usage: "retries of a request to the store that failed transiently (connection reset, timeout, 5xx, 429); 0 for none"},
		retriesAlias("store-retries"),
		&cli.DurationFlag{Name: "timeout", Destination: &o.timeout, Category: "store", Value: loader.DefaultTimeout, Usage: "time limit of each request"},
		&cli.BoolFlag{Name: "break-lock", Destination: &o.breakLock, Category: "store", Usage: "remove the lock of another load of --graph first: for a load after one you killed, whose lock stands for " + loader.LockStale.String() + " (a load that runs would be corrupted)"},
		&cli.BoolFlag{Name: "in-place", Destination: &o.inPlace, Category: "store", Usage: "load straight into --graph through the store's bulk path: much faster on Oxigraph, where the graph goes as one streamed request to its bulk loader (--upload batches: in batches), but NOT atomic (readers see the graph empty or filling up; a failed load leaves it empty or incomplete); on Fuseki with --upload stream it is the same atomic streamed PUT as without it"},
		&cli.BoolFlag{Name: "diff", Destination: &o.diff, Category: "store", Usage: "send only the difference between what --graph holds and the new mapping, as one atomic update; the graph is read back and checked against what the last --diff load recorded, and replaced whole when it cannot be sure (see 'Updating a graph' in docs/stores.md)"},
		&cli.FloatFlag{Name: "diff-max", Destination: &o.diffMax, Category: "store", Value: loader.DefaultDiffMax, Usage: "with --diff: the largest change, as a `FRACTION` of the graph, sent as a difference; a larger one replaces the graph whole (not on Oxigraph, where a replacement is itself a difference, up to --max-transaction)"},
		&cli.StringFlag{Name: "replicated-by", Destination: &o.replicatedBy, Category: "store", Value: replicatedByKgrag, Usage: "with several --store URLs, `WHO` copies a load to each: kgrag (it loads every copy at once, each atomically and with its load record; for stores that do not replicate: single Fusekis, Oxigraph; use --diff, so that a copy that missed a load gets only its difference) or store (the load goes to the first copy that answers and the store replicates it: Fuseki with RDF Delta, GraphDB, Virtuoso or Stardog clusters)", Sources: cli.EnvVars("KGRAG_REPLICATED_BY")},
		&cli.StringFlag{Name: "ontology-graph", Destination: &o.ontologyGraph, Category: "store", Value: ontology.OntologyIRI, Usage: "named graph `IRI` that --with-ontology loads the ontology into"},
	}
}

func (o *storeOptions) validate() error {
	if o.graph == "" {
		return usagef("--graph http://example.org/kg", "--store needs --graph: the named graph to replace")
	}
	if u, err := url.Parse(o.graph); err != nil || !u.IsAbs() || strings.ContainsAny(o.graph, " <>\"{}|^`\\") {
		return usagef("--graph http://example.org/kg", "--graph %q is not an absolute IRI", o.graph)
	}
	eps := o.endpoints()
	if len(eps) == 0 {
		return usagef("--store http://localhost:3030/ds", "--store names no URL")
	}
	if o.storeType == "" {
		// Copies of a store are of one kind: each must be recognised as
		// the same, or --store-type says which.
		for _, u := range eps {
			kind, ok := guessStoreType(u)
			if !ok {
				return usagef("--store-type fuseki", "cannot tell what kind of store %s is: set --store-type to one of %s",
					redact.URL(u), strings.Join(loader.ProfileNames(), ", "))
			}
			if o.storeType != "" && kind != o.storeType {
				return usagef("--store-type fuseki", "--store lists a %s (%s) and a %s store: copies of one store are of one kind; set --store-type if they are",
					o.storeType, redact.URL(eps[0]), kind)
			}
			o.storeType = kind
		}
	}
	for _, u := range eps {
		if _, err := loader.ProfileFor(o.storeType, u); err != nil {
			return usagef("--store http://localhost:3030/ds", "%v", err)
		}
	}
	switch o.replicatedBy {
	case "", replicatedByKgrag, replicatedByStore:
	default:
		return usagef("--replicated-by store", "--replicated-by must be kgrag or store, not %q", o.replicatedBy)
	}
	if o.token != "" && o.user != "" {
		return usagef("", "give either --token or --user/--password, not both")
	}
	if o.authScheme != "basic" && o.authScheme != "digest" {
		return usagef("--auth digest", "--auth must be basic or digest, not %q", o.authScheme)
	}
	if _, err := loader.ParseUploadMode(cmp.Or(o.upload, "auto")); err != nil {
		return usagef("--upload batches", "--upload must be auto, batches or stream, not %q", o.upload)
	}
	if o.batchSize <= 0 {
		return usagef("--batch-size 50000", "--batch-size must be positive")
	}
	if o.concurrent < 0 || o.concurrent > 64 {
		return usagef("--concurrent-batches 2", "--concurrent-batches must be 0 (the store's choice) to 64, not %d", o.concurrent)
	}
	switch {
	case o.diff && o.inPlace:
		return usagef("", "choose --diff or --in-place: a difference is sent as one atomic update, --in-place streams the whole graph unatomically")
	case o.diff && (o.diffMax <= 0 || o.diffMax > 1):
		return usagef("--diff-max 0.2", "--diff-max must be a fraction in (0, 1], got %g", o.diffMax)
	}
	return nil
}

// guessStoreType recognises the default ports and paths of the stores kgrag
// has presets for.
func guessStoreType(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", false
	}
	switch {
	case strings.Contains(u.Path, "/repositories/"):
		return "graphdb", true
	case u.Port() == "3030":
		return "fuseki", true
	case u.Port() == "7878":
		return "oxigraph", true
	case u.Port() == "8890":
		return "virtuoso", true
	}
	return "", false
}

func (o storeOptions) auth() sparqlq.Auth {
	switch {
	case o.token != "":
		return sparqlq.BearerAuth(o.token)
	case o.user != "" && o.authScheme == "digest":
		return sparqlq.DigestAuth(o.user, o.password)
	case o.user != "":
		return sparqlq.BasicAuth(o.user, o.password)
	}
	return nil
}

// open opens the store; notes, when not nil, hears of the temporary graphs
// of earlier loads that a load dropped.
func (o storeOptions) open(counter loader.Counter, notes io.Writer) (*loader.SPARQLStore, error) {
	p, err := loader.ProfileFor(o.storeType, o.url)
	if err != nil {
		return nil, usagef("--store http://localhost:3030/ds", "%v", err)
	}
	var onLeft func([]string)
	if notes != nil {
		onLeft = func(gs []string) {
			fmt.Fprintf(notes, "kgrag: dropped %d temporary graphs that earlier loads (killed, or interrupted) left: %s\n", len(gs), strings.Join(gs, ", "))
		}
	}
	mode, err := loader.ParseUploadMode(cmp.Or(o.upload, "auto"))
	if err != nil {
		return nil, usagef("--upload batches", "%v", err)
	}
	retries := o.retries
	if retries == 0 {
		retries = -1 // loader.Options: 0 is the default, negative is none
	}
	st, err := loader.Open(p, loader.Options{
		Auth:              o.auth(),
		CAFile:            o.caCert,
		Timeout:           o.timeout,
		BatchSize:         o.batchSize,
		ConcurrentBatches: o.concurrent,
		Retries:           retries,
		Counter:           counter,
		OnLeftovers:       onLeft,
		BreakLock:         o.breakLock,
		Upload:            mode,
		MaxTransaction:    o.maxTx,
	})
	if err != nil && mode == loader.UploadStream {
		return nil, usagef("--upload batches", "%v", err)
	}
	return st, err
}

// loadStore loads the input into the store's named graph as the options
// say, and with --diff says what the load did. Copies of a store (several
// --store URLs) are all loaded at once, or only the first that answers
// when the store replicates itself (--replicated-by store).
//
// A load never moves to another copy once it has sent anything: the
// batches it wrote to a temporary graph are on the copy it wrote them to
// (another may not have them yet), a difference was computed against
// that copy's graph, and the swap must not run twice. A copy that refuses
// the first request (reachStore's ping) has been sent nothing, so the load may
// start there instead.
func loadStore(ctx context.Context, opts loadOptions, eo export.Options, term terminal, showProgress bool) (export.Result, error) {
	eps := opts.store.endpoints()
	if len(eps) == 1 {
		return loadStoreAt(ctx, opts, eo, term, showProgress)
	}
	if opts.store.replicatedBy == replicatedByStore {
		var down []error
		for _, u := range eps {
			o := opts
			o.store = opts.store.at(u)
			if err := reachStore(ctx, o.store); err != nil {
				down = append(down, err)
				continue
			}
			if len(down) > 0 {
				fmt.Fprintf(term.err, "kgrag: loading through %s; these copies did not answer:%s\n", redact.URL(u), listErrors(down))
			}
			return loadStoreAt(ctx, o, eo, term, showProgress)
		}
		return export.Result{}, storeError(&copiesError{
			msg:  fmt.Sprintf("none of the %d copies of the store answered:%s", len(eps), listErrors(down)),
			errs: down,
		})
	}
	// kgrag is the replicator: each copy gets the whole load, atomically
	// and with its own load record, so that a copy that misses a load
	// holds the previous one whole and the next --diff sends it only its
	// difference. The copies load at once (each maps the input itself):
	// a load takes about as long as into one store, and readers of
	// either copy see the new graph within a moment of each other.
	type outcome struct {
		res export.Result
		err error
		log bytes.Buffer
	}
	outs := make([]outcome, len(eps))
	// One progress line for all: the triples every copy took so far.
	progress := ui.NewProgress(term.err, showProgress, fmt.Sprintf("uploaded to %d copies", len(eps)), "triples")
	var counter loader.Counter
	if progress != nil {
		counter = loader.CounterFunc(progress.Add)
	}
	var wg sync.WaitGroup
	for i, u := range eps {
		o := opts
		o.store = opts.store.at(u)
		t := term
		t.err = &outs[i].log
		wg.Go(func() { outs[i].res, outs[i].err = loadStoreCounted(ctx, o, eo, t, counter) })
	}
	wg.Wait()
	progress.Done()
	var (
		res            export.Result
		missed, loaded []string
		failed         []error
	)
	for i, u := range eps {
		out := &outs[i]
		var le *loader.Error
		if err := out.err; err != nil && (!errors.As(err, &le) || ctx.Err() != nil) {
			return out.res, err // the input's failure, or an interrupt: the same on every copy
		}
		if !opts.quiet || out.err != nil {
			fmt.Fprintf(term.err, "kgrag: copy %d of %d, %s:\n", i+1, len(eps), redact.URL(u))
			for l := range strings.Lines(out.log.String()) {
				fmt.Fprint(term.err, "  ", l)
			}
		}
		if out.err != nil {
			failed = append(failed, out.err)
			missed = append(missed, redact.URL(u))
			fmt.Fprintf(term.err, "  failed: %v\n  %s\n", out.err, copyLeft(opts.store))
			continue
		}
		res = out.res
		loaded = append(loaded, redact.URL(u))
	}
	if len(failed) > 0 {
		msg := fmt.Sprintf("loaded %d of %d copies of the store; not %s (why: above); load again when %s back",
			len(loaded), len(eps), strings.Join(missed, ", "), plural(len(missed), "it is", "they are"))
		return res, storeError(&copiesError{msg: msg, errs: failed})
	}
	return res, nil
}

// copiesError is the failure of a load into copies of a store: its
// message sums up, and it wraps each copy's error (for the exit code).
type copiesError struct {
	msg  string
	errs []error
}

func (e *copiesError) Error() string   { return e.msg }
func (e *copiesError) Unwrap() []error { return e.errs }

// listErrors lists errs as one line each, indented under a message.
func listErrors(errs []error) string {
	var b strings.Builder
	for _, err := range errs {
		b.WriteString("\n  ")
		b.WriteString(err.Error())
	}
	return b.String()
}

// copyLeft says what a copy of the store holds after its load failed.
func copyLeft(o storeOptions) string {
	if o.inPlace {
		return "with --in-place it may hold part of the new graph; load it again"
	}
	return "it holds the graph it held before (each load commits whole or not at all); the next load brings it up to date, with --diff by its difference alone"
}

// loadStoreAt is loadStore into one store.
func loadStoreAt(ctx context.Context, opts loadOptions, eo export.Options, term terminal, showProgress bool) (export.Result, error) {
	progress := ui.NewProgress(term.err, showProgress, "uploaded", "triples")
	var counter loader.Counter
	if progress != nil {
		counter = loader.CounterFunc(progress.Add)
	}
	res, err := loadStoreCounted(ctx, opts, eo, term, counter)
	progress.Done()
	return res, err
}

// loadStoreCounted is loadStoreAt telling counter (nil for none) what the
// store took.
func loadStoreCounted(ctx context.Context, opts loadOptions, eo export.Options, term terminal, counter loader.Counter) (export.Result, error) {
	st, err := opts.store.open(counter, term.err)
	if err != nil {
		return export.Result{}, err
	}
	so := export.StoreOptions{Graph: opts.store.graph, DiffMax: opts.store.diffMax, OntologyGraph: opts.store.ontologyGraph}
	switch {
	case opts.store.inPlace:
		so.Mode = export.InPlace
	case opts.store.diff:
		so.Mode = export.Diff
	}
	res, err := export.ToStore(ctx, st, so, eo)
	if err != nil {
		return res, storeError(err)
	}
	if opts.store.diff && !opts.quiet {
		fmt.Fprintln(term.err, describeDiff(res.Diff))
	}
	return res, nil
}

// storeError marks errors of an unreachable store for exit code 10.
func storeError(err error) error {
	if loader.Unreachable(err) && !errors.Is(err, context.Canceled) {
		return &storeDownError{err: err}
	}
	return err
}

// describeDiff says what a diff load did, in the words of what was
// checked: a count of a difference is printed only once the graph read
// back matched the last load's record.
func describeDiff(d loader.DiffResult) string {
	switch {
	case d.Replaced:
		return fmt.Sprintf("kgrag: --diff: replaced the graph whole (%d triples): %s", d.Triples, d.Reason)
	case d.Reason != "":
		// A difference without a matching record (a store with bounded
		// transactions): checked against the store's own count.
		return fmt.Sprintf("kgrag: --diff: sent a difference of %d triples deleted and %d inserted, in one update; the graph holds %d triples (%d read back: %s)",
			d.Deleted, d.Inserted, d.Triples, d.Read, d.Reason)
	case d.Deleted == 0 && d.Inserted == 0:
		return fmt.Sprintf("kgrag: --diff: the graph already held these %d triples (read back and checked against the last load's record); nothing sent", d.Triples)
	}
	return fmt.Sprintf("kgrag: --diff: sent a difference of %d triples deleted and %d inserted, in one update; the graph holds %d triples (%d read back and checked against the last load's record)",
		d.Deleted, d.Inserted, d.Triples, d.Read)
}
