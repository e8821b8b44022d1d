package loader

import (
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/kgrag/kgrag/internal/redact"
	"github.com/kgrag/kgrag/sparqlq"
)

// Capabilities says which SPARQL 1.1 protocols a store offers.
type Capabilities struct {
	// Update: SPARQL 1.1 Update at UpdateURL, including MOVE.
	Update bool
	// GraphStore: the Graph Store HTTP Protocol at GraphStoreURL
	// (?graph=IRI, POST adds, PUT replaces, DELETE drops).
	GraphStore bool
}

// Quirks are the ways a store departs from the protocols.
type Quirks struct {
	// QueryMethod and UpdateMethod say how queries and updates must travel
	// (Virtuoso takes only GET or form POST).
	QueryMethod, UpdateMethod sparqlq.Method
	// AuthSuffix is appended to each endpoint's path when credentials are
	// given (Virtuoso: /sparql-auth, /sparql-graph-crud-auth).
	AuthSuffix string
	// Commit is the update that swaps the temporary graph in.
	Commit CommitStrategy
	// DropByGSP drops graphs with a Graph Store Protocol DELETE instead of
	// DROP SILENT GRAPH (Virtuoso 7: 0.6s instead of 19s for 100k triples).
	DropByGSP bool
	// BulkParam is added to Graph Store Protocol POSTs by LoadInPlace to
	// take the store's bulk path (Oxigraph: no_transaction, which loads
	// 1M triples in ~12s where a transaction takes over a minute).
	BulkParam string
	// StreamPut makes ReplaceGraph (and LoadInPlace) send the whole graph
	// as one Graph Store Protocol PUT, streamed as it is encoded, when
	// Options.Upload leaves the choice to the profile. The store must run a
	// PUT as one transaction and abort it when the body breaks off. Fuseki
	// 5 on TDB2 does, and there it beats batches into a temporary graph
	// and the copy that swaps it in several times over (see docs/performance.md).
	StreamPut bool
	// StreamBulk makes LoadInPlace send the whole graph as one Graph Store
	// Protocol POST to the bulk path (BulkParam), streamed as it is
	// encoded, when Options.Upload leaves the choice to the profile.
	// Oxigraph's bulk loader then works on the body as on a file: 6.8 M
	// triples in 74-81 s (118-134 s of its CPU) against 91-92 s (148-154 s)
	// in batches of 50,000, each a bulk load of its own, and 66 s for
	// oxigraph load; 69 M in 895 s against 2,430 s, and 755 s.
	StreamBulk bool
	// ConcurrentBatches is how many batch requests are in flight at once
	// when Options leave it zero. Virtuoso runs one request on one core,
	// so two cores take two batches at once: 6.8 M triples in place in
	// 92.8 s with 2 against 138.2 s with 1 (88.4 s with 3), same count.
	ConcurrentBatches int
	// TypedLiteral notes that JSON results use "typed-literal" (Virtuoso);
	// sparqlq maps it, so this is informational.
	TypedLiteral bool
	// ReadCommitted notes that readers run at read-committed isolation
	// (Virtuoso's default, DefaultIsolation=2): a query whose scan overlaps
	// the commit of a swap can count part old and part new graph. The swap
	// itself is still one transaction: a failure leaves the old graph.
	ReadCommitted bool
	// LossyReadBack notes that reading a graph back does not give the
	// triples that were loaded (Virtuoso 7 writes xsd:double values with
	// 6 significant digits: 1.6666666666666667E0 comes back as 1.66667),
	// so LoadDiff cannot compare against it and replaces the graph whole.
	LossyReadBack bool
	// MaxTransaction is the most triples one update should write
	// (Options.MaxTransaction overrides it; 0 is no limit). Oxigraph
	// holds a transaction's writes in memory until it commits: 0.5.13
	// peaked at 636 MB for an INSERT DATA of 200,000 triples, and the
	// MOVE that swaps in a graph of 649,000 took 66 s and 2.3 GB, so a
	// swap of 6.8 M triples outgrew a machine of 24 GB. With a limit,
	// ReplaceGraph takes the bounded path (see replaceBounded), drops go
	// in steps of this size, and an update over it is refused.
	MaxTransaction int64
	// AtomicBulk says that the bulk path (BulkParam) adds the whole body
	// at once when it has parsed, or nothing: Oxigraph's bulk loader
	// writes sorted files beside the store and ingests them all in one
	// step at the end (its memory is bounded by the batch it sorts, not
	// the body). A bulk load into an empty graph is then as atomic as a
	// transaction, at the bulk loader's speed and memory.
	AtomicBulk bool
}

// OxigraphMaxTransaction is Oxigraph's Quirks.MaxTransaction: about 3 GB
// of the store's memory at the 3 KB a triple measured.
const OxigraphMaxTransaction = 1_000_000

// CommitStrategy is the update that replaces graph g by the temporary graph t
// at the end of ReplaceGraph. Each runs as one update request, which
// Oxigraph, Fuseki (TDB2) and Virtuoso execute as one transaction.
type CommitStrategy uint8

