package graphrag

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// errorKind is a constant error value, so that callers can test the cause of
// an *Error with errors.Is without the package holding mutable globals.
type errorKind string

func (k errorKind) Error() string { return string(k) }

// Causes carried by *Error.Err (possibly wrapped). Test them with errors.Is.
const (
	// ErrNoTables: the directory holds none of the GraphRAG table files.
	ErrNoTables errorKind = "no graphrag tables found"
	// ErrMissingColumn: a table lacks a column kgrag cannot do without.
	ErrMissingColumn errorKind = "missing required column"
	// ErrColumnType: a column has a physical or logical type kgrag cannot read
	// as the field it fills.
	ErrColumnType errorKind = "wrong column type"
	// ErrRowCount: a column holds a different number of rows than its table.
	ErrRowCount errorKind = "row count mismatch"
	// ErrValue: a value cannot be represented in the target layout (for
	// example a non-numeric community number written as 3.x int64).
	ErrValue errorKind = "invalid value"
	// ErrEmptyKey: a column every row needs (an id, an entity title, a
	// relationship end, a community number) is null or empty in a row,
	// under a strict Policy (by default the row is left out: see LeftOut).
	ErrEmptyKey errorKind = "null or empty value in a column every row needs"
	// ErrKeyValue: a community number is not an integer, under a strict
	// Policy.
	ErrKeyValue errorKind = "community number is not an integer"
	// ErrNotInteger: an integer column that is no key (degree, level,
	// size, n_tokens, ...) holds a value that is not an integer, under a
	// strict Policy (by default the value is read as missing).
	ErrNotInteger errorKind = "value is not an integer"
	// ErrTooMalformed: more of a table's rows are malformed than the
	// Policy's MaxBad allows.
	ErrTooMalformed errorKind = "too many malformed rows"
)

// Error describes a failure to read or write one GraphRAG table. Op is the
// operation ("open", "read", "write"), Path the file or directory, Field the
// column ("" when the whole file is at fault) and Row the 0-based row (-1 when
// no single row is at fault). Err is the cause; errors.Is(err, ErrColumnType)
// and friends see through it.
type Error struct {
	Op    string
	Path  string
	Field string
	Row   int64
	Err   error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("graphrag: ")
	b.WriteString(e.Op)
	if e.Path != "" {
		b.WriteString(" ")
		b.WriteString(e.Path)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, ": column %q", e.Field)
	}
	if e.Row >= 0 {
		fmt.Fprintf(&b, ": row %d", e.Row)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// unwrapPath drops the *fs.PathError layer of an os error, whose path the
// *Error already names, keeping its cause (errors.Is(err, fs.ErrNotExist)
// still holds).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}
