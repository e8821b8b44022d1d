package rdfenc

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"unicode/utf8"

	"github.com/kgrag/kgrag/rdf"
)

// Prefix binds a Turtle prefix name (without the colon; "" is the empty
// prefix) to a namespace IRI.
type Prefix struct {
	Name, IRI string
}

// Turtle writes triples as Turtle, streaming: it keeps only the
// previous triple's subject and predicate. Consecutive triples with the
// same subject share it (";"), and with the same subject and predicate
// share both (","). rdf:type is written "a". An IRI that starts with a
// registered namespace is written as a prefixed name when the rest is a
// PN_LOCAL that needs no backslash escape; otherwise as <IRI>. Canonical
// xsd:integer, xsd:decimal, xsd:boolean and exponent-form xsd:double
// literals are written bare; other literals as "..." with escapes (never
// the long """ form). Output is deterministic: the same triples in the
// same order give the same bytes.
//
// Terms are checked and made safe exactly as by NTriples (IRIs
// percent-encoded where needed, invalid UTF-8 in literals replaced by
// U+FFFD, language tags and blank node labels validated). A rejected
// triple is not written and the error wraps ErrInvalidTerm.
//
// It is not safe for concurrent use. The zero value is not usable: call
// NewTurtle. Call Close when done; it does not close w. After a
// write error from w, or an invalid prefix list, every call returns that
// error.
type Turtle struct {
	w        io.Writer
	buf      []byte
	tmp      []byte
	prefixes []turtlePrefix // longest namespace first
	n        int64
	err      error
	open     bool // a statement is open: the next triple may continue it
	closed   bool
	lastS    rdf.Term
	lastP    string
	lt       langCache

	// Kept by a segment's encoder (see TurtleSegment): it never flushes,
	// and it records where its first triple's predicate and object begin.
	segment      bool
	firstS       rdf.Term
	firstP       string
	pStart, oBeg int
}

type turtlePrefix struct {
	name string
	iri  []byte // namespace IRI as written (after appendIRI)
}

// NewTurtle returns an encoder writing to w. It writes an @prefix
// directive for each prefix, in the order given. A prefix whose name is
// not a valid PN_PREFIX, whose IRI is not absolute, or whose name repeats
// an earlier one makes every later call return an error.
func NewTurtle(w io.Writer, prefixes []Prefix) *Turtle {
	e := &Turtle{w: w, buf: make([]byte, 0, bufSize+4096), tmp: make([]byte, 0, 256)}
	seen := make(map[string]bool, len(prefixes))
	for _, p := range prefixes {
		if !validPrefixName(p.Name) {
			e.err = fmt.Errorf("rdfenc: turtle prefix %q: name is not a valid PN_PREFIX: %w", p.Name, ErrInvalidTerm)
			return e
		}
		if seen[p.Name] {
			e.err = fmt.Errorf("rdfenc: turtle prefix %q: declared twice: %w", p.Name, ErrInvalidTerm)
			return e
		}
		seen[p.Name] = true
		iri, err := appendIRI(nil, p.IRI, "turtle prefix "+p.Name)
		if err != nil {
			e.err = err
			return e
		}
		e.buf = append(e.buf, "@prefix "...)
		e.buf = append(e.buf, p.Name...)
		e.buf = append(e.buf, ": <"...)
		e.buf = append(e.buf, iri...)
		e.buf = append(e.buf, "> .\n"...)
		e.prefixes = append(e.prefixes, turtlePrefix{name: p.Name, iri: iri})
	}
	if len(prefixes) > 0 {
		e.buf = append(e.buf, '\n')
	}
	sort.SliceStable(e.prefixes, func(i, j int) bool {
		return len(e.prefixes[i].iri) > len(e.prefixes[j].iri)
	})
	return e
}

