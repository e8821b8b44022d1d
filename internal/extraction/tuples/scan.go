package tuples

import (
	"strings"
)

// startKind says how surely a piece of a line begins a record.
type startKind int

const (
	noStart     startKind = iota
	weakStart             // it holds a tuple delimiter: a record, unless it continues an unfinished one
	strongStart           // it opens like a record: "(" or a kind word, after any list marker
)

// format tells the scanner what a record of one kind of reply looks like.
type format interface {
	// start says whether a trimmed piece of a line begins a record.
	start(piece string) startKind
	// startsKind reports whether a record may open with this kind word
	// (what kindPrefix found).
	startsKind(kind string) bool
	// need returns the number of fields a record needs, counting the kind,
	// given its first field; a record with fewer is unfinished.
	need(first string) int
}

// shape is what the scanner knows of a record read so far, kept up to date
// piece by piece so that joining lines costs no rescans.
type shape struct {
	first     string // the first field (up to the first tuple delimiter), markers removed
	paren     bool   // it opened with "("
	fields    int    // tuple delimiters seen + 1
	tailDelim bool   // the last piece ends with a tuple delimiter
	tailParen bool   // the last piece ends with ")", perhaps then ",", ";" or "."
}

func shapeOf(p string, d Delimiters) shape {
	u, _ := stripMarker(p)
	m := tupleMatches(u, d.Tuple)
	s := shape{first: u, paren: strings.HasPrefix(u, "("), fields: len(m) + 1}
	if len(m) > 0 {
		s.first = u[:m[0][0]]
	}
	s.tail(u, m)
	return s
}

// add extends the shape by a piece joined to the record.
func (s *shape) add(p string, d Delimiters) {
	m := tupleMatches(p, d.Tuple)
	s.fields += len(m)
	s.tail(p, m)
}

func (s *shape) tail(p string, m [][2]int) {
	s.tailDelim = len(m) > 0 && m[len(m)-1][1] == len(p)
	s.tailParen = strings.HasSuffix(strings.TrimRight(p, " \t,;."), ")")
}

// open reports whether the record lacks its end, so that the next line
// (when it does not open like a record) belongs to it: it ends with a
// delimiter, has not closed its parenthesis, or is short of fields.
func (s shape) open(f format) bool {
	return s.tailDelim || s.paren && !s.tailParen || s.fields < f.need(s.first)
}

// tupleMatches returns where the tuple delimiter (or a spaced variant)
// occurs in s, as [start, end) pairs.
func tupleMatches(s, delim string) [][2]int {
	var m [][2]int
	for i := 0; i < len(s); i++ {
		j := strings.IndexByte(s[i:], delim[0])
		if j < 0 {
			break
		}
		i += j
		if n, _ := matchDelim(s[i:], delim); n > 0 {
			m = append(m, [2]int{i, i + n})
			i += n - 1
		}
	}
	return m
}

// scan cuts a reply into record texts. Records end at the record
// delimiter, the completion delimiter, a code fence, a blank line or a
// line that begins another record. A line that does not open like a
// record is joined to an unfinished record above it; failing that, it is
// a record if it holds a tuple delimiter, and prose otherwise. Reply-level
// repairs go to rep.
func scan(reply string, d Delimiters, f format, rep repairs) []string {
	s := &scanner{d: d, f: f, rep: rep}
	s.onPiece, s.onRecord = s.piece, s.record // made once, not per line
	for line := range strings.Lines(reply) {
		t := strings.TrimSpace(line)
		switch {
		case t == "":
			s.flush()
		case isFence(t):
			s.flush()
			rep.add(RepairCodeFence, 1)
		default:
			splitDelims(t, d, &s.completion, s.onPiece)
		}
	}
	s.flush()
	switch {
	case s.completion == 0:
		rep.add(RepairCompletionMissing, 1)
	case s.completion > 1:
		rep.add(RepairCompletionRepeated, s.completion-1)
	}
	return s.out
}

// scanner is scan's state.
type scanner struct {
	d          Delimiters
	f          format
	rep        repairs
	out        []string
	cur        strings.Builder
	sh         shape
	inRecord   bool
	seen       bool // a record was started before
	hard       bool // a delimiter came since the last record started
	completion int
	first      bool // the current piece is the first of its line
	onPiece    func(int, string)
	onRecord   func(int, string)
}

func (s *scanner) flush() {
	if s.inRecord {
		s.out = append(s.out, s.cur.String())
		s.cur.Reset()
		s.inRecord = false
	}
}

