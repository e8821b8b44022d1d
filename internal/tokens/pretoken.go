package tokens

import (
	"unicode"
	"unicode/utf8"
)

// The pre-tokenizers below split text into the pieces that tiktoken-go's
// patterns, run by regexp2, find. cl100k_base's is
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//	 ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// and o200k_base's
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|...)?|
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|...)?|
//	\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// They are written out by hand because regexp2 took most of the time of a
// cold local search. regexp2's \s is unicode.IsSpace, its \p{..} are Go's
// unicode tables, and its case-insensitive match lowers the input with
// unicode.ToLower, whose only runes lowering to s, t, r, e, v, m, l or d
// are their ASCII capitals. Every rune starts some alternative, so the
// pieces cover the text.

// Rune flags: the sets of the patterns that a rune is in.
const (
	fLetter  uint8 = 1 << iota // \p{L}
	fNumber                    // \p{N}
	fSpace                     // \s, \r and \n included
	fNewline                   // [\r\n]
	fUpper                     // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	fLower                     // [\p{Ll}\p{Lm}\p{Lo}\p{M}]

	// fWord runes are not in [^\s\p{L}\p{N}].
	fWord = fSpace | fLetter | fNumber
)

var asciiFlags = func() (t [utf8.RuneSelf]uint8) {
	for b := range t {
		t[b] = runeFlags(rune(b))
	}
	return t
}()

func runeFlags(r rune) uint8 {
	switch {
	case r == '\r' || r == '\n':
		return fSpace | fNewline
	case unicode.IsSpace(r):
		return fSpace
	case unicode.IsNumber(r):
		return fNumber
	case unicode.In(r, unicode.Lu, unicode.Lt):
		return fLetter | fUpper
	case unicode.Is(unicode.Ll, r):
		return fLetter | fLower
	case unicode.IsLetter(r): // Lm, Lo
		return fLetter | fUpper | fLower
	case unicode.Is(unicode.M, r): // marks are no letters
		return fUpper | fLower
	}
	return 0
}

// flagsAt returns the flags and byte width of the rune at s[i:], which
// must be valid UTF-8.
func flagsAt(s string, i int) (uint8, int) {
	if b := s[i]; b < utf8.RuneSelf {
		return asciiFlags[b], 1
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	return runeFlags(r), w
}

// flagRun returns the end of the run of runes with any of the flags f
// starting at i.
func flagRun(s string, i int, f uint8) int {
	for i < len(s) {
		fi, w := flagsAt(s, i)
		if fi&f == 0 {
			break
		}
		i += w
	}
	return i
}

// cl100kPiece returns the end of the cl100k_base piece that starts at
// s[i:]; s must be valid UTF-8 and i < len(s).
func cl100kPiece(s string, i int) int {
	if s[i] == '\'' {
		if n := contraction(s[i+1:]); n > 0 {
			return i + 1 + n
		}
	}
	f, w := flagsAt(s, i)
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if f&fLetter != 0 {
		return flagRun(s, i+w, fLetter)
	}
	if f&(fNewline|fNumber) == 0 && i+w < len(s) {
		if next, _ := flagsAt(s, i+w); next&fLetter != 0 {
			return flagRun(s, i+w, fLetter)
		}
	}
	return tailPiece(s, i, f, w, false)
}

// o200kPiece returns the end of the o200k_base piece that starts at s[i:];
// s must be valid UTF-8 and i < len(s). Marks (\p{M}) are no letters:
// they may be the optional first rune of the word alternatives and are in
// [^\s\p{L}\p{N}], which is where backtracking matters.
func o200kPiece(s string, i int) int {
	f, w := flagsAt(s, i)
	// The optional first rune of both word alternatives: each tries it
	// taken first, then not.
	starts, n := [2]int{i + w, i}, 2
	if f&(fNewline|fLetter|fNumber) != 0 {
		starts[0], n = i, 1
	}
	for _, p := range starts[:n] { // U*W+
		if end := upperLowerEnd(s, p); end > 0 {
			return withContraction(s, end)
		}
	}
	for _, p := range starts[:n] { // U+W*
		if p < len(s) {
			if fp, _ := flagsAt(s, p); fp&fUpper != 0 {
				return withContraction(s, flagRun(s, flagRun(s, p, fUpper), fLower))
			}
		}
	}
	return tailPiece(s, i, f, w, true)
}

// tailPiece matches the alternatives both patterns end with at s[i:],
// whose rune has flags f and width w: \p{N}{1,3}, then
// " ?[^\s\p{L}\p{N}]+" followed by [\r\n]* ([\r\n/]* for o200k_base),
// then the spaces.
func tailPiece(s string, i int, f uint8, w int, slash bool) int {
	switch {
	case f&fNumber != 0:
		end := i + w
		for k := 1; k < 3 && end < len(s); k++ {
			fn, wn := flagsAt(s, end)
			if fn&fNumber == 0 {
				break
			}
			end += wn
		}
		return end
	case f&fWord == 0:
		return newlineRun(s, otherRun(s, i+w), slash)
	case s[i] == ' ' && i+1 < len(s):
		if fn, _ := flagsAt(s, i+1); fn&fWord == 0 {
			return newlineRun(s, otherRun(s, i+1), slash)
		}
	}
	return spacePiece(s, i)
}

// spacePiece returns the end of the piece of the run of spaces at s[i:],
// by the patterns' last three alternatives: \s*[\r\n]+ ends after the
// run's last newline; else \s+(?!\S) leaves the last space to the next
// piece when a non-space follows, unless that would leave nothing (\s+).
func spacePiece(s string, i int) int {
	end, lastNL, lastW := i, -1, 0
	for end < len(s) {
		fn, wn := flagsAt(s, end)
		if fn&fSpace == 0 {
			break
		}
		if fn&fNewline != 0 {
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

// upperLowerEnd matches [\p{Lu}..]*[\p{Ll}..]+ at p and returns its end,
// or -1. The first part is greedy: it backtracks to the last rune from
// which the second can start, which is the rune after its run if that is
// lowercase, else the last rune of the run that is in both sets.
func upperLowerEnd(s string, p int) int {
	from := -1
	for p < len(s) {
		fp, wp := flagsAt(s, p)
		if fp&fLower != 0 {
			from = p
		}
		if fp&fUpper == 0 {
			break
		}
		p += wp
	}
	if from < 0 {
		return -1
	}
	return flagRun(s, from, fLower)
}

// otherRun returns the end of the run of [^\s\p{L}\p{N}] at i.
func otherRun(s string, i int) int {
	for i < len(s) {
		fi, w := flagsAt(s, i)
		if fi&fWord != 0 {
			break
		}
		i += w
	}
	return i
}

// newlineRun returns the end of the run of [\r\n] (with slash, [\r\n/])
// at i.
func newlineRun(s string, i int, slash bool) int {
	for i < len(s) && (s[i] == '\r' || s[i] == '\n' || slash && s[i] == '/') {
		i++
	}
	return i
}

// withContraction extends a word ending at end by an optional contraction.
func withContraction(s string, end int) int {
	if end < len(s) && s[end] == '\'' {
		if n := contraction(s[end+1:]); n > 0 {
			return end + 1 + n
		}
	}
	return end
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
