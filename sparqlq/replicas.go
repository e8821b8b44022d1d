package sparqlq

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
)

// query runs query at the endpoint in use and, when that endpoint cannot
// be reached, at each replica in turn (Config.Replicas). A query changes
// nothing, so sending it again elsewhere is always safe. The replica that
// answered serves every later query: reads stay on one copy of the data
// until it fails in turn, and Moves tells a reader that they did not.
//
// maxBytes, when not 0, bounds the answer read.
func (c *Client) query(ctx context.Context, op, query string, maxBytes int64) (*Results, error) {
	if c.queries[0] == "" {
		return nil, fmt.Errorf("sparqlq: %s: no query endpoint configured", op)
	}
	n := int32(len(c.queries))
	start := c.cur.Load()
	var errs []error
	for i := range n {
		at := (start + i) % n
		res, err := c.queryAt(ctx, c.queries[at], op, query, maxBytes)
		if err == nil {
			if at != start && c.cur.CompareAndSwap(start, at) {
				c.moves.Add(1)
			}
			return res, nil
		}
		if n == 1 || !replicaDown(ctx, err) {
			return nil, err
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("sparqlq: %s: none of the %d replicas answered: %w", op, n, errors.Join(errs...))
}

// replicaDown reports whether err says the endpoint, not the query, failed:
// it could not be reached, cut the connection, ran past the request's
// time limit, or answered that it is unavailable (502, 503, 504, as a proxy
// in front of a stopped store does). A 4xx or 500 is the query's own
// failure, and the caller's context ending is the caller's.
func replicaDown(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var se *StatusError
	if errors.As(err, &se) {
		switch se.StatusCode {
		case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return true
		}
		return false
	}
	var ne net.Error
	var op *net.OpError
	var dns *net.DNSError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, context.DeadlineExceeded) ||
		errors.As(err, &op) || errors.As(err, &dns) || (errors.As(err, &ne) && ne.Timeout())
}
