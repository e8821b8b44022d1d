package loader_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kgrag/kgrag/loader"
	"github.com/kgrag/kgrag/loader/storetest"
	"github.com/kgrag/kgrag/rdf"
	"github.com/kgrag/kgrag/sparqlq"
)

func TestProfileFor(t *testing.T) {
	tests := []struct {
		name, base         string
		query, update, gsp string
		caps               loader.Capabilities
		updateMethod       sparqlq.Method
		commit             loader.CommitStrategy
		typedLt            bool
	}{
		{"fuseki", "http://h:3030/ds/", "http://h:3030/ds/query", "http://h:3030/ds/update", "http://h:3030/ds/data",
			loader.Capabilities{Update: true, GraphStore: true}, sparqlq.MethodAuto, loader.CommitInsert, false},
		{"graphdb", "http://h:7200/repositories/kg", "http://h:7200/repositories/kg", "http://h:7200/repositories/kg/statements",
			"http://h:7200/repositories/kg/rdf-graphs/service", loader.Capabilities{Update: true, GraphStore: true}, sparqlq.MethodPOSTForm, loader.CommitDropMove, false},
		{"oxigraph", "http://h:7878", "http://h:7878/query", "http://h:7878/update", "http://h:7878/store",
			loader.Capabilities{Update: true, GraphStore: true}, sparqlq.MethodAuto, loader.CommitDropMove, false},
		{"virtuoso", "http://h:8890", "http://h:8890/sparql", "http://h:8890/sparql", "http://h:8890/sparql-graph-crud",
			loader.Capabilities{Update: true, GraphStore: true}, sparqlq.MethodPOSTForm, loader.CommitMove, true},
		{"generic-gsp", "https://h/gsp", "", "", "https://h/gsp", loader.Capabilities{GraphStore: true}, sparqlq.MethodAuto, loader.CommitDropMove, false},
		{"generic-update", "https://h/sparql", "https://h/sparql", "https://h/sparql", "", loader.Capabilities{Update: true}, sparqlq.MethodAuto, loader.CommitDropMove, false},
	}
	for _, tt := range tests {
		p, err := loader.ProfileFor(tt.name, tt.base)
		if err != nil {
			t.Errorf("ProfileFor(%q, %q): %v", tt.name, tt.base, err)
			continue
		}
		if p.QueryURL != tt.query || p.UpdateURL != tt.update || p.GraphStoreURL != tt.gsp {
			t.Errorf("ProfileFor(%q) endpoints = %q, %q, %q; want %q, %q, %q",
				tt.name, p.QueryURL, p.UpdateURL, p.GraphStoreURL, tt.query, tt.update, tt.gsp)
		}
		if p.Caps != tt.caps || p.Quirks.UpdateMethod != tt.updateMethod ||
			p.Quirks.Commit != tt.commit || p.Quirks.TypedLiteral != tt.typedLt {
			t.Errorf("ProfileFor(%q) = %+v", tt.name, p)
		}
		if loader.ProfileDoc(tt.name) == "" {
			t.Errorf("ProfileDoc(%q) is empty", tt.name)
		}
	}
	for _, bad := range [][2]string{{"nosuch", "http://h"}, {"fuseki", "ftp://h/ds"}, {"fuseki", "h:3030"}} {
		if _, err := loader.ProfileFor(bad[0], bad[1]); err == nil {
			t.Errorf("ProfileFor(%q, %q): no error", bad[0], bad[1])
		}
	}
}

func TestVirtuosoAuthEndpoints(t *testing.T) {
	p, _ := loader.ProfileFor("virtuoso", "http://h:8890")
	s, err := loader.Open(p, loader.Options{Auth: sparqlq.DigestAuth("u", "p")})
	if err != nil {
		t.Fatal(err)
	}
	got := s.Profile()
	if got.QueryURL != "http://h:8890/sparql-auth" || got.UpdateURL != "http://h:8890/sparql-auth" ||
		got.GraphStoreURL != "http://h:8890/sparql-graph-crud-auth" {
		t.Errorf("with auth: %+v", got)
	}
}

