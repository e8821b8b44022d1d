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
// Queries and updates are strings. Build them from templates rather than by
// splicing in text; where a term must be written by hand, escape it with
// IRIRef or Literal.
//
// # Query templates
//
// A Template is a SPARQL text with typed placeholders; kgrag's own live in
// queries/*.rq, embedded in the binary (LoadTemplate, TemplateNames), and
// ParseTemplate reads others. A template opens with comment lines that
// document it and declare its parameters, one per line:
//
//	# Entities by GraphRAG id.
//	# param graph iri optional
//	# param ids strings values
//	# param limit integer
//	SELECT ?id ?title
//	FROM {{graph}}
//	WHERE { VALUES ?id { {{ids}} } ?e gr:id ?id ; gr:title ?title }
//	LIMIT {{limit}}
//
// The kinds are iri, string, integer and decimal, and the list kinds iris,
// strings and integers, which are marked values and may only fill the data
// block of a one-variable VALUES. Values are built with typed constructors
// (IRIParam, StringParam, IntParam, DecimalParam, IRIsParam, StringsParam,
// IntsParam) and written by one function per kind when bound: IRIs by
// IRIRef (which refuses any character that could leave the brackets),
// strings by Literal, numbers by strconv. So a value can only ever be one
// term (or one VALUES row each), whatever text it holds:
//
//	tpl, err := sparqlq.LoadTemplate("entities")
//	q, err := tpl.Bind(sparqlq.Params{
//		"graph": sparqlq.IRIParam(graph),
//		"ids":   sparqlq.StringsParam(ids),
//	})
//	res, err := c.Select(ctx, q) // or c.SelectTemplate(ctx, tpl, params)
//
// A placeholder must stand alone as a term (not inside quotes or <>), "{{"
// may appear only in a placeholder, every placeholder must be declared and
// every declaration used: ParseTemplate fails otherwise, and a test parses
// every embedded template. A line that uses an optional parameter is left
// out when it is not bound (FROM {{graph}} then reads the default graph).
// Bind fails for an undeclared parameter, a value of the wrong kind, a
// missing required parameter or an unwritable value (a bad IRI, NaN). All
// these errors are *TemplateError, naming the template, the parameter and,
// for parse errors, the line; they wrap ErrTemplateSyntax, ErrUndeclared,
// ErrKind, ErrMissing or ErrValue.
//
// # GraphRAG retrieval
//
// Entities, Relationships, TextUnits, Communities and CommunityReports run
// the embedded templates over a GraphRAG graph in the gr: ontology and
// return typed rows. Each is one request, however many entity ids it gets
// (they go in one VALUES block), and orders its rows with tie-breakers on
// ids, so Oxigraph, Fuseki and Virtuoso return the same rows in the same
// order:
//
//	ents, err := sparqlq.Entities(ctx, c, graph, ids)
//	inside, outside, err := sparqlq.Relationships(ctx, c, graph, ids)
//	units, err := sparqlq.TextUnits(ctx, c, graph, ids, 0)
//	comms, err := sparqlq.Communities(ctx, c, graph, ids, 1, 0)
//	reports, err := sparqlq.CommunityReports(ctx, c, graph, 0, 0)
package sparqlq
