package elastic

import (
	"errors"
	"fmt"
)

// Kinds of *Error, for errors.Is.
var (
	// ErrUnreachable: no answer from the node (connection refused, DNS,
	// TLS, timeout) or a 502/503/504 from a proxy before it.
	ErrUnreachable = errors.New("elasticsearch unreachable")
	// ErrUnavailable: nodes answer, but the cluster cannot serve the
	// index whole and current: it is red (a primary shard lost) or
	// elects no master (a quorum of nodes lost).
	ErrUnavailable = errors.New("elasticsearch cluster unavailable")
	// ErrNotFound: the alias or index does not exist.
	ErrNotFound = errors.New("elasticsearch index not found")
)

// Error is a failed operation on an index. It names the URL (without
// credentials) and the alias; API keys and passwords never appear in it.
type Error struct {
	Op     string // what was done, e.g. "search"
	URL    string // the node, without user info
	Index  string // the alias
	Status int    // HTTP status; 0 when there was no answer
	Kind   error  // ErrUnreachable, ErrUnavailable, ErrNotFound or nil
	Err    error
	Hint   string // what to do about it, or ""
}

func (e *Error) Error() string {
	s := fmt.Sprintf("elastic: %s %s/%s: %v", e.Op, e.URL, e.Index, e.Err)
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// Unwrap lets errors.Is match both the kind and the cause.
func (e *Error) Unwrap() []error {
	if e.Kind == nil {
		return []error{e.Err}
	}
	return []error{e.Kind, e.Err}
}

// Unreachable reports whether err says the index cannot be used now: no
// node answered, or the cluster cannot serve it (ErrUnavailable), so the
// CLI can exit with its "store down" status.
func Unreachable(err error) bool {
	return errors.Is(err, ErrUnreachable) || errors.Is(err, ErrUnavailable)
}
