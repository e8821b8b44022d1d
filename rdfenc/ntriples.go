package rdfenc

import (
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/kgrag/kgrag/rdf"
)

// ErrInvalidTerm is wrapped by the errors that the encoders return for a
// term they cannot write as valid RDF: a relative IRI, an ill-formed
// language tag or blank node label, a lexical form outside its XSD datatype,
// a literal in subject position and so on. Test for it with errors.Is.
var ErrInvalidTerm = errors.New("invalid RDF term")

// errClosed is returned by encoders used after Close.
var errClosed = errors.New("rdfenc: encoder is closed")

// bufSize is the output buffer size of both encoders. They append triples
// to one buffer and hand it to the writer when it passes this size.
const bufSize = 64 << 10

// NTriples writes triples as N-Triples (one triple per line, full
// IRIs, UTF-8), buffered. It is not safe for concurrent use. The zero value
// is not usable: call NewNTriples. Call Flush when done; the encoder
// does not close w.
//
// Every line it writes parses in Jena riot --strict and Oxigraph with no
// error or warning, which it ensures as follows:
//
//   - IRIs must be absolute (have a scheme). Characters that IRIREF or RFC
//     3987 forbid (space, <>"{}|^`\, controls, DEL, a "%" not followed by
//     two hex digits, "[" or "]" outside the authority, a second "#",
//     non-characters, private-use and deprecated code points, Unicode
//     spaces) are percent-encoded as their UTF-8 bytes (space becomes %20),
//     as are bytes that are not valid UTF-8. \u escapes would not help: the
//     parsers decode them first and then reject the IRI. Existing %XX
//     escapes are kept, so an IRI built by ontology.IRI comes out unchanged.
//   - A byte of a literal that is not part of valid UTF-8 becomes U+FFFD,
//     exactly as ranging over the string in Go does; all else round-trips.
//   - Language tags must be well-formed BCP 47 (RFC 5646, including the
//     1-8 character subtag limit and no repeated variant or extension
//     singleton), because both parsers check that.
//   - Blank node labels must match BLANK_NODE_LABEL.
//   - Lexical forms of xsd:integer, xsd:decimal, xsd:double, xsd:float and
//     xsd:boolean are checked; other datatypes are written as given.
//
// A rejected triple is not written; the error wraps ErrInvalidTerm. After a
// write error from w every call returns that error.
type NTriples struct {
	w   io.Writer
	buf []byte
	n   int64
	err error
	lt  langCache
}

// NewNTriples returns an encoder writing to w.
func NewNTriples(w io.Writer) *NTriples {
	return &NTriples{w: w, buf: make([]byte, 0, bufSize+4096)}
}

// WriteTriple encodes one triple. It returns an error wrapping
// ErrInvalidTerm, and writes nothing, when the triple cannot be written as
// valid N-Triples.
func (e *NTriples) WriteTriple(t rdf.Triple) error {
	if e.err != nil {
		return e.err
	}
	mark := len(e.buf)
	b, err := appendNTTriple(e.buf, t, &e.lt)
	if err != nil {
		e.buf = b[:mark]
		return err
	}
	e.buf = b
	e.n++
	if len(b) >= bufSize {
		return e.flush()
	}
	return nil
}

// Count returns the number of triples written so far.
func (e *NTriples) Count() int64 { return e.n }

// Flush writes any buffered data to the underlying writer.
func (e *NTriples) Flush() error {
	if e.err != nil {
		return e.err
	}
	return e.flush()
}

func (e *NTriples) flush() error {
	if len(e.buf) == 0 {
		return nil
	}
	if _, err := e.w.Write(e.buf); err != nil {
		e.err = fmt.Errorf("rdfenc: write n-triples: %w", err)
		return e.err
	}
	e.buf = e.buf[:0]
	return nil
}