// piece takes the i-th piece of a line between delimiters.
func (s *scanner) piece(i int, piece string) {
	if i > 0 {
		s.flush()
		s.hard = true
	}
	s.first = i == 0
	splitInline(strings.TrimSpace(piece), s.d, s.f, s.onRecord)
}

// record takes the j-th record-like part of a piece.
func (s *scanner) record(j int, p string) {
	if p == "" {
		return
	}
	st := s.f.start(p)
	switch {
	case st != strongStart && s.first && j == 0 && s.inRecord && s.sh.open(s.f):
		s.cur.WriteByte(' ')
		s.cur.WriteString(p)
		s.sh.add(p, s.d)
		s.rep.add(RepairJoinedLines, 1)
	case st != noStart:
		s.flush()
		if s.seen && !s.hard {
			s.rep.add(RepairNewlineSeparated, 1)
		}
		s.seen, s.hard, s.inRecord = true, false, true
		s.cur.WriteString(p)
		s.sh = shapeOf(p, s.d)
	default:
		s.flush()
		s.rep.add(RepairProse, 1)
	}
}

// splitDelims passes to yield the pieces of a line between record and
// completion delimiters (the latter in any ASCII case), numbered from 0,
// counting completions. Each delimiter is searched for once past the last
// cut, so the cost is linear.
func splitDelims(t string, d Delimiters, completion *int, yield func(int, string)) {
	off, n := 0, 0 // t[off:] is still to cut; n pieces went
	ri := strings.Index(t, d.Record)
	ci := indexFold(t, d.Completion)
	for ri >= 0 || ci >= 0 {
		var piece string
		if ci >= 0 && (ri < 0 || ci < ri) {
			*completion++
			piece, off = t[off:ci], ci+len(d.Completion)
		} else {
			piece, off = t[off:ri], ri+len(d.Record)
		}
		yield(n, piece)
		n++
		if ri >= 0 && ri < off {
			if ri = strings.Index(t[off:], d.Record); ri >= 0 {
				ri += off
			}
		}
		if ci >= 0 && ci < off {
			if ci = indexFold(t[off:], d.Completion); ci >= 0 {
				ci += off
			}
		}
	}
	yield(n, t[off:])
}

// splitInline passes to yield the records written one after another on
// one line, numbered from 0, as in `("entity"<|>A<|>..."), ("entity"<|>B
// <|>...)`: it cuts at a "(" that opens a record (a kind word follows, or
// a tuple delimiter comes later) where the text before it is a finished
// record ending in ")" (and perhaps ", " or "; ", which go). One pass,
// walking the delimiters' places along.
func splitInline(p string, d Delimiters, f format, yield func(int, string)) {
	if len(p) < 2 || strings.IndexByte(p[1:], '(') < 0 {
		yield(0, p)
		return
	}
	m := tupleMatches(p, d.Tuple)
	from, n := 0, 0
	k, e := 0, 0 // m[k:e] are the matches inside the record that starts at from
	for i := 1; i < len(p); i++ {
		if p[i] != '(' {
			continue
		}
		before := strings.TrimRight(p[from:i], " \t,;")
		if !strings.HasSuffix(before, ")") {
			continue
		}
		kind, ok := kindPrefix(p[i:])
		if !(ok && f.startsKind(kind) || len(m) > 0 && m[len(m)-1][0] > i) {
			continue
		}
		for e < len(m) && m[e][1] <= from+len(before) {
			e++
		}
		first := before
		if k < e {
			first = p[from:m[k][0]]
		}
		first, _ = stripMarker(first)
		if e-k+1 < f.need(first) {
			continue
		}
		yield(n, before)
		n++
		from = i
		for k < len(m) && m[k][0] < from {
			k++
		}
		e = max(e, k)
	}
	yield(n, p[from:])
}

// isFence reports whether a trimmed line opens or closes a Markdown code
// block.
func isFence(t string) bool {
	return strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")
}

// indexFold is strings.Index ignoring ASCII case; sep is ASCII in
// practice, and a non-ASCII sep is matched exactly.
func indexFold(s, sep string) int {
	n := len(sep)
	if n == 0 || n > len(s) {
		return -1
	}
	for i := 0; i+n <= len(s); i++ {
		if equalFoldASCII(s[i:i+n], sep) {
			return i
		}
	}
	return -1
}

func equalFoldASCII(a, b string) bool {
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
