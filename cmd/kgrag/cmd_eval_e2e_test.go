package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/kgrag/kgrag/internal/eval"
	"github.com/kgrag/kgrag/internal/test"
)

// TestEvalRealModels runs the shipped Macbeth questions over a fast index
// of demo/text embedded by a real sentence embedder (all-MiniLM-L6-v2),
// with the real chat model (Gemma 3 270M) answering and judging, both
// behind scripts/models.sh's llama.cpp server: every question through the
// modes that need no model (the table, logged: the figures of the
// closing note), then the first questions answered and judged in local
// mode (--json and --html). The report page opens in headless Chromium
// with its chart drawn. The 270M model's judgement is not tested.
func TestEvalRealModels(t *testing.T) {
	url, chatModel, embedModel := modelServer(t)
	chromium := test.Chromium(t)
	out := filepath.Join(t.TempDir(), "output")
	text := filepath.Join(test.RepoRoot(t), "demo", "text")
	questions := filepath.Join(test.RepoRoot(t), "demo", "eval", "macbeth.jsonl")
	server := []string{"--llm-url", url, "--embed-model", embedModel}
	if _, stderr, code := runKgrag(t, "index", "-q", "--input", text, "--output", out, "--method", "fast", "--reports", "none"); code != 0 {
		t.Fatalf("kgrag index: exit %d: %s", code, stderr)
	}
	if _, stderr, code := runKgrag(t, append([]string{"embed", "-q", "--input", out, "--tables", "entities,text_units"}, server...)...); code != 0 {
		t.Fatalf("kgrag embed: exit %d: %s", code, stderr)
	}

	table, stderr, code := runKgrag(t, append([]string{"eval", "-q", "--input", out, "--questions", questions}, server...)...)
	if code != 0 {
		t.Fatalf("kgrag eval: exit %d: %s", code, stderr)
	}
	t.Logf("context recall, Macbeth, fast index, %s:\n%s", embedModel, table)
	for _, m := range []string{"local", "basic", "sparql-templates", "subgraph"} {
		if !strings.Contains(table, "\n"+m+" ") {
			t.Errorf("the table has no row for %s:\n%s", m, table)
		}
	}

	page := filepath.Join(t.TempDir(), "report.html")
	stdout, stderr, code := runKgrag(t, append([]string{"eval", "-q", "--input", out, "--questions", questions, "--limit", "4",
		"--modes", "local", "--chat-model", chatModel, "--judge-model", chatModel, "--max-context-tokens", "800", "--max-tokens", "48",
		"--json", "--html", page}, server...)...)
	if code != 0 {
		t.Fatalf("kgrag eval --judge-model: exit %d: %s", code, stderr)
	}
	var rep struct{ Modes []eval.ModeReport }
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Modes) != 1 || len(rep.Modes[0].Results) != 4 {
		t.Fatalf("modes %+v; want local with 4 questions", rep.Modes)
	}
	for _, r := range rep.Modes[0].Results {
		if r.Err != "" || r.Answer == "" || (r.Verdict == nil && r.JudgeErr == "") {
			t.Errorf("%s: error %q, answer %q, verdict %v, judge error %q; want an answer and a grade or a judge error", r.ID, r.Err, r.Answer, r.Verdict, r.JudgeErr)
		}
		t.Logf("%s: answer %q; judge %+v %s", r.ID, r.Answer, r.Verdict, r.JudgeErr)
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox,
		chromedp.Flag("headless", "new"), chromedp.WindowSize(1000, 900))
	actx, cancel := chromedp.NewExecAllocator(t.Context(), opts...)
	defer cancel()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel := context.WithTimeout(bctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+page), chromedp.WaitVisible(chromedp.CSS("#chart rect.bar"))); err != nil {
		t.Fatal(err)
	}
	bars, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#chart rect.bar").length`))
	if err != nil || bars != 1 {
		t.Errorf("%d bars (%v); want one, local's", bars, err)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(test.Artifacts(t, "eval-real-models"), "report.png"), shot, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestEvalChristmasCarolRealEmbedder runs the shipped Christmas Carol
// questions over the GraphRAG 3.x sample of the book, its entities, text
// units and community reports embedded by the real sentence embedder,
// through every mode that builds a context without a chat model. The
// table is logged (the closing note's figures); the test checks every
// mode ran every question and that the modes that search by the question
// found some gold, which a broken index or source (recall 0) would not.
func TestEvalChristmasCarolRealEmbedder(t *testing.T) {
	url, _, embedModel := modelServer(t)
	input, index := realCarolIndex(t, url, embedModel)
	questions := filepath.Join(test.RepoRoot(t), "demo", "eval", "christmas-carol.jsonl")
	server := []string{"--llm-url", url, "--embed-model", embedModel, "--input", input, "--index", index}
	stdout, stderr, code := runKgrag(t, append([]string{"eval", "-q", "--questions", questions, "--json"}, server...)...)
	if code != 0 {
		t.Fatalf("kgrag eval: exit %d: %s", code, stderr)
	}
	var rep evalReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	if err := writeEvalTable(&table, rep); err != nil {
		t.Fatal(err)
	}
	t.Logf("context recall, A Christmas Carol (GraphRAG 3.x sample), %s:\n%s", embedModel, table.String())
	got := map[string]eval.ModeReport{}
	for _, m := range rep.Modes {
		got[m.Mode] = m
	}
	for _, name := range strings.Split(defaultEvalModes, ",") {
		m, ok := got[name]
		switch {
		case !ok:
			t.Errorf("no %s in the report (skipped: %v)", name, rep.Skipped)
		case len(m.Results) != rep.Count || m.Summary.Failed != 0:
			t.Errorf("%s: %d results, %d failed; want %d, none", name, len(m.Results), m.Summary.Failed, rep.Count)
		case name != "global" && m.Summary.Recall == 0:
			t.Errorf("%s: context recall 0; the nearest entities or units held none of the gold", name)
		}
	}
}
