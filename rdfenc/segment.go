package rdfenc

import (
	"fmt"

	"github.com/kgrag/kgrag/rdf"
)

// Segments let several goroutines encode the parts of one output while one
// goroutine writes them in order: each part is encoded into a segment, in
// memory, and the encoder then writes the segment as if its triples had
// been given to the encoder's WriteTriple one by one. The bytes are those
// of the serial encoder, which is what lets kgrag load encode on every core
// and still write the file it always wrote.

// TurtleSegment holds triples encoded for a Turtle encoder's
// WriteSegment. A segment is not safe for concurrent use, but segments of
// one encoder may be written to from different goroutines at once.
type TurtleSegment struct {
	t Turtle
}

// NewSegment returns an empty segment of e, with e's prefixes. Call it
// before the encoder is shared with other goroutines or from the goroutine
// that writes to e: it reads e's state.
func (e *Turtle) NewSegment() *TurtleSegment {
	return &TurtleSegment{t: Turtle{
		buf:      make([]byte, 0, bufSize),
		tmp:      make([]byte, 0, 256),
		prefixes: e.prefixes,
		err:      e.err,
		segment:  true,
	}}
}

// WriteTriple encodes t into the segment. It returns the error e's
// WriteTriple would return for t, and then writes nothing.
func (s *TurtleSegment) WriteTriple(t rdf.Triple) error { return s.t.WriteTriple(t) }

// Count returns the number of triples in the segment.
func (s *TurtleSegment) Count() int64 { return s.t.n }

// Reset empties the segment for reuse, keeping its memory.
func (s *TurtleSegment) Reset() {
	t := &s.t
	t.buf, t.n, t.open = t.buf[:0], 0, false
	t.lastS, t.lastP, t.firstS, t.firstP = rdf.Term{}, "", rdf.Term{}, ""
	t.pStart, t.oBeg = 0, 0
}

// WriteSegment writes the triples of s as WriteTriple would have written
// them one by one, in the order s received them: a first triple that
// continues e's open statement (same subject, or subject and predicate)
// joins it. s is left as it was, for Reset and reuse.
func (e *Turtle) WriteSegment(s *TurtleSegment) error {
	if e.err != nil {
		return e.err
	}
	if e.closed {
		return errClosed
	}
	t := &s.t
	if t.n == 0 {
		return nil
	}
	b := t.buf
	sameS := e.open && t.firstS.Kind == e.lastS.Kind && t.firstS.Value == e.lastS.Value
	switch {
	case sameS && t.firstP == e.lastP:
		e.buf = append(e.buf, ", "...)
		b = b[t.oBeg:]
	case sameS:
		e.buf = append(e.buf, " ;\n\t"...)
		b = b[t.pStart:]
	case e.open:
		e.buf = append(e.buf, " .\n"...)
	}
	if err := e.writeThrough(b); err != nil {
		return err
	}
	e.open, e.lastS, e.lastP = true, t.lastS, t.lastP
	e.n += t.n
	return nil
}

// writeThrough appends b to the buffer, or, when b is large, writes the
// buffer and then b straight to w, saving a copy.
func (e *Turtle) writeThrough(b []byte) error {
	if len(e.buf)+len(b) < bufSize {
		e.buf = append(e.buf, b...)
		return nil
	}
	if err := e.flush(); err != nil {
		return err
	}
	if _, err := e.w.Write(b); err != nil {
		e.err = fmt.Errorf("rdfenc: write turtle: %w", err)
		return e.err
	}
	return nil
}

// NTriplesSegment holds triples encoded for an N-Triples encoder's
// WriteSegment; see TurtleSegment.
type NTriplesSegment struct {
	t NTriples
}

// NewSegment returns an empty segment of e.
func (e *NTriples) NewSegment() *NTriplesSegment {
	return &NTriplesSegment{t: NTriples{buf: make([]byte, 0, bufSize)}}
}

// WriteTriple encodes t into the segment. It returns the error e's
// WriteTriple would return for t, and then writes nothing.
func (s *NTriplesSegment) WriteTriple(t rdf.Triple) error {
	mark := len(s.t.buf)
	b, err := appendNTTriple(s.t.buf, t, &s.t.lt)
	if err != nil {
		s.t.buf = b[:mark]
		return err
	}
	s.t.buf = b
	s.t.n++
	return nil
}

// Count returns the number of triples in the segment.
func (s *NTriplesSegment) Count() int64 { return s.t.n }

// Reset empties the segment for reuse, keeping its memory.
func (s *NTriplesSegment) Reset() { s.t.buf, s.t.n = s.t.buf[:0], 0 }

// WriteSegment writes the lines of s, as WriteTriple would have written
// them one by one.
func (e *NTriples) WriteSegment(s *NTriplesSegment) error {
	if e.err != nil {
		return e.err
	}
	b := s.t.buf
	e.n += s.t.n
	if len(e.buf)+len(b) < bufSize {
		e.buf = append(e.buf, b...)
		return nil
	}
	if err := e.flush(); err != nil {
		return err
	}
	if _, err := e.w.Write(b); err != nil {
		e.err = fmt.Errorf("rdfenc: write n-triples: %w", err)
		return e.err
	}
	return nil
}
