package graphrag

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Why a row is left out. A model's mis-parse in one row of a real output
// (an entity with an empty title, a relationship with no end) must not
// cost the user the other thousands of rows, and must not become a node
// either: an empty title is a key that relationships would match, and an
// empty id an IRI ending in "/entity/". So the reader leaves such a row
// out, with whatever depends only on it, and reports it (Dataset.LeftOut);
// Policy says when that is an error instead.
const (
	// CauseBlank: a key column (an id, an entity title, a relationship
	// end, a community number) is null, empty or only white space. The
	// row is malformed.
	CauseBlank = "null or empty"
	// CauseNotInteger: a community number is not an integer, which every
	// GraphRAG release writes it as: the row is malformed. In an integer
	// column that is no key (degree, level, size, n_tokens, ...), a value
	// that is not an integer (2.5, infinity) is read as missing instead,
	// and the row kept (LeftOut.Values).
	CauseNotInteger = "not an integer"
	// CauseLeftOutEntity: a relationship end or claim subject or object
	// names an entity that only malformed rows hold. The row is sound
	// but depends on a row left out.
	CauseLeftOutEntity = "names a left-out entity"
	// CauseLeftOutRelationship: a reference (a text unit's
	// relationship_ids) to a left-out relationship.
	CauseLeftOutRelationship = "names a left-out relationship"
)

// LeftOut counts the rows of one table that the reader left out for one
// cause, or (for list columns, Refs) the references it dropped from rows
// it kept: a community's or text unit's entity_ids naming a left-out
// entity, a text unit's relationship_ids naming a left-out relationship.
type LeftOut struct {
	Table  string `json:"table"`  // logical table (TableEntities, ...)
	Path   string `json:"file"`   // the parquet file
	Column string `json:"column"` // the key at fault, or the reference column
	Cause  string `json:"cause"`  // CauseBlank, CauseNotInteger, CauseLeftOutEntity
	Rows   int    `json:"rows,omitempty"`
	Refs   int    `json:"references,omitempty"`
	// Values counts cells of Column read as missing in rows that are
	// kept: a non-integer in an integer column that is no key.
	Values int `json:"values,omitempty"`
	// Examples are the first few rows left out (at most MaxExamples), or
	// holding a value read as missing, as they are in the file; none for
	// Refs.
	Examples []BadRow `json:"examples,omitempty"`
}

// Malformed reports whether the rows are at fault themselves (a blank or
// invalid key), which is what Policy limits, rather than rows or
// references that depend on them.
func (l LeftOut) Malformed() bool {
	return l.Rows > 0 && (l.Cause == CauseBlank || l.Cause == CauseNotInteger)
}

// String says what was left out, with the first example, as a note.
func (l LeftOut) String() string {
	var b strings.Builder
	if l.Refs > 0 {
		fmt.Fprintf(&b, "%s: dropped %d %s %s to %s", l.Table, l.Refs, l.Column,
			plural(l.Refs, "reference", "references"), strings.TrimPrefix(l.Cause, "names "))
		return b.String()
	}
	if l.Values > 0 {
		fmt.Fprintf(&b, "%s: read %d %s %s as missing, %s", l.Table, l.Values, l.Column,
			plural(l.Values, "value", "values"), l.Cause)
		if len(l.Examples) > 0 {
			fmt.Fprintf(&b, " (e.g. %s)", l.Examples[0])
		}
		return b.String()
	}
	fmt.Fprintf(&b, "%s: left out %d %s %s", l.Table, l.Rows, plural(l.Rows, "row", "rows"), l.Why())
	if len(l.Examples) > 0 {
		fmt.Fprintf(&b, " (e.g. %s)", l.Examples[0])
	}
	return b.String()
}

// Why says why the rows were left out: "whose title is null or empty".
func (l LeftOut) Why() string {
	if l.Cause == CauseLeftOutEntity {
		return "whose " + l.Column + " " + l.Cause
	}
	return "whose " + l.Column + " is " + l.Cause
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// MaxExamples is how many rows a LeftOut shows.
const MaxExamples = 3

// BadRow is one row left out, as the file holds it: its 0-based row, its
// id ("" when null or empty) and the fields present (non-null), in the
// file's column order, long values shortened.
type BadRow struct {
	Row    int64   `json:"row"`
	ID     string  `json:"id"`
	Fields []Field `json:"fields"`
}

// Field is one cell of a BadRow, rendered as text: strings quoted, lists
// as their length.
type Field struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

func (r BadRow) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "row %d", r.Row)
	for i, f := range r.Fields {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(f.Name)
		b.WriteByte(' ')
		b.WriteString(f.Value)
	}
	return b.String()
}

// maxFieldRunes shortens the values of a BadRow.
const maxFieldRunes = 60

// shorten quotes s, cut to maxFieldRunes runes.
func shorten(s string) string {
	if utf8.RuneCountInString(s) <= maxFieldRunes {
		return strconv.Quote(s)
	}
	r := []rune(s)
	return strconv.Quote(string(r[:maxFieldRunes])) + "..."
}

// blank reports whether a key value says nothing: null (read as ""),
// empty or white space.
func blank(s string) bool { return strings.TrimSpace(s) == "" }

