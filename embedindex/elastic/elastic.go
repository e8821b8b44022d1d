package elastic

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/elastic/go-elasticsearch/v8"
	"github.com/elastic/go-elasticsearch/v8/esapi"
	"github.com/elastic/go-elasticsearch/v8/esutil"
	"github.com/kgrag/kgrag/internal/redact"

	"github.com/kgrag/kgrag/embedindex"
)

// Limits of Elasticsearch's knn search and dense_vector field (8.x).
const (
	maxCandidates = 10000
	maxDim        = 4096
)

// Config says where the index lives and how to reach it.
type Config struct {
	// URL is the node, e.g. http://127.0.0.1:9200, or several nodes of
	// one cluster, comma-separated: the client spreads requests over them
	// and retries a request on another node when one cannot be reached or
	// answers 502, 503 or 504. Required.
	URL string
	// Index is the alias that searches go through; Build points it at a
	// new concrete index named Index-<time>-<random>. Required; lower
	// case, as Elasticsearch wants.
	Index string
	// APIKey (base64, as Elasticsearch issues it) or Username and
	// Password authenticate; set at most one of the two. They never
	// appear in errors.
	APIKey             string
	Username, Password string
	// CAFile is a PEM file of certificate authorities to trust for an
	// https URL. It needs HTTPClient to be nil or to use an
	// *http.Transport.
	CAFile string
	// HTTPClient, when not nil, supplies the transport (only its
	// Transport is used; nil means http.DefaultTransport).
	HTTPClient *http.Client
	// NumCandidates is knn's num_candidates per shard; 0 means
	// max(100, 10*k), capped at 10000. More is slower and more exact.
	NumCandidates int
	// Shards and Replicas are the primary shards and the copies of each
	// that Build gives a new index. 0 shards means 1; 0 replicas, which
	// keeps one node green, is the default. On a cluster, one replica
	// lets a search survive the loss of a node.
	Shards, Replicas int
}

// urls are the node URLs of URL, in the order given.
func (cfg Config) urls() []string {
	var out []string
	for u := range strings.SplitSeq(cfg.URL, ",") {
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, u)
		}
	}
	return out
}

// Index is a kNN index in Elasticsearch, reached through an alias. It is
// safe for concurrent use. Info is read by Open (and Stat); searches
// always go to whatever index the alias points at, so a Build elsewhere
// switches them over at once.
type Index struct {
	cfg  Config
	es   *elasticsearch.Client
	info embedindex.Info
}

var _ embedindex.Index = (*Index)(nil)

// meta is what Build stores in the mapping's _meta.
type meta struct {
	Model   string `json:"model"`
	Dim     int    `json:"dim"`
	Metric  string `json:"metric"`
	Builder string `json:"builder"`
	// Layout 2: documents are keyed by the entity id (_id) and carry a
	// hash of their vector, so Update can change them in place; 0 or 1:
	// an older index, which Update rebuilds.
	Layout int `json:"layout,omitempty"`
}

// layout is the document layout Build writes (see meta.Layout).
const layout = 2

// Open connects to cfg.URL, checks that the cluster can serve the index
// cfg.Index points at, and reads its model, dimension and count. An index
// that does not exist fails with an error matching ErrNotFound; a node
// that cannot be reached, or a cluster that is red or elects no master
// (ErrUnavailable: its nodes may still answer searches, from a view that
// can be stale or partial), with one for which Unreachable is true.
func Open(ctx context.Context, cfg Config) (*Index, error) {
	es, err := newClient(cfg)
	if err != nil {
		return nil, err
	}
	x := &Index{cfg: cfg, es: es}
	if _, err := x.Stat(ctx); err != nil {
		return nil, err
	}
	return x, nil
}

// Info describes the index as Open or the last Stat read it. Path is the
// URL (without credentials) and alias.
func (x *Index) Info() embedindex.Info { return x.info }

// Close does nothing: the index holds no more than the client's idle
// connections, which net/http closes on its own.
func (x *Index) Close() error { return nil }

