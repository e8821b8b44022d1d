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
// double, so integral doubles are accepted too; ok is false for a double
// that is not an integer (NaN, pandas' null, or a stray 2.5), which the
// readers take as missing: the link pass has counted the others
// (quarantine.intFaults).
func intOf(v parquet.Value) (n int64, ok bool) {
	switch v.Kind() {
	case parquet.Int32:
		return int64(v.Int32()), true
	case parquet.Int64:
		return v.Int64(), true
	case parquet.Float, parquet.Double:
		f := floatOf(v)
		if !integral(f) {
			return 0, false
		}
		return int64(f), true
	}
	return 0, false
}

// integral reports whether f is an integer an int64 holds.
func integral(f float64) bool {
	return f == math.Trunc(f) && !math.IsInf(f, 0) && !math.IsNaN(f) && math.Abs(f) < 1<<63
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

// cursor reads one leaf column in row order, a window of rows at a time,
// across row groups and pages, so that the columns of a table can be read
// in lockstep over the same rows (see cols.window) without any of them
// being held whole. A window may end anywhere: inside a page, inside a row
// group. The cursor keeps the page it reads until its last value has been
// consumed, so that the byte arrays of the values it buffers stay valid.
// A cursor reads through a fork of the table (its own intern map and
// dictionary cache) and is not safe for concurrent use.
type cursor struct {
	t     *table
	field string
	leaf  *parquet.Column

	rg     int // next row group
	pages  parquet.Pages
	page   parquet.Page
	vals   parquet.ValueReader
	eof    bool // vals has nothing after buf
	buf    []parquet.Value
	pos, n int

	// rows counts the rows begun: the values consumed of a scalar column,
	// the values at repetition level 0 of a list.
	rows int64
	elem int // a list's position within the row being read
}

func (t *table) cursor(field string, leaf *parquet.Column) *cursor {
	return &cursor{t: t.fork(), field: field, leaf: leaf, buf: make([]parquet.Value, 1024)}
}

// fill makes a value available at buf[pos], reading the next page or row
// group as needed; it reports false when the column has no value left.
func (c *cursor) fill(ctx context.Context) (bool, error) {
	for c.pos == c.n {
		if c.vals != nil && !c.eof {
			n, err := c.vals.ReadValues(c.buf)
			c.pos, c.n = 0, n
			switch {
			case err == io.EOF || n == 0 && err == nil:
				c.eof = true
			case err != nil:
				return false, c.t.err(c.field, -1, err)
			}
			continue
		}
		if c.page != nil {
			parquet.Release(c.page)
			c.page, c.vals = nil, nil
		}
		if c.pages == nil {
			rgs := c.t.pf.RowGroups()
			if c.rg >= len(rgs) {
				return false, nil
			}
			c.pages = rgs[c.rg].ColumnChunks()[c.leaf.Index()].Pages()
			c.rg++
			// A chunk has at most one dictionary, which lives as long as
			// the chunk's pages: the cache of its entries goes with it.
			if c.t.dictCache == nil {
				c.t.dictCache = make(map[*byte]string)
			}
			clear(c.t.dictCache)
			c.t.dictPage = false
		}
		if err := ctx.Err(); err != nil {
			return false, err
		}
		p, err := c.pages.ReadPage()
		if err == io.EOF {
			c.pages.Close()
			c.pages = nil
			continue
		}
		if err != nil {
			return false, c.t.err(c.field, -1, err)
		}
		c.page, c.vals, c.eof = p, p.Values(), false
		c.t.dictPage = p.Dictionary() != nil
	}
	return true, nil
}

// scalar calls set for every non-null value of rows [lo, hi), with the row
// less lo.
func (c *cursor) scalar(ctx context.Context, lo, hi int64, set func(i int, v parquet.Value) error) error {
	for r := lo; r < hi; {
		ok, err := c.fill(ctx)
		if err != nil {
			return err
		}
		if !ok {
			return c.t.err(c.field, -1, fmt.Errorf("%w: %d values for %d rows", ErrRowCount, c.rows, c.t.rows))
		}
		vs := c.buf[c.pos:c.n]
		if int64(len(vs)) > hi-r {
			vs = vs[:hi-r]
		}
		for k := range vs {
			if !vs[k].IsNull() {
				if err := set(int(r-lo)+k, vs[k]); err != nil {
					return c.t.err(c.field, r+int64(k), err)
				}
			}
		}
		c.pos += len(vs)
		r += int64(len(vs))
		c.rows += int64(len(vs))
	}
	return nil
}

// list calls set for every element of the lists of rows [lo, hi), with
// the row less lo and the element's position; elemDef is the definition
// level at which an element exists. Null lists, empty lists and null
// elements produce no call (a null element still takes its position).
func (c *cursor) list(ctx context.Context, lo, hi int64, elemDef int, set func(i, j int, v parquet.Value) error) error {
	for {
		ok, err := c.fill(ctx)
		if err != nil {
			return err
		}
		if !ok {
			if c.rows < hi {
				return c.t.err(c.field, -1, fmt.Errorf("%w: %d lists for %d rows", ErrRowCount, c.rows, c.t.rows))
			}
			return nil
		}
		for ; c.pos < c.n; c.pos++ {
			v := c.buf[c.pos]
			if v.RepetitionLevel() == 0 {
				if c.rows == hi {
					return nil // the next window's first row
				}
				c.rows++
				c.elem = 0
			}
			if v.DefinitionLevel() < elemDef {
				continue // null or empty list
			}
			if !v.IsNull() {
				if err := set(int(c.rows-1-lo), c.elem, v); err != nil {
					c.pos++
					return c.t.err(c.field, c.rows-1, err)
				}
			}
			c.elem++
		}
	}
}

// end returns an ErrRowCount error when values are left once every row
// has been read.
func (c *cursor) end(ctx context.Context) error {
	ok, err := c.fill(ctx)
	if err != nil {
		return err
	}
	if ok {
		return c.t.err(c.field, -1, ErrRowCount)
	}
	return nil
}

func (c *cursor) close() {
	if c.page != nil {
		parquet.Release(c.page)
		c.page, c.vals = nil, nil
	}
	if c.pages != nil {
		c.pages.Close()
		c.pages = nil
	}
}

// colReader reads one column (or, for findings, the members of one) a
// window of rows at a time, into whatever its constructor was given. The
// windows of one table are read in order; end checks that nothing is left
// after the last.
type colReader interface {
	read(ctx context.Context, lo, hi int64) error
	end(ctx context.Context) error
	close()
}

// errCol is a column that cannot be read: its error comes at its first
// window, in the table's call order.
type errCol struct{ err error }

func (e errCol) read(context.Context, int64, int64) error { return e.err }
func (e errCol) end(context.Context) error                { return e.err }
func (errCol) close()                                     {}

// nopCol is a column read as all zero values (NULL-typed columns).
type nopCol struct{}

func (nopCol) read(context.Context, int64, int64) error { return nil }
func (nopCol) end(context.Context) error                { return nil }
func (nopCol) close()                                   {}

// scalarCol reads a top-level leaf column.
type scalarCol struct {
	cur *cursor
	set func(i int, v parquet.Value) error
}

func (s *scalarCol) read(ctx context.Context, lo, hi int64) error {
	return s.cur.scalar(ctx, lo, hi, s.set)
}
func (s *scalarCol) end(ctx context.Context) error { return s.cur.end(ctx) }
func (s *scalarCol) close()                        { s.cur.close() }

// scalar returns a reader that calls set for every non-null value of the
// top-level leaf column field, with its row in the window. check validates
// the column type first.
func (t *table) scalar(field string, check colKind, set func(i int, v parquet.Value) error) colReader {
	c := t.pf.Root().Column(field)
	if c == nil {
		return errCol{t.err(field, -1, ErrMissingColumn)}
	}
	if !c.Leaf() || c.MaxRepetitionLevel() != 0 {
		return errCol{t.err(field, -1, fmt.Errorf("%w: want a scalar, have %s", ErrColumnType, c.Type()))}
	}
	if isNullType(c) {
		return nopCol{}
	}
	if !check.ok(c) {
		return errCol{t.err(field, -1, fmt.Errorf("%w: want %s, have %s", ErrColumnType, check.name, c.Type()))}
	}
	return &scalarCol{cur: t.cursor(field, c), set: set}
}

// listCol reads a list column.
type listCol struct {
	cur     *cursor
	elemDef int
	set     func(t *table, i, j int, v parquet.Value) error
}

func (l *listCol) read(ctx context.Context, lo, hi int64) error {
	return l.cur.list(ctx, lo, hi, l.elemDef, func(i, j int, v parquet.Value) error { return l.set(l.cur.t, i, j, v) })
}
func (l *listCol) end(ctx context.Context) error { return l.cur.end(ctx) }
func (l *listCol) close()                        { l.cur.close() }

// list returns a reader that calls set for every element of the list
// column field (for a list of structs, of its member sub), with the row in
// the window and the element's position, and the table of its cursor (for
// internOf). Null lists, empty lists and null elements produce no call.
func (t *table) list(field, sub string, check colKind, set func(t *table, i, j int, v parquet.Value) error) colReader {
	c := t.pf.Root().Column(field)
	if c == nil {
		return errCol{t.err(field, -1, ErrMissingColumn)}
	}
	if isNullType(c) {
		return nopCol{}
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
			return errCol{t.err(field, -1, fmt.Errorf("%w: unexpected nested layout", ErrColumnType))}
		}
	}
	if leaf.Repeated() && elemDef < 0 {
		elemDef = leaf.MaxDefinitionLevel()
	}
	if elemDef < 0 || leaf.MaxRepetitionLevel() != 1 {
		return errCol{t.err(field, -1, fmt.Errorf("%w: want a list, have %s", ErrColumnType, leaf.Type()))}
	}
	if isNullType(leaf) {
		return nopCol{}
	}
	if !check.ok(leaf) {
		return errCol{t.err(field, -1, fmt.Errorf("%w: want a list of %s, have a list of %s", ErrColumnType, check.name, leaf.Type()))}
	}
	return &listCol{cur: t.cursor(field, leaf), elemDef: elemDef, set: set}
}

