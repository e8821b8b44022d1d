package graphrag

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"unsafe"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// table is one opened GraphRAG parquet file, read column by column.
//
// Reading by column through parquet-go's page API avoids building a
// map[string]any per row (the only row API that reads every GraphRAG file),
// which costs several allocations per cell. A table is not safe for
// concurrent use: concurrent readers each read a fork. The caller closes
// the table it opened.
type table struct {
	name string // logical name, e.g. "entities"
	path string
	file *os.File
	pf   *parquet.File
	rows int64
	// intern holds one string per distinct value: ids repeat. Every column
	// read runs on a fork with its own map, so the map lives as long as the
	// read of one column and is freed with the fork.
	intern map[string]string

	// dictCache maps a dictionary entry (by the address of its bytes) to its
	// interned string while the current page is dictionary-encoded, as
	// pyarrow writes id columns: it turns a string hash per value into a
	// pointer hash. Cleared at every column chunk (the dictionary's
	// lifetime), so an address is never reused for different bytes.
	dictCache map[*byte]string
	dictPage  bool
}

// openTable opens path and reads its footer. A file that is not parquet or is
// cut short fails here with an *Error naming the file.
func openTable(name, path string) (*table, error) {
	// A FIFO or a device named like a table would block the open or the
	// read forever (and a FIFO's open ignores the context): only regular
	// files are tables. Stat follows links, so a linked table is read.
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return nil, &Error{Op: "open", Path: path, Row: -1,
			Err: fmt.Errorf("not a regular file (%s): a GraphRAG table is a parquet file", fileKind(st.Mode()))}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{Op: "open", Path: path, Row: -1, Err: unwrapPath(err)}
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, &Error{Op: "open", Path: path, Row: -1, Err: err}
	}
	pf, err := parquet.OpenFile(f, st.Size(),
		parquet.SkipPageIndex(true),
		parquet.SkipBloomFilters(true),
		parquet.ReadBufferSize(1<<20))
	if err != nil {
		f.Close()
		return nil, &Error{Op: "open", Path: path, Row: -1, Err: fmt.Errorf("not a readable parquet file: %w", err)}
	}
	// Columns are read into slices of one element per row (or value), so
	// a damaged or crafted footer claiming 2^40 rows would exhaust memory
	// before a byte of data is read. Every GraphRAG table has a column of
	// distinct ids, which takes at least a bit per row however it is
	// encoded: more rows (or values) than 8 per byte of file cannot be.
	limit := 8 * st.Size()
	rows := pf.NumRows()
	if rows < 0 || rows > limit {
		f.Close()
		return nil, &Error{Op: "open", Path: path, Row: -1,
			Err: fmt.Errorf("the footer claims %d rows, more than a file of %d bytes can hold: the file is damaged", rows, st.Size())}
	}
	for _, rg := range pf.RowGroups() {
		for i, cc := range rg.ColumnChunks() {
			if n := cc.NumValues(); n < 0 || n > limit {
				f.Close()
				return nil, &Error{Op: "open", Path: path, Row: -1,
					Err: fmt.Errorf("the footer claims %d values in column %d, more than a file of %d bytes can hold: the file is damaged", n, i, st.Size())}
			}
		}
	}
	return &table{name: name, path: path, file: f, pf: pf, rows: rows}, nil
}

// fileKind names what a non-regular file is, for messages.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}

func (t *table) close() error { return t.file.Close() }

// fork returns a table that reads the same file with its own intern map
// and dictionary cache, so that columns can be read concurrently and their
// maps are dropped with the fork as soon as the column is read. The fork
// closes nothing; the table it came from owns the file.
func (t *table) fork() *table {
	return &table{name: t.name, path: t.path, pf: t.pf, rows: t.rows}
}

func (t *table) err(field string, row int64, err error) error {
	return &Error{Op: "read", Path: t.path, Field: field, Row: row, Err: err}
}

// has reports whether the table has a top-level column name.
func (t *table) has(name string) bool { return t.pf.Root().Column(name) != nil }

// first returns the first of names that the table has, or "".
func (t *table) first(names ...string) string {
	for _, n := range names {
		if t.has(n) {
			return n
		}
	}
	return ""
}

