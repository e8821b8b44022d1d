package loader

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kgrag/kgrag/internal/redact"
	"github.com/kgrag/kgrag/rdf"
	"github.com/kgrag/kgrag/rdfenc"
	"github.com/kgrag/kgrag/sparqlq"
)

// TempGraphMarker is part of every temporary graph IRI that ReplaceGraph
// creates: graph + "#kgrag-tmp-" + 16 hex digits (or "-kgrag-tmp-" when the
// graph IRI already has a fragment).
const TempGraphMarker = "kgrag-tmp-"

// cleanupTimeout bounds the best-effort clean-up after a failure.
const cleanupTimeout = 30 * time.Second

// ReplaceGraph replaces graph with the triples fill writes, atomically.
//
// With SPARQL Update (every preset but generic-gsp) the triples go in
// batches of Options.BatchSize into a fresh temporary graph (see
// TempGraphMarker): as N-Triples bodies by Graph Store Protocol POST when
// the profile has it, else as INSERT DATA. Each batch is retried on
// transient failures. One update then swaps it in:
//
//	DROP SILENT GRAPH <graph> ; MOVE GRAPH <tmp> TO GRAPH <graph>
//
// which Oxigraph, Fuseki (TDB2) and Virtuoso each run as one transaction
// (Quirks.Commit may choose MOVE alone, or INSERT ... WHERE and a DROP of
// the temporary graph; see CommitStrategy).
// On any failure, or when ctx ends, the temporary graph is dropped (best
// effort, with its own 30s deadline) and the old graph is untouched. With a
// streamed upload (Options.Upload, Quirks.StreamPut: Fuseki) there is no
// temporary graph: the triples go as the body of one PUT, which the store
// runs as one transaction (see replaceByStream). A generic-gsp profile spools the triples to a temporary file and sends one
// PUT, which the protocol makes atomic.
//
// Blank nodes are scoped to one request, so a blank node label that spans
// two batches becomes two nodes; kgrag's own mapping uses IRIs only.
//
// The error is an *Error whose Hint says whether the store was unreachable,
// what status it answered, and that the previous graph is unchanged.
//
// A graph replaced this way has no record for LoadDiff: the next diff load
// of it replaces it whole again.
func (s *SPARQLStore) ReplaceGraph(ctx context.Context, graph string, fill func(w rdf.Writer) error) (int64, error) {
	return s.replaceGraph(ctx, graph, fill, func() (string, error) { return stateClear(graph) })
}

// replaceGraph is ReplaceGraph with record, the update that the commit
// runs to say what was loaded (called once fill is done).
func (s *SPARQLStore) replaceGraph(ctx context.Context, graph string, fill func(w rdf.Writer) error, record func() (string, error)) (int64, error) {
	if _, err := sparqlq.IRIRef(graph); err != nil {
		return 0, &Error{Op: "replace graph", Graph: graph, Err: err}
	}
	if !s.p.Caps.Update {
		return s.replaceByPut(ctx, graph, fill)
	}
	if s.stream {
		return s.replaceByStream(ctx, "replace graph", graph, fill, record)
	}
	if s.bounded { // records the digest whatever record says
		res, err := s.replaceBounded(ctx, graph, fill)
		return res.Triples, err
	}
	tmp, err := tempGraph(graph)
	if err != nil {
		return 0, &Error{Op: "replace graph", Graph: graph, Err: err}
	}
	lk, err := s.lockIfAble(ctx, graph, tmp)
	if err != nil {
		return 0, err
	}
	defer lk.release(ctx)
	start := time.Now()
	u := newUpload(ctx, s, graph, tmp)
	fillErr := fill(u)
	if fillErr == nil {
		fillErr = u.flush()
	}
	if fillErr != nil {
		u.cancel() // stop sending what is queued
	}
	sendErr := u.finish()
	if fillErr != nil && errors.Is(sendErr, context.Canceled) && ctx.Err() == nil {
		sendErr = nil // our own cancellation, not the store's failure
	}
	if fillErr == nil {
		fillErr = ctx.Err()
	}
	if sendErr != nil || fillErr != nil {
		return 0, s.abort(ctx, u, fillErr, sendErr, lk)
	}
	rec, err := record()
	if err != nil {
		return 0, s.abort(ctx, u, err, nil, lk)
	}
	if u.total == 0 {
		lk.tmpGone(ctx)
		if err := s.Drop(ctx, graph); err != nil {
			return 0, err
		}
		if lk != nil {
			if err := s.retry(ctx, "record load", func(ctx context.Context) error { return s.c.Update(ctx, rec) }); err != nil {
				return 0, s.opError("record load", s.p.UpdateURL, graph, err, "the graph is empty now")
			}
		}
		return 0, nil
	}
	if s.maxTx > 0 {
		// The swap deletes the old graph and writes the new one twice.
		old, err := s.Count(ctx, graph)
		if err == nil {
			err = s.fits("replace graph (commit)", graph, old+2*u.total)
		}
		if err != nil {
			return 0, s.abort(ctx, u, err, nil, lk)
		}
	}
	sent := time.Now()
	if lk == nil {
		rec = "" // no query endpoint: nothing can read a record
	}
	if err := s.commit(ctx, graph, tmp, lk, rec); err != nil {
		return 0, err
	}
	lk.tmpGone(ctx)
	s.log.Debug("graph replaced", "graph", graph, "triples", u.total, "batches", u.queued,
		"send", sent.Sub(start), "commit", time.Since(sent))
	return u.total, nil
}

