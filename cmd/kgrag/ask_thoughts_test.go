package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kgrag/kgrag/internal/embedtext"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/thoughtgraph"
)

// thoughtsReply is a small model's graph reply: thinking, a code fence,
// a trailing comma, and cut by max_tokens in the middle of an edge.
const thoughtsReply = "<think>The clerk is Bob.</think>\n```json\n" +
	`{"nodes": [{"name": "EBENEZER SCROOGE", "type": "person", "description": "A miser, owner of the counting-house."},
   {"name": "Bob Cratchit", "type": "person", "description": "Scrooge's clerk, poorly paid."},],
 "edges": [{"source": "Ebenezer Scrooge", "target": "BOB CRATCHIT", "description": "Scrooge employs Bob as his clerk.", "strength": 9},
   {"source": "EBENEZER SCROOGE", "target": "MARLEY", "descr`

// TestAskGraphOfThoughts runs --mode graph-of-thoughts through runAsk
// against the scripted model: the first call carries the subgraph
// context and the question set, the graph is read from a malformed
// reply, the second call carries that graph (and not the context), and
// --json shows the graph built beside the answer.
func TestAskGraphOfThoughts(t *testing.T) {
	f := newAskFixture(t)
	e := f.entity(t, "EBENEZER SCROOGE")
	opts := f.options(embedtext.Entity(e))
	opts.mode, opts.json = modeThoughts, true
	opts.subQuestions = []string{"Whom does Scrooge employ?"}
	opts.subgraph = subgraphParams(opts.params, false, false)
	const answer = "Scrooge employs Bob Cratchit as his clerk."
	f.srv.Enqueue(thoughtsReply, answer)
	term, out, _ := testTerminal()
	if err := runAsk(t.Context(), opts, term); err != nil {
		t.Fatal(err)
	}
	var r struct {
		askResult
		Graph struct {
			Questions []string            `json:"questions"`
			Nodes     []thoughtgraph.Node `json:"nodes"`
			Edges     []thoughtgraph.Edge `json:"edges"`
			Repairs   []string            `json:"repairs"`
		} `json:"graph_of_thoughts"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if r.Mode != modeThoughts || r.Answer == nil || *r.Answer != answer {
		t.Errorf("mode %q, answer %v; want %s and %q", r.Mode, r.Answer, modeThoughts, answer)
	}
	if len(r.Neighbours) != 12 {
		t.Errorf("%d neighbours; want the article's 12", len(r.Neighbours))
	}
	wantNodes := []thoughtgraph.Node{
		{Name: "EBENEZER SCROOGE", Type: "person", Description: "A miser, owner of the counting-house."},
		{Name: "Bob Cratchit", Type: "person", Description: "Scrooge's clerk, poorly paid."},
	}
	wantEdges := []thoughtgraph.Edge{{Source: "EBENEZER SCROOGE", Target: "Bob Cratchit", Description: "Scrooge employs Bob as his clerk.", Strength: 9}}
	if diff := cmp.Diff(wantNodes, r.Graph.Nodes); diff != "" {
		t.Errorf("graph nodes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantEdges, r.Graph.Edges); diff != "" {
		t.Errorf("graph edges (-want +got):\n%s", diff)
	}
	if want := []string{opts.question, "Whom does Scrooge employ?"}; !cmp.Equal(want, r.Graph.Questions) {
		t.Errorf("question set %q; want %q", r.Graph.Questions, want)
	}
	for _, fix := range []string{"code-fence", "trailing-comma", "truncated"} {
		if !strings.Contains(strings.Join(r.Graph.Repairs, ","), fix) {
			t.Errorf("repairs %v lack %s", r.Graph.Repairs, fix)
		}
	}

	var chats []llmtest.Request
	for _, req := range f.srv.Requests() {
		if strings.HasSuffix(req.Path, "/chat/completions") {
			chats = append(chats, req)
		}
	}
	if len(chats) != 2 {
		t.Fatalf("%d chat calls; want 2 (build the graph, answer from it)", len(chats))
	}
	first, second := chats[0].Messages, chats[1].Messages
	if r.Context == nil || r.Context.Text == "" {
		t.Fatal("no context in the JSON")
	}
	for _, want := range []string{r.Context.Text, "1. " + opts.question, "2. Whom does Scrooge employ?", `"nodes"`} {
		if !strings.Contains(first[0].Content, want) {
			t.Errorf("first call's system prompt lacks %.80q", want)
		}
	}
	for _, want := range []string{"- EBENEZER SCROOGE (person): A miser", "- EBENEZER SCROOGE -> Bob Cratchit (strength 9): Scrooge employs Bob", "2. Whom does Scrooge employ?"} {
		if !strings.Contains(second[0].Content, want) {
			t.Errorf("second call's system prompt lacks %q:\n%s", want, second[0].Content)
		}
	}
	if strings.Contains(second[0].Content, "-----Sources-----") || strings.Contains(second[0].Content, "MARLEY") {
		t.Errorf("second call's system prompt holds the context or the cut edge:\n%s", second[0].Content)
	}
	if last := second[len(second)-1]; last.Role != "user" || last.Content != opts.question {
		t.Errorf("second call's user message %+v; want the question", last)
	}
}

// TestAskGraphOfThoughtsFailures: a model that cannot be reached at
// either call is "model down" (exit 11), one that answers with an error
// status exit 1, as elsewhere, with the step named; a reply without a
// graph is an error saying so (exit 1); no answer is printed.
func TestAskGraphOfThoughtsFailures(t *testing.T) {
	f := newAskFixture(t)
	e := f.entity(t, "EBENEZER SCROOGE")
	tests := []struct {
		name  string
		setup func(srv *llmtest.Server)
		code  int
		want  []string
		calls int
	}{
		{"model down at the first call", func(srv *llmtest.Server) {
			srv.Fail(llmtest.Failure{Path: "/chat/completions", Drop: true})
		}, exitModelDown, []string{"graph of thoughts: build the graph"}, 1},
		{"model fails at the first call", func(srv *llmtest.Server) {
			srv.Fail(llmtest.Failure{Path: "/chat/completions", Status: 500})
		}, exitModelDown, []string{"graph of thoughts: build the graph", "500"}, 1},
		{"model down at the second call", func(srv *llmtest.Server) {
			srv.Respond(func(req llmtest.Request) (string, bool) {
				srv.Fail(llmtest.Failure{Path: "/chat/completions", Drop: true})
				return `{"nodes": [{"name": "SCROOGE"}], "edges": []}`, true
			})
		}, exitModelDown, []string{"ask: answer"}, 2},
		{"model unavailable (503) at the second call", func(srv *llmtest.Server) {
			srv.Respond(func(req llmtest.Request) (string, bool) {
				srv.Fail(llmtest.Failure{Path: "/chat/completions", Status: 503})
				return `{"nodes": [{"name": "SCROOGE"}], "edges": []}`, true
			})
		}, exitModelDown, []string{"ask: answer", "503", "not available"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.srv.Reset()
			f.srv.Respond(nil)
			tt.setup(f.srv)
			opts := f.options(embedtext.Entity(e))
			opts.mode = modeThoughts
			opts.subgraph = subgraphParams(opts.params, false, false)
			opts.llm.retries = 0
			term, out, _ := testTerminal()
			err := runAsk(t.Context(), opts, term)
			if code := exitCode(t.Context(), err); code != tt.code {
				t.Errorf("exit %d (%v); want %d", code, err, tt.code)
			}
			for _, w := range tt.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("error %v lacks %q", err, w)
				}
			}
			if n := f.srv.Count("/chat/completions"); n != tt.calls {
				t.Errorf("%d chat calls; want %d", n, tt.calls)
			}
			if out.Len() != 0 {
				t.Errorf("stdout %q; want nothing", out)
			}
		})
	}
}

// TestAskGraphOfThoughtsDegrades: a first reply that holds no graph (an
// empty one, or prose) is no failure: the answer comes from the subgraph
// context, in a second call with local search's answer prompt, and
// stderr and the record say so.
func TestAskGraphOfThoughtsDegrades(t *testing.T) {
	f := newAskFixture(t)
	e := f.ds.Entities[0]
	for _, tt := range []struct{ name, reply, why string }{
		{"empty graph", `{"nodes": [], "edges": []}`, "no nodes"},
		{"prose", "I am sorry, I cannot do that.", "no JSON"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f.srv.Reset()
			f.srv.Respond(nil)
			f.srv.Enqueue(tt.reply, "the answer from the context")
			opts := f.options(embedtext.Entity(e))
			opts.mode = modeThoughts
			opts.subgraph = subgraphParams(opts.params, false, false)
			opts.json = true
			term, out, errOut := testTerminal()
			if err := runAsk(t.Context(), opts, term); err != nil {
				t.Fatalf("runAsk: %v", err)
			}
			var res askResult
			if err := json.Unmarshal(out.Bytes(), &res); err != nil {
				t.Fatalf("%v in %q", err, out)
			}
			if res.Answer == nil || *res.Answer != "the answer from the context" || len(res.Degraded) != 1 ||
				!strings.Contains(res.Degraded[0], "held no graph") || !strings.Contains(res.Degraded[0], tt.why) ||
				!strings.Contains(res.Degraded[0], "answered from the subgraph context") {
				t.Errorf("answer %v, degraded %q; want the second reply, and a note naming %q", res.Answer, res.Degraded, tt.why)
			}
			if !strings.Contains(errOut.String(), "kgrag: degraded: graph of thoughts: ") {
				t.Errorf("stderr %q lacks the degraded note", errOut)
			}
			var reqs []llmtest.Request
			for _, r := range f.srv.Requests() {
				if strings.HasSuffix(r.Path, "/chat/completions") {
					reqs = append(reqs, r)
				}
			}
			if len(reqs) != 2 {
				t.Fatalf("%d chat calls; want 2", len(reqs))
			}
			sys := reqs[1].Messages[0].Content
			if want := res.Context.Text; !strings.Contains(sys, want) || strings.Contains(sys, "---End of knowledge graph---") {
				t.Errorf("the answer call's system prompt does not hold the subgraph context")
			}
		})
	}
}

// TestAskSeedAlias: "seed", sparql-templates' first name, still chooses
// it from the flag, KGRAG_ASK_MODE and the config file, and the record
// names the mode by its new name.
func TestAskSeedAlias(t *testing.T) {
	f := newAskFixture(t)
	cfg := filepath.Join(t.TempDir(), "kgrag.yaml")
	if err := os.WriteFile(cfg, []byte("ask:\n  mode: seed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"ask", "-q", "--input", f.input, "--index", f.index, "--llm-url", f.srv.URL(), "--embed-model", askEmbedModel,
		"--context-only", "--json"}
	for _, tt := range []struct {
		name string
		args []string
		env  string
	}{
		{"flag", append(slices.Clone(base), "--mode", "seed", "Who is Scrooge?"), ""},
		{"env", append(slices.Clone(base), "Who is Scrooge?"), "seed"},
		{"config", append(slices.Clone(base), "--config", cfg, "Who is Scrooge?"), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("KGRAG_ASK_MODE", tt.env) // restored after the test
			if tt.env == "" {
				os.Unsetenv("KGRAG_ASK_MODE")
			}
			out, stderr, code := runKgrag(t, tt.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			r := decodeAsk(t, []byte(out))
			if r.Mode != modeSPARQL || len(r.Neighbours) != 10 {
				t.Errorf("mode %q, %d neighbours; want %s and the 10 nearest as they come", r.Mode, len(r.Neighbours), modeSPARQL)
			}
		})
	}
}