func appendNTTriple(b []byte, t rdf.Triple, lt *langCache) ([]byte, error) {
	var err error
	switch t.S.Kind {
	case rdf.KindIRI:
		b, err = appendIRIRef(b, t.S.Value, "subject")
	case rdf.KindBlank:
		b, err = appendBlank(b, t.S.Value, "subject")
	default:
		err = kindError("subject", t.S)
	}
	if err != nil {
		return b, err
	}
	b = append(b, ' ')
	if t.P.Kind != rdf.KindIRI {
		return b, kindError("predicate", t.P)
	}
	if b, err = appendIRIRef(b, t.P.Value, "predicate"); err != nil {
		return b, err
	}
	b = append(b, ' ')
	switch t.O.Kind {
	case rdf.KindIRI:
		b, err = appendIRIRef(b, t.O.Value, "object")
	case rdf.KindBlank:
		b, err = appendBlank(b, t.O.Value, "object")
	case rdf.KindLiteral:
		var form litForm
		if form, err = checkLiteral(t.O, lt); err != nil {
			return b, err
		}
		b = appendQuoted(b, t.O.Value)
		switch form {
		case litString:
		case litLang:
			b = append(b, '@')
			b = append(b, t.O.Lang...)
		default:
			b = append(b, "^^"...)
			b, err = appendIRIRef(b, t.O.Datatype, "datatype")
		}
	default:
		err = kindError("object", t.O)
	}
	if err != nil {
		return b, err
	}
	return append(b, " .\n"...), nil
}

func kindError(role string, t rdf.Term) error {
	return fmt.Errorf("rdfenc: %s: term kind %d (value %q) not allowed here: %w", role, t.Kind, t.Value, ErrInvalidTerm)
}

// appendIRIRef appends <iri>, made safe by appendIRI.
func appendIRIRef(b []byte, iri, role string) ([]byte, error) {
	b = append(b, '<')
	b, err := appendIRI(b, iri, role)
	return append(b, '>'), err
}

// appendBlank appends _:label after checking the label.
func appendBlank(b []byte, label, role string) ([]byte, error) {
	if !validBlankLabel(label) {
		return b, fmt.Errorf("rdfenc: %s: blank node label %q does not match BLANK_NODE_LABEL: %w", role, label, ErrInvalidTerm)
	}
	b = append(b, "_:"...)
	return append(b, label...), nil
}

// litForm says how a checked literal is written.
type litForm uint8

const (
	litString litForm = iota // "..." (xsd:string)
	litLang                  // "..."@tag
	litTyped                 // "..."^^<dt>
)

// checkLiteral validates a literal's language tag or lexical form and
// says how it must be written.
func checkLiteral(t rdf.Term, lt *langCache) (litForm, error) {
	if t.Lang != "" {
		if t.Datatype != "" && t.Datatype != rdf.RDFLangString {
			return 0, fmt.Errorf("rdfenc: object: literal %q has language tag %q and datatype %s: %w", t.Value, t.Lang, t.Datatype, ErrInvalidTerm)
		}
		if !lt.valid(t.Lang) {
			return 0, fmt.Errorf("rdfenc: object: invalid language tag %q: not well-formed BCP 47: %w", t.Lang, ErrInvalidTerm)
		}
		return litLang, nil
	}
	switch t.Datatype {
	case "", rdf.XSDString:
		return litString, nil
	case rdf.RDFLangString:
		return 0, fmt.Errorf("rdfenc: object: literal %q has datatype rdf:langString but no language tag: %w", t.Value, ErrInvalidTerm)
	}
	if ok, name := validLexical(t.Value, t.Datatype); !ok {
		return 0, fmt.Errorf("rdfenc: object: %q is not a valid xsd:%s lexical form: %w", t.Value, name, ErrInvalidTerm)
	}
	return litTyped, nil
}

// --- literals ---------------------------------------------------------

// strPlain[c] is true for bytes written as they are inside "...".
// strPlainUTF8 also passes bytes >= 0x80, for strings known to be UTF-8.
var strPlain, strPlainUTF8 [256]bool

