package jsonrepair

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// Fix names one kind of repair that Repair applied.
type Fix string

// The repairs Repair knows. Repair reports each at most once, in this order.
const (
	// FixCodeFence: the JSON sat in a Markdown code fence (```json ... ```).
	FixCodeFence Fix = "code-fence"
	// FixSurroundingText: prose (or a second JSON value) before or after the
	// JSON was dropped; the first value that parses is kept.
	FixSurroundingText Fix = "surrounding-text"
	// FixDoubledBraces: an object written {{ ... }}, as in a Python format
	// template the model echoed.
	FixDoubledBraces Fix = "doubled-braces"
	// FixComments: // and /* */ comments outside strings were removed.
	FixComments Fix = "comments"
	// FixSingleQuotes: 'single-quoted' strings or keys became double-quoted
	// (embedded double quotes escaped, \' unescaped).
	FixSingleQuotes Fix = "single-quotes"
	// FixUnquotedKeys: bare object keys ({points: ...}) were quoted.
	FixUnquotedKeys Fix = "unquoted-keys"
	// FixPythonLiterals: True, False and None outside strings became true,
	// false and null.
	FixPythonLiterals Fix = "python-literals"
	// FixTrailingComma: a comma before } or ] was dropped.
	FixTrailingComma Fix = "trailing-comma"
	// FixControlChars: raw control characters (newlines, tabs) inside
	// strings were escaped.
	FixControlChars Fix = "control-chars"
	// FixInvalidEscapes: a backslash that starts no JSON escape was kept as
	// a literal backslash (\' became ').
	FixInvalidEscapes Fix = "invalid-escapes"
	// FixTruncated: the reply ended inside the JSON; the incomplete last
	// element was dropped and open brackets were closed.
	FixTruncated Fix = "truncated"
)

// ErrNoJSON is returned when a reply holds no JSON object or array.
var ErrNoJSON = errors.New("jsonrepair: no JSON object or array in reply")

// SyntaxError says why the JSON found in a reply cannot be repaired safely.
type SyntaxError struct {
	Offset int    // byte offset in the reply
	Msg    string // what was wrong there
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("jsonrepair: offset %d: %s", e.Offset, e.Msg)
}

// maxDepth is encoding/json's nesting limit: deeper output would not be
// valid to it.
const maxDepth = 10000

// Repair returns s as valid JSON text (an object or array), and the fixes
// it applied. When s is valid JSON already, fixes is empty and out is
// strings.TrimSpace(s). Otherwise out is the first object or array in s
// that can be repaired, written compactly. The error is ErrNoJSON (possibly
// wrapped) or a *SyntaxError.
func Repair(s string) (out string, fixes []Fix, err error) {
	t := strings.TrimSpace(s)
	if json.Valid([]byte(t)) {
		if t[0] == '{' || t[0] == '[' {
			return t, nil, nil
		}
		return "", nil, fmt.Errorf("%w (it is a bare JSON %s)", ErrNoJSON, scalarKind(t[0]))
	}

	// Start after an opening code fence, so that prose before it (which may
	// hold brackets, such as "[1]") is not taken for the JSON; look before
	// it only when there is no bracket after it (it was a closing fence).
	from := fenceEnd(s)
	p := parser{s: s, out: make([]byte, 0, len(s)+8)}
	var first error
	for _, r := range [2][2]int{{from, len(s)}, {0, from}} {
		if first != nil {
			break
		}
		for pos := r[0]; pos < r[1]; {
			k := strings.IndexAny(s[pos:r[1]], "{[")
			if k < 0 {
				break
			}
			pos += k
			p.i, p.out, p.fixes = pos, p.out[:0], 0
			if _, err := p.value(0); err != nil {
				if first == nil {
					first = err
				}
				// Candidates inside the failed value would only yield a
				// fragment of it (one point of a broken points list).
				pos = balancedEnd(s, pos)
				continue
			}
			p.outside(s[:pos])
			p.outside(s[p.i:])
			if !json.Valid(p.out) {
				return "", nil, &SyntaxError{Offset: pos, Msg: "internal error: repaired text is not valid JSON"}
			}
			return string(p.out), p.fixes.list(), nil
		}
	}
	if first != nil {
		return "", nil, first
	}
	return "", nil, ErrNoJSON
}

