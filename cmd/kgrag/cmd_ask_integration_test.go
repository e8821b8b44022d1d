package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kgrag/kgrag/embedindex/location"
	"github.com/kgrag/kgrag/internal/embedtext"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/test"
)

// askQuestions are the questions both back ends answer: two entities'
// own texts (their entity comes first) and free questions.
func askQuestions(t *testing.T, f askFixture) []string {
	t.Helper()
	qs := []string{"Who is Scrooge's clerk?", "Where does Marley's ghost appear?"}
	for _, title := range []string{"EBENEZER SCROOGE", "FEZZIWIG"} {
		qs = append(qs, embedtext.Entity(f.entity(t, title)))
	}
	return qs
}

// askContext runs ask --context-only --json with opts and decodes it.
func askContext(t *testing.T, opts askOptions) askResult {
	t.Helper()
	opts.contextOnly, opts.json = true, true
	term, out, _ := testTerminal()
	if err := runAsk(t.Context(), opts, term); err != nil {
		t.Fatalf("ask %q: %v", opts.question, err)
	}
	return decodeAsk(t, out.Bytes())
}

// TestAskStoreMatchesInput loads the v3 sample into real stores with
// kgrag load and checks that ask --store selects the same context records,
// in the same order and with the same text, as ask --input.
func TestAskStoreMatchesInput(t *testing.T) {
	f := newAllTablesFixture(t) // the walk reads the text units' index too
	for _, st := range []struct{ profile, env string }{{"oxigraph", "OXIGRAPH"}, {"fuseki", "FUSEKI"}} {
		t.Run(st.profile, func(t *testing.T) {
			url := test.Service(t, st.env)
			graph := fmt.Sprintf("http://example.org/kgrag-ask-test/%s/%d", st.profile, rand.Uint32())
			args := []string{"load", "-q", "--input", f.input, "--store", url, "--store-type", st.profile, "--graph", graph}
			if st.profile == "oxigraph" {
				args = append(args, "--in-place") // Oxigraph's transactional MOVE is slow
			}
			if _, stderr, code := runKgrag(t, args...); code != 0 {
				t.Fatalf("kgrag load: exit %d: %s", code, stderr)
			}
			t.Cleanup(func() {
				c, _, err := storeClient(storeOptions{url: url, storeType: st.profile})
				if err == nil {
					err = c.Update(context.Background(), "DROP SILENT GRAPH <"+graph+">")
				}
				if err != nil {
					t.Logf("drop <%s>: %v", graph, err)
				}
			})

			for _, mode := range []string{modeLocal, modeSeed, modeSubgraph, modeWalk} {
				for _, q := range askQuestions(t, f) {
					memOpts := f.options(q)
					memOpts.mode = mode
					mem := askContext(t, memOpts)
					opts := memOpts
					opts.input = ""
					opts.store = storeOptions{url: url, graph: graph, storeType: st.profile, authScheme: "basic"} // as the flags default
					sto := askContext(t, opts)
					if d := cmp.Diff(mem.Context, sto.Context); d != "" {
						t.Errorf("%s %.40q: --store context differs from --input (-input +store):\n%s", mode, q, d)
					}
					if d := cmp.Diff(mem.Neighbours, sto.Neighbours); d != "" {
						t.Errorf("%s %.40q: neighbours differ (-input +store):\n%s", mode, q, d)
					}
					if sto.SPARQLRequests == nil || *sto.SPARQLRequests <= 0 {
						t.Errorf("%s %.40q: sparql_requests = %v; want a positive count", mode, q, sto.SPARQLRequests)
					} else {
						t.Logf("%s %.40q: %d entities, %d tokens, %d SPARQL requests, retrieval %.1f ms (memory %.1f ms)", mode,
							q, len(sto.Context.Records.Entities), sto.Context.Tokens, *sto.SPARQLRequests, sto.Timings["retrieval"], mem.Timings["retrieval"])
					}
				}
			}

			// Global search: the same batches, in one SPARQL request.
			for _, level := range []string{"0", "1", "2"} {
				args := []string{"ask", "--mode", "global", "--community-level", level, "--max-context-tokens", "3000",
					"--context-only", "--json", "What is it about?"}
				memOut, stderr, code := runKgrag(t, append(args, "--input", f.input)...)
				if code != 0 {
					t.Fatalf("ask --mode global --input: exit %d: %s", code, stderr)
				}
				stoOut, stderr, code := runKgrag(t, append(args, "--store", url, "--store-type", st.profile, "--graph", graph)...)
				if code != 0 {
					t.Fatalf("ask --mode global --store: exit %d: %s", code, stderr)
				}
				mem, sto := decodeAsk(t, []byte(memOut)), decodeAsk(t, []byte(stoOut))
				if mem.Global == nil || len(mem.Global.Batches) == 0 {
					t.Fatalf("level %s: no batches from --input", level)
				}
				if d := cmp.Diff(mem.Global, sto.Global); d != "" {
					t.Errorf("level %s: global batches differ (-input +store):\n%s", level, d)
				}
				if sto.SPARQLRequests == nil || *sto.SPARQLRequests != 1 {
					t.Errorf("level %s: sparql_requests = %v; want 1", level, sto.SPARQLRequests)
				}
			}

			// The whole command line, with an answer, as a user runs it.
			f.srv.Reply("clerk", "Bob Cratchit [Data: Entities (3)].")
			stdout, stderr, code := runKgrag(t, "ask", "--store", url, "--store-type", st.profile, "--graph", graph,
				"--index", f.index, "--llm-url", f.srv.URL(), "--chat-model", "test-chat", "Who is Scrooge's clerk?")
			if code != 0 || stdout != "Bob Cratchit [Data: Entities (3)].\n" {
				t.Errorf("kgrag ask --store: exit %d, stdout %q, stderr %q; want the scripted answer", code, stdout, stderr)
			}
		})
	}
}

