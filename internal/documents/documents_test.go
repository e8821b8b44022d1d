package documents_test

import (
	"bytes"
	"context"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/internal/chunk/oracle"
	"github.com/kgrag/kgrag/internal/documents"
	"github.com/kgrag/kgrag/internal/test"
)

// writeFiles writes files (slash-separated path: content) under a new
// temporary folder and returns it.
func writeFiles(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// readAll reads dir with opts and returns its documents.
func readAll(t testing.TB, dir string, opts documents.Options) ([]documents.Document, documents.Summary, error) {
	t.Helper()
	var docs []documents.Document
	sum, err := documents.Read(context.Background(), dir, opts, func(d documents.Document) error {
		docs = append(docs, d)
		return nil
	})
	return docs, sum, err
}

// sha512Hex is the id GraphRAG gives a text, computed apart from TextID.
func sha512Hex(s string) string {
	sum := sha512.Sum512([]byte(s))
	return hex.EncodeToString(sum[:])
}

// compare fails t where got and GraphRAG's documents differ, matching
// them by title (GraphRAG's order is its folder walk's).
func compare(t *testing.T, what string, got []documents.Document, want []oracle.Document) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d documents; GraphRAG %d", what, len(got), len(want))
	}
	byTitle := map[string]oracle.Document{}
	for _, w := range want {
		byTitle[w.Title] = w
	}
	for _, d := range got {
		w, ok := byTitle[d.Title]
		switch {
		case !ok:
			t.Errorf("%s: title %q; GraphRAG has no such document", what, d.Title)
		case d.ID != w.ID || d.Text != w.Text:
			t.Errorf("%s: %q: id %.16s…, text %.60q; GraphRAG %.16s…, %.60q", what, d.Title, d.ID, d.Text, w.ID, w.Text)
		case d.CreationDate != w.CreationDate:
			t.Errorf("%s: %q: creation date %q; GraphRAG %q", what, d.Title, d.CreationDate, w.CreationDate)
		}
		if w.RawData != nil {
			// The columns a row has: Python's DictReader gives a short
			// row's missing ones None, and a long row's extras a None
			// key (null in JSON), which have no column name.
			fields := map[string]string{}
			for k, v := range w.RawData {
				if s, ok := v.(string); ok && k != "null" {
					fields[k] = s
				}
			}
			if !maps.Equal(d.Fields, fields) {
				t.Errorf("%s: %q: fields %q; GraphRAG %q", what, d.Title, d.Fields, fields)
			}
		}
	}
}

// csvQuoted is a CSV file with quoted fields holding commas, doubled
// quotes and line breaks (CRLF ones too), a blank line, a bare quote in an
// unquoted field, a quoted part followed by more text, a short row and a
// long one.
const csvQuoted = "id,title,text,extra\r\n" +
	"1,First,\"Marley was dead: to begin with.\r\nThere is no doubt whatever about that.\",a\r\n" +
	"2,Second,\"He said \"\"Humbug!\"\", and meant it,\nall of it.\",b\r\n" +
	"\r\n" +
	"3,Third,a 12\" pizza,c\n" +
	"4,Fourth,\"quoted\" then not,d\n" +
	"5,Fifth,\"\",e,f,g\n" +
	"6,Sixth,\"ends unclosed\nat the end of the file\n"

// TestMatchesGraphRAGLoaders reads files with kgrag and with GraphRAG's
// own loaders (graphrag_input through load_input_documents): the
// Christmas Carol, text and Markdown files in folders (text reader with a
// pattern for both), and CSV files with and without a title column.
func TestMatchesGraphRAGLoaders(t *testing.T) {
	carolDir := test.SourceText(t)
	textFiles := writeFiles(t, map[string]string{
		"a.txt":          "Plain text.\n",
		"sub/b.md":       "# Heading\r\n\r\nMarkdown with CRLF and a lone\rcarriage return.\r\n",
		"sub/deep/c.txt": "\ufeffBOM, then “quotes” — and ™.",
		"empty.txt":      "",
	})
	csvDir := writeFiles(t, map[string]string{
		"rows.csv":       csvQuoted,
		"sub/single.csv": "text,title\nonly one row,T\n",
	})
	const textPattern = `.*\.(txt|md)$`
	res := oracle.Run(t,
		oracle.Job{Op: "load", Dir: carolDir},
		oracle.Job{Op: "load", Dir: textFiles, FilePattern: textPattern},
		oracle.Job{Op: "load", Dir: csvDir, Type: "csv"},
		oracle.Job{Op: "load", Dir: csvDir, Type: "csv", TitleColumn: "title"},
	)
	for _, r := range res {
		if r.Error != "" {
			t.Fatalf("graphrag_chunks.py: %s", r.Error)
		}
	}
	ctx := context.Background()

	carol, err := documents.ReadFile(ctx, carolDir, test.ChristmasCarolFile, documents.Options{})
	if err != nil {
		t.Fatal(err)
	}
	compare(t, "christmas carol", carol, res[0].Documents)
	if len(carol) == 1 && (len(carol[0].Text) < 150000 || strings.Contains(carol[0].Text, "\r")) {
		t.Errorf("christmas carol: %d bytes, CR kept: %v", len(carol[0].Text), strings.Contains(carol[0].Text, "\r"))
	}

	docs, sum, err := readAll(t, textFiles, documents.Options{})
	if err != nil {
		t.Fatal(err)
	}
	compare(t, "text files", docs, res[1].Documents)
	if sum.Files != 4 || sum.Documents != 4 || sum.Empty != 1 {
		t.Errorf("text files: summary %+v; want 4 files, 4 documents, 1 empty", sum)
	}
	for _, d := range docs {
		if d.ID != sha512Hex(d.Text) {
			t.Errorf("%s: id %s is not the SHA-512 of its text", d.Path, d.ID)
		}
	}

	for i, opts := range []documents.Options{{}, {TitleColumn: "title"}} {
		docs, _, err := readAll(t, csvDir, opts)
		if err != nil {
			t.Fatal(err)
		}
		compare(t, fmt.Sprintf("csv %+v", opts), docs, res[2+i].Documents)
	}
	t.Logf("documents alike: christmas carol %d, text %d, csv %d + %d",
		len(res[0].Documents), len(res[1].Documents), len(res[2].Documents), len(res[3].Documents))
}

