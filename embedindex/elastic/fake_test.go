package elastic_test

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/embedindex/elastic"
)

// fakeES answers the requests Build, Open and Search make with canned
// JSON and records them.
type fakeES struct {
	mu       sync.Mutex
	reqs     []string          // "METHOD path"
	bodies   map[string][]byte // last body per "METHOD path"
	created  string            // concrete index created
	failItem bool              // fail the second bulk item
	// health is the index's health ("" means green); noMaster says the
	// node knows no master; healthStatus, when set, is the HTTP status
	// of the health request; shardsFailed fails shards of each search.
	health       string
	noMaster     bool
	healthStatus int
	shardsFailed int
	// mappingNoMaster answers the mapping request as a node that knows
	// no master does.
	mappingNoMaster bool
}

func (f *fakeES) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	key := r.Method + " " + r.URL.Path
	f.mu.Lock()
	f.reqs = append(f.reqs, key)
	if f.bodies == nil {
		f.bodies = map[string][]byte{}
	}
	f.bodies[key] = body
	f.mu.Unlock()
	w.Header().Set("X-Elastic-Product", "Elasticsearch")
	w.Header().Set("Content-Type", "application/json")
	reply := func(status int, s string) { w.WriteHeader(status); io.WriteString(w, s) }
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/_alias/kg":
		reply(404, `{"error":"alias [kg] missing","status":404}`)
	case r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, "/kg-"):
		f.mu.Lock()
		f.created = strings.TrimPrefix(r.URL.Path, "/")
		f.mu.Unlock()
		reply(200, `{"acknowledged":true}`)
	case strings.HasSuffix(r.URL.Path, "/_bulk"):
		var items []string
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(nil, 1<<20)
		n := 0
		for sc.Scan() {
			if !strings.HasPrefix(sc.Text(), `{"index"`) {
				continue
			}
			n++
			if f.failItem && n == 2 {
				items = append(items, `{"index":{"status":400,"error":{"type":"document_parsing_exception","reason":"bad vector"}}}`)
				continue
			}
			items = append(items, fmt.Sprintf(`{"index":{"_id":"%d","status":201,"result":"created"}}`, n))
		}
		reply(200, fmt.Sprintf(`{"took":1,"errors":%v,"items":[%s]}`, f.failItem, strings.Join(items, ",")))
	case strings.HasSuffix(r.URL.Path, "/_refresh"):
		reply(200, `{"_shards":{"total":1,"successful":1,"failed":0}}`)
	case strings.HasSuffix(r.URL.Path, "/_count"):
		reply(200, `{"count":3}`)
	case r.URL.Path == "/_aliases":
		reply(200, `{"acknowledged":true}`)
	case r.Method == http.MethodDelete:
		reply(200, `{"acknowledged":true}`)
	case r.URL.Path == "/kg/_mapping" && f.mappingNoMaster:
		reply(503, `{"error":{"root_cause":[{"type":"master_not_discovered_exception","reason":null}],"type":"master_not_discovered_exception","reason":null},"status":503}`)
	case r.URL.Path == "/kg/_mapping":
		reply(200, `{"kg-x":{"mappings":{"_meta":{"model":"m","dim":3,"metric":"cosine","builder":"kgrag"}}}}`)
	case r.URL.Path == "/_cluster/health/kg":
		switch f.healthStatus {
		case 0:
		case http.StatusRequestTimeout:
			reply(f.healthStatus, `{"cluster_name":"c","status":"red","timed_out":true,"number_of_nodes":1}`)
			return
		default:
			reply(f.healthStatus, `{"error":{"type":"security_exception","reason":"action [cluster:monitor/health] is unauthorized"},"status":403}`)
			return
		}
		reply(200, fmt.Sprintf(`{"cluster_name":"c","status":%q,"number_of_nodes":1,"number_of_data_nodes":1,"active_shards":1,"unassigned_shards":1}`, cmp.Or(f.health, "green")))
	case r.URL.Path == "/_cluster/state/master_node":
		master := `"n1"`
		if f.noMaster {
			master = "null"
		}
		reply(200, `{"cluster_name":"c","master_node":`+master+`}`)
	case r.URL.Path == "/kg/_search":
		reply(200, fmt.Sprintf(`{"_shards":{"total":2,"successful":%d,"failed":%d},"hits":`, 2-f.shardsFailed, f.shardsFailed)+`{"hits":[{"_score":0.75,"_source":{"id":"b"}},{"_score":1.0,"_source":{"id":"a"}},{"_score":0.75,"_source":{"id":"a2"}}]}}`)
	default:
		reply(400, `{"error":{"type":"fake","reason":"unexpected `+key+`"},"status":400}`)
	}
}

