package thoughtgraph

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/kgrag/kgrag/internal/jsonrepair"
	"github.com/kgrag/kgrag/internal/llm"
)

// Node is a thing the answer rests on.
type Node struct {
	Name        string `json:"name"`
	Type        string `json:"type,omitempty"`
	Description string `json:"description,omitempty"`
}

// Edge connects two nodes, by name, with a strength from 1 to 10 (0 when
// the model gave none).
type Edge struct {
	Source      string  `json:"source"`
	Target      string  `json:"target"`
	Description string  `json:"description,omitempty"`
	Strength    float64 `json:"strength,omitempty"`
}

// Graph is the knowledge graph a model built. Nodes are unique by name
// (case aside) and every edge's ends are among them. The zero value is an
// empty graph.
type Graph struct {
	Nodes []Node `json:"nodes"`
	Edges []Edge `json:"edges"`
}

// Schema is the JSON schema of the reply asked for, sent with JSON mode
// so that servers that constrain decoding to a schema keep small models
// to the shape.
var Schema = json.RawMessage(`{"type":"object","properties":{` +
	`"nodes":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string","minLength":1},` +
	`"type":{"type":"string"},"description":{"type":"string"}},"required":["name"]}},` +
	`"edges":{"type":"array","items":{"type":"object","properties":{"source":{"type":"string"},"target":{"type":"string"},` +
	`"description":{"type":"string"},"strength":{"type":"number"}},"required":["source","target"]}}},` +
	`"required":["nodes","edges"]}`)

// ErrEmpty is returned by Parse for a reply that holds a graph without
// nodes.
var ErrEmpty = errors.New("the model's graph has no nodes")

// reply is the JSON asked for, with the spellings models use besides.
type reply struct {
	Nodes         []rawNode `json:"nodes"`
	Entities      []rawNode `json:"entities"`
	Edges         []rawEdge `json:"edges"`
	Relationships []rawEdge `json:"relationships"`
}

type rawNode struct {
	Name        any `json:"name"`
	Type        any `json:"type"`
	Description any `json:"description"`
}

type rawEdge struct {
	Source      any `json:"source"`
	Target      any `json:"target"`
	Description any `json:"description"`
	Strength    any `json:"strength"`
}

// Parse reads the graph from a model's reply (see the package doc). It
// returns the repairs the JSON needed. Errors: ErrEmpty, or an error
// wrapping jsonrepair's (jsonrepair.ErrNoJSON for a reply without JSON).
func Parse(text string) (*Graph, []jsonrepair.Fix, error) {
	_, answer := llm.SplitReasoning(text)
	var r reply
	fixes, err := jsonrepair.Unmarshal(answer, &r)
	if err != nil {
		var list []json.RawMessage // a bare list of nodes and edges
		if lf, lerr := jsonrepair.Unmarshal(answer, &list); lerr == nil {
			fixes, err = lf, nil
			r = fromList(list)
		}
	}
	if err != nil {
		return nil, fixes, fmt.Errorf("thoughtgraph: read the graph: %w", err)
	}
	g := &Graph{Nodes: []Node{}, Edges: []Edge{}}
	index := map[string]int{} // upper-cased name -> position in g.Nodes
	add := func(n Node) string {
		n.Name = strings.TrimSpace(n.Name)
		key := strings.ToUpper(n.Name)
		if key == "" {
			return ""
		}
		if i, ok := index[key]; ok {
			old := &g.Nodes[i]
			old.Type = firstNonEmpty(old.Type, n.Type)
			if n.Description != "" && !strings.Contains(old.Description, n.Description) {
				old.Description = strings.TrimSpace(old.Description + " " + n.Description)
			}
			return old.Name
		}
		index[key] = len(g.Nodes)
		g.Nodes = append(g.Nodes, n)
		return n.Name
	}
	for _, n := range append(r.Nodes, r.Entities...) {
		add(Node{Name: str(n.Name), Type: strings.TrimSpace(str(n.Type)), Description: strings.TrimSpace(str(n.Description))})
	}
	for _, e := range append(r.Edges, r.Relationships...) {
		src, dst := add(Node{Name: str(e.Source)}), add(Node{Name: str(e.Target)})
		if src == "" || dst == "" {
			continue
		}
		g.Edges = append(g.Edges, Edge{Source: src, Target: dst, Description: strings.TrimSpace(str(e.Description)), Strength: num(e.Strength)})
	}
	if len(g.Nodes) == 0 {
		return nil, fixes, ErrEmpty
	}
	return g, fixes, nil
}

// fromList reads a JSON list whose items are nodes (with a name) or edges
// (with a source and a target).
func fromList(list []json.RawMessage) reply {
	var r reply
	for _, raw := range list {
		var e rawEdge
		if json.Unmarshal(raw, &e) == nil && e.Source != nil && e.Target != nil {
			r.Edges = append(r.Edges, e)
			continue
		}
		var n rawNode
		if json.Unmarshal(raw, &n) == nil && n.Name != nil {
			r.Nodes = append(r.Nodes, n)
		}
	}
	return r
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// str is a JSON value as text: strings as they are, numbers and booleans
// as written, anything else empty.
func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}

// num is a strength: a number, or a string holding one ("7", "7/10").
func num(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case string:
		f := strings.FieldsFunc(x, func(r rune) bool { return r == '/' || r == ' ' })
		if len(f) > 0 {
			if n, err := strconv.ParseFloat(f[0], 64); err == nil {
				return n
			}
		}
	}
	return 0
}

// Text prints g for the answer call: the nodes, then the edges, one a
// line.
func (g *Graph) Text() string {
	var b strings.Builder
	b.WriteString("Nodes:\n")
	for _, n := range g.Nodes {
		fmt.Fprintf(&b, "- %s", n.Name)
		if n.Type != "" {
			fmt.Fprintf(&b, " (%s)", n.Type)
		}
		if n.Description != "" {
			fmt.Fprintf(&b, ": %s", oneLine(n.Description))
		}
		b.WriteByte('\n')
	}
	if len(g.Edges) > 0 {
		b.WriteString("\nEdges:\n")
	}
	for _, e := range g.Edges {
		fmt.Fprintf(&b, "- %s -> %s", e.Source, e.Target)
		if e.Strength != 0 {
			fmt.Fprintf(&b, " (strength %s)", strconv.FormatFloat(e.Strength, 'f', -1, 64))
		}
		if e.Description != "" {
			fmt.Fprintf(&b, ": %s", oneLine(e.Description))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
