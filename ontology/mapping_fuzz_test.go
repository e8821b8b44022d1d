package ontology_test

import (
	"bytes"
	"context"
	"io"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	krdf "github.com/knakk/rdf"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/ontology"
	"github.com/kgrag/kgrag/rdf"
	"github.com/kgrag/kgrag/rdfenc"
)

// FuzzMappingRoundTrip writes an entity, a relationship and an unresolved
// entity whose ids, titles and descriptions come from the fuzzer, through
// the mapping and the Turtle and N-Triples writers, parses the output with
// knakk/rdf (an independent parser), and checks that every value comes back
// exactly, and that each id can be recovered from its IRI.
func FuzzMappingRoundTrip(f *testing.F) {
	for _, s := range [][3]string{
		{"b45241d70f0e43fca764df95b2b81f77", "EBENEZER SCROOGE", "A miser who learns the meaning of Christmas."},
		{`quote"d`, `THE "GHOST"`, `said "humbug" \ and \\ twice`},
		{"triple", `"""X"""`, `"""` + "\n" + `"""`},
		{"nl\n", "LINE\nBREAK", "a\r\nb\rc\td"},
		{"ctl\x01\x1f\x7f", "NUL\x00BYTE", "bell\a back\b ff\f vt\v"},
		{"斯克鲁奇", "斯克鲁奇", "中文描述，含标点。"},
		{"😀", "🎄 TREE", "emoji 👍🏽 🇳🇱"},
		{"a/b#c?d e%20f", "<IRI> {unsafe} |^`\\", "100% <b>bold</b>"},
		{"", "", ""},
		{"bad\xff", "invalid \xc3", "\xed\xa0\x80 surrogate"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, id, title, desc string) {
		if id == "" {
			id = "x" // GraphRAG ids are never empty; the reader rejects them
		}
		const other = "other-entity"
		if id == other || id == graphrag.PlaceholderID(title) || strings.HasSuffix(id, "-rel") {
			return // ids collide: GraphRAG ids are unique
		}
		ds := &graphrag.Dataset{
			Entities: []graphrag.Entity{
				{ID: id, Title: title, Description: desc, Type: "PERSON"},
				{ID: other, Title: "OTHER"},
				{ID: graphrag.PlaceholderID(title), Title: title, Placeholder: true},
			},
			Relationships: []graphrag.Relationship{
				{ID: id + "-rel", Source: title, Target: "OTHER", SourceID: id, TargetID: other,
					Description: desc, Weight: 1, HasWeight: true},
			},
		}
		m := ontology.Mapper{Base: "http://kgrag.test/"}
		for _, format := range []string{"turtle", "ntriples"} {
			var buf bytes.Buffer
			var w interface {
				rdf.Writer
			}
			var finish func() error
			switch format {
			case "turtle":
				enc := rdfenc.NewTurtle(&buf, []rdfenc.Prefix{{Name: "gr", IRI: ontology.NS}})
				w, finish = enc, enc.Close
			default:
				enc := rdfenc.NewNTriples(&buf)
				w, finish = enc, enc.Flush
			}
			st, err := m.Map(context.Background(), ds, w)
			if err != nil {
				t.Fatalf("%s: Map: %v", format, err)
			}
			if err := finish(); err != nil {
				t.Fatal(err)
			}
			if tb := mapByRows(t, m, ds, format == "turtle"); !bytes.Equal(tb, buf.Bytes()) {
				t.Fatalf("%s: mapped row by row on goroutines:\n%s\nwant Map's\n%s", format, tb, buf.Bytes())
			}
			kf := krdf.Turtle
			if format == "ntriples" {
				kf = krdf.NTriples
			}
			got := decode(t, buf.Bytes(), kf)
			if int64(len(got)) != st.Triples {
				t.Fatalf("%s: parsed %d triples; Map wrote %d\n%s", format, len(got), st.Triples, buf.Bytes())
			}
			checkEntity(t, format, got, id, title, desc)
			checkEntity(t, format, got, graphrag.PlaceholderID(title), title, "")
		}
	})
}

// valid is what a string reads back as: invalid UTF-8 becomes U+FFFD, one
// per bad byte, as Go's range loop decodes it.
func valid(s string) string { return string([]rune(s)) }

