package rdfenc_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/rdf"
	"github.com/kgrag/kgrag/rdfenc"
)

// readNTriples reads every triple of data with NTriplesReader.
func readNTriples(data []byte) ([]rdf.Triple, error) {
	d := rdfenc.NewNTriplesReader(strings.NewReader(string(data)))
	var out []rdf.Triple
	for {
		t, err := d.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, t)
	}
}

// TestNTriplesReader covers the forms stores write that kgrag's encoder
// never does: escapes in IRIs, \U escapes, explicit xsd:string, comments,
// CRLF, tabs and a blank node label touching the full stop.
func TestNTriplesReader(t *testing.T) {
	s, p := rdf.IRI("http://x/s"), rdf.IRI("http://x/p")
	tests := []struct {
		in   string
		want []rdf.Triple
	}{
		{"<http://x/s> <http://x/p> \"a\\tb\\u00E9\\U0001F600\\\"\" .\n",
			[]rdf.Triple{{S: s, P: p, O: rdf.String("a\tbé😀\"")}}},
		{"<http://x/\\u0073> <http://x/p> \"1\"^^<http://www.w3.org/2001/XMLSchema#string> .",
			[]rdf.Triple{{S: s, P: p, O: rdf.String("1")}}},
		{"# comment\r\n\r\n<http://x/s>\t<http://x/p>\t\"x\"@en-GB . # trailing\r\n",
			[]rdf.Triple{{S: s, P: p, O: rdf.LangString("x", "en-GB")}}},
		{"_:b1 <http://x/p> _:b2.\n<http://x/s> <http://x/p> \"1.5E0\"^^<http://www.w3.org/2001/XMLSchema#double> .\n",
			[]rdf.Triple{{S: rdf.Blank("b1"), P: p, O: rdf.Blank("b2")}, {S: s, P: p, O: rdf.Double(1.5)}}},
		{"<http://x/s> <http://x/p> \"" + strings.Repeat("long ", 400_000) + "\" .\n",
			[]rdf.Triple{{S: s, P: p, O: rdf.String(strings.Repeat("long ", 400_000))}}},
	}
	for _, tt := range tests {
		got, err := readNTriples([]byte(tt.in))
		if err != nil {
			t.Errorf("read %.60q: %v", tt.in, err)
			continue
		}
		if len(got) != len(tt.want) {
			t.Errorf("read %.60q: %d triples; want %d", tt.in, len(got), len(tt.want))
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("read %.60q: triple %d = %.80q; want %.80q", tt.in, i, got[i], tt.want[i])
			}
		}
	}
}

func TestNTriplesReaderErrors(t *testing.T) {
	for _, in := range []string{
		"<http://x/s> <http://x/p> \"open .\n",
		"<http://x/s> <http://x/p> <http://x/o>\n",
		"\"lit\" <http://x/p> <http://x/o> .\n",
		"<http://x/s> _:p <http://x/o> .\n",
		"<http://x/s> <http://x/p> \"\\q\" .\n",
		"<http://x/s> <http://x/p> <http://x/o> . extra\n",
	} {
		src := "<http://x/a> <http://x/b> <http://x/c> .\n" + in
		_, err := readNTriples([]byte(src))
		if err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("read %q: error %v; want one naming line 2", in, err)
		}
	}
}
