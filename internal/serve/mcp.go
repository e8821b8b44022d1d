package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/kgrag/kgrag/internal/answer"
	"github.com/kgrag/kgrag/internal/engine"
	"github.com/kgrag/kgrag/internal/mode"
	"github.com/kgrag/kgrag/sparqlq"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SPARQL bounds of the sparql_select tool.
const (
	defaultSPARQLRows = 100
	maxSPARQLRows     = 1000
	maxSPARQLBytes    = 8 << 20
	sparqlTimeout     = 30 * time.Second
)

// MCP is the graph as Model Context Protocol tools, for agents: served at
// /mcp (streamable HTTP) and, by kgrag mcp, over stdio. Each call uses the
// graph served when it is made.
func (s *Server) MCP() *mcp.Server { return s.mcp }

func (s *Server) newMCP(version string) *mcp.Server {
	g := s.Graph()
	m := mcp.NewServer(&mcp.Implementation{Name: "kgrag", Title: "kgrag knowledge graph", Version: version},
		&mcp.ServerOptions{Instructions: "Tools over a GraphRAG knowledge graph (" + g.Name + "): find entities by meaning, " +
			"read an entity with its relationships, text units and communities, get the local search context of a question, " +
			"or a global answer about the whole corpus."})
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)}

	type searchIn struct {
		Query string `json:"query" jsonschema:"text to find entities for (a name, a description, a question)"`
		K     int    `json:"k,omitempty" jsonschema:"how many entities (1-100, default 10)"`
	}
	type searchOut struct {
		Entities []hitJSON `json:"entities"`
	}
	mcp.AddTool(m, &mcp.Tool{Name: "search_entities", Annotations: ro,
		Description: "Find the entities whose descriptions are nearest a text, by embedding (the vector index kgrag embed built). Returns ids, titles, descriptions and scores, nearest first."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in searchIn) (*mcp.CallToolResult, searchOut, error) {
			k := in.K
			if k == 0 {
				k = 10
			}
			if k < 1 || k > 100 {
				return nil, searchOut{}, fmt.Errorf("k %d: want 1 to 100", in.K)
			}
			g, done := s.pin()
			defer done()
			hits, err := s.search(ctx, g, strings.TrimSpace(in.Query), k)
			return nil, searchOut{hits}, toolError(err)
		})

	// Agents copy a number they read in a citation ("Entities (3)",
	// "Reports (5)") as a JSON number as often as a string: both are taken.
	idOrNumber := func(about string) *jsonschema.Schema {
		return &jsonschema.Schema{Types: []string{"string", "integer"}, Description: about}
	}
	entityInSchema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"id":    idOrNumber("the entity's GraphRAG id (from search_entities), or the number an answer cites it by (Entities (N))"),
		"title": {Type: "string", Description: "or its title, as GraphRAG wrote it (e.g. EBENEZER SCROOGE)"},
	}}
	type entityIn struct {
		ID    idArg  `json:"id"`
		Title string `json:"title"`
	}
	mcp.AddTool(m, &mcp.Tool{Name: "get_entity", Annotations: ro, InputSchema: entityInSchema,
		Description: "Read one entity by id, cited number or title: its description, degree, IRI in the store, relationships, the text units it comes from and the community reports it belongs to."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in entityIn) (*mcp.CallToolResult, *entityJSON, error) {
			g, done := s.pin()
			defer done()
			id := string(in.ID)
			if (id == "") == (in.Title == "") {
				return nil, nil, errors.New("give either id or title")
			}
			if id == "" {
				var err error
				if id, err = g.entityID(ctx, in.Title); err != nil {
					return nil, nil, toolError(err)
				}
				if id == "" {
					return nil, nil, fmt.Errorf("no entity titled %q (titles are as GraphRAG wrote them; try search_entities)", in.Title)
				}
			}
			e, err := entityByIDOrNumber(ctx, g, id)
			if err == nil && e == nil {
				err = fmt.Errorf("no entity with id or number %q", id)
			}
			return nil, e, toolError(err)
		})

	communityInSchema := &jsonschema.Schema{Type: "object", Required: []string{"community"}, Properties: map[string]*jsonschema.Schema{
		"community": idOrNumber("the community number (as cited: Reports (N))"),
	}}
	type communityIn struct {
		Community idArg `json:"community"`
	}
	mcp.AddTool(m, &mcp.Tool{Name: "get_community", Annotations: ro, InputSchema: communityInSchema,
		Description: "Read a community's report by its number: title, summary, full report, rank, level, parent and sub-communities."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in communityIn) (*mcp.CallToolResult, *communityJSON, error) {
			g, done := s.pin()
			defer done()
			r, ok := g.report(string(in.Community))
			if !ok {
				return nil, nil, fmt.Errorf("no community report numbered %q", string(in.Community))
			}
			c := communityOf(r, true)
			return nil, &c, nil
		})

	type contextIn struct {
		Question string `json:"question" jsonschema:"the question"`
		Mode     string `json:"mode,omitempty" jsonschema:"local (GraphRAG local search, the default), sparql-templates (also: seed), subgraph, graph-of-thoughts (its context: the subgraph's) or basic (the nearest text units)"`
	}
	type contextOut struct {
		Text    string         `json:"text"`
		Tokens  int            `json:"tokens"`
		Records answer.Records `json:"records"`
	}
	mcp.AddTool(m, &mcp.Tool{Name: "local_context", Annotations: ro,
		Description: "The context GraphRAG's local search builds for a question: tables of the nearest entities, their relationships, community reports and source text, with the ids an answer cites. No chat model is called; answer from it yourself."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in contextIn) (*mcp.CallToolResult, *contextOut, error) {
			name := in.Mode
			if name == "" {
				name = mode.Local
			}
			name, ok := modeOf(name)
			if m, _ := mode.Lookup(name); !ok || !m.ContextOnly && name != mode.Basic {
				return nil, nil, fmt.Errorf("mode %q: want a mode that builds one context: local, sparql-templates, subgraph, graph-of-thoughts or basic", in.Mode)
			}
			rep, err := s.toolAsk(ctx, in.Question, question{mode: name, contextOnly: true})
			if err != nil {
				return nil, nil, err
			}
			return nil, &contextOut{rep.Context.Text, rep.Context.Tokens, rep.Context.Records}, nil
		})

	type globalIn struct {
		Question string `json:"question" jsonschema:"a question about the whole corpus (its main themes, say)"`
	}
	type globalOut struct {
		Answer       string   `json:"answer"`
		CitedReports []string `json:"cited_reports"`
		LLMCalls     int      `json:"llm_calls"`
	}
	mcp.AddTool(m, &mcp.Tool{Name: "global_answer", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
		Description: "Answer a question about the whole corpus with GraphRAG's global search (map-reduce over the community reports, many model calls). The answer cites reports: read them with get_community."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in globalIn) (*mcp.CallToolResult, *globalOut, error) {
			rep, err := s.toolAsk(ctx, in.Question, question{mode: mode.Global})
			if err != nil {
				return nil, nil, err
			}
			return nil, &globalOut{deref(rep.Answer), rep.Global.Cited, rep.Global.LLMCalls}, nil
		})

	s.addAskTool(m)
	if g.Store != nil {
		s.addSPARQLTool(m, g, ro)
	}
	return m
}