// Typed column readers. Each calls set for the rows of a window that hold
// a value, with the row in the window; absent cells are left alone (the
// zero value). They return nil when the table lacks the column.

// strCol reads a text column; numeric columns are accepted only when num
// is set (ids that were int in one release and string in another).
func (t *table) strCol(field string, num bool, set func(i int, s string)) colReader {
	check := isBytes()
	if num {
		check = isBytesOrNumber()
	}
	return t.scalar(field, check, func(i int, v parquet.Value) error {
		set(i, textOf(v))
		return nil
	})
}

// intCol reads an integer column.
func (t *table) intCol(field string, set func(i int, n int64)) colReader {
	if field == "" || !t.has(field) {
		return nil
	}
	return t.scalar(field, isNumber(), func(i int, v parquet.Value) error {
		if n, ok := intOf(v); ok {
			set(i, n)
		}
		return nil
	})
}

// floatCol reads any numeric column.
func (t *table) floatCol(field string, set func(i int, f float64)) colReader {
	if field == "" || !t.has(field) {
		return nil
	}
	return t.scalar(field, isNumber(), func(i int, v parquet.Value) error {
		set(i, floatOf(v))
		return nil
	})
}

// strListCol reads a list column of text (or, with num, of numbers
// rendered in decimal: children are list<int64>), calling set for every
// row of the window with at least one element. The lists of a window share
// one backing array, cut with full slice expressions so that appending to
// one cannot overwrite the next.
type strListCol struct {
	list  colReader
	t     *table
	flat  []string
	rowOf []int32
	set   func(i int, l []string)
}