// LoadInPlace drops graph and streams the triples fill writes straight into
// it, through the store's bulk path where it has one (Oxigraph's
// no_transaction, see Quirks.BulkParam). It skips the copy that makes
// ReplaceGraph atomic, which in Oxigraph costs minutes per million triples,
// and is therefore NOT atomic: readers see the graph fill up, and a failure
// part-way leaves it incomplete. The error then says how many triples the
// store took; running the load again repairs it, since batches are sets of
// triples and sending one twice adds nothing. On Oxigraph
// (Quirks.StreamBulk) the triples go as one streamed POST to the bulk path
// instead of batches (see loadInPlaceStream). With a streamed upload on a
// store without a bulk path (Fuseki) it is the same one PUT as
// ReplaceGraph, atomic as that is.
func (s *SPARQLStore) LoadInPlace(ctx context.Context, graph string, fill func(w rdf.Writer) error) (int64, error) {
	if _, err := sparqlq.IRIRef(graph); err != nil {
		return 0, &Error{Op: "load graph in place", Graph: graph, Err: err}
	}
	if s.stream && !s.streamBulk {
		// One PUT: as fast as in place, and atomic all the same.
		return s.replaceByStream(ctx, "load graph in place", graph, fill, func() (string, error) { return stateClear(graph) })
	}
	lk, err := s.lockForgetting(ctx, "load graph in place", graph)
	if err != nil {
		return 0, err
	}
	defer lk.release(ctx)
	if err := s.Drop(ctx, graph); err != nil {
		return 0, err
	}
	if s.streamBulk {
		return s.loadInPlaceStream(ctx, graph, fill)
	}
	u := newUpload(ctx, s, graph, graph)
	u.bulk = true
	fillErr := fill(u)
	if fillErr == nil {
		fillErr = u.flush()
	}
	// A batch that failed stops the fill; the other senders' requests run
	// to their answer, so the count of triples sent below is what the
	// store took, not what happened to be answered before a cancel.
	if fillErr != nil && u.failed() == nil {
		u.cancel()
	}
	sendErr := u.finish()
	if fillErr != nil && errors.Is(sendErr, context.Canceled) && ctx.Err() == nil {
		sendErr = nil
	}
	if fillErr == nil {
		fillErr = ctx.Err()
	}
	if sendErr == nil && fillErr == nil {
		return u.total, nil
	}
	hint := fmt.Sprintf("graph <%s> is incomplete (%d triples sent before the failure); run the load again", graph, u.sent)
	if sendErr != nil {
		return 0, s.opError("load graph in place", u.endpoint, graph, sendErr, hint)
	}
	return 0, &Error{Op: "load graph in place", URL: redact.URL(u.endpoint), Graph: graph, Err: fillErr,
		Hint: joinHint(hintFor(fillErr, redact.URL(u.endpoint)), hint)}
}

// lockForgetting takes graph's load lock for a load without a temporary
// graph and clears the graph's load record: the graph will not be what a
// record says, whatever happens now. The caller releases the lock.
func (s *SPARQLStore) lockForgetting(ctx context.Context, op, graph string) (*loadLock, error) {
	lk, err := s.lockIfAble(ctx, graph, "")
	if err != nil || lk == nil {
		return nil, err
	}
	clear, err := stateClear(graph)
	if err == nil {
		err = s.retry(ctx, "forget load record", func(ctx context.Context) error { return s.c.Update(ctx, clear) })
	}
	if err != nil {
		lk.release(ctx)
		return nil, s.opError(op, s.p.UpdateURL, graph, err, "the graph is unchanged")
	}
	return lk, nil
}

