package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// evalModes are the modes the eval step runs: those that answer from
// Macbeth's fast index (it has no community reports, which global and
// DRIFT search read) with a test model that echoes (graph of thoughts
// wants a graph in JSON from it).
const evalModes = "local,basic,sparql-templates,subgraph"

// evalModeRow is one mode's figures from kgrag eval --json.
type evalModeRow struct {
	Mode      string  `json:"mode"`
	Questions int     `json:"questions"`
	Recall    float64 `json:"context_recall"`
	Tokens    float64 `json:"mean_context_tokens"`
	P50MS     float64 `json:"p50_ms"`
	PerSecond float64 `json:"questions_per_second"`
	LLMCalls  int     `json:"llm_calls"`
	Failed    int     `json:"failed"`
}

type evalStepResult struct {
	Questions int           `json:"questions"`
	Modes     []evalModeRow `json:"modes"`
	Notes     []string      `json:"notes,omitempty"`
}

// eval runs kgrag eval over the shipped Macbeth questions on a fast index
// of demo/text, the test model server answering at once: questions per
// second per mode, and the context recall.
func (b *bench) eval(ctx context.Context) (string, any, error) {
	c := b.cfg
	llmtest, err := b.tool(ctx, "kgrag-llmtest", "./cmd/kgrag-llmtest")
	if err != nil {
		return "", nil, err
	}
	llm, err := b.background(ctx, b.runFile("eval-llmtest.log"), llmtest, "-addr", fmt.Sprintf("127.0.0.1:%d", c.EvalPort), "-dim", "64")
	if err != nil {
		return "", nil, err
	}
	defer llm.stop()
	llmURL := fmt.Sprintf("http://127.0.0.1:%d/v1", c.EvalPort)
	out := filepath.Join(b.out, "eval", "output")
	var res evalStepResult
	steps := []struct {
		tag  string
		args []string
	}{
		{"eval-index", []string{"index", "--input", filepath.Join(b.repo, "demo", "text"), "--output", out, "--method", "fast", "--reports", "none"}},
		{"eval-embed", []string{"embed", "--input", out, "--tables", "entities,text_units", "--llm-url", llmURL, "--embed-model", "bench-embed"}},
		{"eval-run", []string{"eval", "--input", out, "--questions", filepath.Join(b.repo, "demo", "eval", "macbeth.jsonl"), "--modes", evalModes,
			"--answer", "--chat-model", "bench-chat", "--llm-url", llmURL, "--embed-model", "bench-embed", "--json"}},
	}
	for _, s := range steps {
		u, err := b.measure(ctx, s.tag, nil, b.kgrag, append([]string{"-q"}, s.args...)...)
		if err != nil {
			return "", nil, err
		}
		if u.RC != 0 {
			res.Notes = append(res.Notes, s.tag+" failed: "+b.why(s.tag, u.RC))
			return evalSection(res), res, nil
		}
	}
	raw, err := os.ReadFile(b.runFile("eval-run.out"))
	if err != nil {
		return "", nil, err
	}
	var rep struct {
		Count int `json:"question_count"`
		Modes []struct {
			Mode    string      `json:"mode"`
			Summary evalModeRow `json:"summary"`
		} `json:"modes"`
		Skipped map[string]string `json:"skipped"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		return "", nil, fmt.Errorf("eval: kgrag eval --json: %w", err)
	}
	res.Questions = rep.Count
	for _, m := range rep.Modes {
		r := m.Summary
		r.Mode = m.Mode
		res.Modes = append(res.Modes, r)
	}
	for name, why := range rep.Skipped {
		res.Notes = append(res.Notes, "skipped "+name+": "+why)
	}
	return evalSection(res), res, nil
}

func evalSection(res evalStepResult) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, `## 15. kgrag eval: the shipped Macbeth questions through every mode

demo/eval/macbeth.jsonl (%d questions) over a fast index of demo/text (kgrag index --method fast --reports none;
entities and text units embedded by kgrag-llmtest's word-hash vectors), each question answered by kgrag-llmtest at
once (kgrag eval --answer): kgrag's own time. Context recall is the share of each question's gold evidence (quotes,
entities) the context held; with these vectors it says how the modes select, not how a real embedder ranks.

| mode | questions | questions/s | p50 ms | model calls | mean context tokens | context recall | failed |
|---|---|---|---|---|---|---|---|
`, res.Questions)
	for _, m := range res.Modes {
		sb.WriteString(row(m.Mode, strconv.Itoa(m.Questions), f(m.PerSecond, 1), f(m.P50MS, 1), strconv.Itoa(m.LLMCalls), f(m.Tokens, 0), f(m.Recall, 2), strconv.Itoa(m.Failed)))
	}
	for _, n := range res.Notes {
		sb.WriteString("\n" + n + "\n")
	}
	return sb.String()
}
