package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kgrag/kgrag/internal/indexer/indexertest"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/test"
)

// Distinctive secrets for the sweep: none may appear in anything kgrag
// prints, in any form a server could echo them in.
const (
	sweepLLMKey     = "sk-SWEEP-llm-7f3a9c21"
	sweepStorePass  = "pw-SWEEP-store-41d2"
	sweepStoreToken = "tok-SWEEP-store-88aa"
	sweepURLPass    = "pw-SWEEP-url-09bc"
	sweepURLQuery   = "q-SWEEP-query-55e1"
	sweepLLMQuery   = "q-SWEEP-llm-66f0"
	sweepESKey      = "es-SWEEP-apikey-12ef"
	sweepESPass     = "pw-SWEEP-es-77ab"
	sweepFilePass   = "pw-SWEEP-file-3c3c"
)

// sweepForms are the secrets as written and as HTTP basic authentication
// sends them.
func sweepForms() []string {
	b := func(u, p string) string { return base64.StdEncoding.EncodeToString([]byte(u + ":" + p)) }
	return []string{sweepLLMKey, sweepStorePass, sweepStoreToken, sweepURLPass, sweepURLQuery, sweepLLMQuery, sweepESKey,
		sweepESPass, sweepFilePass, b("kgrag", sweepStorePass), b("sweeper", sweepURLPass), b("elastic", sweepESPass), b("kgrag", sweepFilePass)}
}

// echoServer fails every request with a body that repeats the request:
// method, URL with its query, every header (Authorization included) and
// the start of the body, as a misconfigured proxy or a debug build of a
// store does. It claims to be Elasticsearch, so that the Elasticsearch
// client talks to it too.
func echoServer(t *testing.T, hits *atomic.Int64) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s\n", r.Method, r.URL.String())
		r.Header.Write(&b)
		body, _ := io.ReadAll(io.LimitReader(r.Body, 256))
		b.Write(body)
		w.Header().Set("X-Elastic-Product", "Elasticsearch")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
			"message": "echo: " + b.String(), "type": "echo", "reason": "echo: " + b.String()}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestSecretsSweep sets distinctive secrets everywhere they can be given