// fakeStore is a minimal SPARQL endpoint for request-shape tests. It
// records updates and GSP requests and answers ASK with askAnswer.
type fakeStore struct {
	mu        sync.Mutex
	updates   []string // data updates: batches, drops, the commit
	lockOps   []string // updates of the load locks alone
	gsp       []string // "METHOD graph lines"
	askAnswer bool
	// hook may answer a request itself (return true).
	hook func(w http.ResponseWriter, r *http.Request, body string) bool
	// The load locks it holds, and the loads whose commit carried a mark.
	locks, committed map[string]bool
}

var lockNode = regexp.MustCompile(`<urn:kgrag:load:[0-9a-f]+>`)

// lockRequest answers what the load lock sends (see loader/lock.go): it
// keeps the lock nodes inserted and not deleted, lists them, and says
// whether a commit carried a load's mark. It reports whether it answered.
func (f *fakeStore) lockRequest(w http.ResponseWriter, r *http.Request, body string) bool {
	q := r.URL.Query().Get("query")
	if q == "" {
		if v, err := url.ParseQuery(body); err == nil {
			q = v.Get("query")
		}
	}
	update := body
	if v, err := url.ParseQuery(body); err == nil && v.Has("update") {
		update = v.Get("update")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.locks == nil {
		f.locks, f.committed = map[string]bool{}, map[string]bool{}
	}
	switch {
	case strings.Contains(update, "urn:kgrag:committed") && strings.Contains(update, "kgrag-tmp-"):
		f.committed[lockNode.FindString(update)] = true
		return false // the commit: recorded as a data update too
	case strings.Contains(update, "<urn:kgrag:loads>") && r.Method == http.MethodPost && q == "":
		f.lockOps = append(f.lockOps, update)
		node := lockNode.FindString(update)
		switch {
		case strings.Contains(update, "INSERT DATA") && strings.Contains(update, "urn:kgrag:graph"):
			f.locks[node] = true
		case strings.HasPrefix(update, "DELETE WHERE"):
			delete(f.locks, node)
		}
		w.WriteHeader(http.StatusNoContent)
		return true
	case strings.Contains(q, "SELECT ?l ?t"):
		var rows []string
		for n := range f.locks {
			rows = append(rows, fmt.Sprintf(`{"l":{"type":"uri","value":%q},"t":{"type":"literal","value":"%d"}}`, strings.Trim(n, "<>"), time.Now().Unix()))
		}
		w.Header().Set("Content-Type", "application/sparql-results+json")
		fmt.Fprintf(w, `{"head":{"vars":["l","t"]},"results":{"bindings":[%s]}}`, strings.Join(rows, ","))
		return true
	case strings.Contains(q, "SELECT ?g"), strings.Contains(q, "SELECT ?tmp"):
		w.Header().Set("Content-Type", "application/sparql-results+json")
		io.WriteString(w, `{"head":{"vars":["g","tmp"]},"results":{"bindings":[]}}`)
		return true
	case strings.Contains(q, "urn:kgrag:committed"):
		w.Header().Set("Content-Type", "application/sparql-results+json")
		fmt.Fprintf(w, `{"boolean":%v}`, f.committed[lockNode.FindString(q)])
		return true
	}
	return false
}

func (f *fakeStore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	body := string(b)
	if f.hook != nil && f.hook(w, r, body) {
		return
	}
	if f.lockRequest(w, r, body) {
		return
	}
	switch {
	case r.URL.Query().Has("graph"):
		f.mu.Lock()
		f.gsp = append(f.gsp, r.Method+" "+r.URL.Query().Get("graph")+" "+strconv.Itoa(strings.Count(body, "\n")))
		f.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodPost && (strings.HasPrefix(r.Header.Get("Content-Type"), "application/sparql-update") ||
		strings.Contains(body, "update=")):
		if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
			v, _ := url.ParseQuery(body)
			body = v.Get("update")
		}
		f.mu.Lock()
		f.updates = append(f.updates, body)
		f.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Content-Type", "application/sparql-results+json")
		if f.askAnswer {
			io.WriteString(w, `{"boolean":true}`)
		} else {
			io.WriteString(w, `{"boolean":false}`)
		}
	}
}