// TestAskElasticsearch builds the index in a real Elasticsearch node with
// kgrag embed --index-url and checks that ask --index-url selects the same
// context as ask --index with the flat file of the same vectors.
func TestAskElasticsearch(t *testing.T) {
	f := newAskFixture(t)
	url := test.Service(t, "ELASTICSEARCH")
	alias := fmt.Sprintf("kgrag-ask-test-%d", rand.Uint32())
	// The cache folder cannot be made (a file stands in its way, as a
	// read-only --input would refuse it, even to root): the vectors still
	// go to Elasticsearch, with a warning.
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	eo := embedTestOptions(f.input, filepath.Join(blocker, "kgrag-index"), f.srv.URL(), askEmbedModel)
	eo.es = indexOptions{url: url, name: alias}
	term, _, errb := testTerminal()
	if err := runEmbed(t.Context(), eo, term); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"index " + url + " alias " + alias, "warning: ", "without a cache", "--index"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("embed --index-url: stderr %q; want it to contain %q", errb, want)
		}
	}
	t.Cleanup(func() { deleteAlias(t, url, alias) })

	for _, q := range askQuestions(t, f) {
		flatRun := askContext(t, f.options(q))
		opts := f.options(q)
		opts.index = indexOptions{url: url, name: alias}
		esRun := askContext(t, opts)
		if d := cmp.Diff(flatRun.Context.Records, esRun.Context.Records); d != "" {
			t.Errorf("%.40q: --index-url records differ from --index (-flat +elasticsearch):\n%s", q, d)
		}
	}

	// An alias that does not exist is named, with the flag to fix.
	opts := f.options("Who is Scrooge?")
	opts.index = indexOptions{url: url, name: alias + "-missing"}
	term, _, _ = testTerminal()
	err := runAsk(t.Context(), opts, term)
	if err == nil || !strings.Contains(err.Error(), alias+"-missing") || !strings.Contains(err.Error(), "--index-name") {
		t.Errorf("ask with a missing Elasticsearch index: %v; want an error naming it and --index-name", err)
	}
}

// deleteAlias deletes the indices behind an alias (Elasticsearch refuses
// wildcard deletes by default).
func deleteAlias(t *testing.T, url, alias string) {
	t.Helper()
	resp, err := http.Get(url + "/_alias/" + alias)
	if err != nil {
		t.Logf("list indices of %s: %v", alias, err)
		return
	}
	defer resp.Body.Close()
	var indices map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&indices); err != nil {
		t.Logf("list indices of %s: %v", alias, err)
		return
	}
	for name := range indices {
		req, _ := http.NewRequest(http.MethodDelete, url+"/"+name, nil)
		if resp, err := http.DefaultClient.Do(req); err != nil {
			t.Logf("delete %s: %v", name, err)
		} else {
			resp.Body.Close()
		}
	}
}

