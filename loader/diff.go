package loader

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"mime"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/kgrag/kgrag/rdf"
	"github.com/kgrag/kgrag/rdfenc"
	"github.com/kgrag/kgrag/sparqlq"
)

// A diff load sends only the difference between what the store's graph
// holds and the new triples, as one update:
//
//	DELETE DATA { GRAPH <g> { gone } } ; INSERT DATA { GRAPH <g> { new } } ; record
//
// It must know what the store holds. It reads the graph back (Graph Store
// Protocol GET, as N-Triples), so the difference is computed against the
// store itself rather than against a file beside the output that may have
// drifted from it. And it checks the graph is the one kgrag left: every
// load that goes through LoadDiff records, in its own commit, a digest of
// the graph's triples and their number in LoadsGraph
//
//	<g> <urn:kgrag:loadedDigest> "HEX" ; <urn:kgrag:loadedTriples> N .
//
// The digest is the sum, modulo 2^128, of the first 128 bits of the
// SHA-256 of each distinct triple's N-Triples line (as rdfenc writes it),
// so it does not depend on the order a store returns triples in. When
// there is no record (the graph was never diff-loaded, or a plain load
// replaced it since), when what is read back does not match the record
// (someone changed the graph, or the store returned only part of it) or
// when the change is too large for one request, LoadDiff falls back to
// ReplaceGraph, which records the digest too. Either way the graph ends
// holding exactly the triples fill writes.

// DefaultDiffMax is the largest change, as a fraction of the new graph's
// triples (deleted plus inserted), that LoadDiff sends as a difference;
// beyond it a full replacement costs about as much and keeps each request
// to the store's batch size.
const DefaultDiffMax = 0.2

// DiffOptions configure LoadDiff.
type DiffOptions struct {
	// MaxChange is the largest change sent as a difference, as a fraction
	// of the new graph; zero means DefaultDiffMax.
	MaxChange float64
}

// DiffResult says what LoadDiff did.
type DiffResult struct {
	// Replaced is set when the graph was replaced whole; Reason says why.
	Replaced bool
	Reason   string
	// Read is the number of triples read back from the store (0 when it
	// was not read).
	Read int64
	// Deleted and Inserted count the triples of the difference sent.
	Deleted, Inserted int64
	// Triples is the number of distinct triples in the graph afterwards.
	Triples int64
}

// tripleKey is the first 128 bits of the SHA-256 of a triple's line.
type tripleKey [16]byte

// setDigest is a digest of a set of triples: the sum of their keys modulo
// 2^128, so that the order they come in does not matter.
type setDigest struct{ hi, lo uint64 }

func (d *setDigest) add(k tripleKey) {
	lo := binary.BigEndian.Uint64(k[8:])
	hi := binary.BigEndian.Uint64(k[:8])
	var carry uint64
	d.lo, carry = d.lo+lo, 0
	if d.lo < lo {
		carry = 1
	}
	d.hi += hi + carry
}

func (d setDigest) String() string { return fmt.Sprintf("%016x%016x", d.hi, d.lo) }

// keyer turns triples into their canonical lines and keys.
type keyer struct {
	enc  rdfenc.LineEncoder
	line []byte
}

// key encodes t in a canonical form; the line is valid until the next
// call. Stores give back some literals in forms other than the one kgrag
// wrote: Oxigraph and Fuseki keep an xsd:double as its value and write it
// as "20.333333333333332" or "1.6666666666666667e0", and lower language
// tags. The canonical form is what rdfenc writes for the same value, so a
// triple compares equal whichever way it was written.
func (k *keyer) key(t rdf.Triple) (tripleKey, []byte, error) {
	t.O = canonical(t.O)
	var err error
	k.line, err = k.enc.Append(k.line[:0], t)
	if err != nil {
		return tripleKey{}, nil, err
	}
	sum := sha256.Sum256(k.line)
	var out tripleKey
	copy(out[:], sum[:16])
	return out, k.line, nil
}

