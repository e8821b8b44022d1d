package sparqlq_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kgrag/kgrag/sparqlq"
)

const askTrue = `{"head":{},"boolean":true}`

// replica is a query endpoint that answers as told and counts queries.
type replica struct {
	srv    *httptest.Server
	status atomic.Int32 // 0 or 200: answers; else this status
	hits   atomic.Int32
}

func newReplica(t *testing.T) *replica {
	r := &replica{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.hits.Add(1)
		if s := r.status.Load(); s != 0 && s != 200 {
			http.Error(w, "replica says no", int(s))
			return
		}
		w.Header().Set("Content-Type", "application/sparql-results+json")
		io.WriteString(w, askTrue)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// deadURL is an endpoint nothing listens at.
func deadURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://user:hunter2@" + l.Addr().String() + "/sparql"
	l.Close()
	return u
}

func TestReplicasFailOver(t *testing.T) {
	tests := []struct {
		name      string
		firstDown func(t *testing.T, r *replica) string // returns the first endpoint
		wantMove  bool
		wantErr   string // with every replica down
	}{
		{"refused", func(t *testing.T, r *replica) string { return deadURL(t) }, true, ""},
		{"503", func(t *testing.T, r *replica) string { r.status.Store(503); return r.srv.URL }, true, ""},
		{"502", func(t *testing.T, r *replica) string { r.status.Store(502); return r.srv.URL }, true, ""},
		{"400 is the query's", func(t *testing.T, r *replica) string { r.status.Store(400); return r.srv.URL }, false, "400"},
		{"500 is the query's", func(t *testing.T, r *replica) string { r.status.Store(500); return r.srv.URL }, false, "500"},
		{"up", func(t *testing.T, r *replica) string { return r.srv.URL }, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first, second := newReplica(t), newReplica(t)
			c, err := sparqlq.New(sparqlq.Config{QueryURL: tt.firstDown(t, first), Replicas: []string{second.srv.URL}})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				ok, err := c.Ask(context.Background(), "ASK {}")
				if tt.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
						t.Fatalf("query %d: err %v, want one with %q and no move", i, err, tt.wantErr)
					}
					continue
				}
				if err != nil || !ok {
					t.Fatalf("query %d: %v, %v", i, ok, err)
				}
			}
			if got := c.Moves() > 0; got != tt.wantMove {
				t.Fatalf("moved %d times, want a move: %v", c.Moves(), tt.wantMove)
			}
			if tt.wantMove {
				// Sticky: one failed attempt at the first, then all three
				// at the second.
				if got := second.hits.Load(); got != 3 {
					t.Errorf("second replica got %d queries, want 3", got)
				}
				if c.QueryURL() != second.srv.URL {
					t.Errorf("QueryURL = %s, want the second replica", c.QueryURL())
				}
				if c.Moves() != 1 {
					t.Errorf("Moves = %d, want 1", c.Moves())
				}
			} else if second.hits.Load() != 0 {
				t.Errorf("the second replica got %d queries, want none", second.hits.Load())
			}
		})
	}
}

func TestReplicasAllDown(t *testing.T) {
	a, b := deadURL(t), newReplica(t)
	b.status.Store(503)
	c, err := sparqlq.New(sparqlq.Config{QueryURL: a, Replicas: []string{b.srv.URL}, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Ask(context.Background(), "ASK {}")
	if err == nil {
		t.Fatal("no error with every replica down")
	}
	msg := err.Error()
	// Every endpoint named, none with its password.
	for _, want := range []string{"none of the 2 replicas answered", strings.TrimPrefix(a, "http://user:hunter2@"), b.srv.URL, "503"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not name %q", msg, want)
		}
	}
	if strings.Contains(msg, "hunter2") {
		t.Errorf("error shows the password: %s", msg)
	}
}

func TestReplicasUpdateStays(t *testing.T) {
	up := newReplica(t)
	c, err := sparqlq.New(sparqlq.Config{QueryURL: up.srv.URL, UpdateURL: deadURL(t), Replicas: []string{up.srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Update(context.Background(), "INSERT DATA {}"); err == nil {
		t.Fatal("an update to a dead endpoint succeeded")
	}
	if up.hits.Load() != 0 {
		t.Fatalf("the update went to a replica (%d requests)", up.hits.Load())
	}
}

func TestReplicasCallerCancels(t *testing.T) {
	second := newReplica(t)
	c, err := sparqlq.New(sparqlq.Config{QueryURL: deadURL(t), Replicas: []string{second.srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Ask(ctx, "ASK {}"); err == nil {
		t.Fatal("a cancelled query succeeded")
	}
	if second.hits.Load() != 0 || c.Moves() != 0 {
		t.Fatalf("a cancelled query moved to a replica")
	}
}
