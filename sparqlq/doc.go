// Package sparqlq is a SPARQL 1.1 Protocol client built on net/http only.
//
// A Client sends queries and updates to one store: SELECT and ASK results are
// read from SPARQL JSON or XML results (Virtuoso's "typed-literal" is mapped
// to "literal"), updates go as a direct POST or a form POST, and any request
// can carry basic, digest (RFC 7616) or bearer credentials. A non-2xx answer
// comes back as *StatusError; credentials never appear in errors.
//
// Usage:
//
//	c, err := sparqlq.New(sparqlq.Config{
//		QueryURL:  "http://127.0.0.1:3030/ds/query",
//		UpdateURL: "http://127.0.0.1:3030/ds/update",
//		Auth:      sparqlq.BasicAuth("admin", os.Getenv("PW")),
//		Timeout:   30 * time.Second,
//	})
//	if err != nil {
//		return err
//	}
//	res, err := c.Select(ctx, "SELECT ?s WHERE { ?s ?p ?o } LIMIT 10")
//	if err != nil {
//		return err
//	}
//	for _, row := range res.Bindings {
//		fmt.Println(row["s"].Value)
//	}
//	err = c.Update(ctx, `INSERT DATA { <urn:a> <urn:b> "c" }`)
//
// Queries and updates are strings; callers escape the terms they splice in
// (see IRIRef and Literal).
package sparqlq
