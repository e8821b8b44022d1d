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

func ExampleParseTemplate() {
	tpl, err := sparqlq.ParseTemplate("titles", `# Titles of entities by id.
# param graph iri optional
# param ids strings values
# param limit integer
PREFIX gr: <http://ormynet.com/ns/msft-graphrag#>
SELECT ?id ?title
FROM {{graph}}
WHERE { VALUES ?id { {{ids}} } ?e gr:id ?id ; gr:title ?title }
LIMIT {{limit}}
`)
	if err != nil {
		fmt.Println(err)
		return
	}
	q, err := tpl.Bind(sparqlq.Params{
		"ids":   sparqlq.StringsParam([]string{"e1", `" } ; DROP ALL ; #`}),
		"limit": sparqlq.IntParam(10),
	})
	fmt.Print(q)
	fmt.Println(err)

	_, err = tpl.Bind(sparqlq.Params{"ids": sparqlq.StringParam("e1"), "limit": sparqlq.IntParam(10)})
	fmt.Println(err)
	// Output:
	// PREFIX gr: <http://ormynet.com/ns/msft-graphrag#>
	// SELECT ?id ?title
	// WHERE { VALUES ?id { "e1" "\" } ; DROP ALL ; #" } ?e gr:id ?id ; gr:title ?title }
	// LIMIT 10
	// <nil>
	// sparqlq: template titles: parameter ids: wrong parameter kind: got string, want strings
}

func ExampleEntities() {
	// A stand-in store; use the store's query endpoint instead.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/sparql-results+json")
		io.WriteString(w, `{"head":{"vars":["id","title","degree"]},"results":{"bindings":[
			{"id":{"type":"literal","value":"e1"},"title":{"type":"literal","value":"SCROOGE"},
			 "degree":{"type":"literal","datatype":"http://www.w3.org/2001/XMLSchema#integer","value":"148"}}]}}`)
	}))
	defer srv.Close()

	c, err := sparqlq.New(sparqlq.Config{QueryURL: srv.URL + "/sparql"})
	if err != nil {
		fmt.Println(err)
		return
	}
	ents, err := sparqlq.Entities(context.Background(), c, "http://example.org/graph", []string{"e1", "e2"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range ents {
		fmt.Println(e.ID, e.Title, e.Degree)
	}
	// Output: e1 SCROOGE 148
}
