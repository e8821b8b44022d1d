package tuples

import (
	"html"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// cleanText does what GraphRAG's clean_str does to every field (HTML
// entities unescaped, control characters removed) and more: invalid UTF-8
// becomes U+FFFD, and tabs and line breaks become spaces instead of
// vanishing, so words on either side stay apart. The result is trimmed.
func cleanText(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if strings.IndexByte(s, '&') >= 0 {
		s = html.UnescapeString(s)
	}
	if strings.IndexFunc(s, isControl) >= 0 {
		s = strings.Map(func(r rune) rune {
			switch {
			case r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f':
				return ' '
			case isControl(r):
				return -1
			}
			return r
		}, s)
	}
	return strings.TrimSpace(s)
}

// isControl matches clean_str's [\x00-\x1f\x7f-\x9f].
func isControl(r rune) bool { return r < 0x20 || 0x7f <= r && r <= 0x9f }

// nameQuotes are stripped from both ends of a name in any number; a name
// never starts or ends with one.
const nameQuotes = "\"`“”„‟«»"

// normName normalises an entity name, entity type, or claim subject,
// object, type or status: cleaned as cleanText does, Markdown emphasis,
// quotes and wrapping brackets removed from the ends, runs of white space
// made one space, upper-cased as Python does.
func normName(raw string, rep repairs) string {
	t := cleanText(raw)
	var emph, quotes, brackets bool
	for changed := true; changed && t != ""; {
		changed = false
		if u := strings.Trim(t, "*"); u != t {
			t, emph, changed = strings.TrimSpace(u), true, true
		}
		if u, ok := unwrap(t, "__", "__"); ok {
			t, emph, changed = u, true, true
		}
		if u := strings.Trim(t, nameQuotes); u != t {
			t, quotes, changed = strings.TrimSpace(u), true, true
		}
		for _, p := range [...][2]string{{"'", "'"}, {"‘", "’"}} {
			if u, ok := unwrap(t, p[0], p[1]); ok {
				t, quotes, changed = u, true, true
			}
		}
		for _, p := range [...][2]string{{"<", ">"}, {"[", "]"}, {"{", "}"}} {
			if u, ok := unwrap(t, p[0], p[1]); ok {
				t, brackets, changed = u, true, true
			}
		}
	}
	count(rep, RepairEmphasis, emph)
	count(rep, RepairQuotes, quotes)
	count(rep, RepairBrackets, brackets)
	return upper(collapseSpaces(t))
}

// collapseSpaces makes each run of white space in t one space.
func collapseSpaces(t string) string {
	prev := false
	for _, r := range t {
		sp := unicode.IsSpace(r)
		if sp && (r != ' ' || prev) {
			return strings.Join(strings.Fields(t), " ")
		}
		prev = sp
	}
	return t
}

// descQuotes pairs the quotes a description may be wrapped in.
var descQuotes = [...][2]string{{`"`, `"`}, {"“", "”"}, {"'", "'"}, {"‘", "’"}, {"`", "`"}}

// normText cleans a description, date or quote: as cleanText, plus a pair
// of quotes, emphasis markers or <> wrapping the whole (and not found
// inside) removed, and a stray double quote at either end removed when the field
// has an odd number of them. Inner quotes stay: "Bah", said he.
func normText(raw string, rep repairs) string {
	t := cleanText(raw)
	var emph, quotes, brackets bool
	for changed := true; changed && t != ""; {
		changed = false
		for _, m := range [...]string{"**", "__", "*", "_"} {
			if u, ok := unwrapWhole(t, m, m); ok {
				t, emph, changed = u, true, true
				break
			}
		}
		for _, p := range descQuotes {
			if u, ok := unwrapWhole(t, p[0], p[1]); ok {
				t, quotes, changed = u, true, true
				break
			}
		}
		if u, ok := unwrapWhole(t, "<", ">"); ok {
			t, brackets, changed = u, true, true
		}
		if strings.Count(t, `"`)%2 == 1 {
			if u, ok := strings.CutPrefix(t, `"`); ok {
				t, quotes, changed = strings.TrimSpace(u), true, true
			} else if u, ok := strings.CutSuffix(t, `"`); ok {
				t, quotes, changed = strings.TrimSpace(u), true, true
			}
		}
	}
	count(rep, RepairEmphasis, emph)
	count(rep, RepairQuotes, quotes)
	count(rep, RepairBrackets, brackets)
	return t
}

// unwrap removes open and close from the ends of t when both are there.
func unwrap(t, open, close string) (string, bool) {
	if len(t) >= len(open)+len(close) && strings.HasPrefix(t, open) && strings.HasSuffix(t, close) {
		return strings.TrimSpace(t[len(open) : len(t)-len(close)]), true
	}
	return t, false
}

// unwrapWhole is unwrap when neither marker occurs between the two, so
// that "a" and "b" stays whole.
func unwrapWhole(t, open, close string) (string, bool) {
	u, ok := unwrap(t, open, close)
	if !ok || strings.Contains(u, open) || strings.Contains(u, close) {
		return t, false
	}
	return u, true
}

func count(rep repairs, k Repair, did bool) {
	if did {
		rep.add(k, 1)
	}
}

// weightState says how a relationship strength was read.
type weightState int

const (
	weightOK weightState = iota
	weightMissing
	weightNotNumeric
	weightOutOfRange
)

// parseWeight reads a relationship strength: a decimal number, perhaps in
// quotes, emphasis or brackets, perhaps written "8/10". A strength that is
// missing, no number or outside (0, MaxWeight] gives DefaultWeight and a
// state other than weightOK.
//
// A ")" at the end is the record's (a strength has none of its own):
// paren reports that one was removed.
func parseWeight(raw string, rep repairs) (w float64, st weightState, paren bool) {
	t := cleanText(raw)
	if u := strings.TrimRight(t, ") "); u != t {
		t, paren = u, true
	}
	var quotes, emph bool
	for changed := true; changed && t != ""; {
		changed = false
		if u := strings.Trim(t, "*_"); u != t {
			t, emph, changed = strings.TrimSpace(u), true, true
		}
		if u := strings.Trim(t, nameQuotes+"'‘’"); u != t {
			t, quotes, changed = strings.TrimSpace(u), true, true
		}
	}
	if t == "" {
		return DefaultWeight, weightMissing, paren
	}
	count(rep, RepairEmphasis, emph)
	count(rep, RepairQuotes, quotes)
	if u, ok := strings.CutSuffix(t, "/10"); ok && isDecimal(strings.TrimSpace(u)) {
		t = strings.TrimSpace(u)
		rep.add(RepairWeightFormat, 1)
	}
	if !isDecimal(t) {
		return DefaultWeight, weightNotNumeric, paren
	}
	w, err := strconv.ParseFloat(t, 64)
	if err != nil || !(w > 0 && w <= MaxWeight) {
		return DefaultWeight, weightOutOfRange, paren
	}
	return w, weightOK, paren
}

// isDecimal matches [+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?, the numbers
// both Python's float() and strconv.ParseFloat read alike.
func isDecimal(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for ; i < len(s) && isDigit(s[i]); i++ {
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for ; i < len(s) && isDigit(s[i]); i++ {
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for ; i < len(s) && isDigit(s[i]); i++ {
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(s)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
