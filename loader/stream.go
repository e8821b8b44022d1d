package loader

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kgrag/kgrag/internal/redact"
	"github.com/kgrag/kgrag/rdf"
	"github.com/kgrag/kgrag/rdfenc"
	"github.com/kgrag/kgrag/sparqlq"
)

// UploadMode says how ReplaceGraph and LoadInPlace send a graph
// (Options.Upload).
type UploadMode uint8

const (
	// UploadAuto is batches on every store, but for a load in place on a
	// store with a bulk path that takes a stream (Quirks.StreamBulk:
	// Oxigraph): Fuseki commits a streamed PUT whose connection drops as
	// if the body had ended there (see UploadStream), and a load in place
	// makes no promise of atomicity to keep.
	UploadAuto UploadMode = iota
	// UploadBatches sends batches of Options.BatchSize into a temporary
	// graph and swaps it in with one update (see ReplaceGraph).
	UploadBatches
	// UploadStream sends the whole graph as one Graph Store Protocol PUT
	// whose body is written while fill runs, for stores that run a PUT as
	// one transaction (Fuseki). Fuseki 5.6 takes a body whose connection
	// drops, at any byte, for the whole body, and commits it if it parses.
	// So a failed or cancelled fill ends the body in a fragment that cannot
	// parse, and between writes the body always stops inside a triple; but
	// a process killed, or a connection cut, in the middle of a write can
	// leave a shorter graph, as --in-place can leave it incomplete.
	UploadStream
)

var uploadModes = []string{"auto", "batches", "stream"}

func (m UploadMode) String() string {
	if int(m) < len(uploadModes) {
		return uploadModes[m]
	}
	return fmt.Sprintf("UploadMode(%d)", m)
}

// ParseUploadMode reads "auto", "batches" or "stream".
func ParseUploadMode(s string) (UploadMode, error) {
	for i, name := range uploadModes {
		if s == name {
			return UploadMode(i), nil
		}
	}
	return 0, fmt.Errorf("loader: upload mode %q: want one of %s", s, strings.Join(uploadModes, ", "))
}

// errBodyRefused closes the body pipe when the store answered before the
// body ended: the writer then stops, and the answer says why.
var errBodyRefused = errors.New("the store answered before the upload ended")

// replaceByStream replaces graph with one Graph Store Protocol PUT whose
// N-Triples body is encoded as fill writes (Quirks.StreamPut). The store
// clears the graph and parses the body in one write transaction, which it
// aborts when the body does not parse: there is no temporary graph and no
// copy. The lock
// is taken as for any load; the load record is cleared first and written
// after the PUT, so that a crash between the two only costs the next diff
// load a full replacement. record is as for replaceGraph; op names the
// operation in errors.
//
// The request is not retried: its body is gone once sent. A failure before
// the whole body went out leaves the previous graph; a failure after it
// (no answer) leaves either the previous graph or the new one, and the
// error says so.
func (s *SPARQLStore) replaceByStream(ctx context.Context, op, graph string, fill func(rdf.Writer) error, record func() (string, error)) (int64, error) {
	lk, err := s.lockForgetting(ctx, op, graph)
	if err != nil {
		return 0, err
	}
	defer lk.release(ctx)
	start := time.Now()
	r := s.sendStream(ctx, http.MethodPut, s.gspURL(graph), fill)
	ep := redact.URL(s.p.GraphStoreURL)
	unchanged := "the previous graph is unchanged (the upload was ended so that the store refuses it)"
	cut := func(how string) string {
		return fmt.Sprintf("%s, at any byte: the store keeps the previous graph unless that fell between two triples, "+
			"when Fuseki commits what arrived; check <%s>, or load again", how, graph)
	}
	var se *sparqlq.StatusError
	refused := errors.As(r.sendErr, &se) // the store answered with an error status
	switch {
	case r.fillErr != nil && r.torn.Load():
		return 0, &Error{Op: op, URL: ep, Graph: graph, Err: r.fillErr, Hint: joinHint(hintFor(r.fillErr, ep),
			cut("the store took no more of the upload after the interrupt, so it was cut off"))}
	case r.fillErr != nil:
		return 0, &Error{Op: op, URL: ep, Graph: graph, Err: r.fillErr, Hint: joinHint(hintFor(r.fillErr, ep), unchanged)}
	case r.sendErr != nil && refused:
		return 0, s.opError(op, s.p.GraphStoreURL, graph, r.sendErr, "the store refused the upload: the previous graph is unchanged")
	case r.sendErr != nil && !r.complete:
		return 0, s.opError(op, s.p.GraphStoreURL, graph, r.sendErr, cut("the connection broke during the upload"))
	case r.sendErr != nil:
		return 0, s.opError(op, s.p.GraphStoreURL, graph, r.sendErr, fmt.Sprintf(
			"outcome unknown: all %d triples were sent but no answer came; the store runs the PUT as one transaction, so <%s> holds the previous graph or the new one, never a mix; load again to be sure", r.n, graph))
	}
	if lk != nil {
		rec, err := record()
		if err == nil {
			err = s.retry(ctx, "record load", func(ctx context.Context) error { return s.c.Update(ctx, rec) })
		}
		if err != nil {
			return 0, s.opError("record load", s.p.UpdateURL, graph, err,
				"the graph is replaced, but its load record is not written: the next --diff load replaces it whole")
		}
	}
	s.log.Debug("graph replaced by one streamed PUT", "graph", graph, "triples", r.n, "took", time.Since(start))
	return r.n, nil
}