// addAskTool offers every mode of the registry as one tool: the
// question answered in the mode chosen, as the ask --json record.
func (s *Server) addAskTool(m *mcp.Server) {
	var names, lines []string
	for _, md := range engine.Modes() {
		names = append(names, md.Name)
		lines = append(lines, md.Name+": "+md.About)
	}
	in := &jsonschema.Schema{Type: "object", Required: []string{"question"}, Properties: map[string]*jsonschema.Schema{
		"question":     {Type: "string", Description: "the question"},
		"mode":         {Type: "string", Enum: anys(names), Description: "the query mode (default local)"},
		"context_only": {Type: "boolean", Description: "build the context and stop: no chat model is called (the modes that build one context)"},
		"plan":         {Type: "boolean", Description: "say how many model calls and tokens the question would take, and stop (global and drift)"},
	}}
	type askIn struct {
		Question    string `json:"question"`
		Mode        string `json:"mode"`
		ContextOnly bool   `json:"context_only"`
		Plan        bool   `json:"plan"`
	}
	mcp.AddTool(m, &mcp.Tool{Name: "ask", InputSchema: in, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
		Description: "Answer a question from the graph in one of kgrag's query modes, as kgrag ask --json does: the answer, the context records it rests on, token counts and timings. The modes:\n" + strings.Join(lines, "\n")},
		func(ctx context.Context, _ *mcp.CallToolRequest, in askIn) (*mcp.CallToolResult, any, error) {
			name := in.Mode
			if name == "" {
				name = mode.Local
			}
			name, ok := modeOf(name)
			if !ok {
				return nil, nil, fmt.Errorf("mode %q: want %s", in.Mode, modeNames())
			}
			rep, err := s.toolAsk(ctx, in.Question, question{mode: name, contextOnly: in.ContextOnly, plan: in.Plan})
			if err != nil {
				return nil, nil, err
			}
			return nil, rep, nil
		})
}