// require returns the first of names the table has, or an ErrMissingColumn
// error naming the first (the current GraphRAG name).
func (t *table) require(names ...string) (string, error) {
	if n := t.first(names...); n != "" {
		return n, nil
	}
	return "", t.err(names[0], -1, ErrMissingColumn)
}

// isNullType reports whether pyarrow wrote the column with the NULL logical
// type (a pandas column that held only None): every value reads as absent.
func isNullType(c *parquet.Column) bool {
	lt := c.Type().LogicalType()
	if lt == nil {
		return false
	}
	_, ok := lt.Value.(*format.NullType)
	return ok
}

// firstLeaf returns the first leaf column under c (c itself for a scalar
// column, the element of a list), or nil.
func firstLeaf(c *parquet.Column) *parquet.Column {
	for c != nil && !c.Leaf() {
		kids := c.Columns()
		if len(kids) == 0 {
			return nil
		}
		c = kids[0]
	}
	return c
}

// errFound stops a scan that has seen what it looked for.
var errFound = errors.New("found")

// hasValues reports whether the column name holds any non-null value: a
// column can be present and empty, as 0.4's description_embedding and
// graph_embedding are (its vectors went to LanceDB). The column chunk
// statistics answer when they count every value as null; otherwise the
// column is read up to its first non-null value.
func (t *table) hasValues(ctx context.Context, name string) (bool, error) {
	c := firstLeaf(t.pf.Root().Column(name))
	if c == nil || isNullType(c) {
		return false, nil
	}
	allNull := true
	for _, rg := range t.pf.Metadata().RowGroups {
		if c.Index() >= len(rg.Columns) {
			allNull = false
			break
		}
		md := rg.Columns[c.Index()].MetaData
		if md.NumValues > 0 && md.Statistics.NullCount != md.NumValues {
			allNull = false
			break
		}
	}
	if allNull {
		return false, nil
	}
	err := t.fork().scan(ctx, name, c, func(vs []parquet.Value) error {
		for _, v := range vs {
			if !v.IsNull() {
				return errFound
			}
		}
		return nil
	})
	if errors.Is(err, errFound) {
		return true, nil
	}
	return false, err
}

// scan streams the values of one leaf column, across row groups and pages,
// to fn. Values are only valid during the call: byte arrays point into the
// page buffer, which is released afterwards.
func (t *table) scan(ctx context.Context, field string, leaf *parquet.Column, fn func([]parquet.Value) error) error {
	buf := make([]parquet.Value, 4096)
	for _, rg := range t.pf.RowGroups() {
		if err := t.scanChunk(ctx, field, rg.ColumnChunks()[leaf.Index()], buf, fn); err != nil {
			return err
		}
	}
	return nil
}

// scanChunk streams one column chunk. A chunk has at most one dictionary,
// which lives as long as the chunk's pages, so dictCache is valid for the
// whole chunk and cleared before the next.
func (t *table) scanChunk(ctx context.Context, field string, chunk parquet.ColumnChunk, buf []parquet.Value, fn func([]parquet.Value) error) error {
	pages := chunk.Pages()
	defer pages.Close()
	if t.dictCache == nil {
		t.dictCache = make(map[*byte]string)
	}
	clear(t.dictCache)
	defer func() { t.dictPage = false }()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		p, err := pages.ReadPage()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return t.err(field, -1, err)
		}
		t.dictPage = p.Dictionary() != nil
		vr := p.Values()
		for {
			n, err := vr.ReadValues(buf)
			if n > 0 {
				if ferr := fn(buf[:n]); ferr != nil {
					parquet.Release(p)
					return ferr
				}
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				parquet.Release(p)
				return t.err(field, -1, err)
			}
		}
		parquet.Release(p)
	}
}

// scalar calls set for every non-null value of the top-level leaf column
// field, with its row number. check validates the column type first.
func (t *table) scalar(ctx context.Context, field string, check colKind, set func(row int, v parquet.Value) error) error {
	c := t.pf.Root().Column(field)
	if c == nil {
		return t.err(field, -1, ErrMissingColumn)
	}
	if !c.Leaf() || c.MaxRepetitionLevel() != 0 {
		return t.err(field, -1, fmt.Errorf("%w: want a scalar, have %s", ErrColumnType, c.Type()))
	}
	if isNullType(c) {
		return nil
	}
	if !check.ok(c) {
		return t.err(field, -1, fmt.Errorf("%w: want %s, have %s", ErrColumnType, check.name, c.Type()))
	}
	row := 0
	err := t.scan(ctx, field, c, func(vs []parquet.Value) error {
		for _, v := range vs {
			if int64(row) >= t.rows {
				return t.err(field, -1, ErrRowCount)
			}
			if !v.IsNull() {
				if err := set(row, v); err != nil {
					return t.err(field, int64(row), err)
				}
			}
			row++
		}
		return nil
	})
	if err != nil {
		return err
	}
	if int64(row) != t.rows {
		return t.err(field, -1, fmt.Errorf("%w: %d values for %d rows", ErrRowCount, row, t.rows))
	}
	return nil
}