// WriteTriple encodes one triple. It returns an error wrapping
// ErrInvalidTerm, and writes nothing, when the triple cannot be written as
// valid Turtle.
func (e *Turtle) WriteTriple(t rdf.Triple) error {
	if e.err != nil {
		return e.err
	}
	if e.closed {
		return errClosed
	}
	b := e.buf
	mark := len(b)
	var err error
	sameS := e.open && t.S.Kind == e.lastS.Kind && t.S.Value == e.lastS.Value
	if t.P.Kind != rdf.KindIRI {
		return kindError("predicate", t.P)
	}
	switch {
	case sameS && t.P.Value == e.lastP:
		b = append(b, ", "...)
	case sameS:
		b = append(b, " ;\n\t"...)
		b, err = e.appendPredicate(b, t.P.Value)
		b = append(b, ' ')
	default:
		if e.open {
			b = append(b, " .\n"...)
		}
		switch t.S.Kind {
		case rdf.KindIRI:
			b, err = e.appendIRI(b, t.S.Value, "subject")
		case rdf.KindBlank:
			b, err = appendBlank(b, t.S.Value, "subject")
		default:
			err = kindError("subject", t.S)
		}
		if err == nil {
			b = append(b, ' ')
			pStart := len(b)
			b, err = e.appendPredicate(b, t.P.Value)
			b = append(b, ' ')
			if e.segment && e.n == 0 {
				e.pStart, e.oBeg = pStart, len(b)
			}
		}
	}
	if err == nil {
		b, err = e.appendObject(b, t.O)
	}
	if err != nil {
		e.buf = b[:mark]
		return err
	}
	e.buf = b
	e.open = true
	e.lastS = t.S
	e.lastP = t.P.Value
	if e.segment && e.n == 0 {
		e.firstS, e.firstP = t.S, t.P.Value
	}
	e.n++
	if len(b) >= bufSize && !e.segment {
		return e.flush()
	}
	return nil
}

// Count returns the number of triples written so far.
func (e *Turtle) Count() int64 { return e.n }

// Close ends the last statement and flushes everything to w. It does not
// close w. Calling Close again does nothing; WriteTriple after Close fails.
func (e *Turtle) Close() error {
	if e.err != nil {
		return e.err
	}
	if e.closed {
		return nil
	}
	if e.open {
		e.buf = append(e.buf, " .\n"...)
		e.open = false
	}
	e.closed = true
	return e.flush()
}

func (e *Turtle) flush() error {
	if len(e.buf) == 0 {
		return nil
	}
	if _, err := e.w.Write(e.buf); err != nil {
		e.err = fmt.Errorf("rdfenc: write turtle: %w", err)
		return e.err
	}
	e.buf = e.buf[:0]
	return nil
}

func (e *Turtle) appendPredicate(b []byte, iri string) ([]byte, error) {
	if iri == rdf.RDFType {
		return append(b, 'a'), nil
	}
	return e.appendIRI(b, iri, "predicate")
}

// appendIRI appends iri as a prefixed name or as <iri>.
func (e *Turtle) appendIRI(b []byte, iri, role string) ([]byte, error) {
	tmp, err := appendIRI(e.tmp[:0], iri, role)
	e.tmp = tmp
	if err != nil {
		return b, err
	}
	for i := range e.prefixes {
		p := &e.prefixes[i]
		if bytes.HasPrefix(tmp, p.iri) && validLocalName(tmp[len(p.iri):]) {
			b = append(b, p.name...)
			b = append(b, ':')
			return append(b, tmp[len(p.iri):]...), nil
		}
	}
	b = append(b, '<')
	b = append(b, tmp...)
	return append(b, '>'), nil
}

