package loader

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/kgrag/kgrag/rdf"
	"github.com/kgrag/kgrag/sparqlq"
)

// Store holds named RDF graphs. SPARQLStore talks to a real SPARQL 1.1 store;
// loader/memstore is an in-memory fake for tests of callers.
type Store interface {
	// ReplaceGraph replaces the named graph with the triples that fill
	// writes to w, atomically: readers see the old graph or the new one,
	// and on any error (from fill, the store or ctx) the old graph stays as
	// it was. It returns the number of triples written. Replacing with the
	// same triples again is idempotent. fill must not keep w, and may be
	// called more than once (a store that retries an upload it could
	// not resume writes the triples again); it must write the same
	// triples each time.
	ReplaceGraph(ctx context.Context, graph string, fill func(w rdf.Writer) error) (int64, error)
	// Count returns the number of triples in graph; 0 for a missing graph.
	Count(ctx context.Context, graph string) (int64, error)
	// Drop removes graph. Dropping a missing graph is no error.
	Drop(ctx context.Context, graph string) error
	// Graphs lists the names of the non-empty named graphs.
	Graphs(ctx context.Context) ([]string, error)
}

// Counter receives progress: Add is called with the number of triples each
// time the store has accepted a batch (in a streamed upload, each time a
// batch's worth has gone into the request body, and the rest once the store
// answered). Implementations must be safe for concurrent use.
type Counter interface {
	Add(n int64)
}

// CounterFunc adapts a function to Counter.
type CounterFunc func(n int64)

// Add calls f(n).
func (f CounterFunc) Add(n int64) { f(n) }

// Error describes a failed store operation. Op is what was attempted
// ("replace graph", "count", "drop", "list graphs"), URL the endpoint (never
// with credentials), Graph the graph IRI if any, and Hint a sentence for the
// user such as "store unreachable at URL" or "the previous graph is
// unchanged". Err is the cause: a *sparqlq.StatusError, a network error,
// context.Canceled or DeadlineExceeded, or the error from the fill function.
type Error struct {
	Op    string
	URL   string
	Graph string
	Err   error
	Hint  string
}

func (e *Error) Error() string {
	s := "loader: " + e.Op
	if e.Graph != "" {
		s += " <" + e.Graph + ">"
	}
	if e.URL != "" {
		s += " at " + e.URL
	}
	s += ": " + e.Err.Error()
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Unreachable reports whether err says the store could not be reached at all
// (connection refused, unknown host, no route), as opposed to an answer with
// an error status. The CLI maps it to exit status 10.
func Unreachable(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) ||
		errors.Is(err, syscall.ENETUNREACH) {
		return true
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// transient reports whether retrying may help: connection refused or reset,
// a cut-off answer, a timeout of the request (not of the caller's context),
// or a 408, 429 or 5xx answer.
func transient(parent context.Context, err error) bool {
	if err == nil || parent.Err() != nil {
		return false
	}
	var uo *outcomeUnknown
	if errors.As(err, &uo) {
		return false // the store may have run it: not to be sent again
	}
	var se *sparqlq.StatusError
	if errors.As(err, &se) {
		return se.Temporary() && !transactionTooLarge(se)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true // the per-request timeout, since parent is live
	}
	if errors.Is(err, context.Canceled) {
		return false
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNABORTED) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return dns.IsTemporary
	}
	var op *net.OpError
	return errors.As(err, &op)
}

// transactionTooLarge recognises Virtuoso's refusal of a transaction whose
// log outgrew TransactionAfterImageLimit (error SR325): a 500 that no retry
// can cure.
func transactionTooLarge(se *sparqlq.StatusError) bool {
	return strings.Contains(se.Body, "SR325")
}

// heapExhausted reports whether a Java store (Fuseki) ran out of heap on
// the request: it answers 400 or 500 with the JVM's message.
func heapExhausted(se *sparqlq.StatusError) bool {
	return strings.Contains(se.Body, "Java heap space") || strings.Contains(se.Body, "OutOfMemoryError")
}

// hintFor describes err for a user.
func hintFor(err error, endpoint string) string {
	var se *sparqlq.StatusError
	switch {
	case errors.As(err, &se) && transactionTooLarge(se):
		return fmt.Sprintf("the store answered HTTP %d: the graph is too large for one Virtuoso transaction; "+
			"raise TransactionAfterImageLimit in the [Parameters] section of virtuoso.ini (bytes, at most 2147483647) "+
			"and restart Virtuoso, or load with --in-place", se.StatusCode)
	case errors.As(err, &se) && heapExhausted(se):
		return fmt.Sprintf("the store answered HTTP %d: it ran out of Java heap. Fuseki's swap of the temporary graph "+
			"(INSERT … WHERE, exact where its MOVE is not) holds the whole graph in its heap: 6.8 M triples did not fit in 2 GB. "+
			"Give Fuseki more heap (JVM_ARGS=-Xmx…), or load with --upload stream: one TDB2 transaction streamed to disk, "+
			"which loaded the same graph with 2 GB in about two minutes", se.StatusCode)
	case errors.As(err, &se):
		return fmt.Sprintf("the store answered HTTP %d", se.StatusCode)
	case errors.Is(err, context.Canceled):
		return "interrupted"
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out waiting for " + endpoint
	case Unreachable(err):
		return "store unreachable at " + endpoint
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timed out waiting for " + endpoint
	}
	if transient(context.Background(), err) {
		return "connection to " + endpoint + " failed"
	}
	return ""
}
