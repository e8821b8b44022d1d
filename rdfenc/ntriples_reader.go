package rdfenc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kgrag/kgrag/rdf"
)

// NTriplesReader reads N-Triples, one triple per Read. It is made for
// reading back what a store holds (a Graph Store Protocol GET, a CONSTRUCT
// answer): it accepts the whole N-Triples grammar, including escapes in
// IRIs and literals, comments and blank lines, but checks terms no further
// than it must to split them (an IRI is not checked to be absolute, nor a
// language tag to be well-formed). Literals of xsd:string come back with an
// empty Datatype, as rdf.Typed makes them.
type NTriplesReader struct {
	r    *bufio.Reader
	line int
	long []byte // a line longer than the reader's buffer
}

// NewNTriplesReader returns a reader of r.
func NewNTriplesReader(r io.Reader) *NTriplesReader {
	return &NTriplesReader{r: bufio.NewReaderSize(r, 1<<20)}
}

// Line returns the number of the line the last triple was read from.
func (d *NTriplesReader) Line() int { return d.line }

// Read returns the next triple, or io.EOF after the last one. A syntax
// error names its line.
func (d *NTriplesReader) Read() (rdf.Triple, error) {
	for {
		line, err := d.next()
		if err != nil {
			return rdf.Triple{}, err
		}
		d.line++
		p := ntParser{s: line}
		p.skipSpace()
		if p.done() || p.s[p.i] == '#' {
			continue
		}
		t, err := p.triple()
		if err != nil {
			return rdf.Triple{}, fmt.Errorf("rdfenc: n-triples line %d: %w", d.line, err)
		}
		return t, nil
	}
}

// next returns the next line without its end of line; it is valid until
// the following call.
func (d *NTriplesReader) next() ([]byte, error) {
	line, err := d.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		d.long = append(d.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = d.r.ReadSlice('\n')
			d.long = append(d.long, line...)
		}
		line = d.long
	}
	if err != nil && !(errors.Is(err, io.EOF) && len(line) > 0) {
		return nil, err
	}
	line = bytes.TrimSuffix(line, []byte{'\n'})
	return bytes.TrimSuffix(line, []byte{'\r'}), nil
}

type ntParser struct {
	s []byte
	i int
}

func (p *ntParser) done() bool { return p.i >= len(p.s) }

func (p *ntParser) skipSpace() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *ntParser) triple() (rdf.Triple, error) {
	var t rdf.Triple
	var err error
	if t.S, err = p.term("subject"); err != nil {
		return t, err
	}
	if t.S.Kind == rdf.KindLiteral {
		return t, errors.New("a literal as subject")
	}
	p.skipSpace()
	if t.P, err = p.term("predicate"); err != nil {
		return t, err
	}
	if t.P.Kind != rdf.KindIRI {
		return t, errors.New("the predicate is not an IRI")
	}
	p.skipSpace()
	if t.O, err = p.term("object"); err != nil {
		return t, err
	}
	p.skipSpace()
	if p.done() || p.s[p.i] != '.' {
		return t, errors.New(`expected "." after the object`)
	}
	p.i++
	p.skipSpace()
	if !p.done() && p.s[p.i] != '#' {
		return t, fmt.Errorf("unexpected %q after the triple", p.s[p.i:])
	}
	return t, nil
}

func (p *ntParser) term(role string) (rdf.Term, error) {
	if p.done() {
		return rdf.Term{}, fmt.Errorf("%s missing", role)
	}
	switch p.s[p.i] {
	case '<':
		iri, err := p.iri()
		return rdf.IRI(iri), err
	case '_':
		return p.blank()
	case '"':
		return p.literal()
	}
	return rdf.Term{}, fmt.Errorf("%s: unexpected %q", role, p.s[p.i])
}

