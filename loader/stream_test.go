package loader_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kgrag/kgrag/loader"
	"github.com/kgrag/kgrag/loader/storetest"
	"github.com/kgrag/kgrag/rdf"
	"github.com/kgrag/kgrag/sparqlq"
)

// streamSeen is what the fake store saw of one streamed PUT.
type streamSeen struct {
	method, contentType string
	chunked             bool
	lines               int
	err                 error // from reading the body
	body                []byte
}

// streamServer is a Graph Store Protocol endpoint that reads each PUT's
// body line by line and hands what it saw to seen; answer says what to do
// after line k (0: read to the end and answer 201).
func streamServer(t *testing.T, answer func(w http.ResponseWriter, line int) bool) (*loader.SPARQLStore, chan streamSeen) {
	seen := make(chan streamSeen, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := streamSeen{method: r.Method, contentType: r.Header.Get("Content-Type"),
			chunked: len(r.TransferEncoding) == 1 && r.TransferEncoding[0] == "chunked"}
		defer func() { seen <- s }()
		br := bufio.NewReader(r.Body)
		for {
			line, err := br.ReadString('\n')
			s.body = append(s.body, line...)
			if err == io.EOF {
				break
			}
			if err != nil {
				s.err = err
				return
			}
			s.lines++
			if answer != nil && answer(w, s.lines) {
				return
			}
		}
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(srv.Close)
	return openStreamStore(t, srv.URL, 0), seen
}

// openStreamStore opens a store with an update endpoint and a Graph Store
// Protocol endpoint but no query endpoint (so no lock) that streams.
func openStreamStore(t *testing.T, base string, timeout time.Duration) *loader.SPARQLStore {
	t.Helper()
	p := loader.Profile{Name: "stream-test", UpdateURL: base + "/update", GraphStoreURL: base + "/data",
		Caps: loader.Capabilities{Update: true, GraphStore: true}}
	s, err := loader.Open(p, loader.Options{Upload: loader.UploadStream, Timeout: timeout, BatchSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestStreamHTTP checks, on the wire, what the streamed upload's atomicity
// rests on: the triples go as one chunked PUT, and when fill fails or the
// caller cancels, the store sees the body break off (an error reading it,
// never a clean end), and what it got of the body does not parse, since
// Fuseki takes a broken-off body for a whole one (TestStreamBrokenOff).
func TestStreamHTTP(t *testing.T) {
	errFill := errors.New("fill failed")
	const n = 30_000
	tests := []struct {
		name     string
		fill     func(cancel context.CancelFunc) func(rdf.Writer) error
		wantErr  error
		wantRead bool // the store reads the whole body
	}{
		{"Whole", func(context.CancelFunc) func(rdf.Writer) error {
			return func(w rdf.Writer) error { return storetest.Write(w, n, "") }
		}, nil, true},
		{"FillErrorAtOnce", func(context.CancelFunc) func(rdf.Writer) error {
			return func(w rdf.Writer) error { return errFill }
		}, errFill, false},
		{"FillError", func(context.CancelFunc) func(rdf.Writer) error {
			return func(w rdf.Writer) error {
				if err := storetest.Write(w, n/2, ""); err != nil {
					return err
				}
				return errFill
			}
		}, errFill, false},
		{"Canceled", func(cancel context.CancelFunc) func(rdf.Writer) error {
			return func(w rdf.Writer) error {
				for i := range n {
					if i == n/3 {
						cancel()
					}
					if err := w.WriteTriple(storetest.Triple(i, "")); err != nil {
						return err
					}
				}
				return nil
			}
		}, context.Canceled, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, seen := streamServer(t, nil)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			got, err := s.ReplaceGraph(ctx, "http://kgrag.test/g", tt.fill(cancel))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v; want %v", err, tt.wantErr)
			}
			var sv streamSeen
			select {
			case sv = <-seen:
			case <-time.After(10 * time.Second):
				t.Fatal("the store saw no request")
			}
			if sv.method != http.MethodPut || sv.contentType != "application/n-triples" || !sv.chunked {
				t.Errorf("request: %s, %q, chunked %v; want a chunked PUT of application/n-triples", sv.method, sv.contentType, sv.chunked)
			}
			if tt.wantRead {
				if sv.err != nil || sv.lines != n || got != n {
					t.Errorf("store read %d lines (err %v), ReplaceGraph said %d; want %d", sv.lines, sv.err, got, n)
				}
				return
			}
			if sv.err == nil {
				t.Errorf("the store read a clean end of the body after %d lines; want the body broken off", sv.lines)
			}
			if ts, perr := loader.ParseNTriples(sv.body); perr == nil {
				t.Errorf("the %d bytes the store got parse as %d whole triples; want a parse error", len(sv.body), len(ts))
			}
			var le *loader.Error
			if !errors.As(err, &le) || !strings.Contains(le.Hint, "previous graph is unchanged") {
				t.Errorf("err = %v; want a *loader.Error saying the previous graph is unchanged", err)
			}
		})
	}
}

// TestStreamEarlyAnswer: a store that refuses the body part-way (400)
// gives its status as the error, not the closed pipe the writer saw.
func TestStreamEarlyAnswer(t *testing.T) {
	s, _ := streamServer(t, func(w http.ResponseWriter, line int) bool {
		if line < 2000 {
			return false
		}
		http.Error(w, "[line: 2000] Bad input", http.StatusBadRequest)
		return true
	})
	_, err := s.ReplaceGraph(context.Background(), "http://kgrag.test/g", func(w rdf.Writer) error { return storetest.Write(w, 200_000, "") })
	var se *sparqlq.StatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusBadRequest {
		t.Fatalf("err = %v; want the 400 *sparqlq.StatusError", err)
	}
	if !strings.Contains(err.Error(), "previous graph is unchanged") {
		t.Errorf("error does not say the previous graph is unchanged: %v", err)
	}
}

// TestStreamStalled: a store that stops taking the body is given up after
// the timeout, with an error that says so.
func TestStreamStalled(t *testing.T) {
	s := openStreamStore(t, stalledServer(t), 300*time.Millisecond)
	start := time.Now()
	_, err := s.ReplaceGraph(context.Background(), "http://kgrag.test/g", func(w rdf.Writer) error { return storetest.Write(w, 500_000, "") })
	if err == nil || !strings.Contains(err.Error(), "no progress") || !strings.Contains(err.Error(), "taken a byte") {
		t.Fatalf("err = %v; want no progress: the store has not taken a byte", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("gave up after %v; want about the 300ms timeout", d)
	}
}

// TestStreamCanceledStalled: the caller cancels while the store takes no
// byte. The request is torn down after the grace, well before the
// watchdog, as context.Canceled, and the error does not claim the old
// graph is safe: the cut can fall anywhere.
func TestStreamCanceledStalled(t *testing.T) {
	s := openStreamStore(t, stalledServer(t), 4*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(500*time.Millisecond, cancel) // the body is stuck by then
	start := time.Now()
	_, err := s.ReplaceGraph(ctx, "http://kgrag.test/g", func(w rdf.Writer) error { return storetest.Write(w, 500_000, "") })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v; want context.Canceled", err)
	}
	var le *loader.Error
	if !errors.As(err, &le) || !strings.Contains(le.Hint, "cut off") || strings.Contains(le.Hint, "is unchanged") {
		t.Errorf("hint %q; want one saying the upload was cut off, not that the graph is unchanged", le.Hint)
	}
	if d := time.Since(start); d > 3500*time.Millisecond {
		t.Errorf("gave up after %v; want about the 0.5 s before the cancel plus the 2 s grace", d)
	}
}

// stalledServer is a store that takes the first 4 KB of a body and then
// nothing until the test ends.
func stalledServer(t *testing.T) string {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.CopyN(io.Discard, r.Body, 4096)
		<-release
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: the handlers return
	return srv.URL
}