func (t *table) strListCol(field string, num bool, set func(i int, l []string)) colReader {
	if field == "" || !t.has(field) {
		return nil
	}
	check := isBytes()
	if num {
		check = isBytesOrNumber()
	}
	s := &strListCol{t: t, set: set}
	s.list = t.list(field, "", check, func(ct *table, i, _ int, v parquet.Value) error {
		s.flat = append(s.flat, ct.internOf(v))
		s.rowOf = append(s.rowOf, int32(i))
		return nil
	})
	return s
}

// internMax bounds the strings an intern map holds across the windows of
// a table read in windows: beyond it the map starts afresh, so that a
// column of distinct ids costs no map the size of the column.
const internMax = 1 << 16

func (s *strListCol) read(ctx context.Context, lo, hi int64) error {
	if lc, ok := s.list.(*listCol); ok {
		if ct := lc.cur.t; len(ct.intern) > internMax && hi-lo < s.t.rows {
			ct.intern = nil
			clear(ct.dictCache)
		}
	}
	if f := s.t.numValues(s.fieldName()); s.t.rows > 0 {
		s.flat = make([]string, 0, f*(hi-lo)/s.t.rows+1)
		s.rowOf = make([]int32, 0, cap(s.flat))
	}
	if err := s.list.read(ctx, lo, hi); err != nil {
		return err
	}
	flat, rowOf := s.flat, s.rowOf
	s.flat, s.rowOf = nil, nil
	for i := 0; i < len(flat); {
		j := i + 1
		for j < len(flat) && rowOf[j] == rowOf[i] {
			j++
		}
		s.set(int(rowOf[i]), flat[i:j:j])
		i = j
	}
	return nil
}

