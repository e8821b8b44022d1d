package tuples

import (
	"strings"
)

// record is one record's text cut into fields.
type record struct {
	fields []string // raw, untrimmed; the kind, if any, is fields[0]
	parens bool     // RepairParentheses was counted
	rep    repairs  // the record's own repairs
}

// stripMarker removes what small models put before a record: list
// bullets ("- ", "* ", "• "), numbering ("1. ", "2) "), heading hashes
// and a label ending in the record's "(", as in `Entity 1: ("entity"<|>`.
func stripMarker(t string) (string, bool) {
	stripped := false
	for {
		u := stripOneMarker(t)
		if u == t {
			return t, stripped
		}
		t, stripped = u, true
	}
}

func stripOneMarker(t string) string {
	if t == "" {
		return t
	}
	for _, b := range [...]string{"- ", "* ", "+ ", "• ", "· ", "– ", "> "} {
		if u, ok := strings.CutPrefix(t, b); ok {
			return strings.TrimSpace(u)
		}
	}
	if t[0] == '#' {
		u := strings.TrimLeft(t, "#")
		if u == "" || u[0] == ' ' || u[0] == '(' {
			return strings.TrimSpace(u)
		}
		return t
	}
	if isDigit(t[0]) {
		i := 0
		for i < len(t) && i < 4 && isDigit(t[i]) {
			i++
		}
		if i < len(t) && (t[i] == '.' || t[i] == ')' || t[i] == ':') {
			u := t[i+1:]
			if u != "" && (u[0] == ' ' || u[0] == '(' || u[0] == '"') {
				return strings.TrimSpace(u)
			}
		}
		return t
	}
	// A label before "(kind": cut up to the "(" when it comes before any
	// tuple delimiter and opens a known kind.
	if i := strings.IndexByte(t[:min(len(t), 60)], '('); i > 0 && !strings.ContainsAny(t[:i], "<|\"") {
		if _, ok := kindPrefix(t[i:]); ok {
			return t[i:]
		}
	}
	return t
}

// kindWord maps the words small models write for a record kind to it,
// or "" for other words.
func kindWord(w string) string {
	switch strings.ToLower(w) {
	case "entity", "entities":
		return "entity"
	case "relationship", "relationships", "relation", "relations":
		return "relationship"
	case "claim", "claims":
		return "claim"
	}
	return ""
}

// kindTrim is what may wrap a kind word.
const kindTrim = "\"'`“”‘’*_<>[] \t"

// normKind returns the kind a first field names ("" for none known) and
// whether it was written exactly as GraphRAG wants it: "entity" or
// "relationship" in double quotes, nothing around.
func normKind(raw string) (kind string, exact bool) {
	if w := strings.Trim(raw, kindTrim); len(w) <= len("relationships") {
		kind = kindWord(w)
	}
	return kind, raw == `"`+kind+`"`
}

// kindPrefix reports whether t opens with a known kind word (after "(" or
// a table's "|", in quotes or emphasis) followed by a delimiter-like
// character: "<", "|" or ",". "Entities:" and "Relationship strength is"
// are prose.
func kindPrefix(t string) (string, bool) {
	s := strings.TrimLeft(t, "(| \t")
	s = strings.TrimLeft(s, kindTrim)
	i := 0
	for i < len(s) && i <= len("relationships") && ('a' <= s[i]|0x20 && s[i]|0x20 <= 'z') {
		i++
	}
	kind := kindWord(s[:i])
	if kind == "" {
		return "", false
	}
	rest := strings.TrimLeft(s[i:], kindTrim)
	if rest == "" || !strings.ContainsRune("<|,", rune(rest[0])) {
		return "", false
	}
	return kind, true
}

// splitTuple splits s at the tuple delimiter, also where the model put
// spaces or tabs between its characters ("<| >", "< | >"). exact is false
// when such a variant was seen.
func splitTuple(s, delim string) (parts []string, exact bool) {
	exact = true
	start := 0
	for i := 0; i < len(s); {
		j := strings.IndexByte(s[i:], delim[0])
		if j < 0 {
			break
		}
		i += j
		n, ex := matchDelim(s[i:], delim)
		if n == 0 {
			i++
			continue
		}
		parts = append(parts, s[start:i])
		exact = exact && ex
		i += n
		start = i
	}
	return append(parts, s[start:]), exact
}

// matchDelim returns the length of the delimiter at the start of s, 0 if
// none, allowing blanks between its bytes.
func matchDelim(s, delim string) (n int, exact bool) {
	if !strings.HasPrefix(s, delim[:1]) {
		return 0, false
	}
	exact = true
	j := 1
	for k := 1; k < len(delim); k++ {
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') && delim[k] != ' ' {
			j++
			exact = false
		}
		if j >= len(s) || s[j] != delim[k] {
			return 0, false
		}
		j++
	}
	return j, exact
}