func init() {
	for c := 0x20; c < 0x7F; c++ {
		strPlain[c] = c != '"' && c != '\\'
	}
	strPlainUTF8 = strPlain
	for c := 0x80; c < 0x100; c++ {
		// 0xEF leads U+F000-U+FFFF, among them the non-characters.
		strPlainUTF8[c] = c != 0xEF
	}
}

const hexDigit = "0123456789ABCDEF"

// appendQuoted appends s as a "..." string: STRING_LITERAL_QUOTE in both
// N-Triples and Turtle. It escapes ", \, and every C0 control and DEL (\n,
// \r, \t by name, the rest as \u00XX) and the BMP non-characters
// U+FDD0-U+FDEF, U+FFFE and U+FFFF (as \uXXXX: Jena warns about them raw);
// all other characters are written as UTF-8. A byte that is not part of
// valid UTF-8 becomes U+FFFD.
func appendQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	if !utf8.ValidString(s) {
		return append(appendQuotedInvalid(b, s), '"')
	}
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if strPlainUTF8[c] {
			continue
		}
		if c == 0xEF {
			// Valid UTF-8, so s[i+1] and s[i+2] exist.
			if r := nonCharacter(s[i+1], s[i+2]); r != 0 {
				b = append(b, s[start:i]...)
				b = appendUChar(b, r)
				start = i + 3
			}
			i += 2
			continue
		}
		b = append(b, s[start:i]...)
		b = appendEscapedByte(b, c)
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// nonCharacter returns the code point EF c1 c2 encodes if it is a
// non-character (U+FDD0-U+FDEF, U+FFFE, U+FFFF), else 0.
func nonCharacter(c1, c2 byte) rune {
	r := 0xF000 | rune(c1&0x3F)<<6 | rune(c2&0x3F)
	if 0xFDD0 <= r && r <= 0xFDEF || r == 0xFFFE || r == 0xFFFF {
		return r
	}
	return 0
}

func appendUChar(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexDigit[r>>12], hexDigit[r>>8&0xf], hexDigit[r>>4&0xf], hexDigit[r&0xf])
}