// Policy says what reading an output does with malformed rows. The zero
// value allows none (MaxBad is 0 rows); DefaultPolicy is what kgrag uses.
type Policy struct {
	// Strict fails the read at the first malformed row, naming its file,
	// column and row, as kgrag did before it left rows out.
	Strict bool
	// MaxBad is how many malformed rows one table may hold: more, and
	// the output is broken rather than holding a stray row, so the read
	// fails with the count and examples.
	MaxBad Limit
}

// DefaultPolicy leaves malformed rows out while they are at most 1% of
// their table.
func DefaultPolicy() Policy { return Policy{MaxBad: Limit{Percent: 1}} }

// Limit bounds the malformed rows of a table: a share of its rows
// (Percent, rounded up to whole rows, so that 1% of 42 rows allows one)
// or, with Count, a number of rows. The zero value allows none.
type Limit struct {
	Percent float64
	Rows    int64
	Count   bool // Rows, not Percent
}

// ParseLimit reads a limit as written on a command line: "1%", "0.5%",
// "100%" (no limit), or a number of rows ("20", "0").
func ParseLimit(s string) (Limit, error) {
	s = strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(s, "%"); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || f < 0 || f > 100 || math.IsNaN(f) {
			return Limit{}, fmt.Errorf("%q is not a share from 0%% to 100%%", s)
		}
		return Limit{Percent: f}, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return Limit{}, fmt.Errorf("%q is neither a share (1%%) nor a number of rows (20)", s)
	}
	return Limit{Rows: n, Count: true}, nil
}

func (l Limit) String() string {
	if l.Count {
		return strconv.FormatInt(l.Rows, 10)
	}
	return strconv.FormatFloat(l.Percent, 'f', -1, 64) + "%"
}

// Allows returns how many malformed rows a table of rows rows may hold. A
// share below 100% never allows every row: a table holding nothing but
// malformed rows is broken, however small.
func (l Limit) Allows(rows int64) int64 {
	if l.Count {
		return l.Rows
	}
	if l.Percent >= 100 {
		return rows
	}
	// Round the share the way a reader of "1%" expects, without the
	// float error of 0.07*100 making 7 rows 8.
	n := int64(math.Ceil(l.Percent*float64(rows)/100 - 1e-9))
	return max(0, min(n, rows-1))
}

// Check applies p to what a read left out of tables of the given row
// counts (by logical table): with Strict, the first malformed row (in
// table order, then row order), or value that is not an integer, is an
// *Error wrapping ErrEmptyKey, ErrKeyValue or ErrNotInteger; past MaxBad, an *Error wrapping ErrTooMalformed names the
// table, the count and the first examples. It is how the reader decides,
// and how a reader of a snapshot (which records LeftOut) decides again
// under another policy.
func (p Policy) Check(left []LeftOut, rows map[string]int64) error {
	byTable := map[string][]LeftOut{}
	faults := map[string][]LeftOut{} // with the values read as missing
	for _, l := range left {
		if l.Malformed() {
			byTable[l.Table] = append(byTable[l.Table], l)
		}
		if l.Malformed() || l.Values > 0 {
			faults[l.Table] = append(faults[l.Table], l)
		}
	}
	for _, name := range tableNames() {
		if ls := faults[name]; p.Strict && len(ls) > 0 {
			first := ls[0]
			for _, l := range ls[1:] {
				if len(l.Examples) > 0 && (len(first.Examples) == 0 || l.Examples[0].Row < first.Examples[0].Row) {
					first = l
				}
			}
			row := int64(-1)
			if len(first.Examples) > 0 {
				row = first.Examples[0].Row
			}
			var kind error = ErrEmptyKey
			switch {
			case first.Values > 0:
				kind = ErrNotInteger
			case first.Cause == CauseNotInteger:
				kind = ErrKeyValue
			}
			return &Error{Op: "read", Path: first.Path, Field: first.Column, Row: row, Err: kind}
		}
		ls := byTable[name]
		if len(ls) == 0 {
			continue
		}
		n := 0
		for _, l := range ls {
			n += l.Rows
		}
		if allowed := p.MaxBad.Allows(rows[name]); int64(n) > allowed {
			var ex []string
			for _, l := range ls {
				for _, r := range l.Examples {
					ex = append(ex, fmt.Sprintf("%s is %s in %s", l.Column, l.Cause, r))
				}
			}
			slices.Sort(ex)
			if len(ex) > MaxExamples {
				ex = ex[:MaxExamples]
			}
			limit := fmt.Sprintf("%d rows", allowed)
			if !p.MaxBad.Count {
				limit = fmt.Sprintf("%s of them, %d rows", p.MaxBad, allowed)
			}
			return &Error{Op: "read", Path: ls[0].Path, Row: -1, Err: fmt.Errorf(
				"%w: %d of its %d rows are malformed, more than the limit (%s): a broken output, not a stray row; e.g. %s",
				ErrTooMalformed, n, rows[name], limit, strings.Join(ex, "; "))}
		}
	}
	return nil
}

// LeftOutRows counts the rows left out of every table, malformed or
// depending on one.
func (d *Dataset) LeftOutRows() int {
	n := 0
	for _, l := range d.LeftOut {
		n += l.Rows
	}
	return n
}
