package thoughtgraph_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kgrag/kgrag/internal/jsonrepair"
	"github.com/kgrag/kgrag/internal/thoughtgraph"
)

var scroogeBob = &thoughtgraph.Graph{
	Nodes: []thoughtgraph.Node{{Name: "SCROOGE", Type: "person", Description: "A miser."}, {Name: "BOB CRATCHIT", Type: "person", Description: "His clerk."}},
	Edges: []thoughtgraph.Edge{{Source: "SCROOGE", Target: "BOB CRATCHIT", Description: "Employs him.", Strength: 8}},
}

const scroogeBobJSON = `{"nodes": [{"name": "SCROOGE", "type": "person", "description": "A miser."},
 {"name": "BOB CRATCHIT", "type": "person", "description": "His clerk."}],
 "edges": [{"source": "SCROOGE", "target": "BOB CRATCHIT", "description": "Employs him.", "strength": 8}]}`

func TestParse(t *testing.T) {
	tests := []struct {
		name  string
		reply string
		want  *thoughtgraph.Graph
		fixes []jsonrepair.Fix
	}{
		{"plain", scroogeBobJSON, scroogeBob, nil},
		{"think block and fence", "<think>The user wants a graph.</think>\nHere it is:\n```json\n" + scroogeBobJSON + "\n```\nHope this helps.",
			scroogeBob, []jsonrepair.Fix{jsonrepair.FixCodeFence}},
		{"truncated in the second edge", `{"nodes": [{"name": "SCROOGE", "type": "person", "description": "A miser."},
 {"name": "BOB CRATCHIT", "type": "person", "description": "His clerk."}],
 "edges": [{"source": "SCROOGE", "target": "BOB CRATCHIT", "description": "Employs him.", "strength": 8},
           {"source": "SCROOGE", "target": "MAR`,
			scroogeBob, []jsonrepair.Fix{jsonrepair.FixTruncated}},
		{"python dict, strength as text, names in other case", `{'entities': [{'name': ' Scrooge ', 'type': 'person', 'description': 'A miser.'}],
 'relationships': [{'source': 'SCROOGE', 'target': 'Bob Cratchit', 'description': 'Employs him.', 'strength': '8/10'}]}`,
			&thoughtgraph.Graph{
				Nodes: []thoughtgraph.Node{{Name: "Scrooge", Type: "person", Description: "A miser."}, {Name: "Bob Cratchit"}},
				Edges: []thoughtgraph.Edge{{Source: "Scrooge", Target: "Bob Cratchit", Description: "Employs him.", Strength: 8}},
			}, []jsonrepair.Fix{jsonrepair.FixSingleQuotes}},
		{"a bare list", `[{"name": "SCROOGE", "type": "person"}, {"source": "SCROOGE", "target": "MARLEY", "strength": 9}]`,
			&thoughtgraph.Graph{
				Nodes: []thoughtgraph.Node{{Name: "SCROOGE", Type: "person"}, {Name: "MARLEY"}},
				Edges: []thoughtgraph.Edge{{Source: "SCROOGE", Target: "MARLEY", Strength: 9}},
			}, nil},
		{"a node twice, an edge without a target", `{"nodes": [{"name": "SCROOGE", "description": "A miser."}, {"name": "scrooge", "type": "person", "description": "Marley's partner."}],
 "edges": [{"source": "SCROOGE", "description": "dangling"}]}`,
			&thoughtgraph.Graph{Nodes: []thoughtgraph.Node{{Name: "SCROOGE", Type: "person", Description: "A miser. Marley's partner."}}, Edges: []thoughtgraph.Edge{}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, fixes, err := thoughtgraph.Parse(tt.reply)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse graph (-want +got):\n%s", diff)
			}
			for _, f := range tt.fixes {
				found := false
				for _, g := range fixes {
					found = found || g == f
				}
				if !found {
					t.Errorf("Parse fixes = %v; want %s among them", fixes, f)
				}
			}
		})
	}
}

func TestParseBad(t *testing.T) {
	tests := []struct {
		name, reply string
		want        error
	}{
		{"no JSON", "I cannot build a graph from this.", jsonrepair.ErrNoJSON},
		{"empty graph", `{"nodes": [], "edges": []}`, thoughtgraph.ErrEmpty},
		{"only thinking", "<think>Let me see... the nodes are", jsonrepair.ErrNoJSON},
		{"nameless nodes", `{"nodes": [{"type": "person"}]}`, thoughtgraph.ErrEmpty},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, _, err := thoughtgraph.Parse(tt.reply)
			if !errors.Is(err, tt.want) {
				t.Errorf("Parse(%q) = %v, %v; want %v", tt.reply, g, err, tt.want)
			}
		})
	}
}

func TestText(t *testing.T) {
	want := "Nodes:\n- SCROOGE (person): A miser.\n- BOB CRATCHIT (person): His clerk.\n\nEdges:\n- SCROOGE -> BOB CRATCHIT (strength 8): Employs him.\n"
	if got := scroogeBob.Text(); got != want {
		t.Errorf("Text() = %q; want %q", got, want)
	}
}