func (p *ntParser) iri() (string, error) {
	p.i++ // <
	start := p.i
	for p.i < len(p.s) && p.s[p.i] != '>' && p.s[p.i] != '\\' {
		p.i++
	}
	if p.i < len(p.s) && p.s[p.i] == '>' {
		s := string(p.s[start:p.i])
		p.i++
		return s, nil
	}
	// Escapes: only \u and \U are allowed in IRIs.
	var b strings.Builder
	b.Write(p.s[start:p.i])
	for p.i < len(p.s) {
		switch c := p.s[p.i]; c {
		case '>':
			p.i++
			return b.String(), nil
		case '\\':
			r, err := p.uchar()
			if err != nil {
				return "", err
			}
			b.WriteRune(r)
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return "", errors.New("unterminated IRI")
}

// uchar reads \uXXXX or \UXXXXXXXX at p.i.
func (p *ntParser) uchar() (rune, error) {
	if p.i+1 >= len(p.s) {
		return 0, errors.New("unterminated escape")
	}
	n := 0
	switch p.s[p.i+1] {
	case 'u':
		n = 4
	case 'U':
		n = 8
	default:
		return 0, fmt.Errorf(`bad escape "\%c"`, p.s[p.i+1])
	}
	if p.i+2+n > len(p.s) {
		return 0, errors.New("unterminated escape")
	}
	v, err := strconv.ParseUint(string(p.s[p.i+2:p.i+2+n]), 16, 32)
	if err != nil || !utf8.ValidRune(rune(v)) {
		return 0, fmt.Errorf("bad escape %q", p.s[p.i:p.i+2+n])
	}
	p.i += 2 + n
	return rune(v), nil
}

func (p *ntParser) blank() (rdf.Term, error) {
	if p.i+1 >= len(p.s) || p.s[p.i+1] != ':' {
		return rdf.Term{}, errors.New(`expected "_:" to open a blank node`)
	}
	p.i += 2
	start := p.i
	for p.i < len(p.s) && p.s[p.i] != ' ' && p.s[p.i] != '\t' {
		p.i++
	}
	// A label cannot end in ".": "_:b." is the label b and the full stop.
	for p.i > start && p.s[p.i-1] == '.' {
		p.i--
	}
	if p.i == start {
		return rdf.Term{}, errors.New("empty blank node label")
	}
	return rdf.Blank(string(p.s[start:p.i])), nil
}

func (p *ntParser) literal() (rdf.Term, error) {
	p.i++ // "
	start := p.i
	for p.i < len(p.s) && p.s[p.i] != '"' && p.s[p.i] != '\\' {
		p.i++
	}
	var lex string
	if p.i < len(p.s) && p.s[p.i] == '"' {
		lex = string(p.s[start:p.i])
		p.i++
	} else {
		var b strings.Builder
		b.Write(p.s[start:p.i])
		closed := false
		for p.i < len(p.s) && !closed {
			switch c := p.s[p.i]; c {
			case '"':
				p.i++
				closed = true
			case '\\':
				if p.i+1 >= len(p.s) {
					return rdf.Term{}, errors.New("unterminated escape")
				}
				if e, ok := echar[p.s[p.i+1]]; ok {
					b.WriteByte(e)
					p.i += 2
					continue
				}
				r, err := p.uchar()
				if err != nil {
					return rdf.Term{}, err
				}
				b.WriteRune(r)
			default:
				b.WriteByte(c)
				p.i++
			}
		}
		if !closed {
			return rdf.Term{}, errors.New("unterminated literal")
		}
		lex = b.String()
	}
	switch {
	case p.i < len(p.s) && p.s[p.i] == '@':
		p.i++
		start := p.i
		for p.i < len(p.s) && (isAlnum(p.s[p.i]) || p.s[p.i] == '-') {
			p.i++
		}
		if p.i == start {
			return rdf.Term{}, errors.New("empty language tag")
		}
		return rdf.LangString(lex, string(p.s[start:p.i])), nil
	case p.i+1 < len(p.s) && p.s[p.i] == '^' && p.s[p.i+1] == '^':
		p.i += 2
		if p.done() || p.s[p.i] != '<' {
			return rdf.Term{}, errors.New(`expected "<" after "^^"`)
		}
		dt, err := p.iri()
		if err != nil {
			return rdf.Term{}, err
		}
		return rdf.Typed(lex, dt), nil
	}
	return rdf.String(lex), nil
}

// echar maps the character after a backslash to what it stands for.
var echar = map[byte]byte{'t': '\t', 'b': '\b', 'n': '\n', 'r': '\r', 'f': '\f', '"': '"', '\'': '\'', '\\': '\\'}

// LineEncoder encodes single triples as N-Triples lines, in the form
// NTriples writes them, for callers that compare or hash triples rather
// than stream them. The zero value is ready to use; it is not safe for
// concurrent use.
type LineEncoder struct{ lt langCache }

// Append appends t's line, with its " .\n", to b. On an error (one that
// wraps ErrInvalidTerm) b is returned as it was.
func (e *LineEncoder) Append(b []byte, t rdf.Triple) ([]byte, error) {
	mark := len(b)
	out, err := appendNTTriple(b, t, &e.lt)
	if err != nil {
		return b[:mark], err
	}
	return out, nil
}
