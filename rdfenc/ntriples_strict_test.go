package rdfenc_test

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"unicode/utf8"

	"github.com/kgrag/kgrag/rdf"
)

// parseNTriplesStrict is the test oracle for N-Triples output: a small
// parser of the RDF 1.1 N-Triples grammar that also insists on the
// encoder's layout (single spaces, " .\n" line ends) and on its choices
// (no \u escapes in IRIs, no raw control characters in literals).
func parseNTriplesStrict(data []byte) ([]rdf.Triple, error) {
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("output is not valid UTF-8")
	}
	var out []rdf.Triple
	for n := 1; len(data) > 0; n++ {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return out, fmt.Errorf("line %d: no final newline", n)
		}
		line := string(data[:i])
		data = data[i+1:]
		var t rdf.Triple
		var err error
		rest := line
		if t.S, rest, err = ntTerm(rest); err != nil || t.S.Kind == rdf.KindLiteral {
			return out, fmt.Errorf("line %d: subject: %v in %q", n, err, line)
		}
		if rest, err = expect(rest, " "); err != nil {
			return out, fmt.Errorf("line %d: %v", n, err)
		}
		if t.P, rest, err = ntTerm(rest); err != nil || t.P.Kind != rdf.KindIRI {
			return out, fmt.Errorf("line %d: predicate: %v in %q", n, err, line)
		}
		if rest, err = expect(rest, " "); err != nil {
			return out, fmt.Errorf("line %d: %v", n, err)
		}
		if t.O, rest, err = ntTerm(rest); err != nil {
			return out, fmt.Errorf("line %d: object: %v in %q", n, err, line)
		}
		if rest != " ." {
			return out, fmt.Errorf("line %d: want \" .\" at end, have %q", n, rest)
		}
		out = append(out, t)
	}
	return out, nil
}

func expect(s, prefix string) (string, error) {
	if len(s) < len(prefix) || s[:len(prefix)] != prefix {
		return s, fmt.Errorf("want %q at %q", prefix, s)
	}
	return s[len(prefix):], nil
}

var (
	ntLangRE  = regexp.MustCompile(`^@([a-zA-Z]+(?:-[a-zA-Z0-9]+)*)`)
	ntBlankRE = regexp.MustCompile(`^_:([^ ]+)`)
	schemeRE  = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

func ntTerm(s string) (rdf.Term, string, error) {
	switch {
	case len(s) == 0:
		return rdf.Term{}, s, fmt.Errorf("missing term")
	case s[0] == '<':
		iri, rest, err := ntIRI(s)
		return rdf.IRI(iri), rest, err
	case s[0] == '"':
		return ntLiteral(s)
	case ntBlankRE.MatchString(s):
		m := ntBlankRE.FindStringSubmatch(s)
		if !blankOK(m[1]) {
			return rdf.Term{}, s, fmt.Errorf("bad blank node label %q", m[1])
		}
		return rdf.Blank(m[1]), s[len(m[0]):], nil
	}
	return rdf.Term{}, s, fmt.Errorf("unexpected %q", s)
}

// ntIRI reads an IRIREF; it must be absolute.
func ntIRI(s string) (string, string, error) {
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '>':
			iri := s[1:i]
			if !schemeRE.MatchString(iri) {
				return "", s, fmt.Errorf("relative IRI %q", iri)
			}
			return iri, s[i+1:], nil
		case c <= 0x20, c == '<', c == '"', c == '{', c == '}', c == '|', c == '^', c == '`', c == '\\':
			return "", s, fmt.Errorf("byte %#x not allowed in IRIREF %q", c, s[:i+1])
		}
	}
	return "", s, fmt.Errorf("unterminated IRI")
}

func ntLiteral(s string) (rdf.Term, string, error) {
	var val []byte
	i := 1
	for {
		if i >= len(s) {
			return rdf.Term{}, s, fmt.Errorf("unterminated literal")
		}
		c := s[i]
		if c == '"' {
			i++
			break
		}
		if c < 0x20 || c == 0x7f {
			return rdf.Term{}, s, fmt.Errorf("raw control %#x in literal", c)
		}
		if c == 0xEF && i+2 < len(s) && (s[i+1] == 0xBF && s[i+2] >= 0xBE || s[i+1] == 0xB7 && s[i+2] >= 0x90 && s[i+2] <= 0xAF) {
			return rdf.Term{}, s, fmt.Errorf("raw non-character in literal")
		}
		if c != '\\' {
			val = append(val, c)
			i++
			continue
		}
		if i+1 >= len(s) {
			return rdf.Term{}, s, fmt.Errorf("dangling backslash")
		}
		switch e := s[i+1]; e {
		case 't':
			val = append(val, '\t')
		case 'b':
			val = append(val, '\b')
		case 'n':
			val = append(val, '\n')
		case 'r':
			val = append(val, '\r')
		case 'f':
			val = append(val, '\f')
		case '"', '\'', '\\':
			val = append(val, e)
		case 'u', 'U':
			n := 4
			if e == 'U' {
				n = 8
			}
			if i+2+n > len(s) {
				return rdf.Term{}, s, fmt.Errorf("short UCHAR")
			}
			r, err := strconv.ParseUint(s[i+2:i+2+n], 16, 32)
			if err != nil || !utf8.ValidRune(rune(r)) {
				return rdf.Term{}, s, fmt.Errorf("bad UCHAR %q", s[i:i+2+n])
			}
			val = utf8.AppendRune(val, rune(r))
			i += n
		default:
			return rdf.Term{}, s, fmt.Errorf("bad escape \\%c", e)
		}
		i += 2
	}
	rest := s[i:]
	switch {
	case len(rest) >= 2 && rest[:2] == "^^":
		dt, r, err := ntIRI(rest[2:])
		return rdf.Typed(string(val), dt), r, err
	case len(rest) > 0 && rest[0] == '@':
		m := ntLangRE.FindStringSubmatch(rest)
		if m == nil {
			return rdf.Term{}, s, fmt.Errorf("bad language tag at %q", rest)
		}
		return rdf.LangString(string(val), m[1]), rest[len(m[0]):], nil
	}
	return rdf.String(string(val)), rest, nil
}
