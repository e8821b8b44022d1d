package documents

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// csvRow is one record of a CSV file and the line it starts on.
type csvRow struct {
	fields []string
	line   int
}

// csvDocuments turns a CSV file's text into documents as GraphRAG's
// CSVFileReader does (csv.DictReader, then StructuredFileReader): the
// first record names the columns, blank lines are skipped, each row's
// text column is its text and its id the hash of that. GraphRAG skips the
// whole file when a column is missing; this names the file (and the row
// when a short row lacks the text field). A byte order mark before the
// header is dropped, which GraphRAG would keep in the first column's name.
func csvDocuments(ctx context.Context, name, rel, text, created string, opts Options) ([]Document, []*Error, error) {
	r := &csvReader{s: strings.TrimPrefix(text, "\ufeff")}
	fail := func(row, line int, err error, hint string) *Error {
		return &Error{Op: "parse", Path: name, Row: row, Line: line, Err: err, Hint: hint}
	}
	header, _, err := r.next()
	if err == io.EOF {
		return nil, nil, nil // GraphRAG reads no rows from an empty file
	}
	if err != nil {
		return nil, nil, fail(0, r.line, err, "")
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i // dict(zip(...)): the last of equal names wins
	}
	textCol, ok := col[opts.textColumn()]
	if !ok {
		return nil, nil, fail(0, 1, fmt.Errorf("no column %q (columns: %s)", opts.textColumn(), strings.Join(header, ", ")),
			"name the text column with the CSV text column option")
	}
	titleCol := -1
	if opts.TitleColumn != "" {
		if titleCol, ok = col[opts.TitleColumn]; !ok {
			return nil, nil, fail(0, 1, fmt.Errorf("no title column %q (columns: %s)", opts.TitleColumn, strings.Join(header, ", ")), "")
		}
	}
	var rows []csvRow
	for {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		fields, line, err := r.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fail(len(rows)+1, line, err, "")
		}
		if len(fields) > 0 {
			rows = append(rows, csvRow{fields, line})
		}
	}
	var docs []Document
	var skipped []*Error
	for i, row := range rows {
		if textCol >= len(row.fields) {
			e := fail(i+1, row.line, fmt.Errorf("%d fields, no %q field", len(row.fields), opts.textColumn()), "")
			if !opts.SkipBad {
				return nil, nil, e
			}
			skipped = append(skipped, e)
			continue
		}
		fields := make(map[string]string, len(header))
		for h, j := range col {
			if j < len(row.fields) {
				fields[h] = row.fields[j]
			}
		}
		title := rel
		if len(rows) > 1 {
			title = fmt.Sprintf("%s (%d)", rel, i)
		}
		if titleCol >= 0 {
			title = fields[opts.TitleColumn] // "" in a row too short for it
		}
		t := row.fields[textCol]
		docs = append(docs, Document{ID: TextID(t), Title: title, Text: t, CreationDate: created,
			Path: rel, Row: i, Fields: fields})
	}
	return docs, skipped, nil
}