// tempGraph returns a fresh temporary graph IRI for graph.
func tempGraph(graph string) (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	sep := "#"
	if strings.Contains(graph, "#") {
		sep = "-"
	}
	return graph + sep + TempGraphMarker + hex.EncodeToString(b[:]), nil
}

// commit swaps tmp in for graph with one update, which with a lock also
// writes the lock's commit mark. When the outcome is unclear (the answer
// was lost, or ctx ended while the store ran it) the mark, or without a
// lock the temporary graph's absence, says whether the swap happened; what
// the error says is only what was seen.
func (s *SPARQLStore) commit(ctx context.Context, graph, tmp string, lk *loadLock, record string) error {
	name := "load_commit_move"
	switch s.p.Quirks.Commit {
	case CommitMove:
		name = "load_commit_move_only"
	case CommitInsert:
		name = "load_commit_insert"
		// Into an empty graph a MOVE is exact on TDB2 (its loss needs a
		// graph that held triples) and streams, where the INSERT holds
		// the whole graph in Fuseki's heap: 649,000 triples moved with no
		// growth of its own memory against 306 MB for the INSERT, and a
		// 2 GB heap could not INSERT 6.8 M. The lock keeps other loads
		// out between this look and the swap.
		if empty, err := s.graphEmpty(ctx, graph); err == nil && empty {
			name = "load_commit_move_only"
		}
	}
	update, err := sparqlq.Bound(name, sparqlq.Params{"graph": sparqlq.IRIParam(graph), "temp": sparqlq.IRIParam(tmp)})
	if err != nil {
		return err
	}
	if lk != nil {
		mark, err := lk.commitMark()
		if err != nil {
			return err
		}
		update += " ;\n" + mark
	}
	if record != "" {
		update += " ;\n" + record
	}
	left, err := sparqlq.Bound("graph_has_triples", sparqlq.Params{"graph": sparqlq.IRIParam(tmp)})
	if err != nil {
		return err
	}
	// done reports whether the swap is known to have happened.
	done := func(ctx context.Context) (bool, error) {
		if lk != nil {
			return lk.committed(ctx)
		}
		has, err := s.c.Ask(ctx, left)
		return err == nil && !has, err
	}
	err = s.updateChecked(ctx, "commit", update, false, done)
	if err == nil {
		return nil
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	var se *sparqlq.StatusError
	if errors.As(err, &se) {
		// The store refused the update, which it runs as one transaction.
		if ok, aerr := done(cctx); aerr == nil && !ok {
			hint := "the store refused the swap: the previous graph is unchanged"
			if empty, derr := s.dropTemp(cctx, tmp); derr == nil && empty {
				hint += "; temporary graph dropped"
				lk.tmpGone(cctx)
			} else {
				hint += "; temporary graph <" + tmp + "> may remain (the next load of this graph drops it)"
			}
			return s.opError("replace graph (commit)", s.p.UpdateURL, graph, err, hint)
		}
	}
	// Interrupted, or no answer: the store may be running the swap still.
	// Watch for it to land rather than drop the temporary graph under it,
	// as long as a request may take (a swap of millions of triples can
	// outlast the request that sent it).
	wctx, wcancel := context.WithTimeout(context.WithoutCancel(ctx), max(cleanupTimeout, s.timeout))
	defer wcancel()
	if awaitDone(wctx, done) {
		s.log.Info("the swap happened although its answer was lost or the load interrupted", "graph", graph)
		return nil
	}
	return s.opError("replace graph (commit)", s.p.UpdateURL, graph, err,
		fmt.Sprintf("outcome unknown: the swap had not happened %s later, and the store may still run it; <%s> holds the previous graph or, once it does, the new one; load again to be sure", max(cleanupTimeout, s.timeout), graph))
}

// graphEmpty reports whether graph holds no triple.
func (s *SPARQLStore) graphEmpty(ctx context.Context, graph string) (bool, error) {
	ask, err := sparqlq.Bound("graph_has_triples", sparqlq.Params{"graph": sparqlq.IRIParam(graph)})
	if err != nil {
		return false, err
	}
	var has bool
	err = s.retry(ctx, "look at graph", func(ctx context.Context) error {
		has, err = s.c.Ask(ctx, ask)
		return err
	})
	return !has, err
}

// updateChecked sends an update that runs as one transaction, retrying
// transient failures; before a retry it asks done whether a lost answer
// hid a success, so that the update is not applied twice.
//
// done cannot tell an update the store is still running from one it never
// got: after a timeout or a connection that broke once the request went
// out, the store may commit it a moment later. An update that is not
// repeatable (the swap: a second MOVE of a temporary graph already moved
// would empty the graph) is then not sent again; the error is an
// *outcomeUnknown and the caller watches done instead. A repeatable one
// (a difference: DELETE DATA and INSERT DATA of sets, and the record) may
// land twice to the same effect.
func (s *SPARQLStore) updateChecked(ctx context.Context, what, update string, repeatable bool, done func(context.Context) (bool, error)) error {
	attempts := 0
	return s.retry(ctx, what, func(ctx context.Context) error {
		attempts++
		if attempts > 1 {
			if ok, err := done(ctx); err == nil && ok {
				return nil
			}
		}
		err := s.c.Update(ctx, update)
		if err != nil && !repeatable && ctx.Err() == nil && mayHaveRun(err) {
			return &outcomeUnknown{err}
		}
		return err
	})
}

// outcomeUnknown wraps the error of a request the store may have run or be
// running; retry does not send it again.
type outcomeUnknown struct{ err error }

func (e *outcomeUnknown) Error() string { return e.err.Error() }
func (e *outcomeUnknown) Unwrap() error { return e.err }

// mayHaveRun reports whether a failed request may have reached the store:
// not when the store answered (a status: one transaction, which failed
// whole) or the connection was never made.
func mayHaveRun(err error) bool {
	var se *sparqlq.StatusError
	var dns *net.DNSError
	return !errors.As(err, &se) && !errors.Is(err, syscall.ECONNREFUSED) && !errors.As(err, &dns)
}

// awaitDone watches, after an interruption or a lost answer, for an update
// the store may still be running to land: it reports whether done said so
// before ctx ended.
func awaitDone(ctx context.Context, done func(context.Context) (bool, error)) bool {
	for wait := 250 * time.Millisecond; ; wait = min(2*wait, 4*time.Second) {
		if ok, err := done(ctx); err == nil && ok {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(wait):
		}
	}
}

// dropTemp drops a temporary graph after a failed upload and reports
// whether it was then seen empty. A batch request that was abandoned
// (cancelled or timed out) may still be running in the store and land after
// the drop, so it looks again for a few seconds, dropping what appeared.
func (s *SPARQLStore) dropTemp(ctx context.Context, tmp string) (bool, error) {
	if err := s.dropOnce(ctx, tmp); err != nil {
		return false, err
	}
	if s.p.QueryURL == "" {
		return false, nil // nothing to look with
	}
	ask, err := sparqlq.Bound("graph_has_triples", sparqlq.Params{"graph": sparqlq.IRIParam(tmp)})
	if err != nil {
		return false, err
	}
	left := false
	for _, d := range []time.Duration{250 * time.Millisecond, time.Second, 2 * time.Second} {
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(d):
		}
		var err error
		left, err = s.c.Ask(ctx, ask)
		if err != nil {
			return false, err
		}
		if left {
			s.log.Info("late batch landed in the temporary graph; dropping again", "tmp", tmp)
			if err := s.dropOnce(ctx, tmp); err != nil {
				return false, err
			}
		}
	}
	if left {
		// Dropped once more after the last look: see that it stuck.
		if left, err := s.c.Ask(ctx, ask); err != nil || left {
			return false, err
		}
	}
	return true, nil
}

