package loader

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"

	"github.com/kgrag/kgrag/sparqlq"
)

// TestFillAgain: a failed bulk fill of an empty graph is sent again only
// when the store cannot have added it (refused with a status worth a
// retry, or failed before the whole body went) and the graph is still
// empty; never after an input failure, an interrupt, or a whole body
// without an answer, which the store may still be adding.
func TestFillAgain(t *testing.T) {
	count := "0"
	// A store whose graph holds count triples, asked by COUNT or by ASK.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		w.Header().Set("Content-Type", "application/sparql-results+json")
		if strings.Contains(r.Form.Get("query"), "ASK") {
			fmt.Fprintf(w, `{"boolean":%v}`, count != "0")
			return
		}
		fmt.Fprintf(w, `{"head":{"vars":["n"]},"results":{"bindings":[{"n":{"type":"literal","datatype":"http://www.w3.org/2001/XMLSchema#integer","value":%q}}]}}`, count)
	}))
	t.Cleanup(srv.Close)
	p, err := ProfileFor("oxigraph", srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(p, Options{Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	busy := &sparqlq.StatusError{StatusCode: http.StatusServiceUnavailable}
	bad := &sparqlq.StatusError{StatusCode: http.StatusBadRequest}
	refused := fmt.Errorf("post: %w", syscall.ECONNREFUSED)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name  string
		ctx   context.Context
		r     *streamResult
		count string
		want  bool
	}{
		{"store busy, graph empty", context.Background(), &streamResult{sendErr: busy, complete: true}, "0", true},
		{"connection refused mid-body", context.Background(), &streamResult{sendErr: refused}, "0", true},
		{"store busy, graph not empty", context.Background(), &streamResult{sendErr: busy, complete: true}, "7", false},
		{"store refused the body for good", context.Background(), &streamResult{sendErr: bad, complete: true}, "0", false},
		{"whole body, no answer", context.Background(), &streamResult{sendErr: refused, complete: true}, "0", false},
		{"the input failed", context.Background(), &streamResult{fillErr: errors.New("bad row")}, "0", false},
		{"interrupted", cancelled, &streamResult{sendErr: refused}, "0", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			count = tt.count
			if got := s.fillAgain(tt.ctx, "http://ex/g", tt.r); got != tt.want {
				t.Errorf("fillAgain = %v; want %v", got, tt.want)
			}
		})
	}
}
