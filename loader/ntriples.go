package loader

import (
	"bufio"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/kgrag/kgrag/rdf"
)

// NTriplesEncoder writes triples as N-Triples, one per line, buffered.
// It is not safe for concurrent use. Call Flush when done; the encoder does
// not close w.
type NTriplesEncoder struct {
	w   *bufio.Writer
	buf []byte
	n   int64
}

// NewNTriplesEncoder returns an encoder writing to w.
func NewNTriplesEncoder(w io.Writer) *NTriplesEncoder {
	return &NTriplesEncoder{w: bufio.NewWriterSize(w, 256<<10), buf: make([]byte, 0, 1024)}
}

// WriteTriple encodes one triple.
func (e *NTriplesEncoder) WriteTriple(t rdf.Triple) error {
	b := e.buf[:0]
	var err error
	if b, err = appendNTTerm(b, t.S); err != nil {
		return err
	}
	b = append(b, ' ')
	if b, err = appendNTTerm(b, t.P); err != nil {
		return err
	}
	b = append(b, ' ')
	if b, err = appendNTTerm(b, t.O); err != nil {
		return err
	}
	b = append(b, " .\n"...)
	e.buf = b
	e.n++
	_, err = e.w.Write(b)
	return err
}

// Count returns the number of triples written so far.
func (e *NTriplesEncoder) Count() int64 { return e.n }

// Flush writes any buffered data to the underlying writer.
func (e *NTriplesEncoder) Flush() error { return e.w.Flush() }

// appendNTTerm appends t in N-Triples syntax.
func appendNTTerm(b []byte, t rdf.Term) ([]byte, error) {
	switch t.Kind {
	case rdf.KindIRI:
		b = append(b, '<')
		b = appendIRI(b, t.Value)
		return append(b, '>'), nil
	case rdf.KindBlank:
		b = append(b, "_:"...)
		return append(b, t.Value...), nil
	case rdf.KindLiteral:
		b = append(b, '"')
		b = appendEscapedString(b, t.Value)
		b = append(b, '"')
		switch {
		case t.Lang != "":
			b = append(b, '@')
			b = append(b, t.Lang...)
		case t.Datatype != "" && t.Datatype != rdf.XSDString:
			b = append(b, "^^<"...)
			b = appendIRI(b, t.Datatype)
			b = append(b, '>')
		}
		return b, nil
	}
	return b, fmt.Errorf("loader: invalid RDF term kind %d", t.Kind)
}

// appendEscapedString escapes a literal's lexical form for the quoted
// "..." form shared by N-Triples and Turtle. Invalid UTF-8 becomes U+FFFD so
// the output always parses.
func appendEscapedString(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, s[start:i]...)
				b = append(b, "\\uFFFD"...)
				i++
				start = i
				continue
			}
			i += size
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigit[c>>4], hexDigit[c&0xf])
		}
		i++
		start = i
	}
	return append(b, s[start:]...)
}

const hexDigit = "0123456789ABCDEF"

// appendIRI writes an IRI reference, escaping with \u the characters that
// IRIREF forbids. Callers build IRIs with ontology.IRI, which percent-encodes
// them already; this is the last line of defence so output always parses.
func appendIRI(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= 0x20 || c == '<' || c == '>' || c == '"' || c == '{' || c == '}' ||
			c == '|' || c == '^' || c == '`' || c == '\\' {
			b = append(b, '\\', 'u', '0', '0', hexDigit[c>>4], hexDigit[c&0xf])
			continue
		}
		b = append(b, c)
	}
	return b
}