// Stat reads the model, dimension and count again, so a long-lived Index
// sees a rebuild; it updates Info. The count includes only refreshed
// documents, which after Build is all of them. It fails as Open does
// when the cluster cannot serve the index.
func (x *Index) Stat(ctx context.Context) (embedindex.Info, error) {
	c := &conn{cfg: x.cfg, es: x.es}
	// Before the mapping, which waits for a master when there is none.
	if err := checkServing(ctx, c); err != nil {
		return embedindex.Info{}, err
	}
	var mapping map[string]struct {
		Mappings struct {
			Meta meta `json:"_meta"`
		} `json:"mappings"`
	}
	if err := c.do(ctx, "read mapping of", esapi.IndicesGetMappingRequest{Index: []string{x.cfg.Index}}, &mapping); err != nil {
		return embedindex.Info{}, err
	}
	if len(mapping) != 1 {
		return embedindex.Info{}, c.errorf("read mapping of", "alias points at %d indices; want 1", len(mapping))
	}
	var m meta
	for _, v := range mapping {
		m = v.Mappings.Meta
	}
	if m.Dim <= 0 || m.Builder != builderName {
		return embedindex.Info{}, c.errorf("read mapping of", "no kgrag metadata (model, dim) in the mapping's _meta; was it built by kgrag?")
	}
	var count struct {
		Count int `json:"count"`
	}
	if err := c.do(ctx, "count", esapi.CountRequest{Index: []string{x.cfg.Index}}, &count); err != nil {
		return embedindex.Info{}, err
	}
	x.info = embedindex.Info{Model: m.Model, Dim: m.Dim, Count: count.Count, Metric: embedindex.MetricCosine, Path: c.path()}
	return x.info, nil
}

// Search returns the k nearest vectors by cosine similarity, best first,
// ties by id. It uses Elasticsearch's approximate (HNSW) knn search, so
// a true neighbour may be missed now and then; raise
// Config.NumCandidates to trade speed for recall. A query of the wrong
// dimension fails with an error matching embedindex.ErrDimMismatch; a
// zero vector has no cosine and fails too.
func (x *Index) Search(ctx context.Context, vec []float32, k int) ([]embedindex.Hit, error) {
	c := &conn{cfg: x.cfg, es: x.es}
	if len(vec) != x.info.Dim {
		return nil, &embedindex.MismatchError{Path: c.path(), IndexModel: x.info.Model, IndexDim: x.info.Dim,
			QueryDim: len(vec), Kind: embedindex.ErrDimMismatch}
	}
	if k <= 0 {
		return nil, nil
	}
	if k > maxCandidates {
		return nil, c.errorf("search", "k = %d is more than Elasticsearch's limit of %d", k, maxCandidates)
	}
	if isZero(vec) {
		return nil, c.errorf("search", "the query vector is all zeros, which has no cosine similarity")
	}
	// A text embedded in windows has a document per window: each text
	// counts once, by its best window.
	return embedindex.Distinct(ctx, k, func(ctx context.Context, n int) ([]embedindex.Hit, error) {
		return x.search(ctx, c, vec, min(n, maxCandidates))
	})
}

// search is one knn request for the k nearest documents.
func (x *Index) search(ctx context.Context, c *conn, vec []float32, k int) ([]embedindex.Hit, error) {
	body, err := json.Marshal(searchBody(vec, k, x.cfg.NumCandidates))
	if err != nil {
		return nil, c.errorf("search", "encode query: %v", err)
	}
	var res struct {
		Shards struct {
			Total  int `json:"total"`
			Failed int `json:"failed"`
		} `json:"_shards"`
		Hits struct {
			Hits []struct {
				Score  float32 `json:"_score"`
				Source struct {
					ID string `json:"id"`
				} `json:"_source"`
			} `json:"hits"`
		} `json:"hits"`
	}
	if err := c.do(ctx, "search", esapi.SearchRequest{Index: []string{x.cfg.Index}, Body: bytes.NewReader(body)}, &res); err != nil {
		return nil, err
	}
	if res.Shards.Failed > 0 {
		// Elasticsearch answers 200 with the hits of the shards that
		// did answer: nearest neighbours of part of the index.
		return nil, &Error{Op: "search", URL: redactURLs(c.cfg.URL), Index: c.cfg.Index, Kind: ErrUnavailable,
			Err:  fmt.Errorf("%d of %d shards failed, so the hits would miss part of the index", res.Shards.Failed, res.Shards.Total),
			Hint: "kgrag doctor shows the cluster's health"}
	}
	hits := make([]embedindex.Hit, 0, len(res.Hits.Hits))
	for _, h := range res.Hits.Hits {
		// Elasticsearch scores cosine as (1+cos)/2 so scores stay positive.
		hits = append(hits, embedindex.Hit{ID: h.Source.ID, Score: 2*h.Score - 1})
	}
	embedindex.SortHits(hits)
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits, nil
}

