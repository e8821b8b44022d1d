package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/kgrag/kgrag/internal/embedtext"
	"github.com/kgrag/kgrag/internal/eval"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/test"
)

// TestEval runs kgrag eval over the v3 sample with every table embedded
// by the test model server: a question that is an entity's own embedded
// text finds that entity first (the test embedder's vectors of equal
// texts are equal), so its entity evidence is held in every mode that
// starts from the nearest entities; a title no entity has is not.
func TestEval(t *testing.T) {
	f := newAllTablesFixture(t)
	e := f.entity(t, "EBENEZER SCROOGE")
	qfile := filepath.Join(t.TempDir(), "q.jsonl")
	lines := []string{
		fmt.Sprintf(`{"id": "self", "kind": "fact", "question": %q, "evidence": {"entities": [%q]}}`, embedtext.Entity(e), e.Title),
		fmt.Sprintf(`{"id": "none", "kind": "fact", "question": %q, "evidence": {"entities": ["NOBODY AT ALL"]}}`, embedtext.Entity(e)),
		`{"id": "absent", "kind": "absent", "question": "What is Scrooge's favourite colour?"}`,
	}
	if err := os.WriteFile(qfile, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runKgrag(t, "eval", "-q", "--input", f.input, "--index", f.index, "--llm-url", f.srv.URL(),
		"--embed-model", askEmbedModel, "--questions", qfile, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Modes   []eval.ModeReport `json:"modes"`
		Skipped map[string]string `json:"skipped"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range rep.Modes {
		names = append(names, m.Mode)
		if len(m.Results) != 3 || m.Summary.Failed != 0 {
			t.Errorf("%s: %d results, %d failed; want 3 and none", m.Mode, len(m.Results), m.Summary.Failed)
			continue
		}
		switch m.Mode {
		case modeLocal, modeSPARQL, modeSubgraph:
			self, none := m.Results[0].Recall, m.Results[1].Recall
			if self.Found != 1 || none.Found != 0 || m.Summary.Recall != 0.5 {
				t.Errorf("%s: self %+v, none %+v, mean %g; want the entity found, the unknown title not, 0.5", m.Mode, self, none, m.Summary.Recall)
			}
		}
		if m.Results[0].Tokens == 0 {
			t.Errorf("%s: no context tokens", m.Mode)
		}
	}
	if strings.Join(names, ",") != defaultEvalModes || len(rep.Skipped) != 0 {
		t.Errorf("modes %q, skipped %v; want %s, none skipped", names, rep.Skipped, defaultEvalModes)
	}
	srv := f.srv.Requests()
	for _, r := range srv {
		if strings.HasSuffix(r.Path, "/chat/completions") {
			t.Fatalf("a chat request was made without --answer")
		}
	}
}

// TestEvalBadInput: a bad line of the question file is named, and so are
// the valid modes for an unknown one.
func TestEvalBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte("{\"question\": \"Who?\"}\n{\"question\": \"Why?\", \"evidence\": \"none\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "output")
	_, stderr, code := runKgrag(t, "eval", "--input", in, "--questions", bad)
	if code == 0 || !strings.Contains(stderr, "bad.jsonl:2:") {
		t.Errorf("bad line: exit %d, %q; want an error naming bad.jsonl:2", code, stderr)
	}
	_, stderr, code = runKgrag(t, "eval", "--input", in, "--questions", bad, "--modes", "local,deep")
	if code != exitUsage || !strings.Contains(stderr, `unknown mode "deep"`) || !strings.Contains(stderr, "sparql-templates") {
		t.Errorf("unknown mode: exit %d, %q; want a usage error naming the modes", code, stderr)
	}
}

// TestEvalJudge grades answers with the scripted test model as judge: a
// score it gives is parsed, a reply without one is that question's error
// and the run goes on, and the string check compares with the reference.
func TestEvalJudge(t *testing.T) {
	f := newAllTablesFixture(t)
	f.srv.Respond(func(r llmtest.Request) (string, bool) {
		if len(r.Messages) == 0 {
			return "", false
		}
		msg := r.Messages[len(r.Messages)-1].Content
		switch {
		case strings.HasPrefix(msg, "You grade an answer") && strings.Contains(msg, "Question: Who is Scrooge's clerk?"):
			return `{"reason": "names the clerk", "score": 4}`, true
		case strings.HasPrefix(msg, "You grade an answer"):
			return "It looks fine to me.", true
		}
		return "Bob Cratchit is the clerk.", true
	})
	qfile := filepath.Join(t.TempDir(), "q.yaml")
	body := "- id: clerk\n  kind: relation\n  question: Who is Scrooge's clerk?\n  answer: Scrooge's clerk is Bob Cratchit.\n" +
		"- id: bad-judge\n  kind: fact\n  question: Who is Marley?\n  answer: Scrooge's dead partner.\n"
	if err := os.WriteFile(qfile, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runKgrag(t, "eval", "-q", "--input", f.input, "--index", f.index, "--llm-url", f.srv.URL(),
		"--embed-model", askEmbedModel, "--chat-model", "test-chat", "--judge-model", "test-judge", "--modes", "local", "--questions", qfile, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct{ Modes []eval.ModeReport }
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	rs := rep.Modes[0].Results
	if len(rs) != 2 || rs[0].Verdict == nil || rs[0].Verdict.Score != 4 || rs[0].Verdict.Reason != "names the clerk" {
		t.Fatalf("results %+v; want the clerk graded 4", rs)
	}
	if rs[1].Verdict != nil || !strings.Contains(rs[1].JudgeErr, "no score 0-5") || !strings.Contains(rs[1].JudgeErr, "looks fine") {
		t.Errorf("bad judge reply: verdict %v, error %q; want an error quoting the reply", rs[1].Verdict, rs[1].JudgeErr)
	}
	// "Scrooge's clerk is Bob Cratchit." against "Bob Cratchit is the
	// clerk.": of scrooge, clerk, cratchit (4+ letters), clerk and
	// cratchit are there.
	if ov := rs[0].Overlap; ov == nil || *ov < 0.66 || *ov > 0.67 {
		t.Errorf("overlap %v; want 2/3", ov)
	}
	s := rep.Modes[0].Summary
	if s.Judged != 1 || s.Score == nil || *s.Score != 4 || s.LLMCalls != 2 {
		t.Errorf("summary %+v; want 1 judged, mean 4, 2 answer calls", s)
	}
	var judged int
	for _, r := range chatRequests(f.srv) {
		if r.Model == "test-judge" {
			judged++
		}
	}
	if judged != 2 {
		t.Errorf("%d calls to the judge model; want 2", judged)
	}
}

// TestEvalAgainst runs a graph against itself: the second graph's report
// is there, mode for mode, with the same context recall, and the table
// says a difference of +0.00 for each mode.
func TestEvalAgainst(t *testing.T) {
	f := newAllTablesFixture(t)
	e := f.entity(t, "BOB CRATCHIT")
	qfile := filepath.Join(t.TempDir(), "q.jsonl")
	line := fmt.Sprintf(`{"id": "self", "question": %q, "evidence": {"entities": [%q, "NOBODY"]}}`+"\n", embedtext.Entity(e), e.Title)
	if err := os.WriteFile(qfile, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"eval", "-q", "--input", f.input, "--index", f.index, "--llm-url", f.srv.URL(), "--embed-model", askEmbedModel,
		"--questions", qfile, "--modes", "local,basic", "--against", f.input, "--against-index", f.index}
	stdout, stderr, code := runKgrag(t, append(args, "--json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep evalReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Against == nil || len(rep.Against.Modes) != 2 || len(rep.Modes) != 2 {
		t.Fatalf("against %+v; want both modes over both graphs", rep.Against)
	}
	for i, m := range rep.Modes {
		if b := rep.Against.Modes[i]; b.Mode != m.Mode || b.Summary.Recall != m.Summary.Recall {
			t.Errorf("%s: recall %g against %s %g; want the same graph to score the same", m.Mode, m.Summary.Recall, b.Mode, b.Summary.Recall)
		}
	}
	if r := rep.Modes[0].Results[0].Recall; r.Found != 1 || r.Total != 2 {
		t.Errorf("local: %+v; want the entity found and NOBODY not", r)
	}
	stdout, _, _ = runKgrag(t, args...)
	if !strings.Contains(stdout, "DIFFERENCE") || strings.Count(stdout, "+0.00") != 2 {
		t.Errorf("table:\n%s\nwant a difference of +0.00 for each of the two modes", stdout)
	}
}

// TestEvalTableModeOfOneGraph: a mode run over one graph only (global
// search where the other graph has no community reports) keeps its row
// in the difference table, with a dash where it was not run.
func TestEvalTableModeOfOneGraph(t *testing.T) {
	mr := func(name string, recall float64) eval.ModeReport {
		return eval.ModeReport{Mode: name, Summary: eval.Summary{Recall: recall}}
	}
	rep := evalReport{Count: 1, graphReport: graphReport{Source: "fast", Modes: []eval.ModeReport{mr("local", 0.25)}},
		Against: &graphReport{Source: "model", Modes: []eval.ModeReport{mr("local", 0.5), mr("global", 0.75)}}}
	var b strings.Builder
	if err := writeEvalTable(&b, rep); err != nil {
		t.Fatal(err)
	}
	_, diff, ok := strings.Cut(b.String(), "context recall, model against fast:")
	if !ok {
		t.Fatalf("no difference table:\n%s", b.String())
	}
	var rows []string
	for _, line := range strings.Split(diff, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			rows = append(rows, strings.Join(f, " "))
		}
	}
	want := []string{"MODE THIS AGAINST DIFFERENCE", "local 0.25 0.50 +0.25", "global - 0.75 -"}
	if !slices.Equal(rows, want) {
		t.Errorf("difference table rows %q; want %q", rows, want)
	}
}

// TestEvalHTML writes the report page and opens it in headless Chromium:
// one bar per mode, as wide as its recall, and the questions worst first;
// a screenshot is kept (test.Artifacts).
func TestEvalHTML(t *testing.T) {
	chromium := test.Chromium(t)
	f := newAllTablesFixture(t)
	a, b := f.entity(t, "BOB CRATCHIT"), f.entity(t, "EBENEZER SCROOGE")
	qfile := filepath.Join(t.TempDir(), "q.jsonl")
	lines := fmt.Sprintf(`{"id": "found", "question": %q, "evidence": {"entities": [%q]}}`+"\n"+
		`{"id": "missed", "question": %q, "evidence": {"entities": ["NOBODY"]}}`+"\n", embedtext.Entity(a), a.Title, embedtext.Entity(b))
	if err := os.WriteFile(qfile, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(t.TempDir(), "report.html")
	if _, stderr, code := runKgrag(t, "eval", "-q", "--input", f.input, "--index", f.index, "--llm-url", f.srv.URL(), "--embed-model", askEmbedModel,
		"--questions", qfile, "--modes", "local,sparql-templates", "--html", page); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox,
		chromedp.Flag("headless", "new"), chromedp.WindowSize(1000, 900))
	actx, cancel := chromedp.NewExecAllocator(t.Context(), opts...)
	defer cancel()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel := context.WithTimeout(bctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+page), chromedp.WaitVisible(chromedp.CSS("#chart"))); err != nil {
		t.Fatal(err)
	}
	// Rendered widths, as the browser laid the chart out.
	widths, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`[...document.querySelectorAll("#chart rect.bar")].map((r) => r.getBoundingClientRect().width)`))
	if err != nil {
		t.Fatal(err)
	}
	// Each mode finds the entity of "found" and not NOBODY: recall 0.5.
	if len(widths) != 2 || widths[0] < 150 || widths[0] != widths[1] {
		t.Errorf("bar widths %v; want two equal bars of half the chart", widths)
	}
	first, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#questions tbody tr td:nth-child(3) b")))
	if err != nil || first != "missed" {
		t.Errorf("first question %q (%v); want the worst, missed", first, err)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(test.Artifacts(t, "eval-html"), "report.png"), shot, 0o644); err != nil {
		t.Fatal(err)
	}
}
