package sparqlq

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kgrag/kgrag/internal/redact"
)

// Method says how a query or an update travels over HTTP.
type Method uint8

// The request methods of the SPARQL 1.1 Protocol. The zero Method is
// MethodAuto.
const (
	// MethodAuto sends queries with GET while the URL stays under
	// MaxGetURL bytes and as a form POST beyond; updates go as a direct POST.
	MethodAuto Method = iota
	// MethodGET sends a query as ?query=... (updates cannot use it).
	MethodGET
	// MethodPOSTForm sends application/x-www-form-urlencoded query= or update=.
	MethodPOSTForm
	// MethodPOSTDirect sends the text as application/sparql-query or
	// application/sparql-update.
	MethodPOSTDirect
)

// String returns the method's name as used in flags and profiles.
func (m Method) String() string {
	switch m {
	case MethodAuto:
		return "auto"
	case MethodGET:
		return "get"
	case MethodPOSTForm:
		return "post-form"
	case MethodPOSTDirect:
		return "post-direct"
	}
	return fmt.Sprintf("Method(%d)", uint8(m))
}

// MaxGetURL is the URL length up to which MethodAuto sends a query with GET.
const MaxGetURL = 2000

// DefaultMaxErrorBody is how many bytes of a non-2xx answer a StatusError keeps.
const DefaultMaxErrorBody = 1024

// Config configures a Client. Only QueryURL is required for queries and
// only UpdateURL for updates.
type Config struct {
	// QueryURL is the SPARQL query endpoint.
	QueryURL string
	// UpdateURL is the SPARQL update endpoint; empty means QueryURL.
	UpdateURL string
	// QueryMethod and UpdateMethod choose how requests travel; see Method.
	QueryMethod, UpdateMethod Method
	// Auth adds credentials to every request; nil sends none.
	Auth Auth
	// CAFile names a PEM file of CA certificates trusted for HTTPS in
	// addition to the system pool. Ignored when HTTPClient is set.
	CAFile string
	// Timeout bounds each request (through its context); zero means only the
	// caller's context bounds it.
	Timeout time.Duration
	// HTTPClient is used for all requests; nil builds one (with CAFile).
	HTTPClient *http.Client
	// UserAgent is sent with every request; empty sends "kgrag-sparqlq".
	UserAgent string
	// MaxErrorBody bounds StatusError.Body; zero means DefaultMaxErrorBody.
	MaxErrorBody int
	// Replicas are the query endpoints of further copies of the store
	// that QueryURL reaches. A query that cannot reach the endpoint in use
	// goes to the next one (see Client.query); updates never move.
	Replicas []string
}

// Client talks to one SPARQL store. It is safe for concurrent use; build it
// once and reuse it. The zero Client is not usable: call New.
type Client struct {
	hc           *http.Client
	updateURL    string
	queryMethod  Method
	updateMethod Method
	auth         Auth
	timeout      time.Duration
	userAgent    string
	maxErrBody   int
	secrets      redact.Secrets // what no error may show

	// queries are Config.QueryURL and the Replicas; cur indexes the one
	// in use and moves counts how often it changed.
	queries []string
	cur     atomic.Int32
	moves   atomic.Uint64
}

// New returns a Client for cfg. It fails when an endpoint URL does not parse
// or the CA file cannot be read.
func New(cfg Config) (*Client, error) {
	c := &Client{
		hc:           cfg.HTTPClient,
		updateURL:    cfg.UpdateURL,
		queryMethod:  cfg.QueryMethod,
		updateMethod: cfg.UpdateMethod,
		auth:         cfg.Auth,
		timeout:      cfg.Timeout,
		userAgent:    cfg.UserAgent,
		maxErrBody:   cfg.MaxErrorBody,
	}
	if c.updateURL == "" {
		c.updateURL = cfg.QueryURL
	}
	if len(cfg.Replicas) > 0 && cfg.QueryURL == "" {
		return nil, errors.New("sparqlq: replicas need a QueryURL")
	}
	c.queries = append([]string{cfg.QueryURL}, cfg.Replicas...)
	c.secrets = redact.New().URL(c.updateURL)
	for _, u := range c.queries {
		c.secrets = c.secrets.URL(u)
	}
	if c.auth != nil {
		c.secrets = c.auth.mask(c.secrets)
	}
	for _, u := range append([]string{c.updateURL}, c.queries...) {
		if u == "" {
			continue
		}
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return nil, fmt.Errorf("sparqlq: endpoint %q is not an http(s) URL", redact.URL(u))
		}
	}
	if c.updateMethod == MethodGET {
		return nil, errors.New("sparqlq: updates cannot be sent with GET")
	}
	if c.userAgent == "" {
		c.userAgent = "kgrag-sparqlq"
	}
	if c.maxErrBody <= 0 {
		c.maxErrBody = DefaultMaxErrorBody
	}
	if c.hc == nil {
		hc, err := NewHTTPClient(cfg.CAFile)
		if err != nil {
			return nil, err
		}
		c.hc = hc
	}
	return c, nil
}