func newFake(t *testing.T, f *fakeStore) string {
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestReplaceInsertData(t *testing.T) {
	f := &fakeStore{}
	base := newFake(t, f)
	var progress atomic.Int64
	s := openStore(t, "generic-update", base, loader.Options{BatchSize: 4,
		Counter: loader.CounterFunc(func(n int64) { progress.Add(n) })})
	n, err := replaceN(context.Background(), s, "http://ex/g", 10, "")
	if err != nil || n != 10 {
		t.Fatalf("ReplaceGraph = %d, %v", n, err)
	}
	if len(f.updates) != 4 {
		t.Fatalf("%d updates; want 3 batches and a commit:\n%s", len(f.updates), strings.Join(f.updates, "\n---\n"))
	}
	for i, u := range f.updates[:3] {
		if !strings.HasPrefix(u, "INSERT DATA { GRAPH <http://ex/g#kgrag-tmp-") || !strings.HasSuffix(u, "} }\n") {
			t.Errorf("batch %d = %.80q", i, u)
		}
	}
	if c := f.updates[3]; !strings.HasPrefix(c, "DROP SILENT GRAPH <http://ex/g> ;\nMOVE GRAPH <http://ex/g#kgrag-tmp-") {
		t.Errorf("commit = %q", c)
	}
	if progress.Load() != 10 {
		t.Errorf("progress = %d; want 10", progress.Load())
	}
}

func TestReplaceGSPBatches(t *testing.T) {
	tests := []struct {
		profile    string
		full       bool // the graph holds triples (every ASK says so)
		wantCommit string
	}{
		{"oxigraph", false, "MOVE GRAPH"},
		{"fuseki", true, "INSERT { GRAPH <http://ex/g> { ?s ?p ?o } } WHERE"},
		{"fuseki", false, "MOVE GRAPH <http://ex/g#kgrag-tmp-"}, // exact into an empty graph, and streamed
		{"virtuoso", false, "MOVE GRAPH <http://ex/g#kgrag-tmp-"},
	}
	for _, tt := range tests {
		f := &fakeStore{askAnswer: tt.full}
		base := newFake(t, f)
		if tt.profile == "fuseki" {
			base += "/ds"
		}
		s := openStore(t, tt.profile, base, loader.Options{MaxTransaction: -1, BatchSize: 3, Upload: loader.UploadBatches})
		if _, err := replaceN(context.Background(), s, "http://ex/g", 7, ""); err != nil {
			t.Fatal(err)
		}
		if len(f.gsp) != 3 || !strings.HasPrefix(f.gsp[0], "POST http://ex/g#kgrag-tmp-") {
			t.Errorf("%s: GSP requests = %q; want 3 POSTs to the temporary graph", tt.profile, f.gsp)
		}
		if len(f.updates) != 1 || !strings.Contains(f.updates[0], tt.wantCommit) {
			t.Errorf("%s: updates = %q; want one commit with %q", tt.profile, f.updates, tt.wantCommit)
		}
	}
}

func TestReplaceEmptyDrops(t *testing.T) {
	f := &fakeStore{}
	s := openStore(t, "oxigraph", newFake(t, f), loader.Options{MaxTransaction: -1})
	if n, err := replaceN(context.Background(), s, "http://ex/g", 0, ""); err != nil || n != 0 {
		t.Fatalf("ReplaceGraph(empty) = %d, %v", n, err)
	}
	if len(f.gsp) != 0 || len(f.updates) != 1 || f.updates[0] != "DROP SILENT GRAPH <http://ex/g>" {
		t.Errorf("requests: gsp %q, updates %q; want one DROP", f.gsp, f.updates)
	}
}

func TestReplacePut(t *testing.T) {
	var puts atomic.Int32
	var body string
	f := &fakeStore{hook: func(w http.ResponseWriter, r *http.Request, b string) bool {
		if r.Method == http.MethodPut {
			if puts.Add(1) == 1 {
				http.Error(w, "busy", http.StatusServiceUnavailable) // retried
				return true
			}
			body = b
		}
		return false
	}}
	base := newFake(t, f)
	s := openStore(t, "generic-gsp", base+"/rdf-graph-store", loader.Options{RetryBackoff: time.Millisecond})
	n, err := replaceN(context.Background(), s, "http://ex/g", 25, "")
	if err != nil || n != 25 {
		t.Fatalf("ReplaceGraph = %d, %v", n, err)
	}
	if puts.Load() != 2 || strings.Count(body, "\n") != 25 {
		t.Errorf("%d PUTs, last with %d lines; want 2 PUTs of 25 lines", puts.Load(), strings.Count(body, "\n"))
	}
}

func TestRetryPolicy(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		failures  int32
		wantCalls int32
		wantErr   bool
	}{
		{"503 twice then ok", 503, 2, 3, false},
		{"429 once then ok", 429, 1, 2, false},
		{"400 is final", 400, 1, 1, true},
		{"500 beyond retries", 500, 100, 4, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			f := &fakeStore{hook: func(w http.ResponseWriter, r *http.Request, _ string) bool {
				if r.URL.Query().Has("graph") && r.Method == http.MethodPost {
					if calls.Add(1) <= tt.failures {
						http.Error(w, "nope", tt.status)
						return true
					}
				}
				return false
			}}
			s := openStore(t, "oxigraph", newFake(t, f), loader.Options{MaxTransaction: -1, Retries: 3, RetryBackoff: time.Millisecond})
			_, err := replaceN(context.Background(), s, "http://ex/g", 5, "")
			if (err != nil) != tt.wantErr || calls.Load() != tt.wantCalls {
				t.Errorf("err = %v after %d calls; want error %v after %d", err, calls.Load(), tt.wantErr, tt.wantCalls)
			}
			if tt.wantErr {
				var se *sparqlq.StatusError
				if !errors.As(err, &se) || se.StatusCode != tt.status {
					t.Errorf("err = %v; want status %d", err, tt.status)
				}
				// The temporary graph was dropped.
				if last := f.updates[len(f.updates)-1]; !strings.HasPrefix(last, "DROP SILENT GRAPH <http://ex/g#kgrag-tmp-") {
					t.Errorf("last update = %q; want the temporary graph dropped", last)
				}
			}
		})
	}
}