func appendQuotedInvalid(b []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if strPlain[c] {
				b = append(b, c)
			} else {
				b = appendEscapedByte(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = utf8.AppendRune(b, utf8.RuneError)
		case 0xFDD0 <= r && r <= 0xFDEF || r == 0xFFFE || r == 0xFFFF:
			b = appendUChar(b, r)
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return b
}

func appendEscapedByte(b []byte, c byte) []byte {
	switch c {
	case '"':
		return append(b, '\\', '"')
	case '\\':
		return append(b, '\\', '\\')
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	}
	return append(b, '\\', 'u', '0', '0', hexDigit[c>>4], hexDigit[c&0xf])
}

// --- IRIs -------------------------------------------------------------

// iriPlain[c] is true for ASCII bytes that may appear anywhere after the
// scheme of an IRI: unreserved, sub-delims, ":", "@", "/", "?".
// "%", "#", "[" and "]" need context and are handled separately.
var iriPlain [256]bool

func init() {
	for c := 'a'; c <= 'z'; c++ {
		iriPlain[c] = true
		iriPlain[c-'a'+'A'] = true
	}
	for c := '0'; c <= '9'; c++ {
		iriPlain[c] = true
	}
	for _, c := range "-._~!$&'()*+,;=:@/?" {
		iriPlain[c] = true
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// schemeLen returns the length of s's scheme (before the ":"), or 0 if s
// has no valid scheme.
func schemeLen(s string) int {
	if len(s) == 0 || !('a' <= s[0] && s[0] <= 'z' || 'A' <= s[0] && s[0] <= 'Z') {
		return 0
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ':':
			return i
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '+', c == '-', c == '.':
		default:
			return 0
		}
	}
	return 0
}

// appendIRI appends the IRI s without angle brackets, percent-encoding
// what RFC 3987 and the parsers reject (see NTriples). It fails
// only when s is not absolute.
func appendIRI(b []byte, s, role string) ([]byte, error) {
	n := schemeLen(s)
	if n == 0 {
		return b, fmt.Errorf("rdfenc: %s: IRI %q is not absolute (no scheme): %w", role, s, ErrInvalidTerm)
	}
	// Fast path: nothing to encode.
	hash := false
	for i := n + 1; i < len(s); i++ {
		c := s[i]
		if iriPlain[c] {
			continue
		}
		if c == '#' && !hash {
			hash = true
			continue
		}
		if c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			i += 2
			continue
		}
		return appendIRISlow(b, s, n), nil
	}
	return append(b, s...), nil
}

func appendIRISlow(b []byte, s string, n int) []byte {
	b = append(b, s[:n+1]...)
	// The authority, where "[" and "]" may delimit an IP literal.
	authEnd := n + 1
	if len(s) >= n+3 && s[n+1] == '/' && s[n+2] == '/' {
		authEnd = n + 3
		for authEnd < len(s) && s[authEnd] != '/' && s[authEnd] != '?' && s[authEnd] != '#' {
			authEnd++
		}
	}
	hash := false
	for i := n + 1; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case iriPlain[c]:
				b = append(b, c)
			case c == '#' && !hash:
				hash = true
				b = append(b, c)
			case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
				b = append(b, s[i:i+3]...)
				i += 3
				continue
			case (c == '[' || c == ']') && i < authEnd:
				b = append(b, c)
			default:
				b = appendPct(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = appendPct(b, c)
		} else if iriRuneOK(r) {
			b = append(b, s[i:i+size]...)
		} else {
			for j := i; j < i+size; j++ {
				b = appendPct(b, s[j])
			}
		}
		i += size
	}
	return b
}

func appendPct(b []byte, c byte) []byte {
	return append(b, '%', hexDigit[c>>4], hexDigit[c&0xf])
}

// iriRuneOK reports whether a non-ASCII rune may appear in an IRI as it
// is: RFC 3987 ucschar, less the code points Jena's IRI checker warns
// about (Unicode white space and deprecated characters). Private-use
// characters (iprivate) are left out too: Jena rejects them everywhere.
func iriRuneOK(r rune) bool {
	switch {
	case r < 0xA0:
		return false
	case r <= 0xD7FF:
		switch {
		case r == 0xA0, r == 0x1680, 0x2000 <= r && r <= 0x200A, r == 0x2028, r == 0x2029,
			r == 0x202F, r == 0x205F, r == 0x3000: // white space
			return false
		case r == 0x149, r == 0x673, r == 0xF77, r == 0xF79, r == 0x17A3, r == 0x17A4,
			0x206A <= r && r <= 0x206F, r == 0x2329, r == 0x232A: // deprecated
			return false
		}
		return true
	case r < 0xF900:
		return false
	case r <= 0xFDCF:
		return true
	case r < 0xFDF0:
		return false
	case r <= 0xFFEF:
		return true
	case r < 0x10000:
		return false
	case r >= 0xE0000 && r < 0xE1000:
		return false
	case r > 0xEFFFD:
		return false
	}
	return r&0xFFFF <= 0xFFFD
}

// --- blank nodes ------------------------------------------------------

// validBlankLabel reports whether label matches
// (PN_CHARS_U | [0-9]) ((PN_CHARS | '.')* PN_CHARS)?, the label part of
// BLANK_NODE_LABEL in both N-Triples and Turtle.
func validBlankLabel(label string) bool {
	if label == "" {
		return false
	}
	for i, r := range label {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(label[i:]); size == 1 {
				return false
			}
		}
		switch {
		case i == 0:
			if !isPNCharsU(r) && !('0' <= r && r <= '9') {
				return false
			}
		case r == '.':
			if i == len(label)-1 {
				return false
			}
		default:
			if !isPNChars(r) {
				return false
			}
		}
	}
	return true
}

