package chunk_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/kgrag/kgrag/internal/chunk"
	"github.com/kgrag/kgrag/internal/chunk/oracle"
	"github.com/kgrag/kgrag/internal/documents"
	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/internal/tokens"
)

var encodings = []string{tokens.EncodingCL100K, tokens.EncodingO200K}

// encoders builds each encoding once per test binary.
var encoders = sync.OnceValues(func() (map[string]*tokens.Encoder, error) {
	out := map[string]*tokens.Encoder{}
	for _, name := range encodings {
		enc, err := tokens.NewEncoder(name)
		if err != nil {
			return nil, err
		}
		out[name] = enc
	}
	return out, nil
})

func encoder(t testing.TB, name string) *tokens.Encoder {
	t.Helper()
	m, err := encoders()
	if err != nil {
		t.Fatal(err)
	}
	return m[name]
}

// christmasCarol reads the Christmas Carol as kgrag's input reader does
// (which TestMatchesGraphRAGLoaders in documents ties to GraphRAG's).
func christmasCarol(t testing.TB) documents.Document {
	t.Helper()
	docs, err := documents.ReadFile(context.Background(), test.SourceText(t), test.ChristmasCarolFile, documents.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return docs[0]
}

// textDocument is a document made in the test, as the text reader makes
// them.
func textDocument(title, text string) documents.Document {
	return documents.Document{ID: documents.TextID(text), Title: title, Text: text,
		CreationDate: "2024-12-25 00:00:00 +0000", Row: -1}
}

// multiByte is a document whose small chunks cut characters: CJK, emoji
// and accents that BPE splits into byte tokens.
var multiByte = textDocument("multibyte.txt", strings.Repeat(
	"こんにちは世界、漢字仮名交じり文。🙂👍🏽 👨‍👩‍👧‍👦 e\u0301te\u0301 ᚠᛇᚻ ① ∮ E⋅da ™ “x” — Ελληνικά, Русский, עברית, हिन्दी. ", 6))

// csvRow is a CSV row document, whose columns prepend_metadata can name.
var csvRow = documents.Document{ID: documents.TextID("Bah! Humbug!"), Title: "quotes.csv (3)",
	Text: "Bah! Humbug!", CreationDate: "2024-12-25 00:00:00 +0000", Path: "quotes.csv", Row: 3,
	Fields: map[string]string{"text": "Bah! Humbug!", "speaker": "Scrooge", "year": "1843"}}

// TestMatchesGraphRAG chunks documents with kgrag and with GraphRAG's own
// create_base_text_units (and create_final_text_units for
// human_readable_id), both encodings, GraphRAG's defaults and smaller
// windows, with and without prepend_metadata: the same text units in the
// same order, with the same ids, document ids, texts and n_tokens.
func TestMatchesGraphRAG(t *testing.T) {
	carol := christmasCarol(t)
	docs := []documents.Document{carol, multiByte, csvRow, textDocument("empty.txt", "")}
	type run struct {
		enc           string
		size, overlap int
		meta          []string
	}
	var runs []run
	for _, enc := range encodings {
		runs = append(runs,
			run{enc, chunk.DefaultSize, chunk.DefaultOverlap, nil},
			run{enc, 300, 50, nil},
			run{enc, 7, 3, nil},
			run{enc, 300, 50, []string{"title", "creation_date", "speaker", "missing", "title"}},
			run{enc, 5, 0, []string{"missing"}},
		)
	}
	var jobs []oracle.Job
	odocs := make([]oracle.Document, len(docs))
	for i, d := range docs {
		raw := map[string]any{}
		for k, v := range d.Fields {
			raw[k] = v
		}
		if d.Fields == nil {
			raw = nil
		}
		odocs[i] = oracle.Document{ID: d.ID, Title: d.Title, Text: d.Text, CreationDate: d.CreationDate, RawData: raw}
	}
	for _, r := range runs {
		jobs = append(jobs, oracle.Job{Op: "chunk", Encoding: r.enc, Size: r.size, Overlap: r.overlap,
			PrependMetadata: r.meta, Documents: odocs})
	}
	res := oracle.Run(t, jobs...)

	for i, r := range runs {
		name := fmt.Sprintf("%s %d/%d %q", r.enc, r.size, r.overlap, r.meta)
		if res[i].Error != "" {
			t.Fatalf("%s: graphrag_chunks.py: %s", name, res[i].Error)
		}
		c, err := chunk.New(encoder(t, r.enc), chunk.Options{Size: r.size, Overlap: r.overlap, PrependMetadata: r.meta})
		if err != nil {
			t.Fatal(err)
		}
		var got []chunk.TextUnit
		next := 0
		for _, d := range docs {
			units := c.Document(d)
			next = chunk.Number(units, next)
			got = append(got, units...)
		}
		want := res[i].TextUnits
		alike, cut := 0, 0
		for j := range max(len(got), len(want)) {
			if j >= len(got) || j >= len(want) {
				t.Errorf("%s: %d text units; GraphRAG %d", name, len(got), len(want))
				break
			}
			g, w := got[j], want[j]
			if g.ID != w.ID || g.Text != w.Text || g.NTokens != w.NTokens || g.DocumentID != w.DocumentID || g.HumanReadableID != w.HumanReadableID {
				t.Errorf("%s: unit %d: id %.16s…, %d tokens, doc %.8s…, hrid %d, text %.80q\nGraphRAG: id %.16s…, %d tokens, doc %.8s…, hrid %d, text %.80q",
					name, j, g.ID, g.NTokens, g.DocumentID, g.HumanReadableID, g.Text, w.ID, w.NTokens, w.DocumentID, w.HumanReadableID, w.Text)
				continue
			}
			alike++
			if strings.ContainsRune(w.Text, utf8.RuneError) {
				cut++
			}
		}
		if len(want) < 4 {
			t.Errorf("%s: GraphRAG made %d text units: too few to compare", name, len(want))
		}
		// Windows of a few tokens cut the multi-byte document's
		// characters, which GraphRAG's decode replaces.
		if r.size < 10 && cut == 0 {
			t.Errorf("%s: no text unit cuts a character", name)
		}
		t.Logf("%s: %d of %d text units alike, %d with a cut character", name, alike, len(want), cut)
	}
}

// TestSplit checks windows without GraphRAG: each chunk's bytes are those
// of its tokens, consecutive windows start Size-Overlap tokens apart, and
// the last reaches the end.
func TestSplit(t *testing.T) {
	carol := christmasCarol(t)
	for _, enc := range encodings {
		e := encoder(t, enc)
		for _, text := range []string{carol.Text, multiByte.Text, "one", "\xffinvalid \xe2\x82 bytes"} {
			toks := e.Tokens(text)
			valid := tokens.ValidText(text)
			for _, o := range []chunk.Options{chunk.DefaultOptions(), {Size: 300, Overlap: 50}, {Size: 3, Overlap: 2}, {Size: 1}} {
				c, err := chunk.New(e, o)
				if err != nil {
					t.Fatal(err)
				}
				chunks := c.Split(text)
				step := o.Size - o.Overlap
				if want := max(1, (len(toks)-o.Overlap+step-1)/step); len(chunks) != want {
					t.Errorf("%s %+v: %d chunks of %d tokens; want %d", enc, o, len(chunks), len(toks), want)
					continue
				}
				for i, ch := range chunks {
					first, last := i*step, min(i*step+o.Size, len(toks))-1
					ids := make([]int, 0, last-first+1)
					for _, tok := range toks[first : last+1] {
						ids = append(ids, tok.ID)
					}
					dec, err := e.Decode(ids)
					if err != nil || ch.Start != toks[first].Start || ch.End != toks[last].End || ch.Text != dec || !utf8.ValidString(ch.Text) {
						t.Fatalf("%s %+v: chunk %d = [%d:%d] %.40q; want tokens %d-%d, [%d:%d] %.40q (%v)",
							enc, o, i, ch.Start, ch.End, ch.Text, first, last, toks[first].Start, toks[last].End, dec, err)
					}
				}
				if last := chunks[len(chunks)-1]; last.End != len(valid) {
					t.Errorf("%s %+v: last chunk ends at %d of %d", enc, o, last.End, len(valid))
				}
			}
		}
	}
}

// TestDocument checks text units without GraphRAG: ids are SHA-512 of the
// text, NTokens counts it, metadata comes first, and an empty document
// has none.
func TestDocument(t *testing.T) {
	e := encoder(t, chunk.DefaultEncoding)
	c, err := chunk.New(e, chunk.Options{Size: 4, Overlap: 1, PrependMetadata: []string{"speaker", "title", "nope"}})
	if err != nil {
		t.Fatal(err)
	}
	units := c.Document(csvRow)
	if len(units) == 0 {
		t.Fatal("no text units")
	}
	for i, u := range units {
		if !strings.HasPrefix(u.Text, "speaker: Scrooge.\ntitle: quotes.csv (3).\n") || u.Index != i ||
			u.ID != documents.TextID(u.Text) || u.NTokens != e.Count(u.Text) || u.DocumentID != csvRow.ID {
			t.Errorf("unit %d: %+v", i, u)
		}
	}
	if units := c.Document(textDocument("empty.txt", "")); len(units) != 0 {
		t.Errorf("empty document: %d text units", len(units))
	}
	if n := chunk.Number(units, 10); n != 10+len(units) || units[0].HumanReadableID != 10 {
		t.Errorf("Number: %d, first %d", n, units[0].HumanReadableID)
	}
}

// TestOptions checks the options GraphRAG cannot run with.
func TestOptions(t *testing.T) {
	tests := []struct {
		o    chunk.Options
		want string // in the error, "" for none
	}{
		{chunk.DefaultOptions(), ""},
		{chunk.Options{Size: 1}, ""},
		{chunk.Options{Size: 0}, "size 0"},
		{chunk.Options{Size: 10, Overlap: -1}, "overlap -1"},
		{chunk.Options{Size: 10, Overlap: 10}, "fewer tokens than the size"},
	}
	for _, tt := range tests {
		err := tt.o.Validate()
		if (err == nil) != (tt.want == "") || err != nil && !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v.Validate() = %v; want %q", tt.o, err, tt.want)
		}
		if _, err2 := chunk.New(encoder(t, chunk.DefaultEncoding), tt.o); (err2 == nil) != (err == nil) {
			t.Errorf("New(%+v): %v; Validate %v", tt.o, err2, err)
		}
	}
	if _, err := chunk.New(nil, chunk.DefaultOptions()); err == nil {
		t.Error("New(nil encoder): no error")
	}
}

// BenchmarkDocument chunks the Christmas Carol with GraphRAG's defaults:
// tokens, windows, ids and counts (the indexer's overhead per document).
func BenchmarkDocument(b *testing.B) {
	carol := christmasCarol(b)
	c, err := chunk.New(encoder(b, chunk.DefaultEncoding), chunk.DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(carol.Text)))
	n := 0
	for b.Loop() {
		n = len(c.Document(carol))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/unit")
}