// canonical returns o in the form rdfenc writes for its value, for the
// literals whose value stores keep rather than their text.
func canonical(o rdf.Term) rdf.Term {
	if o.Kind != rdf.KindLiteral {
		return o
	}
	switch o.Datatype {
	case rdf.RDFLangString:
		// Tags compare without case (RDF 1.1).
		o.Lang = strings.ToLower(o.Lang)
	case rdf.XSDDouble:
		if f, err := strconv.ParseFloat(strings.TrimSpace(o.Value), 64); err == nil || errors.Is(err, strconv.ErrRange) {
			o.Value = rdf.FormatDouble(f)
		}
	case rdf.XSDInteger:
		if n, err := strconv.ParseInt(strings.TrimSpace(o.Value), 10, 64); err == nil {
			o.Value = strconv.FormatInt(n, 10)
		}
	case rdf.XSDBoolean:
		switch strings.TrimSpace(o.Value) {
		case "1", "true":
			o.Value = "true"
		case "0", "false":
			o.Value = "false"
		}
	}
	return o
}

// loadState is what LoadsGraph records of a graph's last load.
type loadState struct {
	digest  string
	triples int64
	ok      bool
}

func (s *SPARQLStore) loadState(ctx context.Context, graph string) (loadState, error) {
	var st loadState
	err := s.retry(ctx, "read load record", func(ctx context.Context) error {
		var err error
		st, err = readLoadState(ctx, s.c, graph)
		return err
	})
	if err != nil {
		return loadState{}, s.opError("read load record", s.p.QueryURL, graph, err, "")
	}
	return st, nil
}

func readLoadState(ctx context.Context, c *sparqlq.Client, graph string) (loadState, error) {
	q, err := sparqlq.Bound("load_state", sparqlq.Params{"loads": sparqlq.IRIParam(LoadsGraph), "graph": sparqlq.IRIParam(graph)})
	if err != nil {
		return loadState{}, err
	}
	res, err := c.Select(ctx, q)
	if err != nil {
		return loadState{}, err
	}
	if len(res.Bindings) != 1 { // none, or two records: not sure
		return loadState{}, nil
	}
	n, err := res.Bindings[0]["triples"].Int()
	if err != nil {
		return loadState{}, nil
	}
	return loadState{digest: res.Bindings[0]["digest"].Value, triples: n, ok: true}, nil
}

// Stamp says which load of graph the store holds: the digest and triple
// count that the last load recording them wrote in the same transaction
// as the graph (every --diff load does; a plain load removes the record),
// or "" when there is no record. A reader that reads the same non-empty
// Stamp before and after its queries read one load of the graph.
func Stamp(ctx context.Context, c *sparqlq.Client, graph string) (string, error) {
	st, err := readLoadState(ctx, c, graph)
	if err != nil || !st.ok {
		return "", err
	}
	return fmt.Sprintf("%s/%d", st.digest, st.triples), nil
}

// stateClear is the update that forgets graph's loaded state.
func stateClear(graph string) (string, error) {
	return sparqlq.Bound("load_state_clear", sparqlq.Params{"loads": sparqlq.IRIParam(LoadsGraph), "graph": sparqlq.IRIParam(graph)})
}

// stateUpdate is the update that records d and n as graph's loaded state.
func stateUpdate(graph string, d setDigest, n int64) (string, error) {
	return sparqlq.Bound("load_state_set", sparqlq.Params{
		"loads": sparqlq.IRIParam(LoadsGraph), "graph": sparqlq.IRIParam(graph),
		"digest": sparqlq.StringParam(d.String()), "triples": sparqlq.IntParam(n),
		"at": sparqlq.StringParam(time.Now().UTC().Format(time.RFC3339)),
	})
}

// oldTriple is a triple read back from the store: where its line is in
// the spool, and whether the new graph has it too.
type oldTriple struct {
	off  int64
	n    int32
	kept bool
}

// snapshot is the graph as read back from the store.
type snapshot struct {
	triples map[tripleKey]oldTriple
	digest  setDigest
	read    int64 // lines read, duplicates included
	spool   *os.File
}

func (sn *snapshot) close() {
	if sn.spool != nil {
		sn.spool.Close()
		os.Remove(sn.spool.Name())
	}
}

// line returns the spooled line of o.
func (sn *snapshot) line(o oldTriple) ([]byte, error) {
	b := make([]byte, o.n)
	_, err := sn.spool.ReadAt(b, o.off)
	return b, err
}

// errNotNTriples: the store answered the GET in another syntax.
var errNotNTriples = errors.New("the store did not answer in N-Triples")

