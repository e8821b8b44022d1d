package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kgrag/kgrag/internal/embedtext"
	"github.com/kgrag/kgrag/internal/test"
)

// appClients is the folder scripts/clients.sh installed the third-party
// clients into.
func appClients(t *testing.T) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(test.RepoRoot(t), "scripts", "clients.sh"), "--check").Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		test.SkipOrFail(t, "the client programs are not installed: run scripts/clients.sh (%v)", err)
	}
	return dir
}

// runApp runs a client program with a timeout and keeps what it printed
// in the transcript.
func runApp(t *testing.T, transcript *bytes.Buffer, env []string, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	fmt.Fprintf(transcript, "$ %s %s\n%s", filepath.Base(name), strings.Join(args, " "), out.String())
	if errb.Len() > 0 {
		fmt.Fprintf(transcript, "[stderr]\n%s", errb.String())
	}
	fmt.Fprintf(transcript, "[exit: %v]\n\n", err)
	if err != nil {
		return out.String(), fmt.Errorf("%s: %w: %s", filepath.Base(name), err, errb.String())
	}
	return out.String(), nil
}

// TestServeApps drives kgrag serve with programs nobody here wrote, as
// their users would: LangChain's ChatOpenAI and LlamaIndex's OpenAILike
// (streamed and not), the llm command with kgrag as an extra OpenAI model,
// and the MCP Inspector's command line over streamable HTTP and stdio.
// Each gets kgrag's own answer or tools; the transcripts are kept in
// .cache/artifacts/serve-apps.
func TestServeApps(t *testing.T) {
	dir := appClients(t)
	f := newAskFixture(t)
	const answer = "Bob Cratchit is Scrooge's clerk [Data: Entities (3)]."
	f.srv.Reply("clerk", answer)
	args := []string{"--input", f.input, "--index", f.index, "--llm-url", f.srv.URL(), "--embed-model", askEmbedModel, "--chat-model", "test-chat"}
	p := startServeProc(t, args...)
	for deadline := time.Now().Add(30 * time.Second); p.version() != 1; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("kgrag serve is not ready within 30 s:\n%s", p.out)
		}
	}
	base := "http://" + p.addr + "/v1"
	const question = "Who is Scrooge's clerk?"
	artifacts := test.Artifacts(t, "serve-apps")
	var transcript bytes.Buffer
	defer func() {
		if err := os.WriteFile(filepath.Join(artifacts, "transcript.txt"), transcript.Bytes(), 0o644); err != nil {
			t.Error(err)
		}
	}()

	t.Run("frameworks", func(t *testing.T) {
		var out string
		for _, client := range []string{"langchain", "llamaindex"} {
			o, err := runApp(t, &transcript, nil, filepath.Join(dir, client, "bin", "python"),
				filepath.Join(test.RepoRoot(t), "scripts", "clients", "frameworks.py"), "--client", client, "--base-url", base, question)
			if err != nil {
				t.Fatal(err)
			}
			out += o
		}
		seen := map[string]bool{}
		for line := range strings.Lines(out) {
			var r struct {
				Client, Version, Answer, Error string
				Stream                         bool
				Chunks                         int
			}
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("frameworks.py printed %q: %v", line, err)
			}
			key := fmt.Sprintf("%s stream=%v", r.Client, r.Stream)
			seen[key] = true
			switch {
			case r.Error != "":
				t.Errorf("%s (%s): %s", key, r.Version, r.Error)
			case r.Answer != answer:
				t.Errorf("%s (%s): answer %q; want kgrag's %q", key, r.Version, r.Answer, answer)
			case r.Stream && r.Chunks < 1:
				t.Errorf("%s: no streamed piece", key)
			default:
				t.Logf("%s (%s): %q in %d pieces", key, r.Version, r.Answer, r.Chunks)
			}
		}
		for _, k := range []string{"langchain stream=false", "langchain stream=true", "llamaindex stream=false", "llamaindex stream=true"} {
			if !seen[k] {
				t.Errorf("no result from %s", k)
			}
		}
	})

	t.Run("llm", func(t *testing.T) {
		// llm reads extra OpenAI-compatible models from its user folder.
		home := t.TempDir()
		yaml := fmt.Sprintf("- model_id: kgrag\n  model_name: kgrag-local\n  api_base: %q\n", base)
		if err := os.WriteFile(filepath.Join(home, "extra-openai-models.yaml"), []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		env := []string{"LLM_USER_PATH=" + home, "OPENAI_API_KEY=unused"}
		for _, extra := range [][]string{nil, {"--no-stream"}} {
			out, err := runApp(t, &transcript, env, filepath.Join(dir, "llm", "bin", "llm"), append(append([]string{"-m", "kgrag"}, extra...), question)...)
			if err != nil {
				t.Fatal(err)
			}
			if strings.TrimSpace(out) != answer {
				t.Errorf("llm -m kgrag %v: %q; want kgrag's %q", extra, out, answer)
			}
		}
		// llm logs each exchange: the answer is there, with the model.
		out, err := runApp(t, &transcript, env, filepath.Join(dir, "llm", "bin", "llm"), "logs", "-n", "1", "--json")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, `"model": "kgrag-local"`) && !strings.Contains(out, `"model": "kgrag"`) || !strings.Contains(out, "Bob Cratchit") {
			t.Errorf("llm logs: %s; want the exchange with kgrag", out)
		}
	})

	t.Run("mcp-inspector", func(t *testing.T) {
		inspector := filepath.Join(dir, "node_modules", ".bin", "mcp-inspector")
		e := f.entity(t, "EBENEZER SCROOGE")
		http := []string{"--cli", "http://" + p.addr + "/mcp", "--transport", "http"}
		stdio := append([]string{"--cli", "-e", "KGRAG_TEST_RUN_MAIN=1", os.Args[0], "mcp"}, args...)
		for _, tr := range []struct {
			name string
			args []string
		}{{"streamable HTTP", http}, {"stdio", stdio}} {
			out, err := runApp(t, &transcript, nil, inspector, append(tr.args, "--method", "tools/list")...)
			if err != nil {
				t.Fatalf("%s: %v", tr.name, err)
			}
			for _, tool := range []string{"search_entities", "get_entity", "local_context", "ask"} {
				if !strings.Contains(out, `"`+tool+`"`) {
					t.Errorf("%s tools/list: no %s in %s", tr.name, tool, out)
				}
			}
			out, err = runApp(t, &transcript, nil, inspector, append(tr.args, "--method", "tools/call", "--tool-name", "search_entities",
				"--tool-arg", "query="+embedtext.Entity(e), "--tool-arg", "k=1")...)
			if err != nil {
				t.Fatalf("%s: %v", tr.name, err)
			}
			if !strings.Contains(out, e.ID) || strings.Contains(out, `"isError": true`) {
				t.Errorf("%s tools/call search_entities: %s; want %s (%s) first", tr.name, out, e.ID, e.Title)
			}
		}
	})
}