// TestCommitLostAnswer: the commit runs but its answer is lost; the store
// must notice that the temporary graph is gone and report success.
func TestCommitLostAnswer(t *testing.T) {
	var commits atomic.Int32
	f := &fakeStore{askAnswer: false}
	f.hook = func(w http.ResponseWriter, r *http.Request, body string) bool {
		if strings.Contains(body, "MOVE") && commits.Add(1) == 1 {
			// The store runs the swap (and so writes the load's mark),
			// and the answer is lost.
			f.lockRequest(w, r, body)
			hj, _ := w.(http.Hijacker)
			c, _, _ := hj.Hijack()
			c.Close()
			return true
		}
		return false
	}
	s := openStore(t, "oxigraph", newFake(t, f), loader.Options{MaxTransaction: -1, RetryBackoff: time.Millisecond})
	if _, err := replaceN(context.Background(), s, "http://ex/g", 5, ""); err != nil {
		t.Fatalf("ReplaceGraph: %v", err)
	}
	if commits.Load() != 1 {
		t.Errorf("commit sent %d times; want 1 (the commit mark shows it happened)", commits.Load())
	}
}

// TestCommitOutlastsRequest: the store runs the swap for longer than a
// request may take and commits after the client gave up waiting. The swap
// must not be sent again (a second MOVE of the temporary graph, gone by
// then, would empty the graph): the load watches for the commit mark and
// succeeds.
func TestCommitOutlastsRequest(t *testing.T) {
	var commits atomic.Int32
	f := &fakeStore{}
	f.hook = func(w http.ResponseWriter, r *http.Request, body string) bool {
		if strings.Contains(body, "MOVE") {
			commits.Add(1)
			time.Sleep(600 * time.Millisecond) // past the client's timeout
			f.lockRequest(w, r, body)          // commits, mark and all
			return true
		}
		return false
	}
	s := openStore(t, "oxigraph", newFake(t, f), loader.Options{MaxTransaction: -1, Timeout: 200 * time.Millisecond,
		RetryBackoff: time.Millisecond})
	if _, err := replaceN(context.Background(), s, "http://ex/g", 5, ""); err != nil {
		t.Fatalf("ReplaceGraph: %v", err)
	}
	if n := commits.Load(); n != 1 {
		t.Errorf("commit sent %d times; want 1 (it was still running when the request timed out)", n)
	}
}