// NewHTTPClient returns an http.Client with its own transport that trusts the
// system CAs plus those in the PEM file caFile (none when empty).
func NewHTTPClient(caFile string) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 8
	// Oxigraph answers a connection idle for 60 s with an unsolicited 500
	// rather than closing it, which net/http logs; drop idle ones first.
	tr.IdleConnTimeout = 30 * time.Second
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("sparqlq: read CA file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("sparqlq: CA file %s holds no PEM certificate", caFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: tr}, nil
}

// QueryURL returns the query endpoint in use: the first, or the replica
// queries moved to.
func (c *Client) QueryURL() string { return c.queries[c.cur.Load()] }

// Moves is how many times queries moved to another replica: a reader
// that must read one copy of the data checks it did not change.
func (c *Client) Moves() uint64 { return c.moves.Load() }

// UpdateURL returns the update endpoint.
func (c *Client) UpdateURL() string { return c.updateURL }

// HTTPClient returns the client's http.Client.
func (c *Client) HTTPClient() *http.Client { return c.hc }

// Update runs a SPARQL 1.1 Update request. It returns *StatusError for a
// non-2xx answer.
func (c *Client) Update(ctx context.Context, update string) error {
	if c.updateURL == "" {
		return errors.New("sparqlq: update: no update endpoint configured")
	}
	var req *http.Request
	var err error
	switch c.updateMethod {
	case MethodPOSTForm:
		form := url.Values{"update": {update}}.Encode()
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, c.updateURL, strings.NewReader(form))
		if err == nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
	default:
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, c.updateURL, strings.NewReader(update))
		if err == nil {
			req.Header.Set("Content-Type", "application/sparql-update")
		}
	}
	if err != nil {
		return fmt.Errorf("sparqlq: update %s: %w", redact.URL(c.updateURL), err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return c.wrapOp("update", c.updateURL, err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
	return nil
}

// Select runs a SELECT query and reads its results.
func (c *Client) Select(ctx context.Context, query string) (*Results, error) {
	res, err := c.query(ctx, "select", query, 0)
	if err != nil {
		return nil, err
	}
	if res.Boolean != nil {
		return nil, fmt.Errorf("sparqlq: select %s: got a boolean result; use Ask", redact.URL(c.QueryURL()))
	}
	return res, nil
}

// Ask runs an ASK query.
func (c *Client) Ask(ctx context.Context, query string) (bool, error) {
	res, err := c.query(ctx, "ask", query, 0)
	if err != nil {
		return false, err
	}
	if res.Boolean == nil {
		return false, fmt.Errorf("sparqlq: ask %s: result holds no boolean", redact.URL(c.QueryURL()))
	}
	return *res.Boolean, nil
}

// Read runs a SELECT or ASK query and reads at most maxBytes of its
// answer (a larger one is an error wrapping ErrTooLarge), for queries a
// caller did not write: an agent's, a user's.
func (c *Client) Read(ctx context.Context, query string, maxBytes int64) (*Results, error) {
	return c.query(ctx, "query", query, maxBytes)
}

// ErrTooLarge: an answer over the bytes Read allows.
var ErrTooLarge = errors.New("answer too large")

// queryAt runs query at endpoint; maxBytes, when not 0, bounds the
// answer read.
func (c *Client) queryAt(ctx context.Context, endpoint, op, query string, maxBytes int64) (*Results, error) {
	req, err := c.newQueryRequest(ctx, endpoint, query)
	if err != nil {
		return nil, fmt.Errorf("sparqlq: %s %s: %w", op, redact.URL(endpoint), err)
	}
	req.Header.Set("Accept", "application/sparql-results+json, application/sparql-results+xml;q=0.9")
	resp, err := c.Do(req)
	if err != nil {
		return nil, c.wrapOp(op, endpoint, err)
	}
	defer resp.Body.Close()
	body := io.Reader(resp.Body)
	var lr *io.LimitedReader
	if maxBytes > 0 {
		lr = &io.LimitedReader{R: resp.Body, N: maxBytes + 1}
		body = lr
	}
	res, err := ReadResults(body, resp.Header.Get("Content-Type"))
	if lr != nil && lr.N <= 0 {
		return nil, fmt.Errorf("sparqlq: %s %s: %w: over %d bytes", op, redact.URL(endpoint), ErrTooLarge, maxBytes)
	}
	if err != nil {
		return nil, fmt.Errorf("sparqlq: %s %s: %w", op, redact.URL(endpoint), c.secrets.Error(err))
	}
	return res, nil
}

func (c *Client) newQueryRequest(ctx context.Context, endpoint, query string) (*http.Request, error) {
	m := c.queryMethod
	if m == MethodAuto {
		m = MethodGET
		if len(endpoint)+len(url.QueryEscape(query))+8 > MaxGetURL {
			m = MethodPOSTForm
		}
	}
	switch m {
	case MethodGET:
		u, err := url.Parse(endpoint)
		if err != nil {
			return nil, err
		}
		q := u.Query()
		q.Set("query", query)
		u.RawQuery = q.Encode()
		return http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	case MethodPOSTForm:
		form := url.Values{"query": {query}}.Encode()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form))
		if err == nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		return req, err
	default:
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(query))
		if err == nil {
			req.Header.Set("Content-Type", "application/sparql-query")
		}
		return req, err
	}
}

