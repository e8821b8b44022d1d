package graphrag

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/parquet-go/parquet-go"
)

// quarantine is what the link pass leaves out: the rows of each table
// (malformed, or depending on a malformed row) and the keys of the
// left-out entities and relationships, which rows that are kept must no
// longer name. The walk skips the rows and drops the references, so that
// every reader of an output (Open, Walk, the snapshot, the indexes built
// from them) sees the same graph.
type quarantine struct {
	skip    map[string]map[int64]bool // by table: the rows left out
	entries map[leftKey]*leftEntry
	// leftTitles are the titles that only left-out entity rows hold;
	// leftEntityIDs and leftRelIDs the ids of left-out rows that no
	// kept row has.
	leftTitles, leftEntityIDs, leftRelIDs map[string]bool
}

type leftKey struct{ table, column, cause string }

// What a leftEntry counts.
type leftKind uint8

const (
	leftRows   leftKind = iota // rows left out
	leftRefs                   // references dropped from rows kept
	leftValues                 // cells read as missing in rows kept
)

type leftEntry struct {
	kind leftKind
	rows []int64 // the first MaxExamples rows, in the order added
	n    int
}

// count counts one more, at row (an example while there are few).
func (e *leftEntry) count(row int64) {
	e.n++
	if len(e.rows) < MaxExamples {
		e.rows = append(e.rows, row)
	}
}

func newQuarantine() *quarantine {
	return &quarantine{skip: map[string]map[int64]bool{}, entries: map[leftKey]*leftEntry{}}
}

// add leaves row of table out for cause, found in column; false when the
// row was already left out (a row is counted once, for its first cause).
func (q *quarantine) add(table, column, cause string, row int64) bool {
	s := q.skip[table]
	if s == nil {
		s = map[int64]bool{}
		q.skip[table] = s
	}
	if s[row] {
		return false
	}
	s[row] = true
	q.entry(leftKey{table, column, cause}, leftRows).count(row)
	return true
}

// ref counts n references in column of table dropped for cause.
func (q *quarantine) ref(table, column, cause string, n int) {
	if n == 0 {
		return
	}
	q.entry(leftKey{table, column, cause}, leftRefs).n += n
}

// value counts a cell of column that the readers take as missing (a
// non-integer in an integer column) in row of table, which is kept.
func (q *quarantine) value(table, column, cause string, row int64) {
	q.entry(leftKey{table, column, cause}, leftValues).count(row)
}

// entry is the entry of k, made of kind when new. A key has one kind:
// the causes of rows, references and values differ.
func (q *quarantine) entry(k leftKey, kind leftKind) *leftEntry {
	e := q.entries[k]
	if e == nil {
		e = &leftEntry{kind: kind}
		q.entries[k] = e
	}
	return e
}

// has reports whether row of table is left out.
func (q *quarantine) has(table string, row int64) bool {
	s := q.skip[table]
	return len(s) > 0 && s[row]
}

// rows returns the rows left out of table, nil for none.
func (q *quarantine) rows(table string) map[int64]bool {
	if s := q.skip[table]; len(s) > 0 {
		return s
	}
	return nil
}

// leftOut lists what was left out, in table order, then column and
// cause, with the example rows read from the tables.
func (q *quarantine) leftOut(ctx context.Context, tables map[string]*table) ([]LeftOut, error) {
	order := map[string]int{}
	for i, n := range append(tableNames(), TableNodes) {
		order[n] = i
	}
	keys := make([]leftKey, 0, len(q.entries))
	for k := range q.entries {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b leftKey) int {
		return cmp.Or(cmp.Compare(order[a.table], order[b.table]), cmp.Compare(a.column, b.column), cmp.Compare(a.cause, b.cause))
	})
	out := make([]LeftOut, 0, len(keys))
	for _, k := range keys {
		e := q.entries[k]
		t := tables[k.table]
		l := LeftOut{Table: k.table, Path: t.path, Column: k.column, Cause: k.cause}
		switch e.kind {
		case leftRefs:
			l.Refs = e.n
		case leftValues:
			l.Values = e.n
		default:
			l.Rows = e.n
		}
		rows := slices.Clone(e.rows) // none for references
		slices.Sort(rows)
		for _, r := range rows {
			br, err := t.badRow(ctx, r)
			if err != nil {
				return nil, err
			}
			l.Examples = append(l.Examples, br)
		}
		out = append(out, l)
	}
	return out, nil
}

// badRow reads row whole, as a BadRow. Reading one row through
// parquet-go's row reader is slow, but only ever done for a few examples.
func (t *table) badRow(ctx context.Context, row int64) (BadRow, error) {
	if err := ctx.Err(); err != nil {
		return BadRow{}, err
	}
	rd := parquet.NewReader(t.pf)
	defer rd.Close()
	if err := rd.SeekToRow(row); err != nil {
		return BadRow{}, t.err("", row, err)
	}
	m := map[string]any{}
	if err := rd.Read(&m); err != nil && err != io.EOF {
		return BadRow{}, t.err("", row, err)
	}
	br := BadRow{Row: row}
	for _, f := range t.pf.Schema().Fields() {
		name := f.Name()
		v, ok := m[name]
		if !ok || v == nil || name == "__index_level_0__" {
			continue
		}
		s := fieldText(v)
		if name == "id" {
			br.ID = plainText(v)
		}
		br.Fields = append(br.Fields, Field{Name: name, Value: s})
	}
	return br, nil
}

// fieldText renders a cell of parquet-go's row reader for a BadRow.
func fieldText(v any) string {
	switch x := v.(type) {
	case []byte:
		return shorten(string(x))
	case string:
		return shorten(x)
	case []any:
		return fmt.Sprintf("[%d %s]", len(x), plural(len(x), "value", "values"))
	case map[string]any:
		b, _ := json.Marshal(jsonable(x))
		return shorten(string(b))
	}
	return plainText(v)
}

// plainText renders a scalar cell unquoted.
func plainText(v any) string {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	}
	return fmt.Sprint(v)
}

// blanks reads into dst, in row order, the rows of the key column (the
// first of names present) that are null, empty or white space; a table
// lacking the column is left to the readers, which report it missing.
func (c *cols) blanks(dst *[]int64, names ...string) {
	field := c.t.first(names...)
	if field == "" {
		return
	}
	var next int64 // the first row not yet seen
	nulls := func(to int64) {
		for ; next < to; next++ {
			*dst = append(*dst, next)
		}
	}
	c.add(afterCol{c.t.scalar(field, isBytesOrNumber(), func(i int, v parquet.Value) error {
		row := c.lo + int64(i)
		nulls(row)
		next = row + 1
		if k := v.Kind(); (k == parquet.ByteArray || k == parquet.FixedLenByteArray) && len(bytes.TrimSpace(v.ByteArray())) == 0 {
			*dst = append(*dst, row)
		}
		return nil
	}), func(_, hi int64) { nulls(hi) }})
}