func decode(t *testing.T, data []byte, f krdf.Format) []rdf.Triple {
	t.Helper()
	d := krdf.NewTripleDecoder(bytes.NewReader(data), f)
	var out []rdf.Triple
	for {
		tr, err := d.Decode()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("knakk/rdf cannot parse the output: %v\n%s", err, data)
		}
		conv := func(x krdf.Term) rdf.Term {
			switch v := x.(type) {
			case krdf.IRI:
				return rdf.IRI(v.String())
			case krdf.Literal:
				if v.Lang() != "" {
					return rdf.LangString(v.String(), v.Lang())
				}
				return rdf.Typed(v.String(), v.DataType.String())
			}
			return rdf.Term{}
		}
		out = append(out, rdf.Triple{S: conv(tr.Subj), P: conv(tr.Pred), O: conv(tr.Obj)})
	}
}

// checkEntity finds the entity whose gr:id is id and checks its IRI and
// literals.
func checkEntity(t *testing.T, format string, got []rdf.Triple, id, title, desc string) {
	t.Helper()
	var subject string
	for _, tr := range got {
		if tr.P.Value == ontology.ID && tr.O.Value == valid(id) && strings.Contains(tr.S.Value, "/entity/") {
			subject = tr.S.Value
		}
	}
	if subject == "" {
		t.Fatalf("%s: no entity with gr:id %q", format, valid(id))
	}
	seg := subject[strings.LastIndex(subject, "/entity/")+len("/entity/"):]
	if strings.ContainsAny(seg, "/#?") {
		t.Errorf("%s: id %q made IRI segment %q, which changes the IRI's structure", format, id, seg)
	}
	if dec, err := url.PathUnescape(seg); err != nil || dec != id {
		t.Errorf("%s: IRI segment %q decodes to %q (%v); want the id %q", format, seg, dec, err, id)
	}
	props := map[string]string{}
	for _, tr := range got {
		if tr.S.Value == subject && tr.O.IsLiteral() {
			props[tr.P.Value] = tr.O.Value
		}
	}
	if props[ontology.Title] != valid(title) || props[ontology.Name] != valid(title) {
		t.Errorf("%s: title came back %q / name %q; want %q", format, props[ontology.Title], props[ontology.Name], valid(title))
	}
	if props[ontology.Description] != valid(desc) {
		t.Errorf("%s: description came back %q; want %q", format, props[ontology.Description], valid(desc))
	}
}

// mapByRows maps ds as kgrag load does on several cores: every row of a
// table on its own goroutine (Stream.Tables, Table.Map) into its own
// segment, the segments written in order.
func mapByRows(t *testing.T, m ontology.Mapper, ds *graphrag.Dataset, turtle bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	tenc := rdfenc.NewTurtle(&buf, []rdfenc.Prefix{{Name: "gr", IRI: ontology.NS}})
	nenc := rdfenc.NewNTriples(&buf)
	s, err := m.Stream(nil)
	if err != nil {
		t.Fatal(err)
	}
	table := func(ctx context.Context, tb *ontology.Table) error {
		n := max(tb.Len(), 1) // the documents' first range writes the run
		segs := make([]rdf.Writer, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			if turtle {
				segs[i] = tenc.NewSegment()
			} else {
				segs[i] = nenc.NewSegment()
			}
			wg.Go(func() { _, errs[i] = tb.Map(ctx, segs[i], i, min(i+1, tb.Len())) })
		}
		wg.Wait()
		for i := range n {
			if errs[i] != nil {
				return errs[i]
			}
			if turtle {
				err = tenc.WriteSegment(segs[i].(*rdfenc.TurtleSegment))
			} else {
				err = nenc.WriteSegment(segs[i].(*rdfenc.NTriplesSegment))
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	v := s.Tables(table)
	ctx := context.Background()
	for _, step := range []func() error{
		func() error { return v.Documents(ctx, slices.Clone(ds.Documents)) },
		func() error { return v.TextUnits(ctx, slices.Clone(ds.TextUnits)) },
		func() error { return v.Entities(ctx, slices.Clone(ds.Entities)) },
		func() error { return v.Relationships(ctx, slices.Clone(ds.Relationships)) },
		func() error { return v.Communities(ctx, slices.Clone(ds.Communities)) },
		func() error { return v.Covariates(ctx, slices.Clone(ds.Covariates)) },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	if turtle {
		err = tenc.Close()
	} else {
		err = nenc.Flush()
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
