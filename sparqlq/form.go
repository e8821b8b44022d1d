package sparqlq

import (
	"fmt"
	"strings"
	"unicode"
)

// Query forms and update operations, as QueryForm names them.
const (
	FormSelect    = "SELECT"
	FormAsk       = "ASK"
	FormConstruct = "CONSTRUCT"
	FormDescribe  = "DESCRIBE"
)

// QueryForm returns the first keyword after a request's prologue (its
// BASE and PREFIX declarations and comments), upper-cased: SELECT, ASK,
// CONSTRUCT or DESCRIBE for a query, or the update operation (INSERT,
// DELETE, WITH, LOAD, CLEAR, DROP, CREATE, ADD, MOVE, COPY) for an
// update. In SPARQL 1.1 that keyword decides what a request is (Query and
// Update both start with a Prologue), so a caller that must only read
// accepts FormSelect or FormAsk and nothing else.
func QueryForm(q string) (string, error) {
	i := 0
	next := func() string { // the next word, after blanks and comments
		for i < len(q) {
			switch c := q[i]; {
			case c == '#':
				for i < len(q) && q[i] != '\n' {
					i++
				}
			case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v':
				i++
			default:
				j := i
				for j < len(q) && (unicode.IsLetter(rune(q[j])) || q[j] == '_') {
					j++
				}
				w := q[i:j]
				i = j
				return w
			}
		}
		return ""
	}
	// skipIRI skips blanks, comments and one <IRI>.
	skipIRI := func() error {
		next() // consumes blanks and comments; an IRI is not a word
		if i >= len(q) || q[i] != '<' {
			return fmt.Errorf("sparqlq: prologue: want an <IRI> at offset %d", i)
		}
		j := strings.IndexByte(q[i:], '>')
		if j < 0 {
			return fmt.Errorf("sparqlq: prologue: IRI at offset %d is not closed", i)
		}
		i += j + 1
		return nil
	}
	for {
		start := i
		w := strings.ToUpper(next())
		switch w {
		case "BASE":
			if err := skipIRI(); err != nil {
				return "", err
			}
		case "PREFIX":
			next() // the prefix name, up to its ':'
			for i < len(q) && q[i] != ':' && q[i] != '<' {
				i++
			}
			if i < len(q) && q[i] == ':' {
				i++
			}
			if err := skipIRI(); err != nil {
				return "", err
			}
		case "":
			if i < len(q) {
				return "", fmt.Errorf("sparqlq: want a query form or an update at offset %d, not %q", start, q[i:min(len(q), i+10)])
			}
			return "", fmt.Errorf("sparqlq: the request is empty")
		default:
			return w, nil
		}
	}
}