// Do sends req with the client's credentials, user agent and timeout. A
// request with a body must be replayable (http.NewRequest sets GetBody for
// bytes, strings and bytes.Buffer readers) so that a digest challenge can be
// answered. On a 2xx answer the caller reads and closes resp.Body; otherwise
// Do closes it and returns *StatusError. Transport errors come back as they
// are (unwrapped from *url.Error) so errors.Is works on them.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	cancel := context.CancelFunc(func() {})
	if c.timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		req = req.WithContext(ctx)
	}
	resp, err := c.DoUnbounded(req)
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// DoUnbounded is Do without the client's timeout, for a request that takes
// as long as its streamed body (an upload of a whole graph in one request,
// whose body cannot be replayed for a digest challenge); the caller bounds it
// through the request's context.
func (c *Client) DoUnbounded(req *http.Request) (*http.Response, error) {
	resp, err := c.send(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, c.statusError(req, resp)
	}
	return resp, nil
}

func (c *Client) send(req *http.Request) (*http.Response, error) {
	req.Header.Set("User-Agent", c.userAgent)
	if c.auth != nil {
		if err := c.auth.authorize(req); err != nil {
			return nil, err
		}
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, unwrapURLError(err)
	}
	if resp.StatusCode != http.StatusUnauthorized || c.auth == nil || !c.auth.challenge(req, resp) {
		return resp, nil
	}
	// The scheme learnt something from the challenge: answer it once.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	retry := req.Clone(req.Context())
	if req.Body != nil && req.Body != http.NoBody {
		if req.GetBody == nil {
			return nil, errors.New("digest challenge needs a replayable request body")
		}
		b, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		retry.Body = b
	}
	if err := c.auth.authorize(retry); err != nil {
		return nil, err
	}
	resp, err = c.hc.Do(retry)
	if err != nil {
		return nil, unwrapURLError(err)
	}
	return resp, nil
}

func (c *Client) statusError(req *http.Request, resp *http.Response) *StatusError {
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, int64(c.maxErrBody)+1))
	truncated := len(body) > c.maxErrBody
	if truncated {
		body = body[:c.maxErrBody]
	}
	s := strings.ToValidUTF8(string(bytes.TrimSpace(body)), "\uFFFD")
	if truncated {
		s += " [truncated]"
	}
	return &StatusError{
		Method:     req.Method,
		URL:        redact.URL(req.URL.String()),
		StatusCode: resp.StatusCode,
		Status:     resp.Status,
		Body:       c.secrets.Text(s), // a store may echo the request, headers and all
		RetryAfter: resp.Header.Get("Retry-After"),
	}
}

type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// StatusError is returned when a store answers with a non-2xx status.
type StatusError struct {
	Method     string
	URL        string // the endpoint, without query string or credentials
	StatusCode int
	Status     string // e.g. "503 Service Unavailable"
	Body       string // the start of the answer, truncated
	RetryAfter string // the Retry-After header, if any
}

func (e *StatusError) Error() string {
	status := e.Status
	if status == "" {
		status = fmt.Sprintf("%d %s", e.StatusCode, http.StatusText(e.StatusCode))
	}
	if e.Body == "" {
		return fmt.Sprintf("%s %s: %s", e.Method, e.URL, status)
	}
	return fmt.Sprintf("%s %s: %s: %s", e.Method, e.URL, status, e.Body)
}

// Temporary reports whether retrying the same request may succeed: 408,
// 429 and 5xx other than 501 and 505.
func (e *StatusError) Temporary() bool {
	switch e.StatusCode {
	case http.StatusRequestTimeout, http.StatusTooManyRequests:
		return true
	case http.StatusNotImplemented, http.StatusHTTPVersionNotSupported:
		return false
	}
	return e.StatusCode >= 500
}

// unwrapURLError drops net/http's *url.Error, whose message repeats the full
// URL (with the query string), keeping the cause.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func (c *Client) wrapOp(op, endpoint string, err error) error {
	var se *StatusError
	if errors.As(err, &se) {
		return fmt.Errorf("sparqlq: %s: %w", op, err)
	}
	return fmt.Errorf("sparqlq: %s %s: %w", op, redact.URL(endpoint), c.secrets.Error(err))
}

// CountingTransport counts the HTTP requests sent through it: the round
// trips a question costs, as kgrag ask reports them. Give it as the
// Transport of the client's HTTPClient.
type CountingTransport struct {
	Base http.RoundTripper // nil means http.DefaultTransport
	n    atomic.Int64
}

// RoundTrip counts r and sends it.
func (t *CountingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.n.Add(1)
	if t.Base == nil {
		return http.DefaultTransport.RoundTrip(r)
	}
	return t.Base.RoundTrip(r)
}

// Requests is the number of requests sent so far.
func (t *CountingTransport) Requests() int64 { return t.n.Load() }