// searchBody is the _search request: a top-level knn over the vector
// field, returning only ids.
func searchBody(vec []float32, k, numCandidates int) map[string]any {
	nc := numCandidates
	if nc <= 0 {
		nc = max(100, 10*k)
	}
	nc = min(max(nc, k), maxCandidates)
	return map[string]any{
		"knn": map[string]any{
			"field":          "vector",
			"query_vector":   vec,
			"k":              k,
			"num_candidates": nc,
		},
		"size":    k,
		"_source": []string{"id"},
	}
}

const builderName = "kgrag"

// mappingBody is the body that creates a concrete index: one shard, no
// replicas (one node stays green), strict mapping of id and vector, and
// the model and dimension in _meta.
func mappingBody(model string, dim, shards, replicas int) map[string]any {
	return map[string]any{
		"settings": map[string]any{
			"number_of_shards":   max(shards, 1),
			"number_of_replicas": max(replicas, 0),
		},
		"mappings": map[string]any{
			"dynamic": "strict",
			"_meta":   meta{Model: model, Dim: dim, Metric: embedindex.MetricCosine, Builder: builderName, Layout: layout},
			"properties": map[string]any{
				"id":    map[string]any{"type": "keyword"},
				"vhash": map[string]any{"type": "keyword", "index": false},
				"vector": map[string]any{
					"type":       "dense_vector",
					"dims":       dim,
					"index":      true,
					"similarity": "cosine",
					// Full float32 HNSW: Elasticsearch 8.14+ defaults to
					// int8_hnsw, whose quantised scores are off by up to
					// 0.07 and cost recall (0.87@10 on random 48-dim data).
					"index_options": map[string]any{"type": "hnsw"},
				},
			},
		},
	}
}

// Build loads ids and their vectors (from model; dim 0 takes the first
// vector's length) into a new concrete index, refreshes it, then points
// cfg.Index at it and away from the old one in a single _aliases request
// and deletes the old one. Searches see the old index or the new one,
// never part of either. On failure before the swap the new index is
// deleted and the old one keeps serving. ids must be unique and no vector
// may be all zeros. Concurrent Builds of one alias are not supported:
// one of them fails at the swap.
func Build(ctx context.Context, cfg Config, model string, dim int, ids []string, vecs [][]float32) error {
	es, err := newClient(cfg)
	if err != nil {
		return err
	}
	c := &conn{cfg: cfg, es: es}
	if dim, err = c.check("build", dim, ids, vecs); err != nil {
		return err
	}
	return c.build(ctx, model, dim, ids, vecs)
}

// check validates ids and vecs as Build and Update take them and returns
// the dimension (dim, or the first vector's when 0).
func (c *conn) check(op string, dim int, ids []string, vecs [][]float32) (int, error) {
	if len(ids) != len(vecs) {
		return 0, c.errorf(op, "%d ids but %d vectors", len(ids), len(vecs))
	}
	if dim == 0 && len(vecs) > 0 {
		dim = len(vecs[0])
	}
	if dim <= 0 || dim > maxDim {
		return 0, c.errorf(op, "dimension %d is outside 1..%d", dim, maxDim)
	}
	seen := make(map[string]bool, len(ids))
	for i, v := range vecs {
		switch {
		case len(v) != dim:
			return 0, c.errorf(op, "vector %d (id %q) has %d dimensions; want %d: %w", i+1, ids[i], len(v), dim, embedindex.ErrDimMismatch)
		case isZero(v):
			return 0, c.errorf(op, "vector %d (id %q) is all zeros, which cosine similarity cannot index", i+1, ids[i])
		case seen[ids[i]]:
			return 0, c.errorf(op, "id %q appears twice", ids[i])
		}
		seen[ids[i]] = true
	}
	return dim, nil
}