func (f *fakeES) body(t *testing.T, key string) map[string]any {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	var m map[string]any
	if err := json.Unmarshal(f.bodies[key], &m); err != nil {
		t.Fatalf("body of %s: %v (%q)", key, err, f.bodies[key])
	}
	return m
}

func TestRequestShapes(t *testing.T) {
	f := &fakeES{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	cfg := elastic.Config{URL: srv.URL, Index: "kg", HTTPClient: srv.Client()}
	ctx := context.Background()
	ids := []string{"a", "b", "c"}
	vecs := [][]float32{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}
	if err := elastic.Build(ctx, cfg, "m", 0, ids, vecs); err != nil {
		t.Fatalf("Build: %v", err)
	}
	if !strings.HasPrefix(f.created, "kg-") {
		t.Fatalf("created index %q; want kg-*", f.created)
	}
	create := f.body(t, "PUT /"+f.created)
	b, _ := json.Marshal(create)
	for _, want := range []string{`"dims":3`, `"similarity":"cosine"`, `"type":"dense_vector"`, `"index":true`, `"index_options":{"type":"hnsw"}`,
		`"number_of_replicas":0`, `"model":"m"`, `"dim":3`, `"id":{"type":"keyword"}`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("create body %s lacks %s", b, want)
		}
	}
	aliases, _ := json.Marshal(f.body(t, "POST /_aliases"))
	if want := `{"actions":[{"add":{"alias":"kg","index":"` + f.created + `"}}]}`; string(aliases) != want {
		t.Errorf("_aliases body = %s; want %s", aliases, want)
	}

	idx, err := elastic.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if got, want := idx.Info(), (embedindex.Info{Model: "m", Dim: 3, Count: 3, Metric: "cosine", Path: srv.URL + "/kg"}); got != want {
		t.Errorf("Info() = %+v; want %+v", got, want)
	}
	hits, err := idx.Search(ctx, []float32{1, 0, 0}, 5)
	if err != nil {
		t.Fatalf("Search: %v", err)
	}
	want := []embedindex.Hit{{ID: "a", Score: 1}, {ID: "a2", Score: 0.5}, {ID: "b", Score: 0.5}}
	if fmt.Sprint(hits) != fmt.Sprint(want) {
		t.Errorf("Search = %v; want %v (scores mapped back to cosine, ties by id)", hits, want)
	}
	knn := f.body(t, "POST /kg/_search")["knn"].(map[string]any)
	if knn["k"] != 5.0 || knn["num_candidates"] != 100.0 || knn["field"] != "vector" {
		t.Errorf("knn = %v; want k 5, num_candidates 100, field vector", knn)
	}
	if _, err := idx.Search(ctx, []float32{1, 0}, 5); !errors.Is(err, embedindex.ErrDimMismatch) {
		t.Errorf("Search with 2 dims: %v; want ErrDimMismatch", err)
	}
	if err := embedindex.Check(idx.Info(), "other", 3); !errors.Is(err, embedindex.ErrModelMismatch) {
		t.Errorf("Check other model: %v; want ErrModelMismatch", err)
	}
}

