package loader

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/kgrag/kgrag/internal/redact"
	"github.com/kgrag/kgrag/rdf"
	"github.com/kgrag/kgrag/sparqlq"
)

// A store that holds a transaction's writes in memory until it commits
// (Oxigraph: Quirks.MaxTransaction) cannot swap in a large graph with one
// update: the swap writes the old graph's deletions and the new graph
// twice (into the graph, out of the temporary one), and at 6.8 M triples
// that outgrew a 24 GB machine. Such a store replaces a graph without any
// transaction the size of the graph, and still atomically:
//
//   - an empty graph is filled by one streamed POST to the bulk path
//     (Quirks.AtomicBulk): the store sorts the body into files on disk and
//     adds them all in one step once the whole body has parsed, so readers
//     see nothing, then the whole graph;
//   - a graph that holds triples is read back and changed by one update
//     holding only the difference (as LoadDiff sends), whose size is the
//     change, not the graph. A change over the limit is refused before
//     anything is sent.
//
// Either way the load records the graph's digest, so the next --diff load
// can send a difference.

// ErrTransactionTooLarge is the cause when a load would need one update
// larger than the store's transaction limit (Options.MaxTransaction).
var ErrTransactionTooLarge = errors.New("the change is larger than one transaction of this store may be")

// replaceBounded is ReplaceGraph on a store with a transaction limit. It
// records the new graph's digest either way. The result says Replaced
// for a fill of the empty graph, else the difference sent.
func (s *SPARQLStore) replaceBounded(ctx context.Context, graph string, fill func(rdf.Writer) error) (DiffResult, error) {
	lk, err := s.lock(ctx, graph, "")
	if err != nil {
		return DiffResult{}, err
	}
	defer lk.release(ctx)
	n, err := s.Count(ctx, graph)
	if err != nil {
		return DiffResult{}, err
	}
	if n == 0 {
		return s.fillEmpty(ctx, graph, fill)
	}
	return s.replaceByDiff(ctx, graph, n, fill)
}

// fillEmpty loads the empty graph by one streamed POST to the bulk path,
// which the store adds whole or not at all (Quirks.AtomicBulk).
func (s *SPARQLStore) fillEmpty(ctx context.Context, graph string, fill func(rdf.Writer) error) (DiffResult, error) {
	const op = "replace graph"
	clear, err := stateClear(graph)
	if err == nil {
		err = s.retry(ctx, "forget load record", func(ctx context.Context) error { return s.c.Update(ctx, clear) })
	}
	if err != nil {
		return DiffResult{}, s.opError(op, s.p.UpdateURL, graph, err, "the graph is unchanged (empty)")
	}
	var dw *digestWriter
	var r *streamResult
	// The streamed body cannot be sent again, but fill can write it again;
	// retry(sendStream) would repeat a request whose outcome may be
	// unknown, so each attempt decides here whether another is safe.
	for attempt, wait := 0, s.backoff; ; attempt, wait = attempt+1, min(2*wait, 30*time.Second) {
		r = s.sendStream(ctx, http.MethodPost, s.bulkURL(graph), func(w rdf.Writer) error {
			dw = &digestWriter{w: w, seen: make(map[tripleKey]struct{})}
			return fill(dw)
		})
		if r.fillErr == nil && r.sendErr == nil {
			break
		}
		if attempt >= s.retries || !s.fillAgain(ctx, graph, r) {
			return DiffResult{}, s.unfill(ctx, graph, r)
		}
		s.log.Warn("retrying", "op", "bulk fill", "attempt", attempt+1, "wait", wait, "err", r.sendErr)
		select {
		case <-ctx.Done():
			return DiffResult{}, s.unfill(ctx, graph, r)
		case <-time.After(wait):
		}
	}
	res := DiffResult{Replaced: true, Triples: int64(len(dw.seen))}
	rec, err := stateUpdate(graph, dw.digest, res.Triples)
	if err == nil {
		err = s.retry(ctx, "record load", func(ctx context.Context) error { return s.c.Update(ctx, rec) })
	}
	if err != nil {
		return res, s.opError("record load", s.p.UpdateURL, graph, err,
			"the graph is loaded, but its load record is not written: the next --diff load reads it back and compares")
	}
	return res, nil
}

// fillAgain says whether a failed bulk fill may be sent again: the store
// failed transiently before the whole body went, or refused it with a
// status worth retrying, and the graph is still empty. The bulk loader
// adds a body whole or not at all, so a fill that failed so added
// nothing, and sending the triples again cannot add them twice. A body
// that went whole without an answer is never sent again: the store may
// be adding it still.
func (s *SPARQLStore) fillAgain(ctx context.Context, graph string, r *streamResult) bool {
	var se *sparqlq.StatusError
	switch {
	case r.fillErr != nil || ctx.Err() != nil:
		return false // the input failed, or the load was interrupted
	case r.complete && !errors.As(r.sendErr, &se):
		return false // outcome unknown
	case !transient(ctx, r.sendErr):
		return false
	}
	empty, err := s.graphEmpty(ctx, graph)
	return err == nil && empty
}