// loadInPlaceStream is LoadInPlace as one streamed Graph Store Protocol
// POST to the store's bulk path (Quirks.StreamBulk: Oxigraph). The store's
// bulk loader then parses and indexes the whole body on its own threads, as
// its command-line loader does a file, where each batch would be a bulk
// load of its own. Like any load in place it is not atomic. Oxigraph 0.5's
// bulk loader adds nothing before the whole body has parsed, so a body
// ended by abortFragment leaves the graph empty; a connection cut between
// two triples leaves what arrived. The request is not retried. The caller
// holds the load lock and has dropped the graph.
func (s *SPARQLStore) loadInPlaceStream(ctx context.Context, graph string, fill func(rdf.Writer) error) (int64, error) {
	const op = "load graph in place"
	start := time.Now()
	r := s.sendStream(ctx, http.MethodPost, s.bulkURL(graph), fill)
	ep := redact.URL(s.p.GraphStoreURL)
	hint := fmt.Sprintf("graph <%s> was dropped and is empty or incomplete; run the load again", graph)
	switch {
	case r.fillErr != nil:
		return 0, &Error{Op: op, URL: ep, Graph: graph, Err: r.fillErr, Hint: joinHint(hintFor(r.fillErr, ep), hint)}
	case r.sendErr != nil:
		return 0, s.opError(op, s.p.GraphStoreURL, graph, r.sendErr, hint)
	}
	s.log.Debug("graph loaded in place by one streamed POST", "graph", graph, "triples", r.n, "took", time.Since(start))
	return r.n, nil
}

// streamResult is what sendStream did: triples encoded, whether the whole
// body went out, and the first error of fill (or ctx) and of the request.
type streamResult struct {
	n                int64
	complete         bool
	fillErr, sendErr error
	torn             atomic.Bool // the request was torn down after ctx ended
}

// sendStream sends one request (a PUT of a graph, or a POST to the bulk
// path) to target with the triples fill writes as its body. The client's
// per-request timeout becomes a watchdog: the request is given up when the
// store takes no byte of the body, or gives no answer after the last, for
// that long.
//
// The request does not end with ctx: a connection torn down could leave
// the body at a triple's end, which Fuseki would commit. When ctx ends or
// fill fails, the body is ended in a fragment that cannot parse
// (abortFragment) and the store refuses it. Only if the store takes no
// byte for a while after ctx ended (cancelGrace) is the request torn down.
func (s *SPARQLStore) sendStream(ctx context.Context, method, target string, fill func(rdf.Writer) error) *streamResult {
	rctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancel(nil)
	res := &streamResult{}
	stopGrace := context.AfterFunc(ctx, func() {
		t := time.NewTimer(min(cancelGrace, s.timeout/2)) // before the watchdog
		defer t.Stop()
		select {
		case <-t.C:
			res.torn.Store(true)
			cancel(context.Cause(ctx))
		case <-rctx.Done():
		}
	})
	defer stopGrace()
	pr, pw := io.Pipe()
	wp := &watchedPipe{w: pw}
	req, err := http.NewRequestWithContext(rctx, method, target, pr)
	if err != nil {
		res.sendErr = err
		return res
	}
	req.ContentLength = -1 // chunked: the length is known only at the end
	req.Header.Set("Content-Type", "application/n-triples")
	answered := make(chan error, 1)
	go func() {
		resp, err := s.c.DoUnbounded(req)
		if err == nil {
			err = drain(resp)
		}
		pr.CloseWithError(errBodyRefused) // unblocks the writer if the answer came early
		answered <- err
	}()
	stopWatch := make(chan struct{})
	defer close(stopWatch)
	go s.watch(wp, cancel, stopWatch)

	sw := &streamWriter{s: s, body: &streamBody{ctx: ctx, w: wp}}
	sw.enc = rdfenc.NewNTriples(sw.body)
	res.fillErr = fill(sw)
	if res.fillErr == nil {
		res.fillErr = sw.finish()
	}
	if res.fillErr == nil {
		res.fillErr = ctx.Err()
	}
	refused := errors.Is(res.fillErr, errBodyRefused) || errors.Is(res.fillErr, io.ErrClosedPipe)
	if refused && res.torn.Load() {
		res.fillErr, refused = context.Cause(ctx), false // the caller's interrupt, not the store's answer
	}
	switch {
	case refused:
		res.fillErr = nil // the request ended before the body: its error says why
	case res.fillErr != nil:
		// End the body where it stands, in what cannot parse; the pipe
		// then fails the transport's next read, and it closes the
		// connection after writing the fragment.
		_, _ = wp.Write([]byte(abortFragment))
		pw.CloseWithError(res.fillErr)
	default:
		// Every byte was taken (a pipe write waits for its reader); the
		// close sends the final chunk.
		res.complete = true
		wp.end()
	}
	res.sendErr = <-answered
	res.n = sw.n
	if cause := context.Cause(rctx); res.sendErr != nil && errors.Is(cause, errStalled) {
		res.sendErr = fmt.Errorf("%w: %w", cause, res.sendErr)
	}
	if res.fillErr == nil && res.sendErr == nil && !res.complete {
		res.sendErr = errBodyRefused
	}
	if s.counter != nil && res.fillErr == nil && res.sendErr == nil {
		s.counter.Add(sw.n - sw.reported)
	}
	return res
}

