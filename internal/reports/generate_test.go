package reports_test

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/llmcall"
	"github.com/kgrag/kgrag/internal/reports"
	"github.com/kgrag/kgrag/prompts"
)

// The generator tests talk to llmtest's OpenAI-compatible server over HTTP
// through the real llm.Client. The server writes a short report on each
// prompt, named after a hash of the prompt's data, so that a parent's
// prompt shows whether it holds its children's reports.

// dataOf is the context a report prompt holds.
func dataOf(prompt string) string {
	_, after, _ := strings.Cut(prompt, "---Data---\n\n")
	data, _, _ := strings.Cut(after, "\n---End of data---")
	return data
}

func hashOf(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

// goodReply is the server's report on a prompt.
func goodReply(prompt string) string {
	h := hashOf(dataOf(prompt))
	return fmt.Sprintf(`{"title": "Report %08x", "summary": "A community.", "findings": [{"summary": "Finding %08x", "explanation": "It holds."}], `+
		`"rating": %d, "rating_explanation": "So."}`, h, h, h%11)
}

func client(t *testing.T, srv *llmtest.Server, retries int) *llm.Client {
	t.Helper()
	c, err := llm.New(llm.Config{BaseURL: srv.URL(), ChatModel: "test-chat", HTTPClient: srv.Client(),
		Retries: retries, Backoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func builder(t *testing.T, name string, budget int) *reports.Builder {
	t.Helper()
	b, err := reports.NewBuilder(sample(t, name), enc(t), budget)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func run(t *testing.T, b *reports.Builder, chat llmcall.Chatter, opts reports.Options, h reports.Hooks) (*reports.Result, error) {
	t.Helper()
	g, err := reports.NewGenerator(b, chat, opts)
	if err != nil {
		t.Fatal(err)
	}
	return g.Run(context.Background(), h)
}

func promptOf(r llmtest.Request) string {
	if len(r.Messages) != 1 || r.Messages[0].Role != "user" {
		return ""
	}
	return r.Messages[0].Content
}

// TestRunBottomUp writes the reports of the v2.5.0 sample with a budget
// small enough that some communities are over it, and checks the run from
// the requests the server received: each community was asked for once,
// with exactly the prompt its context gives once its sub-communities'
// reports (as written in this run) are known; where those reports stand
// in for tables, the prompt holds them word for word, which it can only
// if the sub-communities were written first. No more than Concurrency
// calls were in flight, every call asked for JSON with the schema, and
// progress counted every community once.
func TestRunBottomUp(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{Latency: 5 * time.Millisecond})
	srv.Respond(func(r llmtest.Request) (string, bool) { return goodReply(promptOf(r)), true })
	b := builder(t, "v2.5.0", 600)
	opts := reports.DefaultOptions()
	opts.Concurrency = 3
	var progress []reports.Progress
	res, err := run(t, b, client(t, srv, 1), opts, reports.Hooks{Progress: func(p reports.Progress) { progress = append(progress, p) }})
	if err != nil {
		t.Fatal(err)
	}

	written := make(map[string]string)
	for _, r := range res.Reports {
		written[r.Community] = r.FullContent
	}
	lookup := func(num string) (string, bool) { s, ok := written[num]; return s, ok }
	sent := make(map[string]int)
	for _, r := range srv.Requests() {
		sent[promptOf(r)]++
		rf, _ := r.Extra["response_format"].(map[string]any)
		js, _ := rf["json_schema"].(map[string]any)
		schema, _ := js["schema"].(map[string]any)
		if rf["type"] != "json_schema" || schema["required"] == nil {
			t.Errorf("response_format = %v; want json_schema with the report schema", r.Extra["response_format"])
		}
	}
	substituted := 0
	for _, cr := range res.Communities {
		ctx, ok := b.Context(cr.Community, lookup)
		if !ok {
			t.Fatalf("community %s: no context", cr.Community)
		}
		want, err := prompts.Render("index_report", prompts.IndexReport{Context: ctx.Text, MaxLength: opts.MaxLength})
		if err != nil {
			t.Fatal(err)
		}
		if n := sent[want]; n != 1 || cr.Outcome != reports.OutcomeWritten {
			t.Errorf("community %s (%s): its prompt was sent %d times; want once", cr.Community, cr.Outcome, n)
		}
		if !slices.Equal(cr.SubReports, ctx.Reports) || cr.ContextTokens != ctx.Tokens {
			t.Errorf("community %s: sub-reports %v, %d tokens; its context has %v, %d", cr.Community, cr.SubReports, cr.ContextTokens, ctx.Reports, ctx.Tokens)
		}
		for _, sub := range cr.SubReports {
			substituted++
			if !strings.Contains(want, written[sub]) {
				t.Errorf("community %s: prompt lacks the report of sub-community %s", cr.Community, sub)
			}
		}
	}
	if substituted == 0 {
		t.Error("no sub-community report stood in for a context: the test no longer covers substitution")
	}
	waiting := 0
	for _, cr := range res.Communities {
		if ctx, _ := b.Local(cr.Community); ctx.Exceeds && len(community(sample(t, "v2.5.0"), cr.Community).Children) > 0 {
			waiting++
		}
	}
	if p := b.Plan(); p.Communities != b.Len() || p.Calls != res.Calls || p.Waiting != waiting || p.Waiting == 0 {
		t.Errorf("Plan = %+v; want %d communities and calls, %d waiting", p, b.Len(), waiting)
	}
	if got := srv.MaxInFlight(); got > opts.Concurrency {
		t.Errorf("%d calls in flight at once; want at most %d", got, opts.Concurrency)
	}
	if res.Calls != b.Len() || res.Valid != b.Len() || res.Written != b.Len() || len(res.Reports) != b.Len() || res.Retries != 0 {
		t.Errorf("calls %d, valid %d, written %d, reports %d, retries %d; want %d each, no retries",
			res.Calls, res.Valid, res.Written, len(res.Reports), res.Retries, b.Len())
	}
	if len(progress) != b.Len() || progress[len(progress)-1].Done != b.Len() {
		t.Errorf("%d progress calls, the last %+v; want %d, ending at Done %d", len(progress), progress[len(progress)-1], b.Len(), b.Len())
	}
	for i, p := range progress {
		if p.Done != i+1 || p.Total != b.Len() {
			t.Errorf("progress %d = %+v; want Done %d of %d", i, p, i+1, b.Len())
		}
	}
	// Reports come deepest level first, and each is its community's.
	ds := sample(t, "v2.5.0")
	for i, r := range res.Reports {
		if i > 0 && r.Level > res.Reports[i-1].Level {
			t.Errorf("report %d (level %d) after one of level %d", i, r.Level, res.Reports[i-1].Level)
		}
		c := community(ds, r.Community)
		if c == nil || c.Level != r.Level || r.Size != c.Size || r.HasSize != c.HasSize || r.Period != c.Period || r.HumanReadableID != c.Community {
			t.Errorf("report %s does not carry its community's level, size and period: %+v", r.Community, r)
		}
	}
}

func community(ds *graphrag.Dataset, num string) *graphrag.Community {
	for i := range ds.Communities {
		if ds.Communities[i].Community == num {
			return &ds.Communities[i]
		}
	}
	return nil
}

// TestRunConcurrency: with many communities ready at once (v3 at the
// default budget, where every context fits), the run keeps Concurrency
// calls in flight, no more; the community without relationships gets no
// call and no report.
func TestRunConcurrency(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{Latency: 20 * time.Millisecond})
	srv.Respond(func(r llmtest.Request) (string, bool) { return goodReply(promptOf(r)), true })
	b := builder(t, "v3", reports.DefaultMaxInputTokens)
	opts := reports.DefaultOptions()
	opts.Concurrency = 4
	res, err := run(t, b, client(t, srv, 1), opts, reports.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.MaxInFlight(); got != opts.Concurrency {
		t.Errorf("%d calls in flight at most; want %d", got, opts.Concurrency)
	}
	if res.Empty != 1 || res.Written != b.Len()-1 || srv.Count("/chat/completions") != b.Len()-1 {
		t.Errorf("empty %d, written %d, requests %d; want 1, %d, %d", res.Empty, res.Written, srv.Count("/chat/completions"), b.Len()-1, b.Len()-1)
	}
	for _, r := range srv.Requests() {
		if strings.TrimSpace(dataOf(promptOf(r))) == "" {
			t.Error("a prompt with no data was sent")
		}
	}
	if p := b.Plan(); p.Calls != res.Calls || p.Waiting != 0 || p.Communities != b.Len() {
		t.Errorf("Plan = %+v; want %d calls of %d communities, none waiting", p, res.Calls, b.Len())
	}
	if res.PromptTokens == 0 || res.CompletionTokens == 0 || res.Server.PromptTokens == 0 {
		t.Errorf("token counts not kept: %+v", res)
	}
}

// TestRunMalformed scripts bad replies by a hash of the community's data:
// a reply that is not JSON at first and good when asked again, one never
// usable, one in a code fence (repaired), one in the schema's shape but
// without a rating. The retry prompt says what was wrong; communities
// without a usable reply get no report; the counts add up.
func TestRunMalformed(t *testing.T) {
	const retryNote = "Your previous reply to this request could not be used"
	kindOf := func(prompt string) int { return int(hashOf(dataOf(prompt)) % 5) }
	srv := llmtest.Start(t, llmtest.Config{})
	srv.Respond(func(r llmtest.Request) (string, bool) {
		p := promptOf(r)
		retry := strings.Contains(p, retryNote)
		switch kindOf(p) {
		case 0:
			if retry {
				return goodReply(p), true
			}
			return "Sure! Here is the report you asked for.", true
		case 1:
			return `{"title": "T", "summary": "S", "findings": [], "rating_explanation": "E"}`, true
		case 2:
			return "```json\n" + goodReply(p) + "\n```", true
		}
		return goodReply(p), true
	})
	b := builder(t, "v2.5.0", reports.DefaultMaxInputTokens)
	res, err := run(t, b, client(t, srv, 1), reports.DefaultOptions(), reports.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]int{}
	for _, num := range allCommunities(b) {
		ctx, _ := b.Local(num)
		p, _ := prompts.Render("index_report", prompts.IndexReport{Context: ctx.Text, MaxLength: 2000})
		want[kindOf(p)]++
	}
	if want[0] == 0 || want[1] == 0 || want[2] == 0 {
		t.Fatalf("the sample does not give every kind of reply: %v", want)
	}
	for _, r := range srv.Requests() {
		p := promptOf(r)
		if strings.Contains(p, retryNote) && !strings.Contains(p, "could not be used: no readable JSON object.") &&
			!strings.Contains(p, `could not be used: no "rating".`) {
			t.Errorf("retry prompt does not say what was wrong:\n%s", p[strings.Index(p, retryNote):])
		}
	}
	n := b.Len()
	got := map[string]int{"calls": res.Calls, "retries": res.Retries, "valid": res.Valid, "repaired": res.Repaired,
		"unusable": res.Unusable, "written": res.Written, "no report": res.NoReport, "reports": len(res.Reports)}
	wantCounts := map[string]int{"calls": n + want[0] + want[1], "retries": want[0] + want[1], "valid": n - want[1] - want[2],
		"repaired": want[2], "unusable": want[0] + 2*want[1], "written": n - want[1], "no report": want[1], "reports": n - want[1]}
	if d := cmp.Diff(wantCounts, got); d != "" {
		t.Errorf("counts (-want +got):\n%s", d)
	}
	for _, cr := range res.Communities {
		if cr.Outcome == reports.OutcomeUnusable && (len(cr.Calls) != 2 || cr.Calls[1].Problem != `no "rating"`) {
			t.Errorf("community %s: unusable after %+v", cr.Community, cr.Calls)
		}
	}
}

func allCommunities(b *reports.Builder) []string {
	var out []string
	for _, l := range b.Levels() {
		out = append(out, b.Communities(l)...)
	}
	return out
}

// TestRunFailures: how failed calls end a run, or do not.
func TestRunFailures(t *testing.T) {
	good := func(r llmtest.Request) (string, bool) { return goodReply(promptOf(r)), true }
	t.Run("one call fails: that community has no report", func(t *testing.T) {
		srv := llmtest.Start(t, llmtest.Config{})
		srv.Respond(good)
		srv.Fail(llmtest.Failure{Path: "/chat/completions", Status: 500})
		b := builder(t, "v2.5.0", reports.DefaultMaxInputTokens)
		opts := reports.DefaultOptions()
		opts.Concurrency = 1
		res, err := run(t, b, client(t, srv, -1), opts, reports.Hooks{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Failed != 1 || res.Written != b.Len()-1 || res.Calls != b.Len() {
			t.Errorf("failed %d, written %d, calls %d; want 1, %d, %d", res.Failed, res.Written, res.Calls, b.Len()-1, b.Len())
		}
	})
	t.Run("every call fails", func(t *testing.T) {
		srv := llmtest.Start(t, llmtest.Config{})
		srv.FailN(100, llmtest.Failure{Path: "/chat/completions", Status: 500})
		_, err := run(t, builder(t, "v2.5.0", reports.DefaultMaxInputTokens), client(t, srv, -1), reports.DefaultOptions(), reports.Hooks{})
		if !errors.Is(err, llm.ErrServer) || !strings.Contains(err.Error(), "all 25 model calls failed") {
			t.Errorf("Run error = %v; want all 25 calls failed, wrapping llm.ErrServer", err)
		}
	})
	t.Run("refused key stops the run", func(t *testing.T) {
		srv := llmtest.Start(t, llmtest.Config{})
		srv.Respond(good)
		srv.Fail(llmtest.Failure{Path: "/chat/completions", Status: 401})
		opts := reports.DefaultOptions()
		opts.Concurrency = 1
		_, err := run(t, builder(t, "v2.5.0", reports.DefaultMaxInputTokens), client(t, srv, -1), opts, reports.Hooks{})
		if !errors.Is(err, llm.ErrAuth) {
			t.Errorf("Run error = %v; want llm.ErrAuth", err)
		}
		if n := srv.Count("/chat/completions"); n != 1 {
			t.Errorf("%d calls after the key was refused; want 1", n)
		}
	})
	t.Run("JSON mode refused: asked again without, for the rest of the run", func(t *testing.T) {
		srv := llmtest.Start(t, llmtest.Config{ResponseFormats: []string{"text"}})
		srv.Respond(good)
		opts := reports.DefaultOptions()
		opts.Concurrency = 1
		b := builder(t, "v2.5.0", reports.DefaultMaxInputTokens)
		res, err := run(t, b, client(t, srv, -1), opts, reports.Hooks{})
		if err != nil {
			t.Fatal(err)
		}
		reqs := srv.Requests()
		for i, r := range reqs[:2] {
			if _, ok := r.Extra["response_format"]; !ok {
				t.Fatalf("request %d did not ask for JSON", i)
			}
		}
		for i, r := range reqs[2:] {
			if _, ok := r.Extra["response_format"]; ok {
				t.Errorf("request %d asks for response_format after the server refused it", i+2)
			}
		}
		if res.Written != b.Len() || len(reqs) != b.Len()+2 {
			t.Errorf("written %d with %d requests; want %d with %d", res.Written, len(reqs), b.Len(), b.Len()+2)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		srv := llmtest.Start(t, llmtest.Config{Latency: time.Second})
		srv.Respond(good)
		g, err := reports.NewGenerator(builder(t, "v2.5.0", reports.DefaultMaxInputTokens), client(t, srv, -1), reports.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		if _, err := g.Run(ctx, reports.Hooks{}); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Run error = %v; want the context's deadline", err)
		}
		if d := time.Since(start); d > 500*time.Millisecond {
			t.Errorf("Run took %v after the context ended", d)
		}
	})
}

// TestWrite3x: the reports of a run, attached to their communities, are
// written by graphrag.Write3x and read back by graphrag.Open unchanged.
func TestWrite3x(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{})
	srv.Respond(func(r llmtest.Request) (string, bool) { return goodReply(promptOf(r)), true })
	res, err := run(t, builder(t, "v2.5.0", reports.DefaultMaxInputTokens), client(t, srv, 1), reports.DefaultOptions(), reports.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	ds := *sample(t, "v2.5.0")
	ds.Communities = slices.Clone(ds.Communities)
	if n := res.Attach(&ds); n != len(res.Reports) || n != len(ds.Communities) {
		t.Fatalf("Attach set %d reports; want all %d communities' (%d written)", n, len(ds.Communities), len(res.Reports))
	}
	byNum := make(map[string]*graphrag.CommunityReport)
	for i := range res.Reports {
		byNum[res.Reports[i].Community] = &res.Reports[i]
	}
	dir := t.TempDir()
	if err := graphrag.Write3x(context.Background(), dir, &ds); err != nil {
		t.Fatal(err)
	}
	back, err := graphrag.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range back.Communities {
		want := byNum[c.Community]
		if want == nil || c.Report == nil {
			t.Errorf("community %s: report %v read back, %v written", c.Community, c.Report != nil, want != nil)
			continue
		}
		n++
		if d := cmp.Diff(*want, *c.Report); d != "" {
			t.Errorf("community %s: report read back differs (-written +read):\n%s", c.Community, d)
		}
	}
	if n != len(res.Reports) {
		t.Errorf("%d reports read back; %d written", n, len(res.Reports))
	}
}

// TestRunProse: a model that answers in prose, never JSON, still gives
// every community a report, of its prose (unrated, no findings), after
// the retry; with ProseReports off they get none, as in GraphRAG. A reply
// that is JSON of the wrong shape is no prose: no report.
func TestRunProse(t *testing.T) {
	const prose = "This community is about a miser and the ghosts who visit him on Christmas Eve."
	for _, tt := range []struct {
		name      string
		reply     string
		on        bool
		wantProse bool
	}{
		{"prose", prose, true, true},
		{"prose, off", prose, false, false},
		{"JSON of another shape", `{"summary": 3}`, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.Start(t, llmtest.Config{})
			srv.Respond(func(llmtest.Request) (string, bool) { return tt.reply, true })
			opts := reports.DefaultOptions()
			opts.ProseReports = tt.on
			b := builder(t, "v2.5.0", reports.DefaultMaxInputTokens)
			res, err := run(t, b, client(t, srv, -1), opts, reports.Hooks{})
			if err != nil {
				t.Fatal(err)
			}
			if srv.Count("/chat/completions") != 2*b.Len() {
				t.Errorf("%d calls; want 2 per community (the retry)", srv.Count("/chat/completions"))
			}
			if !tt.wantProse {
				if res.Prose != 0 || len(res.Reports) != 0 || res.NoReport != b.Len() {
					t.Errorf("prose %d, %d reports, %d without; want 0, 0, %d", res.Prose, len(res.Reports), res.NoReport, b.Len())
				}
				return
			}
			if res.Prose != b.Len() || len(res.Reports) != b.Len() || res.NoReport != 0 {
				t.Fatalf("prose %d, %d reports, %d without; want %d, %d, 0", res.Prose, len(res.Reports), res.NoReport, b.Len(), b.Len())
			}
			for _, r := range res.Reports {
				if r.Summary != prose || r.Rank != 0 || len(r.Findings) != 0 || r.Title == "" || !strings.Contains(r.RankExplanation, "prose") {
					t.Errorf("report of community %s: title %q, summary %q, rank %v, %d findings, explanation %q",
						r.Community, r.Title, r.Summary, r.Rank, len(r.Findings), r.RankExplanation)
				}
			}
		})
	}
}