// list calls set for every element of the list column field (for a list of
// structs, of its member sub), with the row and the element's position. Null
// lists, empty lists and null elements produce no call.
func (t *table) list(ctx context.Context, field, sub string, check colKind, set func(row, i int, v parquet.Value) error) error {
	c := t.pf.Root().Column(field)
	if c == nil {
		return t.err(field, -1, ErrMissingColumn)
	}
	if isNullType(c) {
		return nil
	}
	// Walk to the leaf, noting the definition level at which a list element
	// exists (that of the repeated node).
	elemDef := -1
	leaf := c
	for !leaf.Leaf() {
		if leaf.Repeated() && elemDef < 0 {
			elemDef = leaf.MaxDefinitionLevel()
		}
		kids := leaf.Columns()
		switch {
		case len(kids) == 1:
			leaf = kids[0]
		case sub != "" && leaf.Column(sub) != nil:
			leaf = leaf.Column(sub)
		default:
			return t.err(field, -1, fmt.Errorf("%w: unexpected nested layout", ErrColumnType))
		}
	}
	if leaf.Repeated() && elemDef < 0 {
		elemDef = leaf.MaxDefinitionLevel()
	}
	if elemDef < 0 || leaf.MaxRepetitionLevel() != 1 {
		return t.err(field, -1, fmt.Errorf("%w: want a list, have %s", ErrColumnType, leaf.Type()))
	}
	if isNullType(leaf) {
		return nil
	}
	if !check.ok(leaf) {
		return t.err(field, -1, fmt.Errorf("%w: want a list of %s, have a list of %s", ErrColumnType, check.name, leaf.Type()))
	}
	row, i := -1, 0
	err := t.scan(ctx, field, leaf, func(vs []parquet.Value) error {
		for _, v := range vs {
			if v.RepetitionLevel() == 0 {
				row++
				i = 0
				if int64(row) >= t.rows {
					return t.err(field, -1, ErrRowCount)
				}
			}
			if v.DefinitionLevel() < elemDef {
				continue // null or empty list
			}
			if !v.IsNull() {
				if err := set(row, i, v); err != nil {
					return t.err(field, int64(row), err)
				}
			}
			i++
		}
		return nil
	})
	if err != nil {
		return err
	}
	if int64(row+1) != t.rows {
		return t.err(field, -1, fmt.Errorf("%w: %d lists for %d rows", ErrRowCount, row+1, t.rows))
	}
	return nil
}

// colKind is a family of physical types a field accepts, named for error
// messages.
type colKind struct {
	name string
	ok   func(*parquet.Column) bool
}

func bytesKind(c *parquet.Column) bool {
	k := c.Type().Kind()
	return k == parquet.ByteArray || k == parquet.FixedLenByteArray
}

func numberKind(c *parquet.Column) bool {
	switch c.Type().Kind() {
	case parquet.Int32, parquet.Int64, parquet.Float, parquet.Double:
		return true
	}
	return false
}

func isBytes() colKind  { return colKind{"text", bytesKind} }
func isNumber() colKind { return colKind{"a number", numberKind} }
func isBytesOrNumber() colKind {
	return colKind{"text or a number", func(c *parquet.Column) bool { return bytesKind(c) || numberKind(c) }}
}

// intOf reads an integer cell. pandas writes an int column holding NaN as
// double, so integral doubles are accepted too.
func intOf(v parquet.Value) (int64, error) {
	switch v.Kind() {
	case parquet.Int32:
		return int64(v.Int32()), nil
	case parquet.Int64:
		return v.Int64(), nil
	case parquet.Float, parquet.Double:
		f := v.Double()
		if v.Kind() == parquet.Float {
			f = float64(v.Float())
		}
		if f != math.Trunc(f) || math.IsInf(f, 0) || math.IsNaN(f) {
			return 0, fmt.Errorf("%w: %v is not an integer", ErrValue, f)
		}
		return int64(f), nil
	}
	return 0, fmt.Errorf("%w: %s is not a number", ErrColumnType, v.Kind())
}