func TestFillErrorNoRequests(t *testing.T) {
	f := &fakeStore{}
	s := openStore(t, "oxigraph", newFake(t, f), loader.Options{MaxTransaction: -1, BatchSize: 100})
	boom := errors.New("boom")
	_, err := s.ReplaceGraph(context.Background(), "http://ex/g", func(w rdf.Writer) error {
		if err := storetest.Write(w, 10, ""); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "previous graph is unchanged") {
		t.Errorf("err = %v", err)
	}
	if len(f.gsp)+len(f.updates) != 0 {
		t.Errorf("requests sent for an unsent batch: %q %q", f.gsp, f.updates)
	}
}

func TestBadGraphIRI(t *testing.T) {
	s := openStore(t, "oxigraph", "http://127.0.0.1:1", loader.Options{MaxTransaction: -1})
	for _, g := range []string{"", "http://ex/a b", "http://ex/>; DROP ALL; <x"} {
		if _, err := replaceN(context.Background(), s, g, 1, ""); err == nil {
			t.Errorf("ReplaceGraph(%q): no error", g)
		}
		if err := s.Drop(context.Background(), g); err == nil {
			t.Errorf("Drop(%q): no error", g)
		}
	}
}

func TestErrorHidesSecrets(t *testing.T) {
	f := &fakeStore{hook: func(w http.ResponseWriter, r *http.Request, _ string) bool {
		http.Error(w, "denied", http.StatusForbidden)
		return true
	}}
	base := strings.Replace(newFake(t, f), "http://", "http://user:hunter2@", 1)
	s := openStore(t, "oxigraph", base, loader.Options{MaxTransaction: -1, Auth: sparqlq.BearerAuth("tok-secret")})
	_, err := replaceN(context.Background(), s, "http://ex/g", 3, "")
	if err == nil {
		t.Fatal("no error")
	}
	for _, secret := range []string{"hunter2", "tok-secret"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error %q shows %q", err, secret)
		}
	}
	if !strings.Contains(err.Error(), "HTTP 403") {
		t.Errorf("error %q does not give the status", err)
	}
}

// TestLoadInPlace: asked for batches, the graph is dropped, batches go
// straight into it with the bulk parameter, and a failure says the graph
// is incomplete.
func TestLoadInPlace(t *testing.T) {
	var posts atomic.Int64
	var bulk atomic.Bool
	f := &fakeStore{}
	f.hook = func(w http.ResponseWriter, r *http.Request, body string) bool {
		if r.Method != http.MethodPost || !r.URL.Query().Has("graph") {
			return false
		}
		if r.URL.Query().Get("graph") != "http://ex/g" {
			t.Errorf("POST to graph %q; want http://ex/g itself", r.URL.Query().Get("graph"))
		}
		bulk.Store(r.URL.Query().Has("no_transaction"))
		if posts.Add(1) == 3 {
			w.WriteHeader(http.StatusBadRequest) // not transient: no retry
			return true
		}
		w.WriteHeader(http.StatusNoContent)
		return true
	}
	s := openStore(t, "oxigraph", newFake(t, f), loader.Options{MaxTransaction: -1, BatchSize: 3, Retries: -1, Upload: loader.UploadBatches})
	_, err := s.LoadInPlace(context.Background(), "http://ex/g", func(w rdf.Writer) error {
		return storetest.Write(w, 10, "")
	})
	if err == nil || !strings.Contains(err.Error(), "incomplete (6 triples sent") {
		t.Fatalf("LoadInPlace = %v; want an error saying the graph is incomplete after 6 triples", err)
	}
	if !bulk.Load() {
		t.Error("POSTs lack Oxigraph's no_transaction parameter")
	}
	if len(f.gsp) != 1 || !strings.HasPrefix(f.gsp[0], "DELETE http://ex/g") {
		if len(f.updates) != 1 || !strings.Contains(f.updates[0], "DROP SILENT GRAPH <http://ex/g>") {
			t.Errorf("graph not dropped first: GSP %q, updates %q", f.gsp, f.updates)
		}
	}
}