// build is Build once the input is checked.
func (c *conn) build(ctx context.Context, model string, dim int, ids []string, vecs [][]float32) error {
	cfg := c.cfg

	// Find what the alias points at now, before creating anything.
	old, err := c.aliasTargets(ctx)
	if err != nil {
		return err
	}
	if len(old) > 0 {
		// Refuse before making anything when the cluster cannot serve
		// what is there: it could not take a new index whole either.
		if err := checkServing(ctx, c); err != nil {
			return err
		}
	}

	name, err := concreteName(cfg.Index)
	if err != nil {
		return c.errorf("build", "%v", err)
	}
	body, _ := json.Marshal(mappingBody(model, dim, cfg.Shards, cfg.Replicas))
	if err := c.do(ctx, "create index "+name+" for", esapi.IndicesCreateRequest{Index: name, Body: bytes.NewReader(body)}, nil); err != nil {
		return err
	}
	swapped := false
	defer func() {
		if !swapped {
			// Best effort, even when ctx is done: leave no half index.
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			_ = c.do(dctx, "delete unused index "+name+" of", esapi.IndicesDeleteRequest{Index: []string{name}}, nil)
		}
	}()

	if err := c.bulk(ctx, name, ids, vecs, nil); err != nil {
		return err
	}
	if err := c.do(ctx, "refresh index "+name+" of", esapi.IndicesRefreshRequest{Index: []string{name}}, nil); err != nil {
		return err
	}
	var count struct {
		Count int `json:"count"`
	}
	if err := c.do(ctx, "count index "+name+" of", esapi.CountRequest{Index: []string{name}}, &count); err != nil {
		return err
	}
	if count.Count != len(ids) {
		return c.errorf("build", "index %s holds %d documents after loading %d", name, count.Count, len(ids))
	}

	actions := make([]any, 0, len(old)+1)
	for _, o := range old {
		actions = append(actions, map[string]any{"remove": map[string]any{"index": o, "alias": cfg.Index, "must_exist": true}})
	}
	actions = append(actions, map[string]any{"add": map[string]any{"index": name, "alias": cfg.Index}})
	body, _ = json.Marshal(map[string]any{"actions": actions})
	if err := c.do(ctx, "switch to "+name+" the alias", esapi.IndicesUpdateAliasesRequest{Body: bytes.NewReader(body)}, nil); err != nil {
		return err
	}
	swapped = true
	if len(old) > 0 {
		if err := c.do(ctx, "delete old index "+strings.Join(old, ",")+" of", esapi.IndicesDeleteRequest{Index: old}, nil); err != nil {
			return fmt.Errorf("%w (the new index is in place and serving)", err)
		}
	}
	return nil
}

// bulk indexes the documents (keyed by id, with their vector's hash) and
// deletes the documents of del, with an esutil.BulkIndexer, and fails
// when any item or flush failed.
func (c *conn) bulk(ctx context.Context, index string, ids []string, vecs [][]float32, del []string) error {
	var (
		mu    sync.Mutex
		first error
	)
	note := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if first == nil {
			first = err
		}
	}
	bi, err := esutil.NewBulkIndexer(esutil.BulkIndexerConfig{
		Client:     c.es,
		Index:      index,
		NumWorkers: 2,
		FlushBytes: 4 << 20,
		OnError:    func(_ context.Context, err error) { note(c.scrub(err)) },
	})
	if err != nil {
		return c.errorf("bulk load "+index+" of", "%v", err)
	}
	var addErr error
	for i, id := range ids {
		doc, err := json.Marshal(struct {
			ID     string    `json:"id"`
			Hash   string    `json:"vhash"`
			Vector []float32 `json:"vector"`
		}{id, vectorHash(vecs[i]), vecs[i]})
		if err != nil {
			addErr = err
			break
		}
		if err := bi.Add(ctx, esutil.BulkIndexerItem{
			Action:     "index",
			DocumentID: id,
			Body:       bytes.NewReader(doc),
			OnFailure: func(_ context.Context, _ esutil.BulkIndexerItem, res esutil.BulkIndexerResponseItem, err error) {
				if err != nil {
					note(fmt.Errorf("document %q: %w", id, c.scrub(err)))
					return
				}
				note(fmt.Errorf("document %q: status %d: %s: %s", id, res.Status, res.Error.Type, res.Error.Reason))
			},
		}); err != nil {
			addErr = err
			break
		}
	}
	for _, id := range del {
		if addErr != nil {
			break
		}
		addErr = bi.Add(ctx, esutil.BulkIndexerItem{
			Action: "delete", DocumentID: id,
			OnFailure: func(_ context.Context, _ esutil.BulkIndexerItem, res esutil.BulkIndexerResponseItem, err error) {
				if err != nil {
					note(fmt.Errorf("delete %q: %w", id, c.scrub(err)))
				} else if res.Status != http.StatusNotFound {
					note(fmt.Errorf("delete %q: status %d: %s: %s", id, res.Status, res.Error.Type, res.Error.Reason))
				}
			},
		})
	}
	closeErr := bi.Close(ctx)
	st := bi.Stats()
	switch {
	case addErr != nil:
		return c.wrap("bulk load "+index+" of", addErr)
	case closeErr != nil:
		return c.wrap("bulk load "+index+" of", closeErr)
	case first != nil:
		return c.wrap("bulk load "+index+" of", fmt.Errorf("%d of %d documents failed; first: %w", st.NumFailed, len(ids), first))
	case first == nil && int(st.NumIndexed)+int(st.NumCreated)+int(st.NumUpdated) < len(ids):
		return c.errorf("bulk load "+index+" of", "%d of %d documents failed", st.NumFailed, len(ids))
	}
	if err := ctx.Err(); err != nil {
		return c.wrap("bulk load "+index+" of", err)
	}
	return nil
}

