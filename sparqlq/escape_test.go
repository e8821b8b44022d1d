package sparqlq_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kgrag/kgrag/sparqlq"
)

// readLiteral reads a STRING_LITERAL2 ("...") from the start of s as a
// SPARQL lexer does, decoding ECHAR and codepoint escapes inside it, and
// returns its value and the text after its closing quote.
func readLiteral(s string) (val, rest string, err error) {
	if !strings.HasPrefix(s, `"`) {
		return "", s, errors.New("no opening quote")
	}
	var b strings.Builder
	for i := 1; i < len(s); {
		c := s[i]
		switch c {
		case '"':
			return b.String(), s[i+1:], nil
		case '\n', '\r':
			return "", s, errors.New("raw line break in literal")
		case '\\':
			if i+1 >= len(s) {
				return "", s, errors.New("lone backslash")
			}
			e := s[i+1]
			if e == 'u' || e == 'U' {
				n := 4
				if e == 'U' {
					n = 8
				}
				if i+2+n > len(s) {
					return "", s, errors.New("short codepoint escape")
				}
				r, err := strconv.ParseUint(s[i+2:i+2+n], 16, 32)
				if err != nil {
					return "", s, err
				}
				b.WriteRune(rune(r))
				i += 2 + n
				continue
			}
			m := map[byte]string{'t': "\t", 'b': "\b", 'n': "\n", 'r': "\r", 'f': "\f", '"': `"`, '\'': "'", '\\': `\`}[e]
			if m == "" {
				return "", s, errors.New("bad ECHAR")
			}
			b.WriteString(m)
			i += 2
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			b.WriteRune(r)
			i += size
		}
	}
	return "", s, errors.New("no closing quote")
}

// preprocess decodes every codepoint escape of s before parsing, as SPARQL
// 1.1 section 19.2 allows a store to do, scanning naively left to right.
func preprocess(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == '\\' && i+1 < len(s) && (s[i+1] == 'u' || s[i+1] == 'U') {
			n := 4
			if s[i+1] == 'U' {
				n = 8
			}
			if i+2+n <= len(s) {
				if r, err := strconv.ParseUint(s[i+2:i+2+n], 16, 32); err == nil {
					b.WriteRune(rune(r))
					i += 2 + n
					continue
				}
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// checkLiteral checks that Literal(s) is one literal, with no raw line
// break, that reads back as s both ways a store may decode it.
func checkLiteral(t *testing.T, s string) {
	t.Helper()
	lit := sparqlq.Literal(s)
	want := strings.ToValidUTF8(s, "\uFFFD")
	if strings.ContainsAny(lit, "\n\r") {
		t.Errorf("Literal(%q) = %q holds a raw line break", s, lit)
	}
	for _, form := range []struct{ name, text string }{{"lexer", lit}, {"preprocessed", preprocess(lit)}} {
		v, rest, err := readLiteral(form.text)
		if err != nil || rest != "" || v != want {
			t.Errorf("Literal(%q) = %s; read by a %s store: %q, rest %q, %v", s, lit, form.name, v, rest, err)
		}
	}
}

func TestLiteralRoundTrip(t *testing.T) {
	for _, s := range append([]string{"", "plain", "\\u", "\\\\U0001F600", "\b\f\x00\x1f\x7f", "é😀"}, injections...) {
		checkLiteral(t, s)
	}
	if got, want := sparqlq.Literal(`a\u0022`), `"a\\\u00750022"`; got != want {
		t.Errorf("Literal(`a\\u0022`) = %s; want %s", got, want)
	}
}

func FuzzLiteral(f *testing.F) {
	for _, s := range injections {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkLiteral(t, s) })
}