// hasTuple reports whether s holds the tuple delimiter or a spaced
// variant of it.
func hasTuple(s, delim string) bool {
	for i := 0; i < len(s); i++ {
		j := strings.IndexByte(s[i:], delim[0])
		if j < 0 {
			return false
		}
		i += j
		if n, _ := matchDelim(s[i:], delim); n > 0 {
			return true
		}
	}
	return false
}

// parseRecord cuts a record's text into fields. It takes off markers,
// the outer parentheses (one pair, as GraphRAG does, or a lone closing
// one that leaves the text unbalanced) and splits at the tuple delimiter;
// failing that at "|" in a Markdown table row or after a kind word, or at
// the commas of a list of double-quoted fields. ok is false when no
// delimiter is found.
func parseRecord(text string, d Delimiters) (rec record, ok bool) {
	rec.rep = repairs{}
	t, marked := stripMarker(strings.TrimSpace(text))
	count(rec.rep, RepairListMarker, marked)
	table := false
	if u, ok := strings.CutPrefix(t, "|"); ok {
		table = true
		t = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(u), "|"))
	}
	if !table {
		t, rec.parens = stripParens(t)
		count(rec.rep, RepairParentheses, rec.parens)
	}
	parts, exact := splitTuple(t, d.Tuple)
	if len(parts) > 1 {
		count(rec.rep, RepairTupleDelimiter, !exact)
		rec.fields = parts
		return rec, true
	}
	if d.pipe() && strings.Contains(t, "|") {
		if _, kind := kindPrefix(t); kind || table {
			rec.fields = strings.Split(t, "|")
			rec.rep.add(RepairTupleDelimiter, 1)
			return rec, true
		}
	}
	if f, ok := splitQuotedCommas(t); ok {
		rec.fields = f
		rec.rep.add(RepairTupleDelimiter, 1)
		return rec, true
	}
	return rec, false
}

// stripParens removes the outer parentheses of a record: the opening
// ones, then as many closing ones (perhaps followed by ",", ";" or "."),
// each only while it has no partner inside, so "(founded (1990)" keeps
// its ")". Without an opening one, one unpartnered closing one goes.
// fixed is false only for a record written "(...)".
func stripParens(t string) (string, bool) {
	opened := 0
	for {
		u, ok := strings.CutPrefix(t, "(")
		if !ok {
			break
		}
		t = strings.TrimLeft(u, " \t")
		opened++
	}
	end := strings.TrimRight(t, " \t,;.")
	punct := len(end) != len(strings.TrimRight(t, " \t"))
	closed, opens, closes := 0, strings.Count(end, "("), strings.Count(end, ")")
	for closed < max(opened, 1) && strings.HasSuffix(end, ")") && closes > opens {
		end = strings.TrimRight(end[:len(end)-1], " \t")
		closed++
		closes--
	}
	if closed > 0 {
		t = end
	}
	return strings.TrimSpace(t), !(opened == 1 && closed == 1 && !punct)
}

// splitQuotedCommas reads `"entity", "ALICE", "PERSON", "..."`: every
// field in double quotes, but the first (the kind) and a number at the
// end may be bare. Anything else is not read, since commas in a
// description would make the split a guess.
func splitQuotedCommas(t string) ([]string, bool) {
	var fields []string
	for i := 0; ; {
		for i < len(t) && (t[i] == ' ' || t[i] == '\t') {
			i++
		}
		var f string
		if i < len(t) && t[i] == '"' {
			j := strings.IndexByte(t[i+1:], '"')
			if j < 0 {
				return nil, false
			}
			f = t[i+1 : i+1+j]
			i += j + 2
		} else {
			j := strings.IndexByte(t[i:], ',')
			if j < 0 {
				j = len(t) - i
			}
			f = strings.TrimSpace(t[i : i+j])
			i += j
			last := i >= len(t)
			if f == "" || len(fields) > 0 && !(last && isDecimal(f)) {
				return nil, false
			}
		}
		fields = append(fields, f)
		for i < len(t) && (t[i] == ' ' || t[i] == '\t') {
			i++
		}
		if i >= len(t) {
			break
		}
		if t[i] != ',' {
			return nil, false
		}
		i++
	}
	if len(fields) < 2 {
		return nil, false
	}
	if kind, _ := normKind(fields[0]); kind == "" {
		return nil, false
	}
	return fields, true
}

// trimTrailingEmpty drops empty fields after the first keep, returning
// how many went.
func trimTrailingEmpty(f []string, keep int) ([]string, int) {
	n := 0
	for len(f) > keep && strings.TrimSpace(f[len(f)-1]) == "" {
		f = f[:len(f)-1]
		n++
	}
	return f, n
}
