package ontology

import (
	"bufio"
	"bytes"
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kgrag/kgrag/rdf"
)

// ntriples is gr.ttl as N-Triples, made by `go generate` (scripts/gen-ontology.sh
// parses gr.ttl with Oxigraph); a test checks the two stay the same graph.
//
//go:generate bash ../scripts/gen-ontology.sh gr.ttl gr.nt
//go:embed gr.nt
var ntriples []byte

// Triples writes the ontology's triples to w, for stores that take triples
// rather than Turtle. Blank nodes keep the labels of gr.nt; callers loading
// the ontology into its own graph need not rename them.
func Triples(w rdf.Writer) error {
	sc := bufio.NewScanner(bytes.NewReader(ntriples))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || s[0] == '#' {
			continue
		}
		t, err := parseNTriple(s)
		if err != nil {
			return fmt.Errorf("ontology: gr.nt line %d: %w", line, err)
		}
		if err := w.WriteTriple(t); err != nil {
			return err
		}
	}
	return sc.Err()
}

// parseNTriple parses one N-Triples statement. It accepts the N-Triples
// that Oxigraph writes, which is all gr.nt holds.
func parseNTriple(s string) (rdf.Triple, error) {
	var t rdf.Triple
	var err error
	if t.S, s, err = parseTerm(s); err != nil {
		return t, fmt.Errorf("subject: %w", err)
	}
	if t.P, s, err = parseTerm(s); err != nil {
		return t, fmt.Errorf("predicate: %w", err)
	}
	if t.O, s, err = parseTerm(s); err != nil {
		return t, fmt.Errorf("object: %w", err)
	}
	if strings.TrimSpace(s) != "." {
		return t, fmt.Errorf("want '.' at end, got %q", s)
	}
	return t, nil
}

func parseTerm(s string) (rdf.Term, string, error) {
	s = strings.TrimLeft(s, " \t")
	switch {
	case strings.HasPrefix(s, "<"):
		end := strings.IndexByte(s, '>')
		if end < 0 {
			return rdf.Term{}, s, fmt.Errorf("unterminated IRI")
		}
		iri, err := unescape(s[1:end])
		return rdf.IRI(iri), s[end+1:], err
	case strings.HasPrefix(s, "_:"):
		end := strings.IndexAny(s, " \t")
		if end < 0 {
			return rdf.Term{}, s, fmt.Errorf("unterminated blank node")
		}
		return rdf.Blank(s[2:end]), s[end:], nil
	case strings.HasPrefix(s, `"`):
		end := 1
		for ; end < len(s); end++ {
			if s[end] == '\\' {
				end++
				continue
			}
			if s[end] == '"' {
				break
			}
		}
		if end >= len(s) {
			return rdf.Term{}, s, fmt.Errorf("unterminated literal")
		}
		lex, err := unescape(s[1:end])
		if err != nil {
			return rdf.Term{}, s, err
		}
		rest := s[end+1:]
		switch {
		case strings.HasPrefix(rest, "@"):
			stop := strings.IndexAny(rest, " \t")
			if stop < 0 {
				return rdf.Term{}, s, fmt.Errorf("unterminated language tag")
			}
			return rdf.LangString(lex, rest[1:stop]), rest[stop:], nil
		case strings.HasPrefix(rest, "^^"):
			dt, rest, err := parseTerm(rest[2:])
			if err != nil || dt.Kind != rdf.KindIRI {
				return rdf.Term{}, s, fmt.Errorf("bad datatype")
			}
			return rdf.Typed(lex, dt.Value), rest, nil
		}
		return rdf.String(lex), rest, nil
	}
	return rdf.Term{}, s, fmt.Errorf("unexpected %q", s)
}

// unescape resolves N-Triples escapes (ECHAR and UCHAR).
func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(s) {
			return "", fmt.Errorf("dangling backslash")
		}
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'b':
			b.WriteByte('\b')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case '"', '\'', '\\':
			b.WriteByte(s[i])
		case 'u', 'U':
			n := 4
			if s[i] == 'U' {
				n = 8
			}
			if i+1+n > len(s) {
				return "", fmt.Errorf("short \\%c escape", s[i])
			}
			r, err := strconv.ParseUint(s[i+1:i+1+n], 16, 32)
			if err != nil || !utf8.ValidRune(rune(r)) {
				return "", fmt.Errorf("bad \\%c escape %q", s[i], s[i+1:i+1+n])
			}
			b.WriteRune(rune(r))
			i += n
		default:
			return "", fmt.Errorf("unknown escape \\%c", s[i])
		}
	}
	return b.String(), nil
}