// TestCSV checks the CSV reading without GraphRAG: rows, titles, fields,
// row numbers, and a byte order mark before the header.
func TestCSV(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"rows.csv": csvQuoted,
		"bom.csv":  "\ufefftext\nx\n",
		"body.csv": "body,name\n\"one\ntwo\",n1\nthree,n2\n",
	})
	ctx := context.Background()
	docs, err := documents.ReadFile(ctx, dir, "rows.csv", documents.Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantTexts := []string{
		"Marley was dead: to begin with.\nThere is no doubt whatever about that.",
		"He said \"Humbug!\", and meant it,\nall of it.",
		"a 12\" pizza",
		"quoted then not",
		"",
		"ends unclosed\nat the end of the file\n",
	}
	var got []string
	for i, d := range docs {
		got = append(got, d.Text)
		if want := fmt.Sprintf("rows.csv (%d)", i); d.Title != want || d.Row != i {
			t.Errorf("row %d: title %q, row %d; want %q", i, d.Title, d.Row, want)
		}
	}
	if !slices.Equal(got, wantTexts) {
		t.Errorf("texts %q; want %q", got, wantTexts)
	}
	if len(docs) == 6 && (docs[0].Fields["title"] != "First" || docs[5].Fields["extra"] != "" || len(docs[5].Fields) != 3) {
		t.Errorf("fields %v, %v", docs[0].Fields, docs[5].Fields)
	}
	if v, ok := docs[0].Get("title"); !ok || v != "rows.csv (0)" {
		t.Errorf("Get(title) = %q, %v", v, ok)
	}
	if v, ok := docs[0].Get("extra"); !ok || v != "a" {
		t.Errorf("Get(extra) = %q, %v", v, ok)
	}
	if _, ok := docs[5].Get("extra"); ok {
		t.Error("Get(extra) of a short row: found")
	}
	bom, err := documents.ReadFile(ctx, dir, "bom.csv", documents.Options{})
	if err != nil || len(bom) != 1 || bom[0].Text != "x" || bom[0].Title != "bom.csv" {
		t.Errorf("bom.csv: %+v, %v", bom, err)
	}
	body, err := documents.ReadFile(ctx, dir, "body.csv", documents.Options{TextColumn: "body", TitleColumn: "name"})
	if err != nil || len(body) != 2 || body[0].Text != "one\ntwo" || body[1].Title != "n2" {
		t.Errorf("body.csv: %+v, %v", body, err)
	}
}

// minimalPDF returns a one-page PDF 1.4 file showing lines in Helvetica,
// with a correct cross-reference table.
func minimalPDF(lines ...string) []byte {
	var content strings.Builder
	content.WriteString("BT /F1 12 Tf 72 720 Td 14 TL\n")
	for _, l := range lines {
		fmt.Fprintf(&content, "(%s) Tj T*\n", l)
	}
	content.WriteString("ET\n")
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%sendstream", content.Len(), content.String()),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// TestPDF reads a PDF written by hand: its text, id and title.
func TestPDF(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"report.pdf": string(minimalPDF("Scrooge and Marley.", "Christmas Eve, 1843.")),
	})
	docs, err := documents.ReadFile(context.Background(), dir, "report.pdf", documents.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 1 {
		t.Fatalf("%d documents; want 1", len(docs))
	}
	d := docs[0]
	for _, want := range []string{"Scrooge and Marley.", "Christmas Eve, 1843."} {
		if !strings.Contains(d.Text, want) {
			t.Errorf("text %q lacks %q", d.Text, want)
		}
	}
	if d.Title != "report.pdf" || d.ID != sha512Hex(d.Text) || d.Row != -1 {
		t.Errorf("title %q, id %.16s…, row %d", d.Title, d.ID, d.Row)
	}
}