// TestVirtuosoTransactionLimit: Virtuoso's SR325 is not retried and the
// message says which setting to raise.
func TestVirtuosoTransactionLimit(t *testing.T) {
	var commits atomic.Int64
	// The temporary graph is still there after the refused MOVE.
	f := &fakeStore{askAnswer: true}
	f.hook = func(w http.ResponseWriter, r *http.Request, body string) bool {
		if strings.Contains(body, "MOVE") {
			commits.Add(1)
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, "Virtuoso 40001 Error SR325: Transaction aborted because it's log after image size went above the limit")
			return true
		}
		return false
	}
	s := openStore(t, "virtuoso", newFake(t, f), loader.Options{BatchSize: 5, RetryBackoff: time.Millisecond})
	_, err := replaceN(context.Background(), s, "http://ex/g", 7, "")
	if err == nil || !strings.Contains(err.Error(), "TransactionAfterImageLimit") {
		t.Fatalf("ReplaceGraph = %v; want a hint naming TransactionAfterImageLimit", err)
	}
	if n := commits.Load(); n != 1 {
		t.Errorf("commit sent %d times; want 1 (SR325 is not transient)", n)
	}
}

// TestFusekiHeap: Fuseki out of heap in the swap (the answer a 2 GB heap
// gave at 6.8 M triples) is not retried, and the message names what
// fits: more heap, or the streamed PUT.
func TestFusekiHeap(t *testing.T) {
	var commits atomic.Int64
	f := &fakeStore{askAnswer: true}
	f.hook = func(w http.ResponseWriter, r *http.Request, body string) bool {
		if strings.Contains(body, "INSERT") && strings.Contains(body, "WHERE") {
			commits.Add(1)
			http.Error(w, "Java heap space", http.StatusBadRequest)
			return true
		}
		return false
	}
	s := openStore(t, "fuseki", newFake(t, f)+"/ds", loader.Options{BatchSize: 5, RetryBackoff: time.Millisecond})
	_, err := replaceN(context.Background(), s, "http://ex/g", 7, "")
	if err == nil || !strings.Contains(err.Error(), "ran out of Java heap") || !strings.Contains(err.Error(), "--upload stream") {
		t.Fatalf("ReplaceGraph = %v; want a hint naming the heap and --upload stream", err)
	}
	if n := commits.Load(); n != 1 {
		t.Errorf("commit sent %d times; want 1", n)
	}
}