// Unmarshal is Repair, then json.Unmarshal of the result into v. It returns
// the fixes Repair applied.
func Unmarshal(s string, v any) ([]Fix, error) {
	out, fixes, err := Repair(s)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		return fixes, fmt.Errorf("jsonrepair: decode repaired reply: %w", err)
	}
	return fixes, nil
}

// fenceEnd returns the offset just after the first ``` that starts a line
// (a fence elsewhere may be text inside a JSON string), or 0.
func fenceEnd(s string) int {
	for off := 0; ; {
		k := strings.Index(s[off:], "```")
		if k < 0 {
			return 0
		}
		k += off
		if strings.TrimLeft(s[strings.LastIndexByte(s[:k], '\n')+1:k], " \t") == "" {
			return k + 3
		}
		off = k + 3
	}
}

// balancedEnd returns the offset after the bracket that closes the one at
// pos, skipping double-quoted strings, or len(s) when none does.
func balancedEnd(s string, pos int) int {
	depth, inStr := 0, false
	for i := pos; i < len(s); i++ {
		switch c := s[i]; {
		case inStr && c == '\\':
			i++
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			if depth--; depth == 0 {
				return i + 1
			}
		}
	}
	return len(s)
}

func scalarKind(c byte) string {
	switch c {
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// fixSet is a set of Fix, one bit each in the order of allFixes.
type fixSet uint16

// allFixes returns an array, not a slice, so that add allocates nothing.
func allFixes() [11]Fix {
	return [...]Fix{FixCodeFence, FixSurroundingText, FixDoubledBraces, FixComments,
		FixSingleQuotes, FixUnquotedKeys, FixPythonLiterals, FixTrailingComma,
		FixControlChars, FixInvalidEscapes, FixTruncated}
}

func (fs *fixSet) add(f Fix) {
	for i, g := range allFixes() {
		if g == f {
			*fs |= 1 << i
		}
	}
}

func (fs fixSet) list() []Fix {
	var l []Fix
	for i, f := range allFixes() {
		if fs&(1<<i) != 0 {
			l = append(l, f)
		}
	}
	return l
}

// parser reads one lenient JSON value from s at i and writes it to out as
// strict JSON. Each parse method returns cut = true when s ended inside the
// value; containers then close themselves, so out stays well formed, and
// their parent decides whether to keep them.
type parser struct {
	s     string
	i     int
	out   []byte
	fixes fixSet
}

func (p *parser) errorf(format string, args ...any) error {
	return &SyntaxError{Offset: p.i, Msg: fmt.Sprintf(format, args...)}
}

// outside records what the text outside the JSON value was: code fences
// (with their info string, e.g. "json") and anything else but space.
func (p *parser) outside(text string) {
	for {
		k := strings.Index(text, "```")
		if k < 0 {
			break
		}
		if strings.TrimSpace(text[:k]) != "" {
			p.fixes.add(FixSurroundingText)
		}
		p.fixes.add(FixCodeFence)
		text = strings.TrimLeft(text[k:], "`")
		j := 0
		for j < len(text) && (isIdent(text[j]) || text[j] == '+') {
			j++
		}
		if j == len(text) || unicode.IsSpace(rune(text[j])) {
			text = text[j:]
		}
	}
	if strings.TrimSpace(text) != "" {
		p.fixes.add(FixSurroundingText)
	}
}

// space skips JSON white space and comments; it reports whether s ended.
func (p *parser) space() (eof bool) {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		case '/':
			if p.i+1 == len(p.s) { // the start of a cut comment
				p.i = len(p.s)
				return true
			}
			var end string
			switch p.s[p.i+1] {
			case '/':
				end = "\n"
			case '*':
				end = "*/"
			default:
				return false
			}
			p.fixes.add(FixComments)
			k := strings.Index(p.s[p.i+2:], end)
			if k < 0 {
				p.i = len(p.s)
				return true
			}
			p.i += 2 + k + len(end)
		default:
			return false
		}
	}
	return true
}

