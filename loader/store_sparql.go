package loader

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/kgrag/kgrag/internal/redact"
	"github.com/kgrag/kgrag/sparqlq"
)

// DefaultBatchSize is the number of triples per request when Options leave
// it zero. Measured on Oxigraph, Fuseki (TDB2) and Virtuoso with 100k
// triples: throughput is flat from 20k to 100k and drops below 10k.
const DefaultBatchSize = 50_000

// Options configure a SPARQLStore. The zero Options are usable.
type Options struct {
	// Auth adds credentials to every request (see sparqlq.BasicAuth,
	// DigestAuth, BearerAuth). With the virtuoso profile, credentials switch
	// to the -auth endpoints.
	Auth sparqlq.Auth
	// CAFile names a PEM file of extra CA certificates for HTTPS.
	CAFile string
	// HTTPClient is used for all requests; nil builds one.
	HTTPClient *http.Client
	// Timeout bounds each HTTP request; zero means DefaultTimeout.
	Timeout time.Duration
	// BatchSize is the number of triples per request; zero means
	// DefaultBatchSize. A streamed upload reports progress that often.
	BatchSize int
	// ConcurrentBatches is how many batch requests are in flight at once;
	// zero means the profile's choice (Quirks.ConcurrentBatches), else 1.
	// Stores that run concurrent writes (Virtuoso) take batches faster
	// with more, up to their cores; a streamed PUT is one request whatever
	// this says.
	ConcurrentBatches int
	// Upload chooses batches into a temporary graph or one streamed PUT
	// (see UploadMode); zero means the profile's choice.
	Upload UploadMode
	// Retries is how many times a request that failed transiently is sent
	// again (exponential backoff from RetryBackoff, at most 30s apart);
	// zero means 5, negative means none.
	Retries int
	// RetryBackoff is the first wait before a retry; zero means 250ms.
	RetryBackoff time.Duration
	// Counter receives progress during ReplaceGraph; nil means none.
	Counter Counter
	// Logger receives retries and clean-up events; nil discards them.
	Logger *slog.Logger
	// OnLeftovers, when not nil, gets the temporary graphs of earlier
	// loads (killed, or with a batch that landed after their clean-up)
	// that a load dropped once it held the graph's lock.
	OnLeftovers func(graphs []string)
	// BreakLock removes every lock on the graph before a load takes its
	// own, as if all were abandoned: for a load that follows one the user
	// killed, whose lock would otherwise stand for LockStale. Use it only
	// when no other load of the graph is running.
	BreakLock bool
	// MaxTransaction is the most triples one update may write; zero means
	// the profile's (Quirks.MaxTransaction), negative means no limit.
	// A load that would need a larger transaction fails before it changes
	// anything, and says which load would fit.
	MaxTransaction int64
	// ReadReplicas are the base URLs of further copies of the store,
	// same kind, which the client's queries go to when the store cannot
	// be reached (sparqlq.Config.Replicas). For readers only: a load must
	// read the copy it writes to, so loads leave it empty.
	ReadReplicas []string
}

// DefaultTimeout bounds each request when Options.Timeout is zero.
const DefaultTimeout = 5 * time.Minute

// SPARQLStore is a Store reached over the SPARQL 1.1 Protocol, the Graph
// Store Protocol, or both, as its Profile says. It is safe for concurrent
// use; loads of one graph, from this process or another, are serialised by
// a lock kept in the store (see LoadsGraph). Build it with Open.
type SPARQLStore struct {
	p          Profile
	c          *sparqlq.Client
	batch      int
	concurrent int // batch requests in flight (Options.ConcurrentBatches)
	retries    int
	backoff    time.Duration
	counter    Counter
	log        *slog.Logger
	onLeft     func([]string)
	breakLk    bool
	timeout    time.Duration
	stream     bool  // one streamed PUT per graph (UploadMode)
	streamBulk bool  // LoadInPlace as one streamed POST to the bulk path (Quirks.StreamBulk)
	maxTx      int64 // most triples one update may write; 0: no limit
	bounded    bool  // ReplaceGraph takes replaceBounded
}

var _ Store = (*SPARQLStore)(nil)

