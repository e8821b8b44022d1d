package documents

import (
	"context"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"
)

// Document is one input document, GraphRAG's TextDocument: a text file,
// a Markdown file, a PDF or one row of a CSV file.
type Document struct {
	// ID is the SHA-512 of Text in hex, GraphRAG's gen_sha512_hash of
	// {"text": text}: the same text gives the same id in any folder.
	ID string
	// Title is the file name for text, Markdown and PDF files; for a CSV
	// row the title column, else the file's path under the input folder
	// with " (i)" (the row's index from 0) when the file has more rows.
	Title string
	// Text is the file's text with universal newlines (\r\n and \r read
	// as \n, as Python's text mode does) and any byte order mark kept;
	// for a CSV row, its text column.
	Text string
	// CreationDate is the file's status change time (st_ctime, which
	// GraphRAG's file storage reports) in local time as GraphRAG writes
	// it, "2006-01-02 15:04:05 -0700"; the modification time where the
	// system has no ctime.
	CreationDate string
	// Path is the file, relative to the input folder, slash-separated.
	Path string
	// Row is a CSV row's index among the file's rows, from 0 (blank lines
	// skipped); -1 for other files.
	Row int
	// Fields are a CSV row's columns by header name (GraphRAG's
	// raw_data; the last of two equal names wins); nil for other files.
	Fields map[string]string
}

// Get returns a field of d as GraphRAG's TextDocument.get does for
// prepend_metadata: id, title, text and creation_date, else a CSV column.
// A name with a dot is a nested key to GraphRAG, which CSV rows never
// have.
func (d Document) Get(field string) (string, bool) {
	switch field {
	case "id":
		return d.ID, true
	case "title":
		return d.Title, true
	case "text":
		return d.Text, true
	case "creation_date":
		return d.CreationDate, true
	}
	if strings.Contains(field, ".") {
		return "", false
	}
	v, ok := d.Fields[field]
	return v, ok
}

// TextID returns GraphRAG's id of a document or text unit with this text:
// the SHA-512 of its UTF-8 bytes, in hex.
func TextID(text string) string {
	sum := sha512.Sum512([]byte(text))
	return hex.EncodeToString(sum[:])
}

// Options says how to read CSV files and what to do with bad input. The
// zero value reads the "text" column and fails on the first bad file.
type Options struct {
	// TextColumn is the CSV column holding the text; "" means "text",
	// GraphRAG's default.
	TextColumn string
	// TitleColumn is the CSV column holding the title; "" gives the
	// file's path and row index, as GraphRAG does.
	TitleColumn string
	// SkipBad skips files and CSV rows that cannot be read, listing them
	// in Summary.Skipped, as GraphRAG skips (with a logged warning) a file
	// whose loading raises. Without it the first one is the error.
	SkipBad bool
}

func (o Options) textColumn() string {
	if o.TextColumn == "" {
		return "text"
	}
	return o.TextColumn
}

// Summary tells what Read found.
type Summary struct {
	Files     int // files read, wholly or in part
	Documents int // documents passed on
	// Empty counts documents with no text. GraphRAG keeps them in its
	// documents table; chunking gives them no text units.
	Empty int
	// Ignored are the files of other types, by path under the folder.
	Ignored []string
	// Skipped are the files and rows left out under SkipBad, each an
	// *Error.
	Skipped []*Error
}