// isPNCharsBase reports whether r is in Turtle's PN_CHARS_BASE.
func isPNCharsBase(r rune) bool {
	switch {
	case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z':
		return true
	case r < 0xC0:
		return false
	case r <= 0xD6, 0xD8 <= r && r <= 0xF6, 0xF8 <= r && r <= 0x2FF,
		0x370 <= r && r <= 0x37D, 0x37F <= r && r <= 0x1FFF,
		0x200C <= r && r <= 0x200D, 0x2070 <= r && r <= 0x218F,
		0x2C00 <= r && r <= 0x2FEF, 0x3001 <= r && r <= 0xD7FF,
		0xF900 <= r && r <= 0xFDCF, 0xFDF0 <= r && r <= 0xFFFD,
		0x10000 <= r && r <= 0xEFFFF:
		return true
	}
	return false
}

// isPNCharsU reports whether r is in PN_CHARS_U.
func isPNCharsU(r rune) bool { return r == '_' || isPNCharsBase(r) }

// isPNChars reports whether r is in PN_CHARS.
func isPNChars(r rune) bool {
	return isPNCharsU(r) || r == '-' || '0' <= r && r <= '9' || r == 0xB7 ||
		0x300 <= r && r <= 0x36F || r == 0x203F || r == 0x2040
}

// --- language tags ----------------------------------------------------

// langCache remembers the last tag found valid, since a stream usually
// repeats one or two tags.
type langCache struct{ last string }

func (c *langCache) valid(tag string) bool {
	if tag == c.last && tag != "" {
		return true
	}
	if !validLangTag(tag) {
		return false
	}
	c.last = tag
	return true
}

// grandfathered holds the RFC 5646 grandfathered tags, lower case.
var grandfathered = map[string]bool{
	"en-gb-oed": true, "i-ami": true, "i-bnn": true, "i-default": true, "i-enochian": true,
	"i-hak": true, "i-klingon": true, "i-lux": true, "i-mingo": true, "i-navajo": true,
	"i-pwn": true, "i-tao": true, "i-tay": true, "i-tsu": true, "sgn-be-fr": true,
	"sgn-be-nl": true, "sgn-ch-de": true, "art-lojban": true, "cel-gaulish": true,
	"no-bok": true, "no-nyn": true, "zh-guoyu": true, "zh-hakka": true, "zh-min": true,
	"zh-min-nan": true, "zh-xiang": true,
}

// validLangTag reports whether tag is a well-formed BCP 47 language tag
// (RFC 5646 section 2.1) with no repeated variant or extension singleton.
// This is stricter than the LANGTAG production of N-Triples and Turtle,
// [a-zA-Z]+ ('-' [a-zA-Z0-9]+)*, because Jena and Oxigraph check it.
func validLangTag(tag string) bool {
	if len(tag) == 0 || len(tag) > 256 {
		return false
	}
	var parts [32]string
	sub := parts[:0]
	start := 0
	for i := 0; i <= len(tag); i++ {
		if i == len(tag) || tag[i] == '-' {
			if i == start || i-start > 8 || len(sub) == len(parts) {
				return false
			}
			sub = append(sub, tag[start:i])
			start = i + 1
			continue
		}
		if !isAlnum(tag[i]) {
			return false
		}
	}
	if isPrivateUse(sub) {
		return true
	}
	if hasGrandfather(tag) {
		return true
	}
	// language
	l := sub[0]
	if len(l) < 2 || !isAlpha(l) {
		return false
	}
	i := 1
	if len(l) <= 3 {
		// up to three extlang subtags
		for k := 0; k < 3 && i < len(sub) && len(sub[i]) == 3 && isAlpha(sub[i]); k++ {
			i++
		}
	}
	// script
	if i < len(sub) && len(sub[i]) == 4 && isAlpha(sub[i]) {
		i++
	}
	// region
	if i < len(sub) && (len(sub[i]) == 2 && isAlpha(sub[i]) || len(sub[i]) == 3 && isDigits(sub[i])) {
		i++
	}
	// variants
	vstart := i
	for i < len(sub) && (len(sub[i]) >= 5 || len(sub[i]) == 4 && isDigit(sub[i][0])) {
		for j := vstart; j < i; j++ {
			if equalFold(sub[j], sub[i]) {
				return false
			}
		}
		i++
	}
	// extensions
	var seen [36]bool
	for i < len(sub) && len(sub[i]) == 1 {
		s := lower(sub[i][0])
		if s == 'x' {
			return isPrivateUse(sub[i:])
		}
		idx := int(s - 'a')
		if isDigit(s) {
			idx = 26 + int(s-'0')
		}
		if seen[idx] {
			return false
		}
		seen[idx] = true
		i++
		n := 0
		for i < len(sub) && len(sub[i]) >= 2 {
			i++
			n++
		}
		if n == 0 {
			return false
		}
	}
	return i == len(sub)
}