// DropTempGraphs drops temporary graphs that failed uploads of graph left
// behind (when the store went away before clean-up, or a late request
// landed after it) and returns their names. Do not call it while another
// upload of graph is running.
func (s *SPARQLStore) DropTempGraphs(ctx context.Context, graph string) ([]string, error) {
	gs, err := s.Graphs(ctx)
	if err != nil {
		return nil, err
	}
	var dropped []string
	for _, g := range gs {
		rest, ok := strings.CutPrefix(g, graph)
		if ok && len(rest) == 1+len(TempGraphMarker)+16 && (rest[0] == '#' || rest[0] == '-') &&
			strings.HasPrefix(rest[1:], TempGraphMarker) {
			if err := s.Drop(ctx, g); err != nil {
				return dropped, err
			}
			dropped = append(dropped, g)
		}
	}
	return dropped, nil
}

// abort drops the temporary graph and builds the error.
func (s *SPARQLStore) abort(ctx context.Context, u *upload, fillErr, sendErr error, lk *loadLock) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	hint := "the previous graph is unchanged"
	if u.queued == 0 {
		lk.tmpGone(cctx)
	} else {
		switch empty, derr := s.dropTemp(cctx, u.tmp); {
		case derr != nil:
			hint += "; temporary graph <" + u.tmp + "> could not be dropped (" + derr.Error() + "); the next load of this graph drops it"
			s.log.Warn("temporary graph left", "tmp", u.tmp, "err", derr)
		case empty:
			hint += "; temporary graph dropped"
			lk.tmpGone(cctx)
		default:
			hint += "; temporary graph <" + u.tmp + "> dropped, but not seen empty (no query endpoint); the next load of this graph drops what is left"
		}
	}
	if sendErr != nil {
		return s.opError("replace graph", u.endpoint, u.graph, sendErr, hint)
	}
	return &Error{Op: "replace graph", URL: redact.URL(u.endpoint), Graph: u.graph, Err: fillErr,
		Hint: joinHint(hintFor(fillErr, redact.URL(u.endpoint)), hint)}
}