// Error is input that could not be read: a file, or one row of a CSV
// file. Read and ReadFile return it (or list it in Summary.Skipped).
type Error struct {
	Op   string // what failed: "read", "decode", "parse"
	Path string // the file, as given to Read joined with its path under it
	Row  int    // the CSV row, from 1 (the header is not a row); 0 for a whole file
	Line int    // the line of the file where the problem is, from 1; 0 when unknown
	Err  error
	Hint string // what to do about it, or ""
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "documents: %s %s", e.Op, e.Path)
	if e.Row > 0 {
		fmt.Fprintf(&b, ": row %d", e.Row)
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, " (line %d)", e.Line)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	if e.Hint != "" {
		fmt.Fprintf(&b, " (%s)", e.Hint)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Kind is the type of an input file, by its extension (in any case).
type Kind int

// The kinds of input file.
const (
	Other    Kind = iota // not read
	Text                 // .txt
	Markdown             // .md, read as text, as GraphRAG's text reader does
	CSV                  // .csv, one document per row
	PDF                  // .pdf, its text extracted
)

// KindOf returns the kind of the file named name.
func KindOf(name string) Kind {
	switch strings.ToLower(path.Ext(name)) {
	case ".txt":
		return Text
	case ".md", ".markdown":
		return Markdown
	case ".csv":
		return CSV
	case ".pdf":
		return PDF
	}
	return Other
}

// Files returns the files under dir that Read reads, as slash-separated
// paths relative to dir in sorted order, and those of other kinds. It
// descends into folders as GraphRAG's file storage does (symbolic links
// to folders are not followed).
func Files(ctx context.Context, dir string) (files, ignored []string, err error) {
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return &Error{Op: "list", Path: p, Err: err}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return &Error{Op: "list", Path: p, Err: err}
		}
		rel = filepath.ToSlash(rel)
		if KindOf(rel) == Other {
			ignored = append(ignored, rel)
		} else {
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	slices.Sort(files)
	slices.Sort(ignored)
	return files, ignored, nil
}

// Read reads the documents of the files under dir in sorted path order
// and passes them to fn one at a time, so a large folder is never held
// whole (a CSV file's rows are, as GraphRAG reads them). An error from fn
// stops Read and is returned as is; so is ctx's. A file or row that
// cannot be read is an *Error, or with opts.SkipBad a Summary.Skipped
// entry.
func Read(ctx context.Context, dir string, opts Options, fn func(Document) error) (Summary, error) {
	var sum Summary
	files, ignored, err := Files(ctx, dir)
	if err != nil {
		return sum, err
	}
	sum.Ignored = ignored
	for _, rel := range files {
		docs, skipped, err := readFile(ctx, dir, rel, opts)
		var de *Error
		if opts.SkipBad && errors.As(err, &de) {
			sum.Skipped = append(sum.Skipped, de)
			continue
		}
		if err != nil {
			return sum, err
		}
		sum.Files++
		sum.Skipped = append(sum.Skipped, skipped...)
		for _, d := range docs {
			if d.Text == "" {
				sum.Empty++
			}
			sum.Documents++
			if err := fn(d); err != nil {
				return sum, err
			}
		}
	}
	return sum, nil
}

// ReadFile reads the documents of one file, rel (slash-separated) under
// dir: one for text, Markdown and PDF files, one per row for CSV files.
// With opts.SkipBad, CSV rows that cannot be read are left out; the first
// bad row is an error otherwise.
func ReadFile(ctx context.Context, dir, rel string, opts Options) ([]Document, error) {
	docs, _, err := readFile(ctx, dir, rel, opts)
	return docs, err
}

// readFile is ReadFile, also returning the rows skipped under SkipBad.
func readFile(ctx context.Context, dir, rel string, opts Options) ([]Document, []*Error, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	name := filepath.Join(dir, filepath.FromSlash(rel))
	fail := func(op string, err error, hint string) error {
		return &Error{Op: op, Path: name, Err: err, Hint: hint}
	}
	kind := KindOf(rel)
	if kind == Other {
		return nil, nil, fail("read", errors.New("not a .txt, .md, .csv or .pdf file"), "")
	}
	fi, err := os.Stat(name)
	if err != nil {
		return nil, nil, fail("read", err, "")
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fail("read", fmt.Errorf("not a regular file (%s)", fi.Mode().Type()), "")
	}
	created := creationDate(fi)
	if kind == PDF {
		text, err := pdfText(ctx, name, fi.Size())
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			return nil, nil, fail("parse", err, "is it a PDF with a text layer?")
		}
		return []Document{textDocument(rel, text, created)}, nil, nil
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, nil, fail("read", err, "")
	}
	text, err := decodeText(b)
	if err != nil {
		var ue *utf8Error
		if errors.As(err, &ue) {
			return nil, nil, &Error{Op: "decode", Path: name, Line: ue.line, Err: err,
				Hint: "input files must be UTF-8, as GraphRAG reads them; binary files do not belong in the input folder"}
		}
		return nil, nil, fail("decode", err, "")
	}
	if kind == CSV {
		return csvDocuments(ctx, name, rel, text, created, opts)
	}
	return []Document{textDocument(rel, text, created)}, nil, nil
}

// textDocument is GraphRAG's TextFileReader document: titled by the file
// name.
func textDocument(rel, text, created string) Document {
	return Document{ID: TextID(text), Title: path.Base(rel), Text: text, CreationDate: created, Path: rel, Row: -1}
}

// utf8Error is a file that is not UTF-8: where the first bad byte is.
type utf8Error struct{ offset, line int }

func (e *utf8Error) Error() string {
	return fmt.Sprintf("invalid UTF-8 at byte %d", e.offset)
}

// decodeText decodes b as Python's open(..., "r", encoding="utf-8") does:
// strictly (any invalid byte is an error), with universal newlines.
func decodeText(b []byte) (string, error) {
	if !utf8.Valid(b) {
		off := 0
		for off < len(b) {
			r, w := utf8.DecodeRune(b[off:])
			if r == utf8.RuneError && w == 1 {
				break
			}
			off += w
		}
		return "", &utf8Error{offset: off, line: 1 + strings.Count(string(b[:off]), "\n")}
	}
	s := string(b)
	if strings.IndexByte(s, '\r') >= 0 {
		s = strings.ReplaceAll(s, "\r\n", "\n")
		s = strings.ReplaceAll(s, "\r", "\n")
	}
	return s, nil
}
