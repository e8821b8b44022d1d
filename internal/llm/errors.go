package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
)

// Kinds of failure, to test with errors.Is on any error this package
// returns. An *Error unwraps to one of them and to the cause.
var (
	// ErrUnreachable: no answer from the server (connection refused or
	// reset, DNS, timeouts, 502/503/504), even after retries. The CLI
	// exits 11 (model down); see Unreachable.
	ErrUnreachable = errors.New("llm server unreachable")
	// ErrModelNotFound: the server does not serve the model.
	ErrModelNotFound = errors.New("model not found")
	// ErrAuth: the server refused the API key (401, 403).
	ErrAuth = errors.New("not authorised")
	// ErrRateLimited: still 429 after the last retry.
	ErrRateLimited = errors.New("rate limited")
	// ErrRequest: the server refused the request (another 4xx); retrying
	// would not help.
	ErrRequest = errors.New("request refused")
	// ErrServer: a 5xx other than 502/503/504 after the last retry.
	ErrServer = errors.New("server error")
	// ErrResponse: the server answered 2xx with something unusable (wrong
	// number of vectors, vectors of mixed length, no choices).
	ErrResponse = errors.New("bad response")
)

// Error is a failed call to the model server. It names the operation, the
// endpoint (without credentials) and the model, and carries a Hint that
// says what to change. The API key never appears in it.
type Error struct {
	Op       string // "embed", "chat", "chat stream", "list models"
	Endpoint string // e.g. http://localhost:11434/v1/embeddings
	Model    string
	Status   int // HTTP status; 0 when there was no response
	Attempts int
	Kind     error // one of the Err* kinds above
	Err      error // the cause, with the API key scrubbed from its text
	Hint     string
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "llm: %s %s", e.Op, e.Endpoint)
	if e.Model != "" {
		fmt.Fprintf(&b, " (model %q)", e.Model)
	}
	b.WriteString(": ")
	if e.Status != 0 {
		fmt.Fprintf(&b, "status %d: ", e.Status)
	}
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	} else {
		b.WriteString(e.Kind.Error())
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (after %d attempts)", e.Attempts)
	}
	if e.Hint != "" {
		b.WriteString("; ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

// Unwrap gives both the kind and the cause to errors.Is and errors.As.
func (e *Error) Unwrap() []error {
	out := []error{e.Kind}
	if e.Err != nil {
		out = append(out, e.Err)
	}
	return out
}

// Unreachable reports whether err means the model server could not be
// reached or did not answer in time, which the CLI maps to exit code 11.
// A model that answers with an error (unknown model, bad key) is
// reachable: the user must fix the request, not start the server.
func Unreachable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrUnreachable) {
		return true
	}
	var e *Error
	if errors.As(err, &e) {
		return false
	}
	return isConnError(err)
}

// isConnError reports a failure to reach or hear from the server.
func isConnError(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return true
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return true
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	return errors.Is(err, context.DeadlineExceeded)
}

// message is an error's text for the cause of an *Error: a short one for
// errors whose own text is noisy.
type message struct {
	msg string
	err error
}

func (m message) Error() string { return m.msg }
func (m message) Unwrap() error { return m.err }