// readGraph reads graph back from the store by Graph Store Protocol GET.
func (s *SPARQLStore) readGraph(ctx context.Context, graph string) (*snapshot, error) {
	var sn *snapshot
	err := s.retry(ctx, "read graph", func(ctx context.Context) error {
		if sn != nil {
			sn.close()
		}
		f, err := os.CreateTemp("", "kgrag-diff-*.nt")
		if err != nil {
			return err
		}
		// Unlinked at once where the system allows (the open file stays
		// readable), so that a load killed now leaves no spool behind;
		// close removes it elsewhere.
		_ = os.Remove(f.Name())
		sn = &snapshot{triples: make(map[tripleKey]oldTriple), spool: f}
		resp, err := s.getGraph(ctx, graph, "application/n-triples, text/plain;q=0.5")
		if err != nil || resp == nil { // no response: no such graph, empty
			return err
		}
		defer resp.Body.Close()
		if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/n-triples" && mt != "text/plain" {
			return fmt.Errorf("%w (Content-Type %q)", errNotNTriples, resp.Header.Get("Content-Type"))
		}
		w := bufio.NewWriterSize(f, 1<<20)
		var k keyer
		var off int64
		d := rdfenc.NewNTriplesReader(resp.Body)
		for {
			t, err := d.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
			sn.read++
			key, line, err := k.key(t)
			if err != nil {
				return fmt.Errorf("line %d: %w", d.Line(), err)
			}
			if _, dup := sn.triples[key]; dup {
				continue
			}
			sn.triples[key] = oldTriple{off: off, n: int32(len(line))}
			sn.digest.add(key)
			if _, err := w.Write(line); err != nil {
				return err
			}
			off += int64(len(line))
		}
		return w.Flush()
	})
	if err != nil {
		if sn != nil {
			sn.close()
		}
		return nil, s.opError("read graph", s.p.GraphStoreURL, graph, err, "")
	}
	return sn, nil
}

// change is the difference between a snapshot and the new triples.
type change struct {
	inserts  bytes.Buffer // N-Triples lines
	inserted int64
	added    map[tripleKey]struct{}
	digest   setDigest // of the new graph
	triples  int64     // distinct new triples
}

// diffWriter receives the new triples and sorts them into kept and new;
// with a counter it reports them, every batch, as compared.
type diffWriter struct {
	sn      *snapshot
	ch      *change
	k       keyer
	counter Counter
	batch   int64
	n       int64
}

func (w *diffWriter) WriteTriple(t rdf.Triple) error {
	if w.counter != nil {
		if w.n++; w.n == w.batch {
			w.counter.Add(w.n)
			w.n = 0
		}
	}
	key, line, err := w.k.key(t)
	if err != nil {
		return err
	}
	if o, ok := w.sn.triples[key]; ok {
		if !o.kept {
			o.kept = true
			w.sn.triples[key] = o
			w.ch.digest.add(key)
			w.ch.triples++
		}
		return nil
	}
	if _, dup := w.ch.added[key]; dup {
		return nil
	}
	w.ch.added[key] = struct{}{}
	w.ch.digest.add(key)
	w.ch.triples++
	w.ch.inserted++
	w.ch.inserts.Write(line)
	return nil
}

// compare sorts what fill writes against the snapshot sn: the change to
// send, and the new graph's digest. progress is as for newDiffWriter.
func (s *SPARQLStore) compare(ctx context.Context, op, graph string, sn *snapshot, fill func(rdf.Writer) error, progress bool) (*change, error) {
	ch := &change{added: make(map[tripleKey]struct{})}
	dw := s.newDiffWriter(sn, ch, progress)
	if err := fill(dw); err != nil {
		return nil, &Error{Op: op, Graph: graph, Err: err, Hint: "the previous graph is unchanged"}
	}
	dw.flush()
	if err := ctx.Err(); err != nil {
		return nil, s.opError(op, s.p.UpdateURL, graph, err, "the previous graph is unchanged")
	}
	return ch, nil
}

// deleted is the number of triples of sn that the new graph lacks.
func (ch *change) deleted(sn *snapshot) int64 {
	return int64(len(sn.triples)) - (ch.triples - ch.inserted)
}