// (flags, variables, a secret file, a URL's user information and query),
// runs every command into the failures a user meets (a server that echoes
// the request, headers and all; one that is down; --help; doctor
// --show-config) and looks for the secrets, in every form, in all that was
// printed.
func TestSecretsSweep(t *testing.T) {
	var hits atomic.Int64
	echo := echoServer(t, &hits)
	config := filepath.Join(t.TempDir(), "kgrag.yaml") // an empty one: no user file is read
	if err := os.WriteFile(config, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(echo.URL, "http://")
	storeURL := "http://sweeper:" + sweepURLPass + "@" + host + "/ds?key=" + sweepURLQuery
	llmURL := echo.URL + "/v1?api_key=" + sweepLLMQuery
	passFile := filepath.Join(t.TempDir(), "store-password")
	if err := os.WriteFile(passFile, []byte(sweepFilePass+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	input := filepath.Join(test.GraphRAGSamples(t), "v3")
	env := []string{
		"KGRAG_LLM_KEY=" + sweepLLMKey,
		"KGRAG_STORE_USER=kgrag", "KGRAG_STORE_PASSWORD=" + sweepStorePass,
		"KGRAG_INDEX_API_KEY=" + sweepESKey,
	}
	// An index built with a working server, so that ask gets as far as
	// the echo server.
	index := t.TempDir()
	good := llmtest.Start(t, llmtest.Config{Dim: askDim})
	if err := runEmbed(t.Context(), embedTestOptions(input, index, good.URL(), askEmbedModel), terminal{out: io.Discard, err: io.Discard}); err != nil {
		t.Fatal(err)
	}
	runs := []struct {
		name string
		env  []string
		args []string
	}{
		{"load echo", env, []string{"load", "--input", input, "--store", storeURL, "--graph", "http://example.org/g", "--store-type", "fuseki", "--store-retries", "0"}},
		{"load echo token", nil, []string{"load", "--input", input, "--store", storeURL, "--graph", "http://example.org/g", "--store-type", "fuseki", "--token", sweepStoreToken, "--store-retries", "0"}},
		{"load echo password flag", nil, []string{"load", "--input", input, "--store", storeURL, "--graph", "http://example.org/g", "--store-type", "fuseki", "--user", "kgrag", "--password", sweepStorePass, "--store-retries", "0"}},
		{"load echo password file", []string{"KGRAG_STORE_USER=kgrag", "KGRAG_STORE_PASSWORD_FILE=" + passFile}, []string{"load", "--input", input, "--store", storeURL, "--graph", "http://example.org/g", "--store-type", "fuseki", "--store-retries", "0"}},
		{"load store down", env, []string{"load", "--input", input, "--store", "http://sweeper:" + sweepURLPass + "@127.0.0.1:1/ds?key=" + sweepURLQuery, "--graph", "http://example.org/g", "--store-type", "fuseki", "--store-retries", "0"}},
		{"embed echo", env, []string{"embed", "--input", input, "--index", t.TempDir(), "--llm-url", llmURL, "--llm-retries", "0"}},
		{"embed elasticsearch echo", env, []string{"embed", "--input", input, "--index", t.TempDir(), "--llm-url", llmURL, "--index-url", "http://elastic:" + sweepESPass + "@" + host, "--llm-retries", "0"}},
		{"embed elasticsearch password", nil, []string{"embed", "--input", input, "--index", t.TempDir(), "--llm-url", llmURL, "--index-url", echo.URL, "--index-user", "elastic", "--index-password", sweepESPass, "--llm-retries", "0"}},
		{"ask echo", env, []string{"ask", "--input", input, "--index", index, "--embed-model", askEmbedModel, "--llm-url", llmURL, "--llm-retries", "0", "Who is Scrooge?"}},
		{"ask echo json", env, []string{"ask", "--json", "--input", input, "--index", index, "--embed-model", askEmbedModel, "--llm-url", llmURL, "--llm-retries", "0", "Who is Scrooge?"}},
		{"ask store echo", env, []string{"ask", "--store", storeURL, "--graph", "http://example.org/g", "--store-type", "fuseki", "--index", index, "--embed-model", askEmbedModel, "--llm-url", llmURL, "Who is Scrooge?"}},
		{"ask global echo", env, []string{"ask", "--mode", "global", "--input", input, "--llm-url", llmURL, "--llm-retries", "0", "What is it about?"}},
		{"index echo", env, []string{"index", "--input", indexertest.CarolInput(t, 300), "--output", filepath.Join(t.TempDir(), "out"), "--llm-url", llmURL, "--llm-retries", "0"}},
		{"doctor", env, []string{"doctor", "--store", storeURL, "--graph", "http://example.org/g", "--store-type", "fuseki", "--llm-url", llmURL, "--index-url", "http://elastic:" + sweepESPass + "@" + host}},
		{"doctor show config", env, []string{"doctor", "--show-config", "--store", storeURL, "--graph", "http://example.org/g", "--llm-url", llmURL}},
		{"doctor json", env, []string{"doctor", "--json", "--show-config", "--store", storeURL, "--llm-url", llmURL, "--llm-key", sweepLLMKey}},
		{"missing secret file", []string{"KGRAG_STORE_PASSWORD_FILE=" + filepath.Join(t.TempDir(), "nope")}, []string{"load", "--input", input, "--store", storeURL, "--graph", "http://example.org/g"}},
	}
	for _, c := range []string{"", "load", "ask", "embed", "index", "doctor", "inspect", "ontology"} {
		args := []string{"--help"}
		if c != "" {
			args = []string{c, "--help"}
		}
		runs = append(runs, struct {
			name string
			env  []string
			args []string
		}{"help " + c, append(env, "KGRAG_STORE="+storeURL, "KGRAG_LLM_URL="+llmURL), args})
	}
	failed := 0
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], r.args...)
			cmd.Env = append(append(os.Environ(), "KGRAG_TEST_RUN_MAIN=1", "KGRAG_CONFIG="+config), r.env...)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			if _, ok := err.(*exec.ExitError); err != nil && !ok {
				t.Fatal(err)
			}
			if cmd.ProcessState.ExitCode() != 0 {
				failed++
			}
			for _, s := range sweepForms() {
				if i := strings.Index(out.String(), s); i >= 0 {
					lo, hi := max(0, i-120), min(out.Len(), i+len(s)+40)
					t.Errorf("kgrag %s printed the secret %q: ...%s...", strings.Join(r.args, " "), s, out.String()[lo:hi])
				}
			}
			if r.name == "missing secret file" && (cmd.ProcessState.ExitCode() != 2 || !strings.Contains(out.String(), "KGRAG_STORE_PASSWORD_FILE names")) {
				t.Errorf("a missing password file: exit %d, %q; want exit 2 naming the variable", cmd.ProcessState.ExitCode(), out.String())
			}
			t.Logf("exit %d: %.300s", cmd.ProcessState.ExitCode(), out.String())
		})
	}
	if _, err := os.Stat(filepath.Join(input, defaultIndexDir)); err == nil {
		t.Errorf("a failed run left %s behind in the input folder", defaultIndexDir)
	}
	// The sweep must have driven the commands into their failures: the
	// echo server's answers are what could leak.
	if failed < 14 || hits.Load() < 14 {
		t.Errorf("%d runs failed, the echo server got %d requests; the sweep did not reach the servers", failed, hits.Load())
	}
}