func floatOf(v parquet.Value) float64 {
	switch v.Kind() {
	case parquet.Int32:
		return float64(v.Int32())
	case parquet.Int64:
		return float64(v.Int64())
	case parquet.Float:
		return float64(v.Float())
	}
	return v.Double()
}

// textOf renders a cell as text: byte arrays as they are, numbers in
// decimal. It is how ids that changed type between releases
// (human_readable_id, community) get one representation.
func textOf(v parquet.Value) string {
	switch v.Kind() {
	case parquet.ByteArray, parquet.FixedLenByteArray:
		return string(v.ByteArray())
	case parquet.Int32:
		return strconv.FormatInt(int64(v.Int32()), 10)
	case parquet.Int64:
		return strconv.FormatInt(v.Int64(), 10)
	case parquet.Float, parquet.Double:
		f := floatOf(v)
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return strconv.FormatInt(int64(f), 10)
		}
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return v.String()
}

// internOf returns the text of v, sharing one string per distinct value:
// id lists repeat the same few ids across many rows.
func (t *table) internOf(v parquet.Value) string {
	if k := v.Kind(); k == parquet.ByteArray || k == parquet.FixedLenByteArray {
		b := v.ByteArray()
		if len(b) == 0 {
			return ""
		}
		if t.dictPage {
			if s, ok := t.dictCache[unsafe.SliceData(b)]; ok && len(s) == len(b) {
				return s
			}
		}
		if t.intern == nil {
			t.intern = make(map[string]string)
		}
		s, ok := t.intern[string(b)]
		if !ok {
			s = string(b)
			t.intern[s] = s
		}
		if t.dictPage {
			t.dictCache[unsafe.SliceData(b)] = s
		}
		return s
	}
	return textOf(v)
}

// Typed column readers. Each returns one entry per row; absent cells read as
// the zero value. opt readers return nil without error when the column is
// missing.

// str reads a text column; numeric columns are accepted only when num is
// set (ids that were int in one release and string in another).
func (t *table) str(ctx context.Context, field string, num bool) ([]string, error) {
	out := make([]string, t.rows)
	err := t.strEach(ctx, field, num, func(row int, s string) { out[row] = s })
	return out, err
}

// strEach calls set for every non-null cell of a text column (see str).
// The Each readers let a table reader fill its rows directly, without a
// column-sized slice per column beside the rows.
func (t *table) strEach(ctx context.Context, field string, num bool, set func(row int, s string)) error {
	check := isBytes()
	if num {
		check = isBytesOrNumber()
	}
	return t.scalar(ctx, field, check, func(row int, v parquet.Value) error {
		set(row, textOf(v))
		return nil
	})
}

// strOpt is str for a column that some releases lack.
func (t *table) strOpt(ctx context.Context, field string, num bool) ([]string, error) {
	if field == "" || !t.has(field) {
		return nil, nil
	}
	return t.str(ctx, field, num)
}

// ints reads an integer column and which rows hold a value.
func (t *table) ints(ctx context.Context, field string) ([]int64, []bool, error) {
	if field == "" || !t.has(field) {
		return nil, nil, nil
	}
	out := make([]int64, t.rows)
	ok := make([]bool, t.rows)
	err := t.intsEach(ctx, field, func(row int, n int64) { out[row], ok[row] = n, true })
	return out, ok, err
}

// intsEach calls set for every row of an integer column that holds a
// value; it does nothing when the table lacks the column.
func (t *table) intsEach(ctx context.Context, field string, set func(row int, n int64)) error {
	if field == "" || !t.has(field) {
		return nil
	}
	return t.scalar(ctx, field, isNumber(), func(row int, v parquet.Value) error {
		n, err := intOf(v)
		if err != nil {
			return err
		}
		set(row, n)
		return nil
	})
}

