package ontology

import (
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"
)

// Kinds of instance IRIs: the path segment under the base IRI.
const (
	segDocument     = "document/"
	segChunk        = "chunk/"
	segEntity       = "entity/"
	segRelationship = "relationship/"
	segCommunity    = "community/"
	segCovariate    = "covariate/"
)

// ValidateBase checks that base can prefix instance IRIs: an absolute IRI
// ending in '/' or '#'.
func ValidateBase(base string) error {
	u, err := url.Parse(base)
	if err != nil {
		return fmt.Errorf("ontology: base IRI %q: %w", base, err)
	}
	if !u.IsAbs() {
		return fmt.Errorf("ontology: base IRI %q is not absolute (want e.g. http://example.org/kg/)", base)
	}
	if !strings.HasSuffix(base, "/") && !strings.HasSuffix(base, "#") {
		return fmt.Errorf("ontology: base IRI %q must end in '/' or '#'", base)
	}
	if i := strings.IndexFunc(base, func(r rune) bool {
		return r <= ' ' || r == 0x7f || strings.ContainsRune(`<>"{}|^`+"`\\", r)
	}); i >= 0 {
		return fmt.Errorf("ontology: base IRI %q contains %q, which IRIs do not allow", base, base[i])
	}
	return nil
}

// EntityIRI is the IRI Mapper gives the entity with GraphRAG id id under
// base.
func EntityIRI(base, id string) string {
	return string(AppendSegment([]byte(base+segEntity), id))
}

// AppendSegment appends id to b as one IRI path segment: every character
// that is not unreserved (RFC 3987 iunreserved) is percent-encoded as UTF-8,
// so ids holding '/', '#', '?', spaces or quotes cannot change the IRI's
// structure and two different ids never give the same IRI.
func AppendSegment(b []byte, id string) []byte {
	// GraphRAG ids are hex digests and UUIDs: copy those in one go.
	i := 0
	for i < len(id) && unreserved[id[i]] {
		i++
	}
	b = append(b, id[:i]...)
	for i < len(id) {
		c := id[i]
		if c < utf8.RuneSelf {
			if unreserved[c] {
				b = append(b, c)
			} else {
				b = append(b, '%', hexUpper[c>>4], hexUpper[c&0xf])
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(id[i:])
		if r != utf8.RuneError && ucschar(r) {
			b = append(b, id[i:i+size]...)
		} else {
			for j := 0; j < size; j++ {
				b = append(b, '%', hexUpper[id[i+j]>>4], hexUpper[id[i+j]&0xf])
			}
		}
		i += size
	}
	return b
}

const hexUpper = "0123456789ABCDEF"

// unreserved marks the ASCII unreserved characters of RFC 3986.
var unreserved = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == '~'
	}
	return t
}()

// ucschar reports whether r may appear unencoded in an IRI (RFC 3987).
func ucschar(r rune) bool {
	switch {
	case r >= 0xA0 && r <= 0xD7FF, r >= 0xF900 && r <= 0xFDCF, r >= 0xFDF0 && r <= 0xFFEF:
		return true
	case r >= 0xE0000 && r <= 0xE0FFF: // language tags and variation selectors
		return false
	case r >= 0x10000 && r <= 0xEFFFD:
		return r&0xFFFF < 0xFFFE // excludes the non-characters at the end of each plane
	}
	return false
}