func joinHint(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// batch is one request body.
type batch struct {
	buf        *bytes.Buffer
	n          int   // triples in it
	first      int64 // index of its first triple, from 0
	seq        int   // batch number, from 1
	insertData bool
}

// upload encodes triples into batches while sender goroutines (one, or
// Options.ConcurrentBatches) send the batches before it, so encoding and the store's
// work overlap. Batches are sets of triples headed for one graph, so the
// order in which concurrent senders land them does not matter. It is the
// rdf.Writer handed to fill; not safe for concurrent use.
type upload struct {
	ctx             context.Context
	cancel          context.CancelFunc
	s               *SPARQLStore
	graph, tmp      string
	tmpRef          string
	endpoint        string
	gsp             bool
	enc             *rdfenc.NTriples
	sw              *swapWriter
	cur             *batch
	total           int64
	seq             int
	queue           chan *batch
	free            chan *bytes.Buffer
	senders         sync.WaitGroup
	mu              sync.Mutex
	err             error // error of the lowest-numbered failed batch
	errSeq          int   // that batch's number
	queued          int   // batches handed to the sender
	finished        bool
	insertPrefixLen int
	bulk            bool  // use the profile's bulk parameter (LoadInPlace)
	sent            int64 // triples the store accepted
}

type swapWriter struct{ buf *bytes.Buffer }

func (w *swapWriter) Write(p []byte) (int, error) { return w.buf.Write(p) }

func newUpload(ctx context.Context, s *SPARQLStore, graph, tmp string) *upload {
	ctx, cancel := context.WithCancel(ctx)
	u := &upload{ctx: ctx, cancel: cancel, s: s, graph: graph, tmp: tmp,
		gsp:   s.p.Caps.GraphStore && s.p.GraphStoreURL != "",
		queue: make(chan *batch, 1), free: make(chan *bytes.Buffer, s.concurrent+1)}
	u.tmpRef, _ = sparqlq.IRIRef(tmp)
	u.endpoint = s.p.UpdateURL
	if u.gsp {
		u.endpoint = s.p.GraphStoreURL
	}
	// One buffer being filled and one per sender being sent.
	for range s.concurrent {
		u.free <- new(bytes.Buffer)
	}
	u.sw = &swapWriter{buf: new(bytes.Buffer)}
	u.enc = rdfenc.NewNTriples(u.sw)
	u.startBatch()
	for range s.concurrent {
		u.senders.Go(u.sender)
	}
	return u
}

func (u *upload) startBatch() {
	u.seq++
	u.cur = &batch{buf: u.sw.buf, first: u.total, seq: u.seq, insertData: !u.gsp}
	u.sw.buf.Reset()
	if !u.gsp {
		u.sw.buf.WriteString("INSERT DATA { GRAPH " + u.tmpRef + " {\n")
		u.insertPrefixLen = u.sw.buf.Len()
	}
}

func (u *upload) failed() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.err
}

