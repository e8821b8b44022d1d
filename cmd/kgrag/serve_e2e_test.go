package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kgrag/kgrag/internal/mode"
)

// TestServeSmallWindowRealModel is the report that opened issue 38: kgrag
// serve, with default flags and with --profile small, in front of Gemma 3
// 270M served at a 2,048-token window (llama-cpp-python, which says
// nothing of its window), answered every question with 502. Each server
// must now answer POST /api/ask in the modes of one or two calls with 200,
// an answer, the server's usage inside the window, and the cut said.
func TestServeSmallWindowRealModel(t *testing.T) {
	url, chatModel, embedModel := modelServer(t)
	input, index := realCarolIndex(t, url, embedModel)
	for _, profile := range []string{"", "small"} {
		args := []string{"--input", input, "--index", index, "--llm-url", url, "--chat-model", chatModel, "--embed-model", embedModel}
		name := "default flags"
		if profile != "" {
			args, name = append(args, "--profile", profile), "--profile "+profile
		}
		t.Run(name, func(t *testing.T) {
			p := startServeProc(t, args...)
			for t0 := time.Now(); p.version() == 0; time.Sleep(200 * time.Millisecond) {
				if time.Since(t0) > time.Minute {
					t.Fatalf("kgrag serve did not answer /readyz within a minute:\n%s", p.out.String())
				}
			}
			for _, m := range []string{mode.Local, mode.Basic} {
				body, _ := json.Marshal(map[string]any{"question": "Who is Scrooge's clerk?", "mode": m})
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+p.addr+"/api/ask", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				t0 := time.Now()
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("%s: %s: %s\nserve's log:\n%s", m, resp.Status, b, p.out.String())
				}
				var res askResult
				if err := json.Unmarshal(b, &res); err != nil {
					t.Fatalf("%s: %v: %s", m, err, b)
				}
				if res.Answer == nil || strings.TrimSpace(*res.Answer) == "" {
					t.Errorf("%s: no answer: %s", m, b)
				}
				if res.Usage != nil && res.Usage.Prompt+res.Usage.Completion > 2048 {
					t.Errorf("%s: the server counted %d prompt and %d answer tokens: over its 2048-token window", m, res.Usage.Prompt, res.Usage.Completion)
				}
				if profile == "" && !strings.Contains(strings.Join(res.Degraded, "\n"), "window of 2048 tokens") {
					t.Errorf("%s: degraded %q; want the default budget's cut to the 2048-token window said", m, res.Degraded)
				}
				answer := ""
				if res.Answer != nil {
					answer = *res.Answer
				}
				t.Logf("%s in %v: usage %+v, degraded %q\nA: %.200s", m, time.Since(t0).Round(100*time.Millisecond), res.Usage, res.Degraded, answer)
			}
		})
	}
}
