package llm_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
)

func TestRerank(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{})
	c, err := llm.New(llm.Config{BaseURL: srv.URL(), APIKey: "sk-rerank-secret"})
	if err != nil {
		t.Fatal(err)
	}
	docs := []string{"Jane Roe founded Acme.", "Acme makes widgets.", "Nothing here."}
	q := "Who founded Acme?"
	got, err := c.Rerank(t.Context(), "test-reranker", q, docs)
	if err != nil {
		t.Fatal(err)
	}
	var want []float64
	for _, d := range docs {
		want = append(want, llmtest.Rerank(q, d))
	}
	if !slices.Equal(got, want) {
		t.Errorf("Rerank = %v; want %v (in the documents' order, though the server answers best first)", got, want)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || !strings.HasSuffix(reqs[0].Path, "/rerank") || reqs[0].Model != "test-reranker" || reqs[0].Extra["query"] != q {
		t.Errorf("requests = %+v; want one to /rerank with the model and query", reqs)
	}
	if got, err := c.Rerank(t.Context(), "test-reranker", q, nil); err != nil || got != nil {
		t.Errorf("Rerank of no documents = %v, %v; want nothing and no call", got, err)
	}
	if _, err := c.Rerank(t.Context(), "", q, docs); err == nil || !strings.Contains(err.Error(), "--rerank-model") {
		t.Errorf("no model: %v; want a hint to --rerank-model", err)
	}
}

// TestRerankErrors: a server without the endpoint, with a proxy's HTML
// page, or with a malformed answer fails with a short, typed error that
// never holds the key.
func TestRerankErrors(t *testing.T) {
	page := "<html><body>" + strings.Repeat("Not Found. ", 100) + "</body></html>"
	tests := []struct {
		name   string
		status int
		body   string
		kind   error
		want   string
	}{
		{"no endpoint", http.StatusNotFound, page, llm.ErrRequest, "with reranking on"},
		{"server error", http.StatusInternalServerError, `{"error": "out of memory"}`, llm.ErrServer, "out of memory"},
		{"index out of range", http.StatusOK, `{"results": [{"index": 5, "relevance_score": 1}]}`, llm.ErrServer, "out of range"},
		{"too few", http.StatusOK, `{"results": [{"index": 0, "relevance_score": 1}]}`, llm.ErrServer, "1 scores for 2 documents"},
		{"not json", http.StatusOK, `<html>`, llm.ErrServer, "not a rerank result"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			}))
			defer hs.Close()
			c, err := llm.New(llm.Config{BaseURL: hs.URL + "/v1", APIKey: "sk-rerank-secret"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Rerank(t.Context(), "m", "q", []string{"a", "b"})
			var e *llm.Error
			if !errors.As(err, &e) || !errors.Is(e.Kind, tt.kind) {
				t.Fatalf("Rerank: %v; want an *llm.Error of kind %v", err, tt.kind)
			}
			msg := err.Error() + " " + e.Hint
			if !strings.Contains(msg, tt.want) || strings.Contains(msg, "sk-rerank-secret") || len(err.Error()) > 500 {
				t.Errorf("error %q (hint %q); want %q in it, short, without the key", err, e.Hint, tt.want)
			}
		})
	}
}