func (e *Turtle) appendObject(b []byte, o rdf.Term) ([]byte, error) {
	switch o.Kind {
	case rdf.KindIRI:
		return e.appendIRI(b, o.Value, "object")
	case rdf.KindBlank:
		return appendBlank(b, o.Value, "object")
	case rdf.KindLiteral:
	default:
		return b, kindError("object", o)
	}
	form, err := checkLiteral(o, &e.lt)
	if err != nil {
		return b, err
	}
	switch form {
	case litString:
		return appendQuoted(b, o.Value), nil
	case litLang:
		b = appendQuoted(b, o.Value)
		b = append(b, '@')
		return append(b, o.Lang...), nil
	}
	if bareLiteral(o.Value, o.Datatype) {
		return append(b, o.Value...), nil
	}
	b = appendQuoted(b, o.Value)
	b = append(b, "^^"...)
	return e.appendIRI(b, o.Datatype, "datatype")
}

// bareLiteral reports whether a typed literal can be written unquoted in
// Turtle and read back with the same lexical form and datatype.
func bareLiteral(v, datatype string) bool {
	switch datatype {
	case rdf.XSDInteger:
		return isCanonicalInteger(v)
	case rdf.XSDDouble:
		return isTurtleDouble(v)
	case rdf.XSDNS + "decimal":
		return isTurtleDecimal(v)
	case rdf.XSDBoolean:
		return v == "true" || v == "false"
	}
	return false
}

// isCanonicalInteger: -?(0|[1-9][0-9]*), not "-0".
func isCanonicalInteger(v string) bool {
	if len(v) > 0 && v[0] == '-' {
		v = v[1:]
		if v == "0" {
			return false
		}
	}
	return isDigits(v) && (v[0] != '0' || len(v) == 1)
}

// isTurtleDecimal matches DECIMAL: [+-]? [0-9]* '.' [0-9]+
func isTurtleDecimal(v string) bool {
	v = skipSign(v)
	n := digitsPrefix(v)
	if n == len(v) || v[n] != '.' {
		return false
	}
	m := digitsPrefix(v[n+1:])
	return m > 0 && n+1+m == len(v)
}

// isTurtleDouble matches DOUBLE: a mantissa ([0-9]+ '.' [0-9]* | '.'
// [0-9]+ | [0-9]+) and a required exponent [eE] [+-]? [0-9]+.
func isTurtleDouble(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] == 'e' || v[i] == 'E' {
			return isXSDDecimal(v[:i]) && isXSDInteger(v[i+1:])
		}
	}
	return false
}

// validPrefixName reports whether name is empty or a PN_PREFIX:
// PN_CHARS_BASE ((PN_CHARS | '.')* PN_CHARS)?
func validPrefixName(name string) bool {
	if name == "" {
		return true
	}
	if !utf8.ValidString(name) {
		return false
	}
	for i, r := range name {
		switch {
		case i == 0:
			if !isPNCharsBase(r) {
				return false
			}
		case r == '.':
			if i == len(name)-1 {
				return false
			}
		case !isPNChars(r):
			return false
		}
	}
	return true
}

// localFirst and localRest are the ASCII bytes allowed first and later in
// a PN_LOCAL without backslash escapes. "%" is allowed because the caller
// passes IRIs from appendIRI, where every "%" starts a %XX escape (PLX).
var localFirst, localRest [128]bool

func init() {
	for c := 'a'; c <= 'z'; c++ {
		localFirst[c], localRest[c] = true, true
		localFirst[c-'a'+'A'], localRest[c-'a'+'A'] = true, true
	}
	for c := '0'; c <= '9'; c++ {
		localFirst[c], localRest[c] = true, true
	}
	for _, c := range "_:%" {
		localFirst[c], localRest[c] = true, true
	}
	localRest['-'] = true
	localRest['.'] = true
}

// validLocalName reports whether s is a PN_LOCAL (or empty) that needs no
// backslash escape. s comes from appendIRI, so it is valid UTF-8 and its
// "%" signs start %XX escapes.
func validLocalName(s []byte) bool {
	if len(s) == 0 {
		return true
	}
	if s[len(s)-1] == '.' {
		return false
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if i == 0 && !localFirst[c] || !localRest[c] {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if i == 0 && !isPNCharsU(r) || !isPNChars(r) {
			return false
		}
		i += size
	}
	return true
}
