package driftsearch_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kgrag/kgrag/internal/driftsearch"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/llmcall"
	"github.com/kgrag/kgrag/internal/tokens"
	"github.com/kgrag/kgrag/prompts"
)

const question = "How do the ghosts change Scrooge?"

// failing is a chat model that fails the calls fail picks with err and
// sends the others to the fixture's scripted server.
type failing struct {
	next llmcall.Streamer
	fail func(msgs []llm.Message) bool
	err  error
	n    atomic.Int64
}

func (f *failing) Chat(ctx context.Context, msgs []llm.Message, o llm.ChatOptions) (string, llm.Usage, error) {
	if f.fail(msgs) {
		f.n.Add(1)
		return "", llm.Usage{}, f.err
	}
	return f.next.Chat(ctx, msgs, o)
}

func (f *failing) ChatStream(ctx context.Context, msgs []llm.Message, o llm.ChatOptions, onDelta func(string) error) (string, llm.Usage, error) {
	if f.fail(msgs) {
		f.n.Add(1)
		return "", llm.Usage{}, f.err
	}
	return f.next.ChatStream(ctx, msgs, o, onDelta)
}

// kindOf tells a call's kind from its messages, as callKind does from a
// request.
func kindOf(msgs []llm.Message) string {
	r := llmtest.Request{}
	for _, m := range msgs {
		r.Messages = append(r.Messages, llmtest.Message{Role: m.Role, Content: m.Content})
	}
	return callKind(r)
}

// serverError is a call that failed for good after the client's retries:
// a model server that answered 500.
var serverError = fmt.Errorf("chat: %w: HTTP 500", llm.ErrServer)