func TestBuildItemFailure(t *testing.T) {
	f := &fakeES{failItem: true}
	srv := httptest.NewServer(f)
	defer srv.Close()
	cfg := elastic.Config{URL: srv.URL, Index: "kg", HTTPClient: srv.Client(), APIKey: "s3cr3tkey"}
	err := elastic.Build(context.Background(), cfg, "m", 0, []string{"a", "b", "c"}, [][]float32{{1, 0}, {0, 1}, {1, 1}})
	if err == nil || !strings.Contains(err.Error(), "bad vector") || !strings.Contains(err.Error(), `document "`) {
		t.Fatalf("Build with a failing item: %v; want the item's reason and id", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !containsStr(f.reqs, "DELETE /"+f.created) {
		t.Errorf("requests %v; want the new index deleted", f.reqs)
	}
	if containsStr(f.reqs, "POST /_aliases") {
		t.Errorf("requests %v; want no alias switch", f.reqs)
	}
}

func containsStr(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func TestConfigErrors(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		cfg  elastic.Config
		want string
	}{
		{"no url", elastic.Config{Index: "kg"}, "no URL"},
		{"upper case", elastic.Config{URL: "http://x", Index: "KG"}, "lower case"},
		{"both auth", elastic.Config{URL: "http://x", Index: "kg", APIKey: "k", Username: "u", Password: "hunter2"}, "not both"},
		{"user no pass", elastic.Config{URL: "http://x", Index: "kg", Username: "u"}, "needs a password"},
		{"bad scheme", elastic.Config{URL: "ftp://u:pw@x", Index: "kg"}, "not http"},
		{"bad second node", elastic.Config{URL: "http://x:9200, ftp://u:pw@y", Index: "kg"}, "not http"},
		{"only commas", elastic.Config{URL: " , ", Index: "kg"}, "no URL"},
		{"negative replicas", elastic.Config{URL: "http://x", Index: "kg", Replicas: -1}, "negative"},
	} {
		_, err := elastic.Open(ctx, tt.cfg)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Open = %v; want %q", tt.name, err, tt.want)
		}
		if err != nil && (strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "pw@")) {
			t.Errorf("%s: error shows a secret: %v", tt.name, err)
		}
	}
}

func TestUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	u := srv.URL
	srv.Close()
	_, err := elastic.Open(context.Background(), elastic.Config{URL: u, Index: "kg", Username: "elastic", Password: "hunter2"})
	if !elastic.Unreachable(err) {
		t.Fatalf("Open against a closed port: %v; want Unreachable", err)
	}
	if !strings.Contains(err.Error(), u) || !strings.Contains(err.Error(), "kg") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error %q: want the URL and index, and no password", err)
	}
	t.Log(err)
}

// TestShardsAndReplicas: Build gives the new index the shards and replicas
// asked for, and one shard and no replicas when none are.
func TestShardsAndReplicas(t *testing.T) {
	for _, tt := range []struct {
		shards, replicas int
		want             []string
	}{
		{0, 0, []string{`"number_of_shards":1`, `"number_of_replicas":0`}},
		{3, 1, []string{`"number_of_shards":3`, `"number_of_replicas":1`}},
	} {
		f := &fakeES{}
		srv := httptest.NewServer(f)
		cfg := elastic.Config{URL: srv.URL, Index: "kg", HTTPClient: srv.Client(), Shards: tt.shards, Replicas: tt.replicas}
		if err := elastic.Build(context.Background(), cfg, "m", 0, []string{"a", "b", "c"}, [][]float32{{1, 0}, {0, 1}, {1, 1}}); err != nil {
			t.Fatalf("Build: %v", err)
		}
		b, _ := json.Marshal(f.body(t, "PUT /"+f.created))
		for _, w := range tt.want {
			if !bytes.Contains(b, []byte(w)) {
				t.Errorf("shards %d, replicas %d: create body %s lacks %s", tt.shards, tt.replicas, b, w)
			}
		}
		srv.Close()
	}
}

