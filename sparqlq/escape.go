package sparqlq

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// IRIRef returns iri as a SPARQL IRIREF, "<iri>". It fails when iri holds a
// character that IRIREF forbids (spaces, controls, <>"{}|^`\), so that an
// IRI can never break out of the brackets.
func IRIRef(iri string) (string, error) {
	if iri == "" {
		return "", fmt.Errorf("sparqlq: empty IRI")
	}
	if !utf8.ValidString(iri) {
		return "", fmt.Errorf("sparqlq: IRI %q is not valid UTF-8", iri)
	}
	for _, r := range iri {
		if r <= 0x20 || strings.ContainsRune("<>\"{}|^`\\", r) {
			return "", fmt.Errorf("sparqlq: IRI %q holds %q, which SPARQL forbids", iri, r)
		}
	}
	return "<" + iri + ">", nil
}

// Literal returns s as a quoted SPARQL string literal with ECHAR escapes.
// Invalid UTF-8 becomes U+FFFD. The result never holds a raw line break, and
// a u or U that follows an escaped backslash is written as a codepoint
// escape (\u0075, \u0055): a store that decodes codepoint escapes before
// parsing, as SPARQL 1.1 section 19.2 allows, then reads the same string as
// one that decodes them inside literals, and a value holding \u0022 cannot
// turn into a quote.
func Literal(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	afterBackslash := false
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		if afterBackslash && (r == 'u' || r == 'U') {
			fmt.Fprintf(&b, `\u%04X`, r)
			continue
		}
		afterBackslash = r == '\\'
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