const (
	// CommitDropMove: DROP SILENT GRAPH g ; MOVE GRAPH t TO GRAPH g.
	CommitDropMove CommitStrategy = iota
	// CommitMove: MOVE GRAPH t TO GRAPH g, which replaces g by definition
	// (SPARQL 1.1 Update 3.2.4). Virtuoso 7 needs 19-35s to DROP a graph of
	// 100k triples but under 1s to MOVE over it.
	CommitMove
	// CommitInsert: DROP SILENT GRAPH g ; INSERT { GRAPH g { ?s ?p ?o } }
	// WHERE { GRAPH t { ?s ?p ?o } } ; DROP SILENT GRAPH t. Fuseki 5.6.0
	// on TDB2 loses triples in MOVE, ADD and COPY when g held data (55 of
	// 100k, reproducible; 82 of 600k after a DROP in the same update);
	// INSERT ... WHERE materialises its bindings first and is exact, but
	// holds the graph in the heap. Into an empty g, where MOVE is exact,
	// the commit is MOVE alone.
	CommitInsert
)

// Profile says where a store's endpoints are and how to talk to them. Build
// one with ProfileFor and adjust its fields as needed; the zero Profile has
// no endpoints.
type Profile struct {
	Name          string
	QueryURL      string
	UpdateURL     string
	GraphStoreURL string
	Caps          Capabilities
	Quirks        Quirks
}

// ProfileNames lists the presets ProfileFor knows.
func ProfileNames() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

type preset struct {
	query, update, gsp string // paths appended to the base URL ("" = base itself, "-" = none)
	caps               Capabilities
	quirks             Quirks
	doc                string
}

var presets = map[string]preset{
	"fuseki": {query: "/query", update: "/update", gsp: "/data",
		caps:   Capabilities{Update: true, GraphStore: true},
		quirks: Quirks{Commit: CommitInsert, StreamPut: true},
		doc:    "Apache Jena Fuseki; base is the dataset, e.g. http://localhost:3030/ds"},
	"graphdb": {query: "", update: "/statements", gsp: "/rdf-graphs/service",
		caps:   Capabilities{Update: true, GraphStore: true},
		quirks: Quirks{UpdateMethod: sparqlq.MethodPOSTForm},
		doc:    "Ontotext GraphDB; base is the repository, e.g. http://localhost:7200/repositories/kg"},
	"oxigraph": {query: "/query", update: "/update", gsp: "/store",
		caps:   Capabilities{Update: true, GraphStore: true},
		quirks: Quirks{BulkParam: "no_transaction", StreamBulk: true, AtomicBulk: true, MaxTransaction: OxigraphMaxTransaction},
		doc:    "Oxigraph server; base is the server, e.g. http://localhost:7878"},
	"virtuoso": {query: "/sparql", update: "/sparql", gsp: "/sparql-graph-crud",
		caps: Capabilities{Update: true, GraphStore: true},
		quirks: Quirks{QueryMethod: sparqlq.MethodAuto, UpdateMethod: sparqlq.MethodPOSTForm,
			AuthSuffix: "-auth", ConcurrentBatches: 2, TypedLiteral: true, Commit: CommitMove, DropByGSP: true, ReadCommitted: true, LossyReadBack: true},
		doc: "OpenLink Virtuoso 7; base is the server, e.g. http://localhost:8890"},
	"generic-gsp": {query: "-", update: "-", gsp: "",
		caps: Capabilities{GraphStore: true},
		doc:  "any Graph Store Protocol endpoint; base is the endpoint; one PUT per graph"},
	"generic-update": {query: "", update: "", gsp: "-",
		caps: Capabilities{Update: true},
		doc:  "any SPARQL 1.1 query+update endpoint at one URL; INSERT DATA batches"},
}

// ProfileDoc returns a one-line description of a preset, for help texts.
func ProfileDoc(name string) string { return presets[name].doc }

// ProfileFor returns the preset profile name for a store at baseURL:
//
//	fuseki          base/query, base/update, base/data       (base = .../ds)
//	graphdb         base, base/statements, base/rdf-graphs/service (base = .../repositories/R)
//	oxigraph        base/query, base/update, base/store
//	virtuoso        base/sparql (form-POST updates), base/sparql-graph-crud
//	generic-gsp     GSP at base only
//	generic-update  query and update at base
func ProfileFor(name, baseURL string) (Profile, error) {
	ps, ok := presets[name]
	if !ok {
		return Profile{}, fmt.Errorf("loader: unknown store profile %q (want one of %s)",
			name, strings.Join(ProfileNames(), ", "))
	}
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Profile{}, fmt.Errorf("loader: store URL %q is not an http(s) URL", redact.URL(baseURL))
	}
	base := strings.TrimRight(baseURL, "/")
	join := func(p string) string {
		if p == "-" {
			return ""
		}
		return base + p
	}
	return Profile{
		Name:          name,
		QueryURL:      join(ps.query),
		UpdateURL:     join(ps.update),
		GraphStoreURL: join(ps.gsp),
		Caps:          ps.caps,
		Quirks:        ps.quirks,
	}, nil
}

// withAuthSuffix appends the quirk's suffix to each endpoint path.
func (p Profile) withAuthSuffix() Profile {
	if p.Quirks.AuthSuffix == "" {
		return p
	}
	add := func(s string) string {
		if s == "" || strings.HasSuffix(s, p.Quirks.AuthSuffix) {
			return s
		}
		return s + p.Quirks.AuthSuffix
	}
	p.QueryURL, p.UpdateURL, p.GraphStoreURL = add(p.QueryURL), add(p.UpdateURL), add(p.GraphStoreURL)
	return p
}