// Open returns a store for profile p. It does no I/O.
func Open(p Profile, o Options) (*SPARQLStore, error) {
	if o.Auth != nil {
		p = p.withAuthSuffix()
	}
	if !p.Caps.Update && !p.Caps.GraphStore {
		return nil, fmt.Errorf("loader: profile %q offers neither SPARQL Update nor the Graph Store Protocol", p.Name)
	}
	if p.Caps.Update && p.UpdateURL == "" {
		return nil, fmt.Errorf("loader: profile %q: no update URL", p.Name)
	}
	if p.Caps.GraphStore && p.GraphStoreURL == "" {
		return nil, fmt.Errorf("loader: profile %q: no graph store URL", p.Name)
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	gsp := p.Caps.GraphStore && p.GraphStoreURL != ""
	// auto does not stream a replacement: Fuseki 5.6 commits the part of
	// a PUT body that arrived when the connection dropped, if it parses
	// (TestStreamBrokenOff), and a kill mid-write can cut it anywhere. A
	// load in place, atomic in no case, streams where the profile says.
	stream := o.Upload == UploadStream
	switch {
	case o.Upload > UploadStream:
		return nil, fmt.Errorf("loader: %v", o.Upload)
	case stream && !gsp:
		return nil, fmt.Errorf("loader: profile %q: a streamed upload needs the Graph Store Protocol", p.Name)
	}
	var replicas []string
	for _, base := range o.ReadReplicas {
		rp, err := ProfileFor(p.Name, base)
		if err != nil {
			return nil, err
		}
		if o.Auth != nil {
			rp = rp.withAuthSuffix()
		}
		replicas = append(replicas, rp.QueryURL)
	}
	c, err := sparqlq.New(sparqlq.Config{
		Replicas:     replicas,
		QueryURL:     p.QueryURL,
		UpdateURL:    p.UpdateURL,
		QueryMethod:  p.Quirks.QueryMethod,
		UpdateMethod: p.Quirks.UpdateMethod,
		Auth:         o.Auth,
		CAFile:       o.CAFile,
		HTTPClient:   o.HTTPClient,
		Timeout:      o.Timeout,
	})
	if err != nil {
		return nil, fmt.Errorf("loader: open %s store: %w", p.Name, err)
	}
	s := &SPARQLStore{p: p, c: c, batch: o.BatchSize, retries: o.Retries,
		backoff: o.RetryBackoff, counter: o.Counter, log: o.Logger, onLeft: o.OnLeftovers, breakLk: o.BreakLock,
		timeout: o.Timeout, stream: stream,
		streamBulk: gsp && p.Quirks.BulkParam != "" && (stream || o.Upload == UploadAuto && p.Quirks.StreamBulk)}
	if s.batch <= 0 {
		s.batch = DefaultBatchSize
	}
	switch {
	case o.MaxTransaction > 0:
		s.maxTx = o.MaxTransaction
	case o.MaxTransaction == 0:
		s.maxTx = p.Quirks.MaxTransaction
	}
	// Bounded replacement needs the bulk path (empty graphs), a query
	// endpoint and the Graph Store Protocol (reading the graph back), and
	// a limit to keep; --upload batches or stream asks for the other paths.
	s.bounded = s.maxTx > 0 && o.Upload == UploadAuto && gsp && p.Caps.Update && p.QueryURL != "" &&
		p.Quirks.BulkParam != "" && p.Quirks.AtomicBulk
	s.concurrent = max(cmp.Or(o.ConcurrentBatches, p.Quirks.ConcurrentBatches), 1)
	switch {
	case s.retries == 0:
		s.retries = 5
	case s.retries < 0:
		s.retries = 0
	}
	if s.backoff <= 0 {
		s.backoff = 250 * time.Millisecond
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.log = s.log.WithGroup("store").With("profile", p.Name)
	return s, nil
}

// Profile returns the store's profile (with -auth endpoints when credentials
// are in use).
func (s *SPARQLStore) Profile() Profile { return s.p }

// Client returns the SPARQL client the store uses, for queries of its own.
func (s *SPARQLStore) Client() *sparqlq.Client { return s.c }

// Count returns the number of triples in graph. Without a query endpoint
// (generic-gsp) it reads the graph as N-Triples and counts lines.
func (s *SPARQLStore) Count(ctx context.Context, graph string) (int64, error) {
	q, err := sparqlq.Bound("graph_count_triples", sparqlq.Params{"graph": sparqlq.IRIParam(graph)})
	if err != nil {
		return 0, &Error{Op: "count", Graph: graph, Err: err}
	}
	if s.p.QueryURL == "" {
		return s.countGSP(ctx, graph)
	}
	var n int64
	err = s.retry(ctx, "count", func(ctx context.Context) error {
		res, err := s.c.Select(ctx, q)
		if err != nil {
			return err
		}
		if len(res.Bindings) != 1 {
			return fmt.Errorf("count: %d result rows", len(res.Bindings))
		}
		n, err = res.Bindings[0]["n"].Int()
		return err
	})
	if err != nil {
		return 0, s.opError("count", s.p.QueryURL, graph, err, "")
	}
	return n, nil
}

func (s *SPARQLStore) countGSP(ctx context.Context, graph string) (int64, error) {
	var n int64
	err := s.retry(ctx, "count", func(ctx context.Context) error {
		n = 0
		resp, err := s.getGraph(ctx, graph, "application/n-triples")
		if err != nil || resp == nil {
			return err
		}
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		for sc.Scan() {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) > 0 && line[0] != '#' {
				n++
			}
		}
		return sc.Err()
	})
	if err != nil {
		return 0, s.opError("count", s.p.GraphStoreURL, graph, err, "")
	}
	return n, nil
}

// getGraph sends a Graph Store Protocol GET of graph, accepting accept;
// a missing graph (404) gives a nil response and no error.
func (s *SPARQLStore) getGraph(ctx context.Context, graph, accept string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.gspURL(graph), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	resp, err := s.c.Do(req)
	var se *sparqlq.StatusError
	if errors.As(err, &se) && se.StatusCode == http.StatusNotFound {
		return nil, nil
	}
	return resp, err
}

// Drop removes graph; a missing graph is no error.
func (s *SPARQLStore) Drop(ctx context.Context, graph string) error {
	if _, err := sparqlq.IRIRef(graph); err != nil {
		return &Error{Op: "drop", Graph: graph, Err: err}
	}
	err := s.retry(ctx, "drop", func(ctx context.Context) error { return s.dropOnce(ctx, graph) })
	if err != nil {
		ep := s.p.UpdateURL
		if s.dropsByGSP() {
			ep = s.p.GraphStoreURL
		}
		return s.opError("drop", ep, graph, err, "")
	}
	return nil
}

func (s *SPARQLStore) dropsByGSP() bool {
	return s.p.Caps.GraphStore && (s.p.Quirks.DropByGSP || !s.p.Caps.Update)
}

// dropOnce drops graph with one request: DROP SILENT GRAPH, or a Graph
// Store Protocol DELETE (404 counts as done).
func (s *SPARQLStore) dropOnce(ctx context.Context, graph string) error {
	if !s.dropsByGSP() && s.maxTx > 0 && s.p.QueryURL != "" {
		return s.dropSteps(ctx, graph)
	}
	if !s.dropsByGSP() {
		u, err := sparqlq.Bound("graph_drop", sparqlq.Params{"graph": sparqlq.IRIParam(graph)})
		if err != nil {
			return err
		}
		return s.c.Update(ctx, u)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, s.gspURL(graph), nil)
	if err != nil {
		return err
	}
	resp, err := s.c.Do(req)
	if err != nil {
		var se *sparqlq.StatusError
		if errors.As(err, &se) && se.StatusCode == http.StatusNotFound {
			return nil
		}
		return err
	}
	return drain(resp)
}

// Graphs lists the non-empty named graphs. It needs a query endpoint.
func (s *SPARQLStore) Graphs(ctx context.Context) ([]string, error) {
	if s.p.QueryURL == "" {
		return nil, &Error{Op: "list graphs", Err: errors.New("profile has no query endpoint")}
	}
	var out []string
	q, err := sparqlq.Bound("graphs_list", sparqlq.Params{})
	if err != nil {
		return nil, err
	}
	err = s.retry(ctx, "list graphs", func(ctx context.Context) error {
		res, err := s.c.Select(ctx, q)
		if err != nil {
			return err
		}
		out = out[:0]
		for _, row := range res.Bindings {
			if t, ok := row["g"]; ok && t.Type == sparqlq.TypeURI {
				out = append(out, t.Value)
			}
		}
		return nil
	})
	if err != nil {
		return nil, s.opError("list graphs", s.p.QueryURL, "", err, "")
	}
	return out, nil
}

// gspURL returns the Graph Store Protocol URL for graph (?graph=IRI).
func (s *SPARQLStore) gspURL(graph string) string {
	u := s.p.GraphStoreURL
	sep := "?"
	if pu, err := url.Parse(u); err == nil && pu.RawQuery != "" {
		sep = "&"
	}
	return u + sep + "graph=" + url.QueryEscape(graph)
}

// bulkURL is gspURL with the store's bulk parameter (Quirks.BulkParam),
// where it has one.
func (s *SPARQLStore) bulkURL(graph string) string {
	if s.p.Quirks.BulkParam == "" {
		return s.gspURL(graph)
	}
	return s.gspURL(graph) + "&" + s.p.Quirks.BulkParam
}

// retry runs f until it succeeds, fails for good, ctx ends or the retries
// are used up, waiting exponentially longer between attempts.
func (s *SPARQLStore) retry(ctx context.Context, what string, f func(context.Context) error) error {
	wait := s.backoff
	for attempt := 0; ; attempt++ {
		err := f(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if attempt >= s.retries || !transient(ctx, err) {
			if attempt > 0 {
				return fmt.Errorf("%w (after %d attempts)", err, attempt+1)
			}
			return err
		}
		d := wait
		var se *sparqlq.StatusError
		if errors.As(err, &se) && se.RetryAfter != "" {
			if secs, perr := strconv.Atoi(se.RetryAfter); perr == nil && secs >= 0 {
				d = time.Duration(secs) * time.Second
			}
		}
		d = min(d, 30*time.Second)
		d = d/2 + rand.N(d/2+1) // jitter in [d/2, d]
		s.log.Warn("retrying", "op", what, "attempt", attempt+1, "wait", d, "err", err)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(wait*2, 30*time.Second)
	}
}

func (s *SPARQLStore) opError(op, endpoint, graph string, err error, hint string) *Error {
	ep := redact.URL(endpoint)
	h := hintFor(err, ep)
	switch {
	case h == "":
		h = hint
	case hint != "":
		h += "; " + hint
	}
	return &Error{Op: op, URL: ep, Graph: graph, Err: err, Hint: h}
}

func drain(resp *http.Response) error {
	_, err := io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if cerr := resp.Body.Close(); err == nil {
		err = cerr
	}
	return err
}