// aliasTargets lists the concrete indices the alias points at; none when
// there is no alias yet.
func (c *conn) aliasTargets(ctx context.Context) ([]string, error) {
	var res map[string]json.RawMessage
	err := c.do(ctx, "read alias", esapi.IndicesGetAliasRequest{Name: []string{c.cfg.Index}}, &res)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(res))
	for name := range res {
		out = append(out, name)
	}
	slices.Sort(out)
	return out, nil
}

// concreteName is alias-<UTC time>-<random>, unique and sortable by age.
func concreteName(alias string) (string, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return alias + "-" + time.Now().UTC().Format("20060102t150405") + "-" + hex.EncodeToString(b[:]), nil
}

func isZero(v []float32) bool {
	for _, f := range v {
		if f != 0 {
			return false
		}
	}
	return true
}

// validIndexName applies Elasticsearch's rules for index and alias names.
func validIndexName(s string) error {
	switch {
	case s == "":
		return errors.New("no index name")
	case s == "." || s == "..":
		return fmt.Errorf("index name %q is not allowed", s)
	case len(s) > 200:
		return fmt.Errorf("index name %q is longer than 200 bytes (kgrag adds a suffix to Elasticsearch's 255)", s)
	case strings.ContainsAny(s[:1], "-_+"):
		return fmt.Errorf("index name %q starts with %q", s, s[:1])
	case s != strings.ToLower(s):
		return fmt.Errorf("index name %q must be lower case", s)
	case strings.ContainsAny(s, `\/*?"<>| ,#:`):
		return fmt.Errorf("index name %q holds one of \\ / * ? \" < > | space , # :", s)
	}
	return nil
}

func newClient(cfg Config) (*elasticsearch.Client, error) {
	c := &conn{cfg: cfg}
	urls := cfg.urls()
	if len(urls) == 0 {
		return nil, c.errorf("connect to", "no URL")
	}
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, c.errorf("connect to", "URL %q is not http(s)://host[:port]", redactURL(raw))
		}
	}
	if cfg.Shards < 0 || cfg.Replicas < 0 {
		return nil, c.errorf("connect to", "shards (%d) and replicas (%d) cannot be negative", cfg.Shards, cfg.Replicas)
	}
	if err := validIndexName(cfg.Index); err != nil {
		return nil, c.errorf("connect to", "%v", err)
	}
	if cfg.APIKey != "" && (cfg.Username != "" || cfg.Password != "") {
		return nil, c.errorf("connect to", "set an API key or a username and password, not both")
	}
	if (cfg.Username == "") != (cfg.Password == "") {
		return nil, c.errorf("connect to", "a username needs a password and a password a username")
	}
	ec := elasticsearch.Config{
		Addresses: urls,
		APIKey:    cfg.APIKey,
		Username:  cfg.Username,
		Password:  cfg.Password,
	}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, c.errorf("connect to", "read CA file: %v", err)
		}
		ec.CACert = pem
	}
	if cfg.HTTPClient != nil {
		ec.Transport = cfg.HTTPClient.Transport
	}
	es, err := elasticsearch.NewClient(ec)
	if err != nil {
		return nil, c.wrap("connect to", err)
	}
	return es, nil
}

// conn carries what an error message needs.
type conn struct {
	cfg Config
	es  *elasticsearch.Client
}