// newDiffWriter returns a diffWriter; progress says whether it reports to
// the store's counter (not where a replacement may follow and count the
// same triples again).
func (s *SPARQLStore) newDiffWriter(sn *snapshot, ch *change, progress bool) *diffWriter {
	w := &diffWriter{sn: sn, ch: ch, batch: int64(s.batch)}
	if progress {
		w.counter = s.counter
	}
	return w
}

// flush reports the triples not yet reported.
func (w *diffWriter) flush() {
	if w.counter != nil && w.n > 0 {
		w.counter.Add(w.n)
		w.n = 0
	}
}

// digestWriter passes triples on and keeps the digest of the distinct ones.
type digestWriter struct {
	w      rdf.Writer
	k      keyer
	seen   map[tripleKey]struct{}
	digest setDigest
}

func (w *digestWriter) WriteTriple(t rdf.Triple) error {
	key, _, err := w.k.key(t)
	if err != nil {
		return err
	}
	if _, dup := w.seen[key]; !dup {
		w.seen[key] = struct{}{}
		w.digest.add(key)
	}
	return w.w.WriteTriple(t)
}

// LoadDiff makes graph hold exactly the triples fill writes, sending only
// the difference from what it holds now when it can (see the comment at
// the top of this file for how it knows), and otherwise replacing it whole
// as ReplaceGraph does. fill may be called twice: once to compute the
// difference and, when that is too large, again for the replacement; it
// must write the same triples each time. Like ReplaceGraph it is atomic:
// the difference goes in one update, which the stores run as one
// transaction, so a failure or an interruption leaves the previous graph.
func (s *SPARQLStore) LoadDiff(ctx context.Context, graph string, fill func(w rdf.Writer) error, o DiffOptions) (DiffResult, error) {
	if _, err := sparqlq.IRIRef(graph); err != nil {
		return DiffResult{}, &Error{Op: "diff load", Graph: graph, Err: err}
	}
	if o.MaxChange <= 0 {
		o.MaxChange = DefaultDiffMax
	}
	switch {
	case !s.p.Caps.Update || s.p.QueryURL == "" || !s.p.Caps.GraphStore:
		return s.replaceRecorded(ctx, graph, fill, "the store profile lacks SPARQL Update, a query endpoint or the Graph Store Protocol a diff needs")
	case s.p.Quirks.LossyReadBack:
		return s.replaceRecorded(ctx, graph, fill, "this store does not give its triples back exactly ("+s.p.Name+" writes xsd:double values with 6 digits), so no difference can be computed against it")
	}
	lk, err := s.lock(ctx, graph, "")
	if err != nil {
		return DiffResult{}, err
	}
	res, replace, err := s.diff(ctx, graph, fill, o)
	lk.release(ctx)
	if err != nil || replace == "" {
		return res, err
	}
	full, err := s.replaceRecorded(ctx, graph, fill, replace)
	full.Read = res.Read
	return full, err
}

// diff computes and sends the difference, under the graph's lock. It
// returns a reason when the graph must be replaced whole instead.
func (s *SPARQLStore) diff(ctx context.Context, graph string, fill func(w rdf.Writer) error, o DiffOptions) (DiffResult, string, error) {
	st, err := s.loadState(ctx, graph)
	if err != nil {
		return DiffResult{}, "", err
	}
	if !st.ok {
		return DiffResult{}, "no record of an earlier diff load of this graph (the first diff load, or a load without --diff since)", nil
	}
	sn, err := s.readGraph(ctx, graph)
	if errors.Is(err, errNotNTriples) {
		return DiffResult{}, "the store did not return the graph as N-Triples", nil
	}
	if err != nil {
		return DiffResult{}, "", err
	}
	defer sn.close()
	res := DiffResult{Read: sn.read}
	if int64(len(sn.triples)) != st.triples || sn.digest.String() != st.digest {
		n, cerr := s.Count(ctx, graph)
		if cerr == nil && n != sn.read {
			return res, fmt.Sprintf("the store returned %d of the graph's %d triples when read back", sn.read, n), nil
		}
		return res, fmt.Sprintf("the graph is not the one the last load left (it holds %d triples, digest %s; the load left %d, digest %s): changed by someone else",
			len(sn.triples), sn.digest, st.triples, st.digest), nil
	}
	ch, err := s.compare(ctx, "diff load", graph, sn, fill, s.bounded) // bounded: no replacement follows
	if err != nil {
		return res, "", err
	}
	deleted := ch.deleted(sn)
	res.Deleted, res.Inserted, res.Triples = deleted, ch.inserted, ch.triples
	if deleted == 0 && ch.inserted == 0 {
		return res, "", nil // the graph is verified to hold the new triples already
	}
	// On a store with bounded transactions a replacement is itself a
	// difference (replaceBounded), so a large change goes as one too.
	if !s.bounded && float64(deleted+ch.inserted) > o.MaxChange*float64(max(ch.triples, 1)) {
		return res, fmt.Sprintf("the change (%d triples deleted, %d inserted) is over %.0f%% of the graph", deleted, ch.inserted, 100*o.MaxChange), nil
	}
	return res, "", s.sendChange(ctx, "diff load", graph, sn, ch, deleted)
}