// TestConcurrentBatches: with ConcurrentBatches n, n batch requests are in
// flight together (never more; zero is the virtuoso profile's 2), every
// triple lands once, and a failure reports as sent exactly the triples the
// store accepted.
func TestConcurrentBatches(t *testing.T) {
	tests := []struct {
		name   string
		n      int
		failAt int64 // the POST that is refused (0: none)
	}{
		{"one", 1, 0},
		{"the profile's", 0, 0},
		{"three", 3, 0},
		{"three, one refused", 3, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := cmp.Or(tt.n, 2)
			var (
				mu       sync.Mutex
				lines    = map[string]int{}
				accepted int
				inFlight int
				maxIn    int
				posts    atomic.Int64
				full     = make(chan struct{})
				fullOnce sync.Once
			)
			f := &fakeStore{}
			f.hook = func(w http.ResponseWriter, r *http.Request, body string) bool {
				if r.Method != http.MethodPost || !r.URL.Query().Has("graph") {
					return false
				}
				nth := posts.Add(1)
				mu.Lock()
				inFlight++
				maxIn = max(maxIn, inFlight)
				if inFlight == want {
					fullOnce.Do(func() { close(full) })
				}
				mu.Unlock()
				// Hold the first requests until n are in flight, so a
				// sender that waits for the one before it shows as 1.
				select {
				case <-full:
				case <-time.After(2 * time.Second):
				}
				mu.Lock()
				defer mu.Unlock()
				inFlight--
				if nth == tt.failAt {
					w.WriteHeader(http.StatusBadRequest) // not transient: no retry
					return true
				}
				for l := range strings.Lines(body) {
					lines[l]++
					accepted++
				}
				w.WriteHeader(http.StatusNoContent)
				return true
			}
			var progress atomic.Int64
			s := openStore(t, "virtuoso", newFake(t, f), loader.Options{BatchSize: 2, ConcurrentBatches: tt.n,
				Retries: -1, Counter: loader.CounterFunc(func(n int64) { progress.Add(n) })})
			const triples = 20
			got, err := s.LoadInPlace(context.Background(), "http://ex/g", func(w rdf.Writer) error {
				return storetest.Write(w, triples, "")
			})
			mu.Lock()
			defer mu.Unlock()
			if maxIn != want {
				t.Errorf("at most %d requests in flight; want %d", maxIn, want)
			}
			if tt.failAt != 0 {
				want := fmt.Sprintf("incomplete (%d triples sent", accepted)
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("LoadInPlace = %v; want an error with %q", err, want)
				}
				if progress.Load() != int64(accepted) {
					t.Errorf("progress = %d; the store took %d", progress.Load(), accepted)
				}
				return
			}
			if err != nil || got != triples {
				t.Fatalf("LoadInPlace = %d, %v; want %d", got, err, triples)
			}
			if len(lines) != triples || accepted != triples {
				t.Errorf("store got %d lines, %d distinct; want %d once each", accepted, len(lines), triples)
			}
			if progress.Load() != triples {
				t.Errorf("progress = %d; want %d", progress.Load(), triples)
			}
		})
	}
}

