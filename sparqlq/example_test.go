package sparqlq_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/kgrag/kgrag/sparqlq"
)

func ExampleClient_Select() {
	// A stand-in store; use the store's query endpoint instead.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/sparql-results+json")
		io.WriteString(w, `{"head":{"vars":["n"]},"results":{"bindings":[
			{"n":{"type":"typed-literal","datatype":"http://www.w3.org/2001/XMLSchema#integer","value":"3"}}]}}`)
	}))
	defer srv.Close()

	c, err := sparqlq.New(sparqlq.Config{QueryURL: srv.URL + "/sparql", Timeout: 10 * time.Second})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := c.Select(context.Background(), "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")
	if err != nil {
		fmt.Println(err)
		return
	}
	n, _ := res.Bindings[0]["n"].Int()
	fmt.Println(n)
	// Output: 3
}

func ExampleClient_Update() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()

	c, err := sparqlq.New(sparqlq.Config{
		UpdateURL:    srv.URL + "/sparql",
		UpdateMethod: sparqlq.MethodPOSTForm, // Virtuoso wants form posts
		Auth:         sparqlq.DigestAuth("kgrag", "secret"),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	g, _ := sparqlq.IRIRef("http://example.org/graph")
	err = c.Update(context.Background(), "INSERT DATA { GRAPH "+g+" { <urn:a> <urn:b> "+sparqlq.Literal("c")+" } }")
	fmt.Println(err)
	// Output: <nil>
}