// value parses the value at i, which is not the end of s.
func (p *parser) value(depth int) (cut bool, err error) {
	switch c := p.s[p.i]; {
	case c == '{' || c == '[':
		return p.container(depth + 1)
	case c == '"' || c == '\'':
		return p.str()
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case isIdent(c):
		return p.literal()
	default:
		return false, p.errorf("unexpected %q", c)
	}
}

// closeCut ends a container that s ended inside.
func (p *parser) closeCut(b byte) (bool, error) {
	p.out = append(p.out, b)
	p.fixes.add(FixTruncated)
	return true, nil
}

// container parses [ ... ], { ... } or {{ ... }}. An array element cut by
// the end of s is dropped whole. An object member cut in its key or scalar
// value is dropped too; a member whose container value was cut is kept
// with what that container holds, so {"points": [ complete points, cut
// point keeps the complete points.
func (p *parser) container(depth int) (bool, error) {
	if depth > maxDepth {
		return false, p.errorf("nesting deeper than %d", maxDepth)
	}
	obj := p.s[p.i] == '{'
	closer, what, doubled := byte(']'), "array element", false
	if obj {
		closer, what = '}', "object member"
		doubled = p.i+1 < len(p.s) && p.s[p.i+1] == '{'
		if doubled {
			p.fixes.add(FixDoubledBraces)
			p.i++
		}
	}
	p.out = append(p.out, p.s[p.i])
	p.i++
	for n := 0; ; n++ {
		if p.space() {
			return p.closeCut(closer)
		}
		if p.s[p.i] == closer {
			if n > 0 {
				p.fixes.add(FixTrailingComma)
			}
			return p.closeBracket(closer, doubled)
		}
		mark := len(p.out)
		if n > 0 {
			p.out = append(p.out, ',')
		}
		keep := false // whether a cut value stays
		if obj {
			cut, err := p.memberKey()
			if err != nil {
				return false, err
			}
			if cut {
				p.out = p.out[:mark]
				return p.closeCut(closer)
			}
			keep = p.s[p.i] == '{' || p.s[p.i] == '['
		}
		cut, err := p.value(depth)
		if err != nil {
			return false, err
		}
		if cut {
			if !keep {
				p.out = p.out[:mark]
			}
			return p.closeCut(closer)
		}
		if p.space() {
			return p.closeCut(closer)
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case closer:
			return p.closeBracket(closer, doubled)
		default:
			return false, p.errorf("expected ',' or '%c' after %s, found %q", closer, what, p.s[p.i])
		}
	}
}

// closeBracket consumes the closer at i (both braces of a doubled object;
// one cut between its two braces is complete all the same).
func (p *parser) closeBracket(closer byte, doubled bool) (bool, error) {
	p.i++
	if doubled && p.i < len(p.s) {
		if p.s[p.i] != '}' {
			return false, p.errorf("expected '}}' closing '{{', found '}' then %q", p.s[p.i])
		}
		p.i++
	}
	p.out = append(p.out, closer)
	return false, nil
}

// memberKey parses an object key and its colon; it leaves i at the value.
func (p *parser) memberKey() (cut bool, err error) {
	if cut, err := p.key(); cut || err != nil {
		return cut, err
	}
	if p.space() {
		return true, nil
	}
	if p.s[p.i] != ':' {
		return false, p.errorf("expected ':' after object key, found %q", p.s[p.i])
	}
	p.i++
	p.out = append(p.out, ':')
	return p.space(), nil
}

// key parses an object key: a string in either quotes, or a bare word.
func (p *parser) key() (bool, error) {
	c := p.s[p.i]
	if c == '"' || c == '\'' {
		return p.str()
	}
	if !isIdent(c) || c >= '0' && c <= '9' {
		return false, p.errorf("expected object key, found %q", c)
	}
	start := p.i
	for p.i < len(p.s) && (isIdent(p.s[p.i]) || p.s[p.i] == '-') {
		p.i++
	}
	if p.i == len(p.s) {
		return true, nil
	}
	p.fixes.add(FixUnquotedKeys)
	p.out = append(p.out, '"')
	p.out = append(p.out, p.s[start:p.i]...)
	p.out = append(p.out, '"')
	return false, nil
}