func (c *conn) path() string { return redactURLs(c.cfg.URL) + "/" + c.cfg.Index }

// do runs req; an error status becomes an *Error, and a 2xx body is
// decoded into out when out is not nil.
func (c *conn) do(ctx context.Context, op string, req esapi.Request, out any) error {
	res, err := req.Do(ctx, c.es)
	if err != nil {
		return c.wrap(op, err)
	}
	defer res.Body.Close()
	if res.IsError() {
		return c.statusError(op, res)
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, res.Body)
		return nil
	}
	if err := json.NewDecoder(res.Body).Decode(out); err != nil {
		return c.wrap(op, fmt.Errorf("decode response: %w", err))
	}
	return nil
}

func (c *conn) statusError(op string, res *esapi.Response) error {
	b, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	var body struct {
		Error json.RawMessage `json:"error"`
	}
	noMaster := false
	msg := strings.TrimSpace(string(b))
	if json.Unmarshal(b, &body) == nil && len(body.Error) > 0 {
		var e struct {
			Type   string `json:"type"`
			Reason string `json:"reason"`
			Root   []struct {
				Type   string `json:"type"`
				Reason string `json:"reason"`
			} `json:"root_cause"`
		}
		if json.Unmarshal(body.Error, &e) == nil && e.Type != "" {
			noMaster = e.Type == "master_not_discovered_exception"
			msg = e.Type + ": " + e.Reason
			if len(e.Root) > 0 && e.Root[0].Reason != e.Reason {
				msg += " (" + e.Root[0].Type + ": " + e.Root[0].Reason + ")"
			}
		} else {
			msg = strings.Trim(string(body.Error), `"`)
		}
	}
	if len(msg) > 500 {
		msg = msg[:500] + "..."
	}
	e := &Error{Op: op, URL: redactURLs(c.cfg.URL), Index: c.cfg.Index, Status: res.StatusCode,
		Err: c.scrub(fmt.Errorf("%s: %s", res.Status(), msg))}
	switch s := res.StatusCode; {
	case noMaster:
		e.Kind = ErrUnavailable
		e.Err = fmt.Errorf("the cluster cannot serve the index: no elected master (fewer than a quorum of its master-eligible nodes answer): %w", e.Err)
		e.Hint = "bring the lost nodes back; kgrag doctor shows the health"
	case s == http.StatusNotFound:
		e.Kind = ErrNotFound
		e.Hint = "build it first (kgrag embed with the elasticsearch index)"
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		e.Hint = "check the API key or username and password"
	case s == http.StatusBadGateway || s == http.StatusServiceUnavailable || s == http.StatusGatewayTimeout:
		e.Kind = ErrUnreachable
	}
	return e
}

func (c *conn) errorf(op, format string, args ...any) error {
	return &Error{Op: op, URL: redactURLs(c.cfg.URL), Index: c.cfg.Index, Err: c.scrub(fmt.Errorf(format, args...))}
}

// wrap makes err, from the transport or the client, an *Error; anything
// but a context error means the node could not be reached.
func (c *conn) wrap(op string, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	e = &Error{Op: op, URL: redactURLs(c.cfg.URL), Index: c.cfg.Index, Err: c.scrub(err)}
	var (
		urlErr *url.Error
		netErr net.Error
	)
	ctxErr := errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
	if !ctxErr && (errors.As(err, &urlErr) || errors.As(err, &netErr) ||
		strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), "no such host")) {
		e.Kind = ErrUnreachable
		e.Hint = "is Elasticsearch running? check the URL"
	}
	return e
}

// scrub hides the API key, the password (also as the base64 of basic
// authentication) and what the URL carries in the text of err: an
// Elasticsearch error may echo the request's headers.
func (c *conn) scrub(err error) error {
	r := redact.New().Token(c.cfg.APIKey).Basic(c.cfg.Username, c.cfg.Password)
	for _, u := range c.cfg.urls() {
		r = r.URL(u)
	}
	return r.Error(err)
}

// redactURL is redact.URL without a trailing slash, for messages.
func redactURL(raw string) string { return strings.TrimSuffix(redact.URL(raw), "/") }

// redactURLs is redactURL of each of a comma-separated list of nodes.
func redactURLs(raw string) string {
	urls := Config{URL: raw}.urls()
	for i, u := range urls {
		urls[i] = redactURL(u)
	}
	return strings.Join(urls, ",")
}
