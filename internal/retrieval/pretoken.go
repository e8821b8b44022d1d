package retrieval

import (
	"unicode"
	"unicode/utf8"
)

// The pre-tokenizer below splits text into the pieces that tiktoken-go's
// cl100k_base pattern, run by regexp2, finds:
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//	 ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// It is written out by hand because regexp2 took most of the time of a
// cold local search. regexp2's \s is unicode.IsSpace, \p{L} and \p{N} are
// Go's unicode tables, and its case-insensitive match lowers the input with
// unicode.ToLower, whose only runes lowering to s, t, r, e, v, m, l or d
// are their ASCII capitals. Every rune is a letter, a number, a space or
// none of these, and every one starts some alternative, so the pieces
// cover the text.

// Rune classes of the pattern.
const (
	clOther   uint8 = iota // [^\s\p{L}\p{N}]
	clLetter               // \p{L}
	clNumber               // \p{N}
	clSpace                // \s other than \r and \n
	clNewline              // \r or \n
)

// asciiClass holds the class of each ASCII byte.
var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for b := range t {
		t[b] = runeClass(rune(b))
	}
	return t
}()

// runeClass classifies r as regexp2 does.
func runeClass(r rune) uint8 {
	switch {
	case r == '\r' || r == '\n':
		return clNewline
	case unicode.IsSpace(r):
		return clSpace
	case unicode.IsLetter(r):
		return clLetter
	case unicode.IsNumber(r):
		return clNumber
	}
	return clOther
}

// classAt returns the class and byte width of the rune at s[i:], which
// must be valid UTF-8.
func classAt(s string, i int) (uint8, int) {
	if b := s[i]; b < utf8.RuneSelf {
		return asciiClass[b], 1
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	return runeClass(r), w
}

// classRun returns the end of the run of runes of class c starting at i.
func classRun(s string, i int, c uint8) int {
	for i < len(s) {
		ci, w := classAt(s, i)
		if ci != c {
			break
		}
		i += w
	}
	return i
}

// cl100kPiece returns the end of the piece that starts at s[i:]; s must be
// valid UTF-8 and i < len(s).
func cl100kPiece(s string, i int) int {
	c, w := classAt(s, i)
	if s[i] == '\'' {
		if n := contraction(s[i+1:]); n > 0 {
			return i + 1 + n
		}
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if c == clLetter {
		return classRun(s, i+w, clLetter)
	}
	next := uint8(255)
	if i+w < len(s) {
		next, _ = classAt(s, i+w)
	}
	if (c == clOther || c == clSpace) && next == clLetter {
		return classRun(s, i+w, clLetter)
	}
	switch c {
	case clNumber: // \p{N}{1,3}
		end := i + w
		for k := 1; k < 3 && end < len(s); k++ {
			cn, wn := classAt(s, end)
			if cn != clNumber {
				break
			}
			end += wn
		}
		return end
	case clOther: //  ?[^\s\p{L}\p{N}]+[\r\n]*
		return classRun(s, classRun(s, i+w, clOther), clNewline)
	}
	if s[i] == ' ' && next == clOther {
		return classRun(s, classRun(s, i+1, clOther), clNewline)
	}
	// A run of spaces: \s*[\r\n]+ ends after its last newline; else
	// \s+(?!\S) leaves its last space to the next piece when a non-space
	// follows, unless that would leave nothing (\s+).
	end, lastNL, lastW := i, -1, 0
	for end < len(s) {
		cn, wn := classAt(s, end)
		if cn != clSpace && cn != clNewline {
			break
		}
		if cn == clNewline {
			lastNL = end
		}
		end += wn
		lastW = wn
	}
	switch {
	case lastNL >= 0:
		return lastNL + 1
	case end == len(s) || end-lastW == i:
		return end
	}
	return end - lastW
}

// contraction returns the length of 's, 't, 're, 've, 'm, 'll or 'd (in
// any case) at the start of s, the apostrophe already taken, or 0.
func contraction(s string) int {
	if len(s) == 0 {
		return 0
	}
	switch lowerASCII(s[0]) {
	case 's', 't', 'm', 'd':
		return 1
	case 'r', 'v':
		if len(s) > 1 && lowerASCII(s[1]) == 'e' {
			return 2
		}
	case 'l':
		if len(s) > 1 && lowerASCII(s[1]) == 'l' {
			return 2
		}
	}
	return 0
}

func lowerASCII(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}
