package main

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/redact"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/loader"
	"github.com/kgrag/kgrag/sparqlq"
	"github.com/urfave/cli/v3"
)

// askStoreFlagNames are the store flags that matter to a reader. The
// upload knobs of kgrag load are left out, and so is --store-retries: ask's
// store queries are not retried.
var askStoreFlagNames = []string{"store", "graph", "store-type", "user", "password", "auth", "token", "ca-cert", "timeout"}

// askStoreFlags are the store flags of the commands that read a store,
// bound to o.
func askStoreFlags(o *storeOptions) []cli.Flag {
	var out []cli.Flag
	for _, f := range storeFlags(o) {
		name := f.Names()[0]
		if !slices.Contains(askStoreFlagNames, name) {
			continue
		}
		if sf, ok := f.(*cli.StringFlag); ok && name == "graph" {
			sf.Usage = "named graph `IRI` that kgrag load filled"
		}
		out = append(out, f)
	}
	return out
}

// validateAskStore checks the store options as kgrag load would, with
// messages for a reader.
func validateAskStore(o *storeOptions) error {
	if o.graph == "" {
		return usagef("--graph http://example.org/kg", "--store needs --graph: the named graph kgrag load filled")
	}
	o.batchSize = loader.DefaultBatchSize // ask uploads nothing, but validate wants one
	return o.validate()
}

// source is where the graph is read from: a dataset in memory, or a
// graph in a store, as every mode reads it.
type source struct {
	name  string // for messages: the input folder, or <graph> at the store
	src   retrieval.Source
	store *sparqlq.CountingTransport // nil for --input
	c     *sparqlq.Client            // the store's, nil for --input
	graph string
	// leftOut is what the reader left out of --input (nil for a store,
	// which holds what kgrag load wrote).
	leftOut []graphrag.LeftOut
}

// retrieval is the graph as the modes read it.
func (s source) retrieval() retrieval.Source { return s.src }

// close releases a mapped snapshot; a store has nothing to release.
func (s source) close() error {
	if c, ok := s.src.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// requests is the number of SPARQL requests sent so far.
func (s source) requests() int {
	if s.store == nil {
		return 0
	}
	return int(s.store.Requests())
}

func (s source) counted() bool { return s.store != nil }

// wrap marks errors of an unreachable store for exit 10.
func (s source) wrap(err error) error {
	if s.store == nil {
		return err
	}
	return storeError(err)
}

// openSource opens the graph: kgrag embed's snapshot of --input or its
// parquet files (openMemory), or the store after checking that the graph
// holds entities. Warnings go to warn.
func openSource(ctx context.Context, opts askOptions, warn io.Writer) (source, error) {
	if warn == nil {
		warn = io.Discard
	}
	if opts.input != "" {
		src, left, err := openMemory(ctx, opts, warn)
		if err != nil {
			return source{}, err
		}
		return source{name: opts.input, src: src, leftOut: left}, nil
	}
	c, counter, err := storeClient(opts.store)
	if err != nil {
		return source{}, err
	}
	if err := checkGraph(ctx, c, opts.store); err != nil {
		return source{}, err
	}
	return source{name: fmt.Sprintf("<%s> at %s", opts.store.graph, redact.URLs(opts.store.url)),
		src: retrieval.NewSPARQLSource(c, opts.store.graph), store: counter, c: c, graph: opts.store.graph}, nil
}

// storeClient returns a query client of the store whose requests are
// counted.
func storeClient(o storeOptions) (*sparqlq.Client, *sparqlq.CountingTransport, error) {
	hc, err := sparqlq.NewHTTPClient(o.caCert)
	if err != nil {
		return nil, nil, usagef("", "--ca-cert: %v", err)
	}
	counter := &sparqlq.CountingTransport{Base: hc.Transport}
	hc.Transport = counter
	eps := o.endpoints()
	if len(eps) == 0 {
		return nil, nil, usagef("--store http://localhost:3030/ds", "--store names no URL")
	}
	p, err := loader.ProfileFor(o.storeType, eps[0])
	if err != nil {
		return nil, nil, usagef("--store http://localhost:3030/ds", "%v", err)
	}
	// Copies of the store: a query that cannot reach one goes to the next.
	st, err := loader.Open(p, loader.Options{Auth: o.auth(), HTTPClient: hc, Timeout: o.timeout, ReadReplicas: eps[1:]})
	if err != nil {
		return nil, nil, err
	}
	c := st.Client()
	if c.QueryURL() == "" {
		return nil, nil, usagef("--store-type fuseki", "store type %s has no SPARQL query endpoint: ask needs one", o.storeType)
	}
	return c, counter, nil
}

// checkGraph asks the store whether the graph holds any gr:Entity, so that
// a wrong --graph is named as such instead of giving an empty context.
func checkGraph(ctx context.Context, c *sparqlq.Client, o storeOptions) error {
	q, err := sparqlq.Bound("graph_has_entities", sparqlq.Params{"graph": sparqlq.IRIParam(o.graph)})
	if err != nil {
		return usagef("--graph http://example.org/kg", "--graph: %v", err)
	}
	ok, err := c.Ask(ctx, q)
	if err != nil {
		return storeError(fmt.Errorf("ask: read graph <%s>: %w; is the store running at --store (KGRAG_STORE)?", o.graph, err))
	}
	if !ok {
		return fmt.Errorf("ask: graph <%s> at %s holds no gr:Entity: check --graph, or load it with kgrag load --input DIR --store %s --graph %s",
			o.graph, redact.URLs(o.url), redact.URLs(o.url), o.graph)
	}
	return nil
}