// WriteTriple adds t to the current batch and hands the batch to the sender
// when it is full. It returns the sender's error once a batch has failed.
func (u *upload) WriteTriple(t rdf.Triple) error {
	if u.finished {
		return errors.New("loader: write after the upload finished")
	}
	if err := u.enc.WriteTriple(t); err != nil {
		return err
	}
	u.cur.n++
	u.total++
	if u.cur.n >= u.s.batch {
		return u.flush()
	}
	return nil
}

// flush hands the current batch, if it holds triples, to the sender.
func (u *upload) flush() error {
	if err := u.failed(); err != nil {
		return err
	}
	if err := u.ctx.Err(); err != nil {
		return err
	}
	if u.cur.n == 0 {
		return nil
	}
	if err := u.enc.Flush(); err != nil {
		return err
	}
	if !u.gsp {
		u.sw.buf.WriteString("} }\n")
	}
	b := u.cur
	select {
	case u.queue <- b:
		u.queued++
	case <-u.ctx.Done():
		return u.ctx.Err()
	}
	select {
	case u.sw.buf = <-u.free:
	case <-u.ctx.Done():
		return u.ctx.Err()
	}
	u.startBatch()
	return u.failed()
}

// finish waits for the sender and returns the first send error.
func (u *upload) finish() error {
	if !u.finished {
		u.finished = true
		close(u.queue)
		u.senders.Wait()
		u.cancel()
	}
	return u.failed()
}

// sender sends queued batches as they come; with one sender that is in
// order. After an error it only recycles buffers, so the writer never
// blocks.
func (u *upload) sender() {
	for b := range u.queue {
		if u.failed() == nil {
			if err := u.send(b); err != nil {
				// Concurrent senders can fail in any order; report the
				// first batch that failed, as a serial upload would.
				u.mu.Lock()
				if u.err == nil || b.seq < u.errSeq {
					u.err, u.errSeq = err, b.seq
				}
				u.mu.Unlock()
			} else {
				u.mu.Lock()
				u.sent += int64(b.n)
				u.mu.Unlock()
				if u.s.counter != nil {
					u.s.counter.Add(int64(b.n))
				}
			}
		}
		select {
		case u.free <- b.buf:
		default:
		}
	}
}

func (u *upload) send(b *batch) error {
	err := u.s.retry(u.ctx, "send batch", func(ctx context.Context) error {
		if b.insertData {
			return u.s.c.Update(ctx, b.buf.String())
		}
		target := u.s.gspURL(u.tmp)
		if u.bulk {
			target = u.s.bulkURL(u.tmp)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(b.buf.Bytes()))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/n-triples")
		resp, err := u.s.c.Do(req)
		if err != nil {
			return err
		}
		return drain(resp)
	})
	if err != nil {
		return fmt.Errorf("batch %d (triples %d-%d): %w", b.seq, b.first+1, b.first+int64(b.n), err)
	}
	return nil
}

// replaceByPut spools the triples to a temporary file and PUTs them.
func (s *SPARQLStore) replaceByPut(ctx context.Context, graph string, fill func(rdf.Writer) error) (int64, error) {
	f, err := os.CreateTemp("", "kgrag-upload-*.nt")
	if err != nil {
		return 0, &Error{Op: "replace graph", Graph: graph, Err: err}
	}
	defer os.Remove(f.Name())
	defer f.Close()
	enc := rdfenc.NewNTriples(f)
	ep := redact.URL(s.p.GraphStoreURL)
	if err := fill(enc); err != nil {
		return 0, &Error{Op: "replace graph", URL: ep, Graph: graph, Err: err, Hint: "the previous graph is unchanged"}
	}
	if err := enc.Flush(); err != nil {
		return 0, &Error{Op: "replace graph", URL: ep, Graph: graph, Err: err}
	}
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return 0, &Error{Op: "replace graph", URL: ep, Graph: graph, Err: err}
	}
	err = s.retry(ctx, "put graph", func(ctx context.Context) error {
		body := io.NewSectionReader(f, 0, size)
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, s.gspURL(graph), body)
		if err != nil {
			return err
		}
		req.ContentLength = size
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(io.NewSectionReader(f, 0, size)), nil }
		req.Header.Set("Content-Type", "application/n-triples")
		resp, err := s.c.Do(req)
		if err != nil {
			return err
		}
		return drain(resp)
	})
	if err != nil {
		return 0, s.opError("replace graph", s.p.GraphStoreURL, graph, err, "the previous graph is unchanged")
	}
	if s.counter != nil {
		s.counter.Add(enc.Count())
	}
	return enc.Count(), nil
}