// abortFragment ends a body that must not be committed: an IRI that never
// closes, which fails the parse however the body stopped (inside a term, a
// literal, or between triples).
const abortFragment = "<urn:kgrag:upload-aborted"

// cancelGrace is how long a cancelled streamed PUT waits for the store to
// take the rest of a write and the abort fragment (at most half the
// timeout).
const cancelGrace = 10 * time.Second

// errStalled is the cause when the watchdog gives a streamed PUT up.
var errStalled = errors.New("no progress")

// watch cancels the request when a write of the body has waited for the
// store for the client's timeout, or the answer has not come that long
// after the last byte. Time fill spends before writing does not count.
func (s *SPARQLStore) watch(p *watchedPipe, cancel context.CancelCauseFunc, stop <-chan struct{}) {
	tick := time.NewTicker(min(s.timeout/10, time.Second))
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			now := time.Now().UnixNano()
			what := ""
			if t := p.blocked.Load(); t != 0 && time.Duration(now-t) > s.timeout {
				what = "taken a byte of the upload"
			}
			if t := p.ended.Load(); t != 0 && time.Duration(now-t) > s.timeout {
				what = "answered after the last byte"
			}
			if what != "" {
				cancel(fmt.Errorf("%w: the store has not %s for %v", errStalled, what, s.timeout))
				return
			}
		}
	}
}

// watchedPipe is the writing end of the body: it notes since when a write
// has waited for the transport to take it, and when the body ended.
type watchedPipe struct {
	w       *io.PipeWriter
	blocked atomic.Int64 // unix nanoseconds; 0 when no write waits
	ended   atomic.Int64
}

func (p *watchedPipe) Write(b []byte) (int, error) {
	p.blocked.Store(time.Now().UnixNano())
	n, err := p.w.Write(b)
	p.blocked.Store(0)
	return n, err
}

// end closes the body (the final chunk goes out) and starts the wait for
// the answer.
func (p *watchedPipe) end() {
	p.ended.Store(time.Now().UnixNano())
	_ = p.w.Close()
}

// streamBody gathers the encoded body and hands it to w in pieces of about
// streamPiece bytes, each cut before the " .\n" that ends its last whole
// triple. So between writes the store has never received a body that ends
// with a triple, and one broken off there cannot parse as a shorter graph.
type streamBody struct {
	ctx     context.Context
	w       io.Writer
	buf     []byte
	scanned int // buf[:scanned] holds no " .\n" but at 0: a triple longer than a piece is not searched again
}

const streamPiece = 256 << 10

func (b *streamBody) Write(p []byte) (int, error) {
	b.buf = append(b.buf, p...)
	if len(b.buf) < streamPiece {
		return len(p), nil
	}
	// A piece needs a whole triple in it; a longer one waits for its end.
	from := max(b.scanned-2, 0)
	end := bytes.LastIndex(b.buf[from:], []byte(" .\n"))
	if end < 0 || from+end == 0 {
		b.scanned = len(b.buf)
		return len(p), nil
	}
	end += from
	b.scanned = 0
	if err := b.ctx.Err(); err != nil {
		return 0, err
	}
	if _, err := b.w.Write(b.buf[:end]); err != nil {
		return 0, err
	}
	b.buf = b.buf[:copy(b.buf, b.buf[end:])]
	return len(p), nil
}

// end writes the rest: the body is whole.
func (b *streamBody) end() error {
	if err := b.ctx.Err(); err != nil {
		return err
	}
	_, err := b.w.Write(b.buf)
	b.buf = nil
	return err
}

// streamWriter is the rdf.Writer handed to fill by sendStream; it reports
// progress every batch-size triples, as they go to the connection.
type streamWriter struct {
	s        *SPARQLStore
	body     *streamBody
	enc      *rdfenc.NTriples
	n        int64 // triples written
	reported int64 // triples given to the counter
	finished bool
}

func (w *streamWriter) WriteTriple(t rdf.Triple) error {
	if w.finished {
		return errors.New("loader: write after the upload finished")
	}
	if err := w.enc.WriteTriple(t); err != nil {
		return err
	}
	w.n++
	if w.n-w.reported >= int64(w.s.batch) {
		if err := w.enc.Flush(); err != nil {
			return err
		}
		if w.s.counter != nil {
			w.s.counter.Add(w.n - w.reported)
		}
		w.reported = w.n
	}
	return nil
}

// finish writes what is buffered: the body is whole.
func (w *streamWriter) finish() error {
	w.finished = true
	if err := w.enc.Flush(); err != nil {
		return err
	}
	return w.body.end()
}