// diffUpdate builds the one update that applies the change and records
// the new graph's digest.
func (s *SPARQLStore) diffUpdate(graph string, sn *snapshot, ch *change) (string, error) {
	ref, err := sparqlq.IRIRef(graph)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.Grow(ch.inserts.Len() + 4096)
	wrote := false
	for _, o := range sn.triples {
		if o.kept {
			continue
		}
		if !wrote {
			b.WriteString("DELETE DATA { GRAPH " + ref + " {\n")
			wrote = true
		}
		line, err := sn.line(o)
		if err != nil {
			return "", fmt.Errorf("read spooled triple: %w", err)
		}
		b.Write(line)
	}
	if wrote {
		b.WriteString("} } ;\n")
	}
	if ch.inserts.Len() > 0 {
		b.WriteString("INSERT DATA { GRAPH " + ref + " {\n")
		b.Write(ch.inserts.Bytes())
		b.WriteString("} } ;\n")
	}
	rec, err := stateUpdate(graph, ch.digest, ch.triples)
	if err != nil {
		return "", err
	}
	b.WriteString(rec)
	return b.String(), nil
}

// sendDiff sends the update. After a lost answer or an interruption the
// record says whether it landed: it is part of the same transaction.
func (s *SPARQLStore) sendDiff(ctx context.Context, graph, update string, want setDigest) error {
	landed := func(ctx context.Context) (bool, error) {
		st, err := s.loadState(ctx, graph)
		return err == nil && st.ok && st.digest == want.String(), err
	}
	err := s.updateChecked(ctx, "send difference", update, true, landed)
	if err == nil {
		return nil
	}
	var se *sparqlq.StatusError
	if errors.As(err, &se) {
		return s.opError("diff load", s.p.UpdateURL, graph, err, "the store refused the difference: the previous graph is unchanged")
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	if awaitDone(cctx, landed) {
		s.log.Info("the difference landed although its answer was lost or the load interrupted", "graph", graph)
		return nil
	}
	return s.opError("diff load", s.p.UpdateURL, graph, err,
		fmt.Sprintf("outcome unknown: the difference had not landed %s later; <%s> holds the previous graph or, if the store still runs the update, the new one; load again to be sure", cleanupTimeout, graph))
}

// replaceRecorded replaces graph whole, recording its digest in the
// commit so that the next LoadDiff can send a difference.
func (s *SPARQLStore) replaceRecorded(ctx context.Context, graph string, fill func(w rdf.Writer) error, reason string) (DiffResult, error) {
	if s.bounded {
		// A fill of the empty graph, or the difference from what it
		// holds, checked against the store's count instead of a record.
		res, err := s.replaceBounded(ctx, graph, fill)
		if res.Replaced || err != nil {
			res.Reason = reason
		} else {
			res.Reason = reason + "; " + res.Reason
		}
		return res, err
	}
	var dw *digestWriter
	n, err := s.replaceGraph(ctx, graph, func(w rdf.Writer) error {
		dw = &digestWriter{w: w, seen: make(map[tripleKey]struct{})}
		return fill(dw)
	}, func() (string, error) {
		return stateUpdate(graph, dw.digest, int64(len(dw.seen)))
	})
	res := DiffResult{Replaced: true, Reason: reason, Triples: n}
	if dw != nil {
		res.Triples = int64(len(dw.seen))
	}
	if err != nil && reason != "" {
		var le *Error
		if errors.As(err, &le) {
			le.Hint = joinHint(le.Hint, "a full replacement was needed: "+reason)
		}
	}
	return res, err
}