// TestAskTablesElasticsearch: kgrag embed --tables all --index-url puts
// the text units and reports in their own aliases beside the entities',
// and ask --mode basic and --mode drift over Elasticsearch select what
// they select over the flat files of the same vectors.
func TestAskTablesElasticsearch(t *testing.T) {
	f := newAskFixture(t)
	url := test.Service(t, "ELASTICSEARCH")
	alias := fmt.Sprintf("kgrag-tables-test-%d-entities", rand.Uint32())
	flatDir := t.TempDir()
	for _, es := range []indexOptions{{}, {url: url, name: alias}} {
		eo := embedTestOptions(f.input, flatDir, f.srv.URL(), askEmbedModel)
		eo.tables, eo.es = embedTables, es
		term, _, errb := testTerminal()
		if err := runEmbed(t.Context(), eo, term); err != nil {
			t.Fatal(err)
		}
		if es.url != "" {
			for _, table := range embedTables {
				a := location.Alias(alias, table)
				t.Cleanup(func() { deleteAlias(t, url, a) })
				if !strings.Contains(errb.String(), "alias "+a) {
					t.Errorf("embed --tables all --index-url: stderr %q names no alias %s", errb, a)
				}
			}
		}
	}
	if a := location.Alias(alias, tableTextUnits); !strings.HasSuffix(a, "-text_units") || strings.Contains(a, "entities") {
		t.Errorf("text units' alias %q; want the entities' with text_units for entities", a)
	}
	// Replies from the prompts' content alone, so that two runs meet the
	// same replies whatever order the calls come in.
	f.srv.Respond(func(r llmtest.Request) (string, bool) {
		first := r.Messages[0].Content
		switch {
		case strings.Contains(first, "---Reports---"):
			_, rest, _ := strings.Cut(first, "---Reports---\n\n")
			title, _, _ := strings.Cut(strings.TrimPrefix(rest, "# "), "\n")
			return fmt.Sprintf(`{"intermediate_answer": "From %s", "score": 50, "follow_up_queries": [%q]}`, title, "What is said about "+title+"?"), true
		case strings.Contains(first, "The larger question is"):
			return fmt.Sprintf(`{"response": "On %s", "score": 50, "follow_up_queries": [%q]}`, r.Messages[1].Content, "And then? "+r.Messages[1].Content), true
		}
		return "An answer.", true
	})
	run := func(mode string, idx indexOptions) *askResult {
		t.Helper()
		opts := f.options("How do the ghosts change Scrooge?")
		opts.mode, opts.index, opts.json = mode, idx, true
		opts.basic, opts.drift = newAskOptions().basic, newAskOptions().drift
		opts.global = newAskOptions().global
		opts.drift.Depth = 1
		if err := opts.index.resolve(opts.input); err != nil {
			t.Fatal(err)
		}
		term, out, _ := testTerminal()
		if err := runAsk(t.Context(), opts, term); err != nil {
			t.Fatalf("--mode %s: %v", mode, err)
		}
		return new(decodeAsk(t, out.Bytes()))
	}
	for _, mode := range []string{modeBasic, modeWalk, modeDrift} {
		flatRun, esRun := run(mode, indexOptions{path: flatDir}), run(mode, indexOptions{url: url, name: alias})
		if mode != modeDrift {
			if d := cmp.Diff(flatRun.Context.Records, esRun.Context.Records); d != "" || len(flatRun.Context.Records.Sources) == 0 {
				t.Errorf("%s: records differ (-flat +elasticsearch):\n%s", mode, d)
			}
			continue
		}
		if d := cmp.Diff(flatRun.Drift.Primed, esRun.Drift.Primed); d != "" || len(flatRun.Drift.Primed) != 20 {
			t.Errorf("drift: primed reports differ (-flat +elasticsearch):\n%s", d)
		}
		var fq, eq []string
		for i := range flatRun.Drift.Actions {
			fq = append(fq, flatRun.Drift.Actions[i].Query)
		}
		for i := range esRun.Drift.Actions {
			eq = append(eq, esRun.Drift.Actions[i].Query)
		}
		if d := cmp.Diff(fq, eq); d != "" {
			t.Errorf("drift: actions differ (-flat +elasticsearch):\n%s", d)
		}
	}
}
