// Package mode names kgrag's query modes: their names and aliases, the
// names kgrag serve gives them as models, what each reads and whether it
// embeds the question. internal/engine pairs each with its engine, and
// kgrag ask (--mode and its help), kgrag doctor, kgrag serve (/v1/models,
// /api/ask, the web page) and the MCP ask tool take the list from there,
// so that a mode added here is offered by all of them or a test says which
// lacks it.
package mode

import (
	"slices"
	"strings"
)

// The names of the modes, as --mode takes them.
const (
	Local           = "local"
	Global          = "global"
	Drift           = "drift"
	Basic           = "basic"
	SPARQLTemplates = "sparql-templates"
	Subgraph        = "subgraph"
	GraphOfThoughts = "graph-of-thoughts"
	Walk            = "walk"
)

// Needs says what a mode reads besides the graph.
type Needs uint8

const (
	// EntityIndex: the vector index of entity descriptions (kNN of the
	// question).
	EntityIndex Needs = 1 << iota
	// Reports: the community reports.
	Reports
	// TextUnitIndex: the vector index of text units (basic search).
	TextUnitIndex
	// ReportIndex: the vector index of community reports (DRIFT's
	// primer).
	ReportIndex
)

// Mode describes one query mode.
type Mode struct {
	Name string
	// Aliases are earlier names still accepted ("seed").
	Aliases []string
	// About says in one line what the mode does, for --help and
	// /v1/models.
	About string
	Needs Needs
	// ContextOnly: the mode builds one context from the question, which
	// --context-only prints without calling the chat model.
	ContextOnly bool
}

// Model is the model name kgrag serve lists for m: "kgrag-local".
func (m Mode) Model() string { return "kgrag-" + m.Name }

// EmbedsQuestion reports whether m embeds the question (for kNN).
func (m Mode) EmbedsQuestion() bool { return m.Needs&(EntityIndex|TextUnitIndex|ReportIndex) != 0 }

// All returns the modes in the order help and /v1/models list them.
func All() []Mode {
	return []Mode{
		{Name: Local, Needs: EntityIndex | Reports, ContextOnly: true,
			About: "GraphRAG local search: the entities nearest the question, their relationships, text and community reports"},
		{Name: Global, Needs: Reports,
			About: "GraphRAG global search: map-reduce over the community reports, for questions about the whole corpus"},
		{Name: Drift, Needs: EntityIndex | Reports | ReportIndex,
			About: "GraphRAG DRIFT search: a primer over the nearest community reports, then local searches for its follow-up questions"},
		{Name: Basic, Needs: TextUnitIndex,
			About: "GraphRAG basic search: the text units nearest the question"},
		{Name: SPARQLTemplates, Aliases: []string{"seed"}, Needs: EntityIndex, ContextOnly: true,
			About: "the RDF article's templated SPARQL: top chunks, communities and relationships of the nearest entities"},
		{Name: Subgraph, Needs: EntityIndex, ContextOnly: true,
			About: "the NetworkX article's retrieval: the nearest nodes, all their text, their top relationships and community summaries"},
		{Name: GraphOfThoughts, Needs: EntityIndex, ContextOnly: true,
			About: "the NetworkX article's graph of thoughts: the model builds a small graph from the subgraph context, then answers from it"},
		{Name: Walk, Needs: EntityIndex | TextUnitIndex, ContextOnly: true,
			About: "a walk over the graph (HippoRAG's personalized PageRank) from the entities and text units that match the question: the text units it ranks highest, for questions that join two passages"},
	}
}

// Names returns the names of All, in order.
func Names() []string {
	all := All()
	names := make([]string, len(all))
	for i, m := range all {
		names[i] = m.Name
	}
	return names
}

// Lookup finds a mode by its name, an alias, or its model name
// ("kgrag-local", "kgrag-seed"), case-sensitively as flags are.
func Lookup(name string) (Mode, bool) {
	bare := strings.TrimPrefix(name, "kgrag-")
	for _, m := range All() {
		if m.Name == name || m.Name == bare {
			return m, true
		}
		for _, a := range m.Aliases {
			if a == name || a == bare {
				return m, true
			}
		}
	}
	return Mode{}, false
}

// Canonical is the name of the mode that name is an alias of ("seed" is
// "sparql-templates"); any other name comes back as it is.
func Canonical(name string) string {
	for _, m := range All() {
		if slices.Contains(m.Aliases, name) {
			return m.Name
		}
	}
	return name
}

// Help is the usage of a --mode flag: every mode by name.
func Help() string {
	var b strings.Builder
	b.WriteString("query `MODE`: ")
	all := All()
	for i, m := range all {
		switch {
		case i == len(all)-1:
			b.WriteString(" or ")
		case i > 0:
			b.WriteString(", ")
		}
		b.WriteString(m.Name)
		if len(m.Aliases) > 0 {
			b.WriteString(" (also " + strings.Join(m.Aliases, ", ") + ")")
		}
	}
	return b.String()
}
