package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kgrag/kgrag/internal/embedtext"
	"github.com/kgrag/kgrag/internal/test"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// runPy runs one of scripts/clients with the pinned SDKs and decodes its
// JSON output into out.
func runPy(t *testing.T, script string, out any, args ...string) {
	t.Helper()
	py := test.PyClients(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, append([]string{filepath.Join(test.RepoRoot(t), "scripts", "clients", script)}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("%s: output is not JSON: %v\n%.500s\n%s", script, err, stdout.String(), stderr.String())
	}
}

// annotation is an OpenAI url_citation annotation as the SDK dumps it.
type annotation struct {
	Type        string `json:"type"`
	URLCitation struct {
		URL        string `json:"url"`
		Title      string `json:"title"`
		StartIndex int    `json:"start_index"`
		EndIndex   int    `json:"end_index"`
	} `json:"url_citation"`
}

// TestServePythonOpenAI asks through PyPI openai, plain and streamed, and
// with a wrong model and a wrong key: what the library shows its users.
func TestServePythonOpenAI(t *testing.T) {
	f := newAskFixture(t)
	const key = "py-key-123"
	sf := startServe(t, f, func(o *serveOptions) { o.cfg.APIKey = key })
	type answerOut struct {
		Answer, Stream string
		StreamChunks   int `json:"stream_chunks"`
		Usage          *struct {
			TotalTokens int `json:"total_tokens"`
		}
		StreamUsage *struct {
			TotalTokens int `json:"total_tokens"`
		} `json:"stream_usage"`
		KGRAG       *serveReply  `json:"kgrag"`
		Annotations []annotation `json:"annotations"`
		StreamAnn   []annotation `json:"stream_annotations"`
		Error       *struct {
			Type    string
			Status  int
			Message string
		}
	}
	var out struct {
		Models      []string
		ModelsError *struct{ Type string } `json:"models_error"`
		Answers     []answerOut
	}
	q := "Who is Scrooge's clerk?"
	runPy(t, "openai_client.py", &out, "--base-url", sf.http.URL+"/v1", "--api-key", key, "--model", "kgrag-local", q)
	if !slices.Equal(out.Models, []string{"kgrag-local", "kgrag-global", "kgrag-sparql-templates", "kgrag-subgraph", "kgrag-graph-of-thoughts"}) {
		t.Errorf("models %q", out.Models)
	}
	a := out.Answers[0]
	want := "echo: " + q
	switch {
	case a.Error != nil:
		t.Fatalf("openai raised %+v", a.Error)
	case a.Answer != want || a.Stream != want:
		t.Errorf("answer %q, streamed %q; want %q", a.Answer, a.Stream, want)
	case a.StreamChunks < 4:
		t.Errorf("%d stream chunks; want the answer in pieces", a.StreamChunks)
	case a.Usage == nil || a.Usage.TotalTokens == 0 || a.StreamUsage == nil || a.StreamUsage.TotalTokens == 0:
		t.Errorf("usage %+v, stream usage %+v; want token counts", a.Usage, a.StreamUsage)
	case a.KGRAG == nil || a.KGRAG.Context == nil || len(a.KGRAG.Context.Records.Entities) == 0:
		t.Errorf("the kgrag field holds no context records: %+v", a.KGRAG)
	}

	// A cited record reaches the SDK as a url_citation annotation, plain
	// and streamed (in the last chunk's delta, where Open WebUI reads it).
	if a.KGRAG != nil && a.KGRAG.Context != nil && len(a.KGRAG.Context.Records.Entities) > 0 {
		e := a.KGRAG.Context.Records.Entities[0]
		f.srv.Reply("clerk", "The clerk [Data: Entities ("+e.ID+")].")
		runPy(t, "openai_client.py", &out, "--base-url", sf.http.URL+"/v1", "--api-key", key, "--model", "kgrag-local", q)
		a := out.Answers[0]
		wantURL := sf.http.URL + "/api/entities/" + e.EntityID
		for _, got := range [][]annotation{a.Annotations, a.StreamAnn} {
			if len(got) != 1 || got[0].Type != "url_citation" || got[0].URLCitation.URL != wantURL || got[0].URLCitation.Title != e.Title ||
				got[0].URLCitation.StartIndex != len("The clerk ") || got[0].URLCitation.EndIndex != len(a.Answer)-1 {
				t.Errorf("annotations %+v (plain) and %+v (streamed); want one url_citation of %s (%s) over the [Data: ...] of %q",
					a.Annotations, a.StreamAnn, wantURL, e.Title, a.Answer)
				break
			}
		}
	}

	runPy(t, "openai_client.py", &out, "--base-url", sf.http.URL+"/v1", "--api-key", key, "--model", "gpt-4o", q)
	if e := out.Answers[0].Error; e == nil || e.Type != "NotFoundError" || e.Status != 404 || !strings.Contains(e.Message, "kgrag-local") {
		t.Errorf("unknown model: openai raised %+v; want NotFoundError 404 naming the models", e)
	}
	runPy(t, "openai_client.py", &out, "--base-url", sf.http.URL+"/v1", "--api-key", "wrong", "--model", "kgrag-local", q)
	if e := out.Answers[0].Error; e == nil || e.Type != "AuthenticationError" || e.Status != 401 {
		t.Errorf("wrong key: openai raised %+v; want AuthenticationError 401", e)
	}
}

// mcpCall is one tool call of scripts/clients/mcp_client.py.
type mcpCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

type mcpOut struct {
	Server struct{ Name, Version string }
	Tools  []struct {
		Name     string
		ReadOnly bool `json:"read_only"`
	}
	Calls []struct {
		Name       string
		IsError    bool `json:"is_error"`
		Structured map[string]any
		Text       string
	}
}

func writeCalls(t *testing.T, calls []mcpCall) string {
	t.Helper()
	b, err := json.Marshal(calls)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "calls.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkTools checks that every tool is listed, read-only, and that each
// call came back as want says (error or not, and a word its text holds).
func checkTools(t *testing.T, out mcpOut, tools []string, want []struct {
	isError bool
	holds   string
}) {
	t.Helper()
	var names []string
	for _, tl := range out.Tools {
		names = append(names, tl.Name)
		if !tl.ReadOnly {
			t.Errorf("tool %s is not marked read-only", tl.Name)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, tools) {
		t.Errorf("tools %q; want %q", names, tools)
	}
	if out.Server.Name != "kgrag" {
		t.Errorf("server %q; want kgrag", out.Server.Name)
	}
	for i, c := range out.Calls {
		if c.IsError != want[i].isError || !strings.Contains(c.Text, want[i].holds) {
			t.Errorf("call %d %s: error %v, text %.200q; want error %v holding %q", i, c.Name, c.IsError, c.Text, want[i].isError, want[i].holds)
		}
	}
}

// TestServeMCPHTTP lists and calls every tool with PyPI mcp over
// streamable HTTP, against a graph in Oxigraph so that sparql_select is
// there: reads work, an update is refused and changes nothing.
func TestServeMCPHTTP(t *testing.T) {
	f := newAskFixture(t)
	st := loadOxigraph(t, f)
	graph := st.graph
	c, _, err := storeClient(st)
	if err != nil {
		t.Fatal(err)
	}
	const key = "mcp-key-456"
	sf := startServe(t, f, func(o *serveOptions) { o.ask.input, o.ask.store, o.cfg.APIKey = "", st, key })
	e := f.entity(t, "EBENEZER SCROOGE")
	count := fmt.Sprintf("SELECT (COUNT(*) AS ?n) WHERE { GRAPH <%s> { ?s ?p ?o } }", graph)
	calls := []mcpCall{
		{"search_entities", map[string]any{"query": embedtext.Entity(e), "k": 3}},
		{"get_entity", map[string]any{"title": e.Title}},
		{"get_entity", map[string]any{"title": "NO SUCH ENTITY"}},
		{"get_community", map[string]any{"community": "0"}},
		{"local_context", map[string]any{"question": "Who is Scrooge's clerk?"}},
		{"global_answer", map[string]any{"question": "What are the main themes?"}},
		{"sparql_select", map[string]any{"query": count}},
		{"sparql_select", map[string]any{"query": fmt.Sprintf("PREFIX gr: <http://ormynet.com/ns/msft-graphrag#> SELECT ?t WHERE { GRAPH <%s> { ?e a gr:Entity ; gr:title ?t } }", graph), "limit": 5}},
		{"sparql_select", map[string]any{"query": fmt.Sprintf("INSERT DATA { GRAPH <%s> { <urn:x> <urn:y> <urn:z> } }", graph)}},
		{"sparql_select", map[string]any{"query": fmt.Sprintf("# SELECT\nDROP GRAPH <%s>", graph)}},
		{"sparql_select", map[string]any{"query": count}},
		// Numbers as an agent copies them from a citation, JSON numbers.
		{"get_entity", map[string]any{"id": number(t, e.HumanReadableID)}},
		{"get_community", map[string]any{"community": 0}},
	}
	var out mcpOut
	runPy(t, "mcp_client.py", &out, "--http", sf.http.URL+"/mcp", "--api-key", key, writeCalls(t, calls))
	type w = struct {
		isError bool
		holds   string
	}
	checkTools(t, out, []string{"ask", "get_community", "get_entity", "global_answer", "local_context", "search_entities", "sparql_select"}, []w{
		{false, e.Title}, {false, e.ID}, {true, "no entity titled"}, {false, "title"}, {false, "-----Entities-----"},
		{false, "answer"}, {false, `"n"`}, {false, `"truncated":true`}, {true, "only SELECT and ASK"}, {true, "not DROP"}, {false, `"n"`},
		{false, e.ID}, {false, "title"},
	})
	if len(out.Calls) == len(calls) {
		before, after := out.Calls[6].Structured, out.Calls[10].Structured
		if fmt.Sprint(before["rows"]) != fmt.Sprint(after["rows"]) {
			t.Errorf("the triple count changed from %v to %v: a refused update reached the store", before["rows"], after["rows"])
		}
		if rows, _ := out.Calls[7].Structured["rows"].([]any); len(rows) != 5 {
			t.Errorf("limit 5 gave %d rows", len(rows))
		}
	}
	ok, err := c.Ask(t.Context(), fmt.Sprintf("ASK { GRAPH <%s> { <urn:x> <urn:y> <urn:z> } }", graph))
	if err != nil || ok {
		t.Errorf("the refused INSERT is in the store (%v, %v)", ok, err)
	}
	// Without the key, the MCP endpoint is closed too.
	var e2 errorReply
	if code, _ := sf.post(t, "/mcp", "", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, &e2); code != 401 {
		t.Errorf("POST /mcp without a key: %d; want 401", code)
	}
}

// TestMCPStdio runs kgrag mcp as a process, started by PyPI mcp's stdio
// client, and by the Go SDK's client: a real session each.
func TestMCPStdio(t *testing.T) {
	f := newAskFixture(t)
	args := []string{"mcp", "--input", f.input, "--index", f.index, "--llm-url", f.srv.URL(), "--embed-model", askEmbedModel, "--chat-model", "test-chat"}
	e := f.entity(t, "FEZZIWIG")
	calls := []mcpCall{
		{"get_entity", map[string]any{"id": e.ID}},
		{"local_context", map[string]any{"question": embedtext.Entity(e), "mode": "seed"}},
		{"ask", map[string]any{"question": embedtext.Entity(e), "mode": "subgraph", "context_only": true}},
		{"ask", map[string]any{"question": "Who?", "mode": "deep"}},
		{"get_entity", map[string]any{"id": number(t, e.HumanReadableID)}},
		{"get_entity", map[string]any{"id": "99999"}},
		{"get_community", map[string]any{"community": 0}},
	}
	var out mcpOut
	runPy(t, "mcp_client.py", &out, append([]string{"--stdio", "--env", "KGRAG_TEST_RUN_MAIN=1", "--env", "PATH=" + os.Getenv("PATH"),
		writeCalls(t, calls), "--", os.Args[0]}, args...)...)
	type w = struct {
		isError bool
		holds   string
	}
	checkTools(t, out, []string{"ask", "get_community", "get_entity", "global_answer", "local_context", "search_entities"},
		[]w{{false, e.Title}, {false, e.Title}, {false, `"mode":"subgraph"`}, {true, "deep does not equal any of"},
			{false, e.ID}, {true, `no entity with id or number "99999"`}, {false, "title"}})

	// The Go SDK's own client, over the same command.
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "KGRAG_TEST_RUN_MAIN=1")
	client := mcp.NewClient(&mcp.Implementation{Name: "kgrag-test"}, nil)
	s, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: "search_entities", Arguments: map[string]any{"query": embedtext.Entity(e), "k": 1}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if res.IsError || !strings.Contains(string(b), e.ID) {
		t.Errorf("search_entities over the Go SDK: error %v, %s; want %s first", res.IsError, b, e.ID)
	}
}

// number is an entity's human-readable id as the JSON number a citation
// gives an agent.
func number(t *testing.T, id string) int {
	t.Helper()
	n, err := strconv.Atoi(id)
	if err != nil {
		t.Fatalf("human_readable_id %q: %v", id, err)
	}
	return n
}