// floats reads a numeric column and which rows hold a value.
func (t *table) floats(ctx context.Context, field string) ([]float64, []bool, error) {
	if field == "" || !t.has(field) {
		return nil, nil, nil
	}
	out := make([]float64, t.rows)
	ok := make([]bool, t.rows)
	err := t.floatsEach(ctx, field, func(row int, f float64) { out[row], ok[row] = f, true })
	return out, ok, err
}

// floatsEach is intsEach for any numeric column.
func (t *table) floatsEach(ctx context.Context, field string, set func(row int, f float64)) error {
	if field == "" || !t.has(field) {
		return nil
	}
	return t.scalar(ctx, field, isNumber(), func(row int, v parquet.Value) error {
		set(row, floatOf(v))
		return nil
	})
}

// strList reads a list column of text (or, with num, of numbers rendered
// in decimal: children are list<int64>). Empty and null lists read as nil.
func (t *table) strList(ctx context.Context, field string, num bool) ([][]string, error) {
	if field == "" || !t.has(field) {
		return nil, nil
	}
	out := make([][]string, t.rows)
	err := t.strListEach(ctx, field, num, func(row int, l []string) { out[row] = l })
	if err != nil {
		return nil, err
	}
	return out, nil
}

// strListEach calls set for every row of a list column that holds at least
// one element (see strList); it does nothing when the table lacks the
// column. All lists of the column share one backing array, cut with full
// slice expressions so that appending to one cannot overwrite the next.
func (t *table) strListEach(ctx context.Context, field string, num bool, set func(row int, l []string)) error {
	if field == "" || !t.has(field) {
		return nil
	}
	check := isBytes()
	if num {
		check = isBytesOrNumber()
	}
	flat := make([]string, 0, t.numValues(field))
	rowOf := make([]int32, 0, cap(flat))
	err := t.list(ctx, field, "", check, func(row, _ int, v parquet.Value) error {
		flat = append(flat, t.internOf(v))
		rowOf = append(rowOf, int32(row))
		return nil
	})
	if err != nil {
		return err
	}
	for i := 0; i < len(flat); {
		j := i + 1
		for j < len(flat) && rowOf[j] == rowOf[i] {
			j++
		}
		set(int(rowOf[i]), flat[i:j:j])
		i = j
	}
	return nil
}

// numValues returns the number of values (leaf cells, nulls included) of a
// top-level column, a capacity hint for list readers.
func (t *table) numValues(field string) int64 {
	c := firstLeaf(t.pf.Root().Column(field))
	if c == nil {
		return 0
	}
	var n int64
	for _, rg := range t.pf.RowGroups() {
		n += rg.ColumnChunks()[c.Index()].NumValues()
	}
	return n
}

// floatList reads a list<double> column (embeddings).
func (t *table) floatList(ctx context.Context, field string) ([][]float64, error) {
	if field == "" || !t.has(field) {
		return nil, nil
	}
	out := make([][]float64, t.rows)
	err := t.list(ctx, field, "", isNumber(), func(row, _ int, v parquet.Value) error {
		out[row] = append(out[row], floatOf(v))
		return nil
	})
	return out, err
}

// findings reads a list<struct{explanation, summary}> column. A struct
// member missing from the file reads as "".
func (t *table) findings(ctx context.Context, field string) ([][]Finding, error) {
	if field == "" || !t.has(field) {
		return nil, nil
	}
	out := make([][]Finding, t.rows)
	grow := func(row, i int) *Finding {
		for len(out[row]) <= i {
			out[row] = append(out[row], Finding{})
		}
		return &out[row][i]
	}
	members := 0
	for _, m := range []string{"summary", "explanation"} {
		if !hasDescendant(t.pf.Root().Column(field), m) {
			continue
		}
		err := t.list(ctx, field, m, isBytes(), func(row, i int, v parquet.Value) error {
			f := grow(row, i)
			if m == "summary" {
				f.Summary = string(v.ByteArray())
			} else {
				f.Explanation = string(v.ByteArray())
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		members++
	}
	if members == 0 {
		return nil, t.err(field, -1, fmt.Errorf("%w: want list<struct{summary, explanation}>", ErrColumnType))
	}
	return out, nil
}

// hasDescendant reports whether a column below c is called name.
func hasDescendant(c *parquet.Column, name string) bool {
	for _, k := range c.Columns() {
		if k.Name() == name || hasDescendant(k, name) {
			return true
		}
	}
	return false
}