// TestSecondNode: with two node URLs, one of them down, every request
// reaches the live node; the index's path names both nodes.
func TestSecondNode(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()
	f := &fakeES{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	cfg := elastic.Config{URL: downURL + "," + srv.URL, Index: "kg", HTTPClient: srv.Client()}
	ctx := context.Background()
	if err := elastic.Build(ctx, cfg, "m", 0, []string{"a", "b", "c"}, [][]float32{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}); err != nil {
		t.Fatalf("Build with the first node down: %v", err)
	}
	idx, err := elastic.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("Open with the first node down: %v", err)
	}
	for i := range 4 {
		if _, err := idx.Search(ctx, []float32{1, 0, 0}, 2); err != nil {
			t.Fatalf("search %d with the first node down: %v", i, err)
		}
	}
	if got, want := idx.Info().Path, downURL+","+srv.URL+"/kg"; got != want {
		t.Errorf("Path = %q; want %q", got, want)
	}
}

// TestClusterHealth: Open refuses an index its cluster cannot serve whole
// and current (red, or no elected master: nodes may still answer from a
// stale view) with an error Unreachable matches that says why, and opens
// one that is yellow; a node that will not tell its health (no monitor
// privilege) does not stop a search. A search some shards failed is an
// error, not fewer hits.
func TestClusterHealth(t *testing.T) {
	for _, tt := range []struct {
		name       string
		fake       *fakeES
		wantErr    []string // in Open's error; nil: Open succeeds
		wantHealth string   // start of Health().String()
	}{
		{name: "green", fake: &fakeES{}, wantHealth: "green: 1 node, 1 of 2 shard copies unassigned"},
		{name: "yellow", fake: &fakeES{health: "yellow"}, wantHealth: "yellow: 1 node, 1 of 2"},
		{name: "no monitor privilege", fake: &fakeES{healthStatus: http.StatusForbidden}, wantHealth: "unknown"},
		{name: "red", fake: &fakeES{health: "red"}, wantErr: []string{"cannot serve the index", "health red: 1 node, 1 of 2 shard copies unassigned", "kgrag doctor"}},
		{name: "no master", fake: &fakeES{health: "red", noMaster: true}, wantErr: []string{"health red", "no elected master"}},
		{name: "no master for the mapping", fake: &fakeES{mappingNoMaster: true}, wantErr: []string{"cannot serve the index", "no elected master", "kgrag doctor"}},
		// A node that knows no index by the name answers health 408 at
		// once; the mapping request then says whether it exists.
		{name: "health 408", fake: &fakeES{healthStatus: http.StatusRequestTimeout}, wantHealth: "unknown"},
		{name: "health 408, no master", fake: &fakeES{healthStatus: http.StatusRequestTimeout, noMaster: true}, wantErr: []string{"cannot serve the index: no elected master"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.fake
			srv := httptest.NewServer(f)
			defer srv.Close()
			ctx := context.Background()
			x, err := elastic.Open(ctx, elastic.Config{URL: srv.URL, Index: "kg", HTTPClient: srv.Client()})
			if tt.wantErr != nil {
				if err == nil {
					t.Fatal("Open succeeded; want an error")
				}
				if !elastic.Unreachable(err) || !errors.Is(err, elastic.ErrUnavailable) {
					t.Errorf("Open: %v; want ErrUnavailable, which Unreachable matches", err)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("Open: %v; want %q in it", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			h, err := x.Health(ctx)
			if err != nil {
				t.Fatalf("Health: %v", err)
			}
			if !strings.HasPrefix(h.String(), tt.wantHealth) {
				t.Errorf("Health = %q; want it to start %q", h, tt.wantHealth)
			}
			f.shardsFailed = 1
			_, err = x.Search(ctx, []float32{1, 0, 0}, 2)
			if !errors.Is(err, elastic.ErrUnavailable) || !strings.Contains(err.Error(), "1 of 2 shards failed") {
				t.Errorf("Search with a failed shard: %v; want ErrUnavailable naming 1 of 2 shards", err)
			}
		})
	}
}