// str parses a string quoted with " or '. Escapes that JSON knows are
// copied as they are.
func (p *parser) str() (bool, error) {
	q := p.s[p.i]
	if q == '\'' {
		p.fixes.add(FixSingleQuotes)
	}
	p.i++
	p.out = append(p.out, '"')
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == q:
			p.i++
			p.out = append(p.out, '"')
			return false, nil
		case c == '"': // inside '...'
			p.out = append(p.out, '\\', '"')
			p.i++
		case c == '\\':
			if p.i+1 == len(p.s) {
				p.i = len(p.s)
				return true, nil
			}
			switch e := p.s[p.i+1]; e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.out = append(p.out, '\\', e)
				p.i += 2
			case '\'':
				if q != '\'' {
					p.fixes.add(FixInvalidEscapes)
				}
				p.out = append(p.out, '\'')
				p.i += 2
			case 'u':
				h := 0
				for h < 4 && p.i+2+h < len(p.s) && isHex(p.s[p.i+2+h]) {
					h++
				}
				if h < 4 && p.i+2+h == len(p.s) {
					p.i = len(p.s)
					return true, nil
				}
				if h == 4 {
					p.out = append(p.out, p.s[p.i:p.i+6]...)
					p.i += 6
					break
				}
				fallthrough
			default:
				// Keep the backslash as text; the next byte is read on its own.
				p.fixes.add(FixInvalidEscapes)
				p.out = append(p.out, '\\', '\\')
				p.i++
			}
		case c < 0x20:
			p.fixes.add(FixControlChars)
			switch c {
			case '\n':
				p.out = append(p.out, '\\', 'n')
			case '\r':
				p.out = append(p.out, '\\', 'r')
			case '\t':
				p.out = append(p.out, '\\', 't')
			default:
				p.out = fmt.Appendf(p.out, `\u%04x`, c)
			}
			p.i++
		default:
			// Copy the run up to the next byte that needs a look.
			j := p.i + 1
			for j < len(p.s) && p.s[j] >= 0x20 && p.s[j] != q && p.s[j] != '"' && p.s[j] != '\\' {
				j++
			}
			p.out = append(p.out, p.s[p.i:j]...)
			p.i = j
		}
	}
	return true, nil
}

// number parses a JSON number. A number that s ends in is cut: more
// digits may have followed.
func (p *parser) number() (bool, error) {
	start := p.i
	digits := func() int {
		k := p.i
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
		}
		return p.i - k
	}
	if p.s[p.i] == '-' {
		p.i++
	}
	if p.i < len(p.s) && p.s[p.i] == '0' {
		p.i++
	} else if digits() == 0 && p.i < len(p.s) {
		return false, p.errorf("malformed number")
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if digits() == 0 && p.i < len(p.s) {
			return false, p.errorf("malformed number")
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if digits() == 0 && p.i < len(p.s) {
			return false, p.errorf("malformed number")
		}
	}
	if p.i == len(p.s) {
		return true, nil
	}
	if c := p.s[p.i]; isIdent(c) || c == '.' {
		return false, p.errorf("malformed number")
	}
	p.out = append(p.out, p.s[start:p.i]...)
	return false, nil
}

// literal parses true, false, null and Python's True, False, None. A
// word that s ends in and that begins one of them is cut.
func (p *parser) literal() (bool, error) {
	start := p.i
	for p.i < len(p.s) && isIdent(p.s[p.i]) {
		p.i++
	}
	w := p.s[start:p.i]
	var lit string
	switch w {
	case "true", "false", "null":
		lit = w
	case "True", "False":
		lit = strings.ToLower(w)
	case "None":
		lit = "null"
	}
	if lit == "" {
		if p.i == len(p.s) {
			for _, l := range []string{"true", "false", "null", "True", "False", "None"} {
				if strings.HasPrefix(l, w) {
					return true, nil
				}
			}
		}
		p.i = start
		return false, p.errorf("unquoted value %q", w)
	}
	if lit != w {
		p.fixes.add(FixPythonLiterals)
	}
	p.out = append(p.out, lit...)
	return false, nil
}

// isIdent reports whether c may be part of a bare key or literal; bytes of
// multi-byte UTF-8 runes count, so keys in any script pass.
func isIdent(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '$' || c >= 0x80
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