// isPrivateUse reports whether sub is "x" 1*("-" 1*8alphanum).
func isPrivateUse(sub []string) bool {
	return len(sub) >= 2 && len(sub[0]) == 1 && lower(sub[0][0]) == 'x'
}

func hasGrandfather(tag string) bool {
	if len(tag) > 11 {
		return false
	}
	var buf [11]byte
	for i := 0; i < len(tag); i++ {
		buf[i] = lower(tag[i])
	}
	return grandfathered[string(buf[:len(tag)])]
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isAlnum(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isAlpha(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return len(s) > 0
}

// --- XSD lexical forms ------------------------------------------------

// validLexical checks the lexical form of the XSD datatypes whose
// literals Jena checks and that kgrag writes. Other datatypes pass.
func validLexical(v, datatype string) (ok bool, name string) {
	if len(datatype) <= len(rdf.XSDNS) || datatype[:len(rdf.XSDNS)] != rdf.XSDNS {
		return true, ""
	}
	name = datatype[len(rdf.XSDNS):]
	switch name {
	case "integer":
		return isXSDInteger(v), name
	case "decimal":
		return isXSDDecimal(v), name
	case "double", "float":
		return isXSDDouble(v), name
	case "boolean":
		return v == "true" || v == "false" || v == "1" || v == "0", name
	}
	return true, name
}

// skipSign returns v without one leading + or -.
func skipSign(v string) string {
	if len(v) > 0 && (v[0] == '+' || v[0] == '-') {
		return v[1:]
	}
	return v
}

// isXSDInteger: [+-]?[0-9]+
func isXSDInteger(v string) bool { return isDigits(skipSign(v)) }

// digitsPrefix returns the number of leading ASCII digits in v.
func digitsPrefix(v string) int {
	i := 0
	for i < len(v) && isDigit(v[i]) {
		i++
	}
	return i
}

// isXSDDecimal: [+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)
func isXSDDecimal(v string) bool {
	v = skipSign(v)
	n := digitsPrefix(v)
	if n == len(v) {
		return n > 0
	}
	if v[n] != '.' {
		return false
	}
	m := digitsPrefix(v[n+1:])
	return n+1+m == len(v) && n+m > 0
}

// isXSDDouble: decimal mantissa with an optional exponent, or INF, +INF,
// -INF, NaN.
func isXSDDouble(v string) bool {
	switch v {
	case "INF", "+INF", "-INF", "NaN":
		return true
	}
	for i := 0; i < len(v); i++ {
		if v[i] == 'e' || v[i] == 'E' {
			return isXSDDecimal(v[:i]) && isXSDInteger(v[i+1:])
		}
	}
	return isXSDDecimal(v)
}