// TestBadInput checks that bad files are errors naming the file (and the
// row), and that SkipBad skips them and reads the rest.
func TestBadInput(t *testing.T) {
	junk := string([]byte{0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0xfe, 0x80})
	tests := []struct {
		name, file, content string
		opts                documents.Options
		want                []string // in the message
		row                 int
	}{
		{"missing text column", "a.csv", "title,body\nx,y\n", documents.Options{}, []string{"a.csv", `no column "text"`, "title, body"}, 0},
		{"other text column", "a.csv", "text\nx\n", documents.Options{TextColumn: "body"}, []string{"a.csv", `no column "body"`}, 0},
		{"missing title column", "a.csv", "text\nx\n", documents.Options{TitleColumn: "name"}, []string{"a.csv", `no title column "name"`}, 0},
		{"short row", "a.csv", "id,text\n1,x\n2\n", documents.Options{}, []string{"a.csv", "row 2 (line 3)", `no "text" field`}, 2},
		{"binary junk", "b.txt", "line one\n" + junk, documents.Options{}, []string{"b.txt", "invalid UTF-8 at byte 9", "line 2"}, 0},
		{"invalid UTF-8 in csv", "c.csv", "text\nok\nbad \xc3\x28\n", documents.Options{}, []string{"c.csv", "invalid UTF-8", "line 3"}, 0},
		{"junk pdf", "d.pdf", junk, documents.Options{}, []string{"d.pdf", "parse"}, 0},
		{"truncated pdf", "e.pdf", string(minimalPDF("x")[:200]), documents.Options{}, []string{"e.pdf"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{tt.file: tt.content, "good.txt": "fine"})
			_, _, err := readAll(t, dir, tt.opts)
			var de *documents.Error
			if !errors.As(err, &de) {
				t.Fatalf("Read: %v; want a *documents.Error", err)
			}
			if de.Path != filepath.Join(dir, tt.file) || de.Row != tt.row {
				t.Errorf("Error{Path: %q, Row: %d}; want %q, row %d", de.Path, de.Row, filepath.Join(dir, tt.file), tt.row)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			opts := tt.opts
			opts.SkipBad = true
			docs, sum, err := readAll(t, dir, opts)
			if err != nil {
				t.Fatalf("SkipBad: %v", err)
			}
			if len(sum.Skipped) != 1 || sum.Skipped[0].Error() != de.Error() {
				t.Errorf("SkipBad: skipped %v; want the error above", sum.Skipped)
			}
			if n := len(docs); n < 1 || docs[n-1].Title != "good.txt" {
				t.Errorf("SkipBad: %d documents, good.txt not read", n)
			}
		})
	}
}

// TestUnreadable checks a file that cannot be opened (a link to nothing)
// and a missing folder.
func TestUnreadable(t *testing.T) {
	dir := writeFiles(t, map[string]string{"good.txt": "fine"})
	if err := os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(dir, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	_, _, err := readAll(t, dir, documents.Options{})
	var de *documents.Error
	if !errors.As(err, &de) || de.Path != filepath.Join(dir, "gone.txt") || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Read: %v; want a *documents.Error for gone.txt wrapping os.ErrNotExist", err)
	}
	_, _, err = readAll(t, filepath.Join(dir, "missing"), documents.Options{})
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "missing") {
		t.Errorf("Read of a missing folder: %v", err)
	}
}

// TestOrder checks sorted path order across folders, the files left out
// and the streaming callback's error.
func TestOrder(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"b.txt": "b", "a/z.md": "z", "a.txt": "a", "A.TXT": "upper", "notes.json": "{}", "img/x.png": "",
		"c.csv": "text\nc1\nc2\n",
	})
	docs, sum, err := readAll(t, dir, documents.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range docs {
		got = append(got, d.Title)
	}
	want := []string{"A.TXT", "a.txt", "z.md", "b.txt", "c.csv (0)", "c.csv (1)"}
	if !slices.Equal(got, want) {
		t.Errorf("titles %q; want %q", got, want)
	}
	if !slices.Equal(sum.Ignored, []string{"img/x.png", "notes.json"}) || sum.Files != 5 || sum.Documents != 6 {
		t.Errorf("summary %+v", sum)
	}
	stop := errors.New("stop")
	n := 0
	_, err = documents.Read(context.Background(), dir, documents.Options{}, func(documents.Document) error {
		n++
		return stop
	})
	if err != stop || n != 1 {
		t.Errorf("Read with a failing callback: %v after %d documents", err, n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := documents.Read(ctx, dir, documents.Options{}, func(documents.Document) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("Read with a cancelled context: %v", err)
	}
}