// TestSearchSkipsFailedFollowUps: follow-ups whose call fails are counted,
// marked failed, not asked again, and left out of the answer, while the
// search goes on and answers from the rest.
func TestSearchSkipsFailedFollowUps(t *testing.T) {
	f := newFixture(t, "v3", question, -1)
	chat := &failing{next: f.client, err: serverError, fail: func(msgs []llm.Message) bool {
		return kindOf(msgs) == "local" && strings.Contains(msgs[1].Content, "Scrooge's House")
	}}
	res, err := f.searcher(t, chat, driftsearch.DefaultOptions()).Search(context.Background(), question, driftsearch.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	for _, a := range res.Actions {
		if a.Failed {
			failed++
			if a.Answered || a.Answer != "" || !strings.Contains(a.Query, "Scrooge's House") || a.Call == nil || a.Call.Err == "" {
				t.Errorf("failed action %+v: want unanswered, the call's error kept", a)
			}
		}
		if strings.Contains(a.Answer, "Scrooge's House") && a.ID != 0 {
			t.Errorf("action %d answered %q though its call failed", a.ID, a.Answer)
		}
	}
	if n := int(chat.n.Load()); failed == 0 || failed != n || res.FailedCalls != n {
		t.Errorf("%d actions failed, FailedCalls %d, %d calls failed: want equal and > 0 (each failed once, not asked again)", failed, res.FailedCalls, n)
	}
	if res.Answer != "Final answer." || res.Reduce == nil || res.Reduce.Steps == 0 {
		t.Errorf("answer %q after failures; want the reduce's", res.Answer)
	}
	if !strings.Contains(res.Reduce.Context, "Primer over reports") || strings.Contains(res.Reduce.Context, "Answer to: What is said about Scrooge's House") {
		t.Errorf("reduce context holds a failed step or lacks the primer:\n%.400s", res.Reduce.Context)
	}
}

// TestSearchFails: what stops a DRIFT search, and what it says.
func TestSearchFails(t *testing.T) {
	tests := []struct {
		name string
		kind string // the calls that fail
		err  error
		want []string
		is   error
	}{
		{"every primer call", "primer", serverError, []string{"all 5 primer calls failed"}, llm.ErrServer},
		{"model server down mid-search", "local", fmt.Errorf("chat: %w: connection refused", llm.ErrUnreachable), []string{"follow-ups, round 1"}, llm.ErrUnreachable},
		{"answer call", "reduce", serverError, []string{"driftsearch: answer"}, llm.ErrServer},
		{"expansion, model gone", "expand", fmt.Errorf("chat: %w: no such model", llm.ErrModelNotFound), []string{"expand the question"}, llm.ErrModelNotFound},
	}
	f := newFixture(t, "v3", question, -1)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chat := &failing{next: f.client, err: tt.err, fail: func(msgs []llm.Message) bool { return kindOf(msgs) == tt.kind }}
			_, err := f.searcher(t, chat, driftsearch.DefaultOptions()).Search(context.Background(), question, driftsearch.Hooks{})
			if err == nil || !errors.Is(err, tt.is) {
				t.Fatalf("err %v; want one wrapping %v", err, tt.is)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestSearchExpansionFails: a failed expansion (not a fatal error) falls
// back to the question itself, as GraphRAG does for an empty expansion.
func TestSearchExpansionFails(t *testing.T) {
	f := newFixture(t, "v3", question, -1)
	chat := &failing{next: f.client, err: serverError, fail: func(msgs []llm.Message) bool { return kindOf(msgs) == "expand" }}
	res, err := f.searcher(t, chat, driftsearch.DefaultOptions()).Search(context.Background(), question, driftsearch.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Expanded != question || res.FailedCalls != 1 || res.ExpandCall.Err == "" {
		t.Errorf("expanded %q, %d failed calls; want the question, 1", res.Expanded, res.FailedCalls)
	}
}

// TestSearchMaxLLMCalls: a cap stops the follow-ups so that the answer
// still fits; a cap below what every search needs is refused before any
// call.
func TestSearchMaxLLMCalls(t *testing.T) {
	f := newFixture(t, "v3", question, -1)
	for _, limit := range []int{7, 12, 30} {
		f.srv.Reset()
		opts := driftsearch.DefaultOptions()
		opts.MaxLLMCalls = limit
		res, err := f.searcher(t, f.client, opts).Search(context.Background(), question, driftsearch.Hooks{})
		if err != nil {
			t.Fatalf("limit %d: %v", limit, err)
		}
		calls := f.srv.Count("/chat/completions")
		if calls != res.LLMCalls || calls != limit || !res.Capped || res.Open == 0 {
			t.Errorf("limit %d: %d calls made, LLMCalls %d, capped %v, %d open; want the limit exactly, capped, some open", limit, calls, res.LLMCalls, res.Capped, res.Open)
		}
	}
	f.srv.Reset()
	opts := driftsearch.DefaultOptions()
	opts.MaxLLMCalls = 6
	_, err := f.searcher(t, f.client, opts).Search(context.Background(), question, driftsearch.Hooks{})
	var le *driftsearch.LimitError
	if !errors.As(err, &le) || le.Need != 7 || le.Folds != 5 {
		t.Fatalf("limit 6: err %v; want a LimitError needing 7 (5 primer folds)", err)
	}
	if n := f.srv.Count("/chat/completions"); n != 0 {
		t.Errorf("limit 6: %d calls made before refusing; want none", n)
	}
}

// TestSearchDepthZero answers from the primer alone.
func TestSearchDepthZero(t *testing.T) {
	f := newFixture(t, "v3", question, -1)
	opts := driftsearch.DefaultOptions()
	opts.Depth = 0
	res, err := f.searcher(t, f.client, opts).Search(context.Background(), question, driftsearch.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if k := kinds(f.srv); k["local"] != 0 || k["primer"] != 5 || res.Reduce.Steps != 1 || res.Open != len(res.Actions)-1 {
		t.Errorf("calls %v, %d steps reduced, %d open of %d actions; want no follow-up answered", k, res.Reduce.Steps, res.Open, len(res.Actions))
	}
}

// TestSearchMissingReportEmbeddings: a reports' index that lacks reports
// of the graph is refused, naming the kgrag embed that fixes it, before
// the primer.
func TestSearchMissingReportEmbeddings(t *testing.T) {
	f := newFixture(t, "v3", question, -1)
	var ids []string
	var vecs [][]float32
	for _, c := range f.ds.Communities[:10] {
		if c.Report != nil {
			ids, vecs = append(ids, c.Community), append(vecs, llmtest.Embed(embedModel, c.Report.FullContent, dim))
		}
	}
	f.reports = writeIndex(t, filepath.Join(t.TempDir(), "few.vec"), ids, vecs)
	_, err := f.searcher(t, f.client, driftsearch.DefaultOptions()).Search(context.Background(), question, driftsearch.Hooks{})
	var me *driftsearch.MissingEmbeddingsError
	if !errors.As(err, &me) || !strings.Contains(err.Error(), "kgrag embed --tables community_reports") {
		t.Fatalf("err %v; want a MissingEmbeddingsError naming kgrag embed --tables community_reports", err)
	}
	if k := kinds(f.srv); k["primer"] != 0 {
		t.Errorf("calls %v; want no primer call", k)
	}
}

// TestSearchMalformedReplies: replies that are not the JSON asked for are
// read as far as they go: a cut JSON object is repaired, plain text is
// taken as the answer without follow-ups, and the search completes.
func TestSearchMalformedReplies(t *testing.T) {
	f := newFixture(t, "v3", question, -1)
	n := 0
	f.srv.Respond(func(r llmtest.Request) (string, bool) {
		switch callKind(r) {
		case "primer":
			n++
			if n == 1 {
				return `<think>which reports?</think>{"intermediate_answer": "Cut short", "score": 70, "follow_up_queries": ["Who is Fred?", "Who is Bel`, true
			}
			return "The reports say the ghosts frighten him.", true
		case "local":
			return "Fred is Scrooge's nephew.", true
		}
		return f.reply(r)
	})
	opts := driftsearch.DefaultOptions()
	opts.Concurrency = 1 // the first primer call is the cut one
	res, err := f.searcher(t, f.client, opts).Search(context.Background(), question, driftsearch.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Primer
	// jsonrepair drops the string the cut ends in.
	if p[0].Parse != "repaired" || p[0].IntermediateAnswer != "Cut short" || len(p[0].FollowUps) != 1 || p[0].FollowUps[0] != "Who is Fred?" {
		t.Errorf("cut primer reply read as %+v", p[0])
	}
	if p[1].Parse != "unusable" || p[1].IntermediateAnswer != "The reports say the ghosts frighten him." || len(p[1].FollowUps) != 0 {
		t.Errorf("plain primer reply read as %+v", p[1])
	}
	for _, a := range res.Actions[1:] {
		if a.Answered && (a.Answer != "Fred is Scrooge's nephew." || a.Call.Parse != "unusable" || len(a.FollowUps) != 0) {
			t.Errorf("plain follow-up reply read as %+v", a)
		}
	}
	if len(res.Actions) != 2 || !res.Actions[1].Answered || res.Actions[1].Query != "Who is Fred?" {
		t.Errorf("actions %d; want the question and the follow-up of the cut reply, answered", len(res.Actions))
	}
}

// TestPlanBounds: the plan's bounds hold for the search that follows, and
// its exact figure (the expansion's prompt) is exact.
func TestPlanBounds(t *testing.T) {
	f := newFixture(t, "v3", question, -1)
	s := f.searcher(t, f.client, driftsearch.DefaultOptions())
	pl, err := s.Plan(context.Background(), question)
	if err != nil {
		t.Fatal(err)
	}
	if n := f.srv.Count(""); n != 0 {
		t.Fatalf("Plan sent %d requests; want none", n)
	}
	res, err := s.Search(context.Background(), question, driftsearch.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	primer, follow, maxFollow := 0, 0, 0
	for _, p := range res.Primer {
		primer += p.PromptTokens
	}
	for _, a := range res.Actions {
		if a.Call != nil {
			follow++
			maxFollow = max(maxFollow, a.Call.PromptTokens)
		}
	}
	switch {
	case pl.ExpandPromptTokens != res.ExpandCall.PromptTokens:
		t.Errorf("plan: expansion %d prompt tokens; the call had %d", pl.ExpandPromptTokens, res.ExpandCall.PromptTokens)
	case pl.Template != res.Template:
		t.Errorf("plan template %s, search %s", pl.Template, res.Template)
	case pl.PrimerCalls != len(res.Primer) || pl.PrimerPromptTokensMax < primer:
		t.Errorf("plan: %d primer calls, at most %d tokens; the search made %d with %d", pl.PrimerCalls, pl.PrimerPromptTokensMax, len(res.Primer), primer)
	case pl.CallsMin != 7 || pl.CallsMax < res.LLMCalls || pl.FollowUpCallsMax < follow:
		t.Errorf("plan: %d to %d calls, %d follow-ups at most; the search made %d, %d follow-ups", pl.CallsMin, pl.CallsMax, pl.FollowUpCallsMax, res.LLMCalls, follow)
	case pl.FollowUpPromptTokensMax < maxFollow:
		t.Errorf("plan: a follow-up's prompt at most %d tokens; one had %d", pl.FollowUpPromptTokensMax, maxFollow)
	}
}

// TestSearchFitsReports: with a local budget smaller than the reports a
// prompt quotes, the expansion's template and each primer call's reports
// are cut to fit it (a small model's context refuses the whole), and the
// result says so; with GraphRAG's default budget nothing is cut.
func TestSearchFitsReports(t *testing.T) {
	enc, err := tokens.NewEncoder(driftsearch.DefaultOptions().Local.Encoding)
	if err != nil {
		t.Fatal(err)
	}
	// overhead is a prompt's own tokens: the prompt with no reports.
	overhead := func(kind string) int {
		var p string
		var err error
		if kind == "expand" {
			p, err = prompts.Render("drift_expand", prompts.DriftExpand{Question: question})
		} else {
			p, err = prompts.Render("drift_primer", prompts.DriftPrimer{Question: question})
		}
		if err != nil {
			t.Fatal(err)
		}
		return enc.Count(p)
	}
	for _, tt := range []struct {
		budget int
		cut    bool
	}{
		{300, true},
		{driftsearch.DefaultOptions().Local.MaxContextTokens, false},
	} {
		t.Run(strconv.Itoa(tt.budget), func(t *testing.T) {
			f := newFixture(t, "v3", question, -1)
			opts := driftsearch.DefaultOptions()
			opts.Depth = 0
			opts.Local.MaxContextTokens = tt.budget
			res, err := f.searcher(t, f.client, opts).Search(context.Background(), question, driftsearch.Hooks{})
			if err != nil {
				t.Fatal(err)
			}
			longest := 0
			for _, r := range f.srv.Requests() {
				k := callKind(r)
				if k != "expand" && k != "primer" {
					continue
				}
				n := enc.Count(r.Messages[0].Content) - overhead(k)
				longest = max(longest, n)
				if tt.cut && n > tt.budget+4 { // +4: the blank lines between a fold's 4 reports
					t.Errorf("%s prompt quotes %d tokens of reports; want at most the budget, %d", k, n, tt.budget)
				}
			}
			noted := slices.ContainsFunc(res.Degraded, func(s string) bool { return strings.Contains(s, "cut to fit") })
			if (res.CutReports > 0) != tt.cut || noted != tt.cut {
				t.Errorf("%d reports cut, degraded %q; want cut: %v", res.CutReports, res.Degraded, tt.cut)
			}
			if !tt.cut && longest <= 300 {
				t.Errorf("the longest prompt quotes %d tokens of reports: the fixture's reports are too short to test cutting", longest)
			}
		})
	}
}
