package test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// ModelServer is the real model server scripts/models.sh runs: llama.cpp's
// OpenAI-compatible server with a small chat model and a sentence
// embedding model, both at URL.
type ModelServer struct {
	URL        string // base URL, ending in /v1
	ChatModel  string
	EmbedModel string
	Log        string // the server's log file; "" when unknown
}

// Models returns the model server of the test run (KGRAG_TEST_LLM_URL and
// the other variables scripts/models.sh writes to .cache/models.env),
// skipping or failing when they are unset. It fails the test at once when
// the server does not answer, with the tail of its log, where
// scripts/models.sh records the signal that ended it; and when the test
// fails while the server has stopped answering since, it says so the same
// way, so that a crash reads as a crash and not as "connection refused".
func Models(t testing.TB) ModelServer {
	t.Helper()
	m := fromEnv(t, "KGRAG_TEST_MODELS_LOG", [3]string{"KGRAG_TEST_LLM_URL", "KGRAG_TEST_CHAT_MODEL", "KGRAG_TEST_EMBED_MODEL"},
		"start the model server with scripts/models.sh start and source .cache/models.env (scripts/test.sh does both)")
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		// t.Context is done by now.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := m.Check(ctx); err != nil {
			t.Errorf("the model server stopped answering during this test: %v", err)
		}
	})
	return m
}

// checkTimeout bounds the wait for /v1/models: llama-cpp-python's server
// answers it only between two generations, and a generation of the small
// model on 2 busy cores can take tens of seconds.
const checkTimeout = 90 * time.Second

// Check asks the server for its models. The error says that the server
// does not answer and ends with the last lines of its log.
func (m ModelServer) Check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(m.URL, "/")+"/models", nil)
	if err != nil {
		return fmt.Errorf("model server %s: %w", m.URL, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return nil
		}
		err = fmt.Errorf("GET /models: %s", resp.Status)
	}
	msg := fmt.Sprintf("the model server at %s does not answer (%v): it has crashed or was stopped", m.URL, err)
	if m.Log == "" {
		return fmt.Errorf("%s; KGRAG_TEST_MODELS_LOG is not set, so its log is unknown", msg)
	}
	tail, terr := LogTail(m.Log, 20)
	if terr != nil {
		return fmt.Errorf("%s; its log: %v", msg, terr)
	}
	return fmt.Errorf("%s; last lines of %s:\n%s", msg, m.Log, tail)
}

// LogTail returns the last n lines of the file at path.
func LogTail(path string, n int) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n"))), nil
}

// Ollama returns the real Ollama of the test run (KGRAG_TEST_OLLAMA_URL
// and the other variables scripts/ollama.sh writes to .cache/ollama.env),
// skipping or failing when they are unset, and failing at once when it
// does not answer.
func Ollama(t testing.TB) ModelServer {
	t.Helper()
	return fromEnv(t, "KGRAG_TEST_OLLAMA_LOG", [3]string{"KGRAG_TEST_OLLAMA_URL", "KGRAG_TEST_OLLAMA_CHAT_MODEL", "KGRAG_TEST_OLLAMA_EMBED_MODEL"},
		"start Ollama with scripts/ollama.sh start and source .cache/ollama.env (scripts/test.sh does both)")
}

// fromEnv reads a server's URL, chat and embedding models from the
// variables vars (in that order) and its log's path from logVar,
// skipping or failing with how when one is unset, and failing when the
// server does not answer.
func fromEnv(t testing.TB, logVar string, vars [3]string, how string) ModelServer {
	t.Helper()
	m := ModelServer{Log: os.Getenv(logVar)}
	for i, dst := range []*string{&m.URL, &m.ChatModel, &m.EmbedModel} {
		if *dst = os.Getenv(vars[i]); *dst == "" {
			SkipOrFail(t, "%s is not set: %s", vars[i], how)
		}
	}
	if err := m.Check(t.Context()); err != nil {
		t.Fatal(err)
	}
	return m
}