func (s *strListCol) fieldName() string {
	if lc, ok := s.list.(*listCol); ok {
		return lc.cur.field
	}
	return ""
}

func (s *strListCol) end(ctx context.Context) error { return s.list.end(ctx) }
func (s *strListCol) close()                        { s.list.close() }

// numValues returns the number of values (leaf cells, nulls included) of a
// column (by top-level name or leaf path), a capacity hint for list
// readers.
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

// floatListCol reads a list<double> column (embeddings).
func (t *table) floatListCol(field string, set func(i int, f float64)) colReader {
	if field == "" || !t.has(field) {
		return nil
	}
	return t.list(field, "", isNumber(), func(_ *table, i, _ int, v parquet.Value) error {
		set(i, floatOf(v))
		return nil
	})
}

// findingsCol reads a list<struct{explanation, summary}> column, a member
// at a time. A struct member missing from the file reads as "".
type findingsCol struct {
	members []colReader
	out     [][]Finding // the window's, by row
	set     func(i int, f []Finding)
}

func (t *table) findingsCol(field string, set func(i int, f []Finding)) colReader {
	if field == "" || !t.has(field) {
		return nil
	}
	fc := &findingsCol{set: set}
	grow := func(i, j int) *Finding {
		for len(fc.out[i]) <= j {
			fc.out[i] = append(fc.out[i], Finding{})
		}
		return &fc.out[i][j]
	}
	for _, m := range []string{"summary", "explanation"} {
		if !hasDescendant(t.pf.Root().Column(field), m) {
			continue
		}
		fc.members = append(fc.members, t.list(field, m, isBytes(), func(_ *table, i, j int, v parquet.Value) error {
			f := grow(i, j)
			if m == "summary" {
				f.Summary = string(v.ByteArray())
			} else {
				f.Explanation = string(v.ByteArray())
			}
			return nil
		}))
	}
	if len(fc.members) == 0 {
		return errCol{t.err(field, -1, fmt.Errorf("%w: want list<struct{summary, explanation}>", ErrColumnType))}
	}
	return fc
}

func (f *findingsCol) read(ctx context.Context, lo, hi int64) error {
	f.out = make([][]Finding, hi-lo)
	for _, m := range f.members {
		if err := m.read(ctx, lo, hi); err != nil {
			return err
		}
	}
	for i, fs := range f.out {
		if fs != nil {
			f.set(i, fs)
		}
	}
	f.out = nil
	return nil
}

func (f *findingsCol) end(ctx context.Context) error {
	for _, m := range f.members {
		if err := m.end(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (f *findingsCol) close() {
	for _, m := range f.members {
		m.close()
	}
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