// TestConcurrentBatchesFirstFailure: two batches in flight both fail, the
// later one answered last; the error names the earlier batch, as a serial
// upload would.
func TestConcurrentBatchesFirstFailure(t *testing.T) {
	// With two triples a batch, triple 4 opens batch 3 and triple 6 batch 4.
	third := fmt.Sprintf("<%se/0> <%sp/4>", storetest.Base, storetest.Base)
	fourth := fmt.Sprintf("<%se/0> <%sp/6>", storetest.Base, storetest.Base)
	arrived4 := make(chan struct{})
	answered3 := make(chan struct{})
	f := &fakeStore{}
	f.hook = func(w http.ResponseWriter, r *http.Request, body string) bool {
		if r.Method != http.MethodPost || !r.URL.Query().Has("graph") {
			return false
		}
		switch {
		case strings.Contains(body, third):
			select {
			case <-arrived4:
			case <-time.After(5 * time.Second):
			}
			w.WriteHeader(http.StatusBadRequest)
			close(answered3)
		case strings.Contains(body, fourth):
			close(arrived4)
			<-answered3
			time.Sleep(100 * time.Millisecond) // let the client take batch 3's answer first
			w.WriteHeader(http.StatusBadRequest)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
		return true
	}
	s := openStore(t, "virtuoso", newFake(t, f), loader.Options{BatchSize: 2, ConcurrentBatches: 2, Retries: -1})
	_, err := s.LoadInPlace(context.Background(), "http://ex/g", func(w rdf.Writer) error {
		return storetest.Write(w, 20, "")
	})
	if err == nil || !strings.Contains(err.Error(), "batch 3 (triples 5-6)") {
		t.Fatalf("LoadInPlace = %v; want the error of batch 3 (triples 5-6)", err)
	}
}

// TestLoadInPlaceStream: on Oxigraph, auto loads in place as one chunked
// POST to the bulk path holding every triple, after the graph is dropped;
// a fill that fails ends the body in what cannot parse, and the error says
// the graph may be empty or incomplete; a refusal gives the status.
func TestLoadInPlaceStream(t *testing.T) {
	const triples = 1000
	boom := errors.New("boom")
	tests := []struct {
		name    string
		status  int   // the store's answer to the POST
		fillErr error // what fill returns after writing the triples
		wantErr string
	}{
		{"whole", http.StatusNoContent, nil, ""},
		{"fill fails", http.StatusBadRequest, boom, "empty or incomplete"},
		{"refused", http.StatusServiceUnavailable, nil, "HTTP 503"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var (
				mu      sync.Mutex
				posts   []string // the bodies
				chunks  bool
				dropped bool // before the POST
			)
			f := &fakeStore{}
			f.hook = func(w http.ResponseWriter, r *http.Request, body string) bool {
				if r.Method != http.MethodPost || !r.URL.Query().Has("graph") {
					return false
				}
				f.mu.Lock()
				for _, u := range f.updates {
					dropped = dropped || strings.Contains(u, "DROP SILENT GRAPH <http://ex/g>")
				}
				f.mu.Unlock()
				mu.Lock()
				defer mu.Unlock()
				if r.URL.Query().Get("graph") != "http://ex/g" || !r.URL.Query().Has("no_transaction") {
					t.Errorf("POST %s; want graph http://ex/g with no_transaction", r.URL.RawQuery)
				}
				posts = append(posts, body)
				chunks = r.ContentLength == -1 && slices.Contains(r.TransferEncoding, "chunked")
				w.WriteHeader(tt.status)
				return true
			}
			var progress atomic.Int64
			s := openStore(t, "oxigraph", newFake(t, f), loader.Options{MaxTransaction: -1, BatchSize: 100, Retries: 3, RetryBackoff: time.Millisecond,
				Counter: loader.CounterFunc(func(n int64) { progress.Add(n) })})
			got, err := s.LoadInPlace(context.Background(), "http://ex/g", func(w rdf.Writer) error {
				if err := storetest.Write(w, triples, ""); err != nil {
					return err
				}
				return tt.fillErr
			})
			mu.Lock()
			defer mu.Unlock()
			// A fill that fails at once may close the body before the
			// transport has sent the request: then nothing reached the
			// store, which is as good. Never more than one: no retry.
			if len(posts) == 0 && tt.fillErr != nil {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("LoadInPlace = %v; want an error with %q", err, tt.wantErr)
				}
				return
			}
			if len(posts) != 1 {
				t.Fatalf("%d POSTs; want one (no retry of a streamed body)", len(posts))
			}
			if !chunks {
				t.Error("the POST is not chunked")
			}
			if !dropped {
				t.Errorf("updates %q; want the graph dropped before the POST", f.updates)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("LoadInPlace = %v; want an error with %q", err, tt.wantErr)
				}
				if tt.fillErr != nil && !strings.HasSuffix(posts[0], "<urn:kgrag:upload-aborted") {
					t.Errorf("the body of a failed fill ends %q; want the abort fragment", posts[0][max(len(posts[0])-40, 0):])
				}
				return
			}
			if err != nil || got != triples {
				t.Fatalf("LoadInPlace = %d, %v; want %d", got, err, triples)
			}
			if ts, err := loader.ParseNTriples([]byte(posts[0])); err != nil || len(ts) != triples {
				t.Errorf("the body holds %d triples (%v); want %d", len(ts), err, triples)
			}
			if progress.Load() != triples {
				t.Errorf("progress = %d; want %d", progress.Load(), triples)
			}
		})
	}
}