// idArg is an id a tool takes as a JSON string or an integer.
type idArg string

func (a *idArg) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*a = idArg(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("want a string or an integer, not %s", b)
	}
	*a = idArg(n.String())
	return nil
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// addSPARQLTool offers read-only SPARQL over the store the graph is in.
func (s *Server) addSPARQLTool(m *mcp.Server, g *Graph, ro *mcp.ToolAnnotations) {
	type sparqlIn struct {
		Query string `json:"query" jsonschema:"a SPARQL 1.1 SELECT or ASK query"`
		Limit int    `json:"limit,omitempty" jsonschema:"most rows returned (default 100, at most 1000)"`
	}
	type term struct {
		Type     string `json:"type"`
		Value    string `json:"value"`
		Datatype string `json:"datatype,omitempty"`
		Lang     string `json:"xml:lang,omitempty"`
	}
	type sparqlOut struct {
		Vars      []string          `json:"vars"`
		Rows      []map[string]term `json:"rows"`
		Boolean   *bool             `json:"boolean,omitempty"`
		Truncated bool              `json:"truncated"`
	}
	mcp.AddTool(m, &mcp.Tool{Name: "sparql_select", Annotations: ro,
		Description: fmt.Sprintf("Run a read-only SPARQL SELECT or ASK query on the store. The graph is in the named graph <%s>, "+
			"in the gr: ontology (PREFIX gr: <http://ormynet.com/ns/msft-graphrag#>: gr:Entity, gr:Chunk, gr:Community, gr:title, gr:description, ...): "+
			"query it with GRAPH <%s> { ... }. Anything but SELECT and ASK is refused; rows are capped and queries time out after %s.",
			g.StoreGraph, g.StoreGraph, sparqlTimeout)},
		func(ctx context.Context, _ *mcp.CallToolRequest, in sparqlIn) (*mcp.CallToolResult, *sparqlOut, error) {
			form, err := sparqlq.QueryForm(in.Query)
			if err != nil {
				return nil, nil, err
			}
			if form != sparqlq.FormSelect && form != sparqlq.FormAsk {
				return nil, nil, fmt.Errorf("only SELECT and ASK queries are run here, not %s: the graph is read-only to this tool", form)
			}
			limit := in.Limit
			if limit == 0 {
				limit = defaultSPARQLRows
			}
			if limit < 1 || limit > maxSPARQLRows {
				return nil, nil, fmt.Errorf("limit %d: want 1 to %d", in.Limit, maxSPARQLRows)
			}
			ctx, cancel := context.WithTimeout(ctx, sparqlTimeout)
			defer cancel()
			g, done := s.pin()
			defer done()
			st := g.Store
			res, err := st.Read(ctx, in.Query, maxSPARQLBytes)
			if errors.Is(err, sparqlq.ErrTooLarge) {
				return nil, nil, fmt.Errorf("the answer is over %d MiB: add a LIMIT or select fewer variables", maxSPARQLBytes>>20)
			}
			if err != nil {
				return nil, nil, err
			}
			out := &sparqlOut{Vars: res.Vars, Rows: []map[string]term{}, Boolean: res.Boolean}
			if out.Vars == nil {
				out.Vars = []string{}
			}
			for i, b := range res.Bindings {
				if i == limit {
					out.Truncated = true
					break
				}
				row := make(map[string]term, len(b))
				for k, v := range b {
					row[k] = term{v.Type, v.Value, v.Datatype, v.Lang}
				}
				out.Rows = append(out.Rows, row)
			}
			return nil, out, nil
		})
}

// toolQuestion is a tool's question, trimmed, or why it is refused.
func (s *Server) toolQuestion(text string) (string, error) {
	q := strings.TrimSpace(text)
	if q == "" || len([]rune(q)) > s.cfg.MaxQuestionChars {
		return "", fmt.Errorf("the question must have 1 to %d characters", s.cfg.MaxQuestionChars)
	}
	return q, nil
}

// toolAsk answers q, whose text is text, for a tool: on the graph
// served now, within the request timeout, errors as an agent reads them.
func (s *Server) toolAsk(ctx context.Context, text string, q question) (*reply, error) {
	var err error
	if q.text, err = s.toolQuestion(text); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	rep, err := s.ask(ctx, q, nil)
	return rep, toolError(err)
}

// toolError is err as an agent reads it: the same words the HTTP API
// gives.
func toolError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errBusy):
		return errors.New("the server is busy answering other questions: retry in a second")
	case errors.Is(err, errBadQuestion), errors.Is(err, errNoIndex):
		return err
	}
	_, e := failure(err)
	return errors.New(e.Message)
}