// unfill builds the error of a failed bulk fill of an empty graph and,
// where the store cannot still be adding the body, empties the graph
// again: the bulk loader adds nothing of a body that does not parse
// (sendStream ends a failed one so), but a connection cut between two
// triples would leave what arrived.
func (s *SPARQLStore) unfill(ctx context.Context, graph string, r *streamResult) error {
	const op = "replace graph"
	ep := redact.URL(s.p.GraphStoreURL)
	var se *sparqlq.StatusError
	if r.fillErr == nil && r.complete && !errors.As(r.sendErr, &se) {
		// The whole body went and no answer came: the store may be adding
		// it still, so nothing is dropped under it.
		return s.opError(op, s.p.GraphStoreURL, graph, r.sendErr, fmt.Sprintf(
			"outcome unknown: all %d triples were sent but no answer came; the store adds them all at once or none, so <%s> is empty or holds the whole new graph; load again to be sure", r.n, graph))
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	hint := "the graph is empty, as it was"
	if empty, err := s.graphEmpty(cctx, graph); err != nil || !empty {
		if err == nil {
			err = s.Drop(cctx, graph)
		}
		if err != nil {
			hint = fmt.Sprintf("the graph was empty and may now hold part of the upload: drop <%s> or load again", graph)
		}
	}
	if r.fillErr != nil {
		return &Error{Op: op, URL: ep, Graph: graph, Err: r.fillErr, Hint: joinHint(hintFor(r.fillErr, ep), hint)}
	}
	if errors.As(r.sendErr, &se) {
		hint = "the store refused the upload: " + hint
	}
	return s.opError(op, s.p.GraphStoreURL, graph, r.sendErr, hint)
}

// replaceByDiff makes the graph, which holds n triples, hold what fill
// writes by one update of the difference. The caller holds the lock.
func (s *SPARQLStore) replaceByDiff(ctx context.Context, graph string, n int64, fill func(rdf.Writer) error) (DiffResult, error) {
	const op = "replace graph"
	sn, err := s.readGraph(ctx, graph)
	if err != nil {
		return DiffResult{}, err
	}
	defer sn.close()
	res := DiffResult{Read: sn.read, Reason: "the store counts the graph's triples as read back"}
	if int64(len(sn.triples)) != n && sn.read != n {
		return res, s.opError(op, s.p.GraphStoreURL, graph,
			fmt.Errorf("the store returned %d of the graph's %d triples when read back", sn.read, n),
			"the previous graph is unchanged; the difference cannot be computed against part of it")
	}
	ch, err := s.compare(ctx, op, graph, sn, fill, true)
	if err != nil {
		return res, err
	}
	res.Deleted, res.Inserted, res.Triples = ch.deleted(sn), ch.inserted, ch.triples
	return res, s.sendChange(ctx, op, graph, sn, ch, res.Deleted)
}

// sendChange sends the difference between sn and ch, with the record of
// the new graph, as one update; with no difference it writes the record
// alone. A difference over the transaction limit is refused.
func (s *SPARQLStore) sendChange(ctx context.Context, op, graph string, sn *snapshot, ch *change, deleted int64) error {
	if deleted == 0 && ch.inserted == 0 {
		rec, err := stateUpdate(graph, ch.digest, ch.triples)
		if err == nil {
			err = s.retry(ctx, "record load", func(ctx context.Context) error { return s.c.Update(ctx, rec) })
		}
		if err != nil {
			return s.opError("record load", s.p.UpdateURL, graph, err, "the graph already held the new triples; its load record is not written")
		}
		return nil
	}
	if err := s.fits(op, graph, deleted+ch.inserted); err != nil {
		return err
	}
	update, err := s.diffUpdate(graph, sn, ch)
	if err != nil {
		return &Error{Op: op, Graph: graph, Err: err}
	}
	return s.sendDiff(ctx, graph, update, ch.digest)
}

// fits checks that an update writing writes triples is within the
// store's transaction limit.
func (s *SPARQLStore) fits(op, graph string, writes int64) error {
	if s.maxTx <= 0 || writes <= s.maxTx {
		return nil
	}
	return &Error{Op: op, URL: redact.URL(s.p.UpdateURL), Graph: graph,
		Err: fmt.Errorf("%w: %d triples to write, the limit is %d", ErrTransactionTooLarge, writes, s.maxTx),
		Hint: "the previous graph is unchanged; the store holds a transaction in memory until it commits (Oxigraph about 3 KB a triple), " +
			"so this one could exhaust its machine. Load with --in-place (the bulk loader: fast, bounded, not atomic), " +
			"or drop the graph first (an empty graph is filled atomically by the bulk loader), " +
			"or raise --max-transaction if the store has the memory"}
}

// dropSteps empties graph by updates of at most maxTx triples each, so
// that no one transaction is the size of the graph. It is not atomic: a
// failure part-way leaves part of the graph. Repeating it is safe.
func (s *SPARQLStore) dropSteps(ctx context.Context, graph string) error {
	del, err := sparqlq.Bound("graph_delete_some", sparqlq.Params{"graph": sparqlq.IRIParam(graph), "limit": sparqlq.IntParam(s.maxTx)})
	if err != nil {
		return err
	}
	has, err := sparqlq.Bound("graph_has_triples", sparqlq.Params{"graph": sparqlq.IRIParam(graph)})
	if err != nil {
		return err
	}
	for {
		left, err := s.c.Ask(ctx, has)
		if err != nil || !left {
			return err
		}
		if err := s.c.Update(ctx, del); err != nil {
			return err
		}
	}
}
