package globalsearch_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/globalsearch"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/llmcall"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/internal/tokens"
	"github.com/kgrag/kgrag/prompts"
)

// The tests talk to llmtest's OpenAI-compatible server over HTTP through
// the real llm.Client. The server tells the three kinds of call apart by
// their system prompts: map prompts hold a "---Reports---" table, rating
// prompts one "---Report---", and the reduce prompt the analysts' points.

const question = "What are the main themes of the story?"

var (
	datasets   sync.Map // sample name -> *graphrag.Dataset
	rowRE      = regexp.MustCompile(`(?m)^(\d+)\|`)
	scoreRE    = regexp.MustCompile(`Importance Score: (\d+)`)
	encOnce    sync.Once
	encoder    *tokens.Encoder
	encoderErr error
)

func sample(t *testing.T, name string) *graphrag.Dataset {
	t.Helper()
	if ds, ok := datasets.Load(name); ok {
		return ds.(*graphrag.Dataset)
	}
	ds, err := graphrag.Open(context.Background(), filepath.Join(test.GraphRAGSamples(t), name))
	if err != nil {
		t.Fatal(err)
	}
	datasets.Store(name, ds)
	return ds
}

func enc(t *testing.T) *tokens.Encoder {
	t.Helper()
	encOnce.Do(func() { encoder, encoderErr = tokens.NewEncoder(tokens.EncodingCL100K) })
	if encoderErr != nil {
		t.Fatal(encoderErr)
	}
	return encoder
}

func kind(r llmtest.Request) string {
	if len(r.Messages) == 0 {
		return ""
	}
	sys := r.Messages[0].Content
	switch {
	case strings.Contains(sys, "---Reports---"):
		return "map"
	case strings.Contains(sys, "---Report---"):
		return "rate"
	case strings.Contains(sys, "---Analysts' points---"):
		return "reduce"
	}
	return ""
}

// batchTable is the report table of a map prompt.
func batchTable(sys string) string {
	_, after, _ := strings.Cut(sys, "---Reports---\n\n")
	table, _, _ := strings.Cut(after, "\n---End of reports---")
	return table
}

// score is the deterministic score the test server gives report id.
func score(id string) int {
	n, _ := strconv.Atoi(id)
	return (n*37)%100 + 1
}

// mapReply is a well-formed map reply: one point per report of the batch.
func mapReply(sys string) string {
	var pts []string
	for _, m := range rowRE.FindAllStringSubmatch(batchTable(sys), -1) {
		pts = append(pts, fmt.Sprintf(`{"description": "Report %s matters [Data: Reports (%s)]", "score": %d}`, m[1], m[1], score(m[1])))
	}
	return `{"points": [` + strings.Join(pts, ", ") + `]}`
}

// reduceReply cites the reports of the first points it was given.
func reduceReply(sys string) string {
	ids := regexp.MustCompile(`Reports \((\d+)\)`).FindAllStringSubmatch(sys, 3)
	var cite []string
	for _, m := range ids {
		cite = append(cite, m[1])
	}
	return "The story is about change [Data: Reports (" + strings.Join(cite, ", ") + ", 99999)]."
}

// server starts a test server answering map and reduce calls well.
func server(t *testing.T, cfg llmtest.Config) *llmtest.Server {
	srv := llmtest.Start(t, cfg)
	srv.Respond(func(r llmtest.Request) (string, bool) {
		switch kind(r) {
		case "map":
			return mapReply(r.Messages[0].Content), true
		case "reduce":
			return reduceReply(r.Messages[0].Content), true
		}
		return "", false
	})
	return srv
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

type setup struct {
	src    retrieval.ReportSource
	params retrieval.GlobalParams
	opts   globalsearch.Options
}

func defaults(t *testing.T, sampleName string, budget int) setup {
	p := retrieval.DefaultGlobalParams()
	p.MaxContextTokens = budget
	return setup{src: retrieval.NewMemoryBackend(sample(t, sampleName)), params: p, opts: globalsearch.DefaultOptions()}
}

func (s setup) searcher(t *testing.T, chat llmcall.Streamer) *globalsearch.Searcher {
	t.Helper()
	b, err := retrieval.NewGlobalBuilder(s.params, enc(t))
	if err != nil {
		t.Fatal(err)
	}
	gs, err := globalsearch.New(s.src, b, chat, s.opts)
	if err != nil {
		t.Fatal(err)
	}
	return gs
}

func requestsOf(srv *llmtest.Server, k string) []llmtest.Request {
	var out []llmtest.Request
	for _, r := range srv.Requests() {
		if kind(r) == k {
			out = append(out, r)
		}
	}
	return out
}

// TestSearch runs a whole search on the v3 sample and checks it from the
// requests the server received: every report went to exactly one map
// call, no batch table exceeded the budget, at most Concurrency calls were
// in flight, the reduce call came last with the points best first, and
// the figures Result and Plan give match what was sent.
func TestSearch(t *testing.T) {
	tests := []struct {
		name        string
		level       int64
		budget      int
		concurrency int
	}{
		{"level 0, small batches, 3 at once", 0, 2500, 3},
		{"level 2, default budget, 4 at once", 2, 12000, 4},
		{"level 1, one at a time", 1, 4000, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := server(t, llmtest.Config{Latency: 15 * time.Millisecond})
			s := defaults(t, "v3", tt.budget)
			s.params.CommunityLevel = tt.level
			s.opts.Concurrency = tt.concurrency
			gs := s.searcher(t, client(t, srv, 1))
			ctx := context.Background()
			plan, err := gs.Plan(ctx, question)
			if err != nil {
				t.Fatal(err)
			}
			var progress []globalsearch.Progress
			res, err := gs.Search(ctx, question, globalsearch.Hooks{Progress: func(p globalsearch.Progress) { progress = append(progress, p) }})
			if err != nil {
				t.Fatal(err)
			}

			// Every report up to the level, from the dataset itself, went
			// to exactly one map call.
			want := map[string]int{}
			for _, c := range sample(t, "v3").Communities {
				if c.Level <= tt.level && c.Report != nil {
					want[c.Community] = 0
				}
			}
			maps := requestsOf(srv, "map")
			for _, r := range maps {
				table := batchTable(r.Messages[0].Content)
				if n := enc(t).Count(table); n > tt.budget {
					t.Errorf("a map batch table has %d tokens, over the budget of %d", n, tt.budget)
				}
				for _, m := range rowRE.FindAllStringSubmatch(table, -1) {
					if _, ok := want[m[1]]; !ok {
						t.Errorf("map call got report %s, which is not a report up to level %d", m[1], tt.level)
					}
					want[m[1]]++
				}
				if r.Messages[1].Content != question {
					t.Errorf("map call user message = %q; want the question", r.Messages[1].Content)
				}
				rf, _ := r.Extra["response_format"].(map[string]any)
				js, _ := rf["json_schema"].(map[string]any)
				schema, _ := js["schema"].(map[string]any)
				if rf["type"] != "json_schema" || schema["required"] == nil {
					t.Errorf("map call response_format = %v; want json_schema with the points schema", r.Extra["response_format"])
				}
			}
			for id, n := range want {
				if n != 1 {
					t.Errorf("report %s went to %d map calls; want 1", id, n)
				}
			}
			if len(maps) != len(res.Batches) || len(maps) != len(plan.Batches) || res.Reports != len(want) {
				t.Errorf("%d map calls, Result says %d batches, Plan %d, %d reports (want %d)",
					len(maps), len(res.Batches), len(plan.Batches), res.Reports, len(want))
			}
			if tt.concurrency > 1 && len(maps) < tt.concurrency {
				t.Fatalf("only %d batches: the case cannot show concurrency %d", len(maps), tt.concurrency)
			}
			if got := srv.MaxInFlight(); got > tt.concurrency || (len(maps) >= tt.concurrency && got < tt.concurrency) {
				t.Errorf("max in flight = %d; want exactly the concurrency %d", got, tt.concurrency)
			}

			// The reduce call is the last, and its points are best first.
			all := srv.Requests()
			if kind(all[len(all)-1]) != "reduce" || len(requestsOf(srv, "reduce")) != 1 {
				t.Fatalf("want exactly one reduce call, last")
			}
			red := all[len(all)-1].Messages[0].Content
			var scores []int
			for _, m := range scoreRE.FindAllStringSubmatch(red, -1) {
				n, _ := strconv.Atoi(m[1])
				scores = append(scores, n)
			}
			if len(scores) == 0 || !slices.IsSortedFunc(scores, func(a, b int) int { return b - a }) {
				t.Errorf("reduce prompt scores %v; want some, descending", scores)
			}
			if len(scores) != len(res.Reduce.Context.Points) {
				t.Errorf("reduce prompt holds %d points; Result says %d", len(scores), len(res.Reduce.Context.Points))
			}
			if n := enc(t).Count(res.Reduce.Context.Text); n > s.params.ReduceContextTokens || n != res.Reduce.Context.Tokens {
				t.Errorf("reduce context counts %d tokens, Result says %d, budget %d", n, res.Reduce.Context.Tokens, s.params.ReduceContextTokens)
			}
			if res.LLMCalls != len(maps)+1 || plan.Calls != res.LLMCalls {
				t.Errorf("LLMCalls = %d, plan %d; want %d", res.LLMCalls, plan.Calls, len(maps)+1)
			}

			// Plan's prompt tokens are what was sent.
			sent := map[int]bool{}
			for _, r := range maps {
				sent[enc(t).Count(r.Messages[0].Content)+enc(t).Count(r.Messages[1].Content)] = true
			}
			for i, b := range plan.Batches {
				if !sent[b.PromptTokens] || b.PromptTokens != res.Batches[i].PromptTokens {
					t.Errorf("plan batch %d: %d prompt tokens, not among those sent (Result says %d)", i, b.PromptTokens, res.Batches[i].PromptTokens)
				}
			}

			if res.Answer == "" || !slices.Equal(res.UnknownCited, []string{"99999"}) || len(res.Cited) == 0 {
				t.Errorf("answer %q: cited %v, unknown %v; want reports and the made-up 99999", res.Answer, res.Cited, res.UnknownCited)
			}
			if res.MapParse.Valid != len(maps) || res.MapFailed != 0 {
				t.Errorf("map parse %+v, failed %d; want all %d valid", res.MapParse, res.MapFailed, len(maps))
			}
			prev := -1
			for _, p := range progress {
				if p.Phase == globalsearch.PhaseMap {
					if p.Done != prev+1 {
						t.Errorf("map progress went from %d to %d; want one at a time, in order", prev, p.Done)
					}
					prev = p.Done
				}
			}
			last := progress[len(progress)-2] // the last map progress, before reduce's
			if last.Phase != globalsearch.PhaseMap || last.Done != len(maps) || last.Total != len(maps) {
				t.Errorf("last map progress = %+v; want %d/%d", last, len(maps), len(maps))
			}
		})
	}
}

// TestSearchFailedMapCalls: a map call that fails once is retried by the
// client and counts as a success; one that fails every attempt with an
// error of its own (500) is skipped and said, and the answer comes from
// the others; a server unavailable after the retries (503), or a model
// that does not exist, fails the search at once (llmcall.Fatal).
func TestSearchFailedMapCalls(t *testing.T) {
	const retries = 2
	tests := []struct {
		name       string
		failures   int // failures queued before the first map call
		status     int // their status
		cfg        llmtest.Config
		wantFailed int
		wantErr    error
	}{
		{"one 503, retried", 1, 503, llmtest.Config{}, 0, nil},
		{"first batch fails every attempt", retries + 1, 500, llmtest.Config{}, 1, nil},
		{"server unavailable", retries + 1, 503, llmtest.Config{}, 0, llm.ErrUnreachable},
		{"every call fails", 1000, 503, llmtest.Config{}, 0, llm.ErrUnreachable},
		{"no such model", 0, 503, llmtest.Config{Models: []string{"other"}}, 0, llm.ErrModelNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := server(t, tt.cfg)
			srv.FailN(tt.failures, llmtest.Failure{Path: "/chat/completions", Status: tt.status})
			s := defaults(t, "v3", 3000)
			s.params.CommunityLevel = 0
			s.opts.Concurrency = 1 // the queued failures all hit the first batch
			res, err := s.searcher(t, client(t, srv, retries)).Search(context.Background(), question, globalsearch.Hooks{})
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v; want %v", err, tt.wantErr)
				}
				if n := srv.Count("/chat/completions"); tt.failures < 1000 && n > tt.failures+1 {
					t.Errorf("%d calls after a fatal error; want the search stopped at once", n)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.MapFailed != tt.wantFailed {
				t.Errorf("MapFailed = %d; want %d", res.MapFailed, tt.wantFailed)
			}
			maps := len(res.Batches)
			// A failed batch's attempts are all among the failures.
			if got := srv.Count("/chat/completions"); got != maps+1+tt.failures-tt.wantFailed {
				t.Errorf("%d chat requests; want %d map + 1 reduce + %d retried", got, maps, tt.failures-tt.wantFailed)
			}
			if tt.wantFailed == 1 {
				if res.Batches[0].Err == "" || res.Batches[0].Points != nil {
					t.Errorf("batch 0 = %+v; want its error and no points", res.Batches[0].Call)
				}
				for _, p := range res.Reduce.Context.Points {
					if p.Batch == 0 {
						t.Errorf("reduce context holds a point of the failed batch")
					}
				}
				if res.Answer == "" || len(res.Reduce.Context.Points) == 0 {
					t.Errorf("no answer from the other batches")
				}
			}
		})
	}
}

// TestSearchMalformedReplies feeds the map calls what small models write.
// Repairable replies count as repaired and their points are used; the
// others count as unusable and are skipped; none is fatal.
func TestSearchMalformedReplies(t *testing.T) {
	replies := []struct {
		reply      string
		parse      string
		points     int
		wantScores []int
	}{
		{`{"points": [{"description": "A [Data: Reports (1)]", "score": 70}]}`, llmcall.ParseValid, 1, []int{70}},
		{"```json\n{\"points\": [{\"description\": \"B\", \"score\": 60}]}\n```", llmcall.ParseRepaired, 1, []int{60}},
		{"Sure! Here are the points:\n{\"points\": [{\"description\": \"C\", \"score\": 50}]}\nHope this helps.", llmcall.ParseRepaired, 1, []int{50}},
		{`{"points": [{"description": "D", "score": 40}, {"description": "E was cut`, llmcall.ParseRepaired, 1, []int{40}},
		{`{'points': [{'description': "F's point", 'score': 30}]}`, llmcall.ParseRepaired, 1, []int{30}},
		{`{"points": [{"description": "G", "score": "20"}, {"description": "no score"}, {"score": 5}]}`, llmcall.ParseValid, 1, []int{20}},
		{`[{"description": "H", "score": 150}]`, llmcall.ParseValid, 1, []int{100}},
		{`I could not find anything relevant.`, llmcall.ParseUnusable, 1, []int{50}}, // prose: one point at ProseScore
		{``, llmcall.ParseUnusable, 0, nil},
		{`{"points": "none"}`, llmcall.ParseUnusable, 0, nil},
	}
	srv := server(t, llmtest.Config{})
	var n atomic.Int64
	srv.Respond(func(r llmtest.Request) (string, bool) {
		switch kind(r) {
		case "map":
			i := int(n.Add(1)) - 1
			if i < len(replies) {
				return replies[i].reply, true
			}
			return `{"points": []}`, true
		case "reduce":
			return "answer", true
		}
		return "", false
	})
	s := defaults(t, "v3", 1500)
	s.params.CommunityLevel = 1
	s.opts.Concurrency = 1 // replies in batch order
	res, err := s.searcher(t, client(t, srv, 1)).Search(context.Background(), question, globalsearch.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Batches) < len(replies) {
		t.Fatalf("%d batches; the test needs %d", len(res.Batches), len(replies))
	}
	var want globalsearch.ParseCounts
	for i, r := range replies {
		b := res.Batches[i]
		var scores []int
		for _, p := range b.Points {
			scores = append(scores, p.Score)
		}
		if b.Parse != r.parse || len(b.Points) != r.points || !slices.Equal(scores, r.wantScores) {
			t.Errorf("reply %q: parse %s, points %d, scores %v; want %s, %d, %v", r.reply, b.Parse, len(b.Points), scores, r.parse, r.points, r.wantScores)
		}
		switch r.parse {
		case llmcall.ParseValid:
			want.Valid++
		case llmcall.ParseRepaired:
			want.Repaired++
			if len(b.Fixes) == 0 {
				t.Errorf("reply %q repaired without naming a fix", r.reply)
			}
		default:
			want.Unusable++
		}
	}
	want.Valid += len(res.Batches) - len(replies)
	if res.MapParse != want {
		t.Errorf("MapParse = %+v; want %+v", res.MapParse, want)
	}
	if got := len(res.Reduce.Context.Points); got != 8 {
		t.Errorf("reduce context has %d points; want the 7 usable ones and the prose reply", got)
	}
	wantNotes := []string{
		fmt.Sprintf("global: 1 of %d map replies held no JSON points: each was taken whole as one point scored 50", len(res.Batches)),
		fmt.Sprintf("global: 2 of %d map replies held no usable JSON and were skipped", len(res.Batches)),
	}
	if res.MapProse != 1 || !slices.Equal(res.Degraded, wantNotes) {
		t.Errorf("MapProse %d, Degraded %q; want 1, %q", res.MapProse, res.Degraded, wantNotes)
	}
}

// TestSearchNoData: when every point scores 0 the answer is the canned
// one and no reduce call is made, unless general knowledge is allowed.
func TestSearchNoData(t *testing.T) {
	for _, general := range []bool{false, true} {
		t.Run(fmt.Sprint("general knowledge ", general), func(t *testing.T) {
			srv := server(t, llmtest.Config{})
			srv.Respond(func(r llmtest.Request) (string, bool) {
				if kind(r) == "map" {
					return `{"points": [{"description": "Nothing here.", "score": 0}]}`, true
				}
				return "From general knowledge: ...", true
			})
			s := defaults(t, "v3", 12000)
			s.opts.GeneralKnowledge = general
			res, err := s.searcher(t, client(t, srv, 1)).Search(context.Background(), question, globalsearch.Hooks{})
			if err != nil {
				t.Fatal(err)
			}
			reduces := requestsOf(srv, "reduce")
			if !general {
				if !res.NoData || res.Answer != prompts.NoDataAnswer || len(reduces) != 0 || res.LLMCalls != len(res.Batches) {
					t.Errorf("NoData %v, answer %q, %d reduce calls, %d calls; want the canned answer and no reduce call",
						res.NoData, res.Answer, len(reduces), res.LLMCalls)
				}
				return
			}
			if res.NoData || len(reduces) != 1 || !strings.Contains(reduces[0].Messages[0].Content, "what you know from elsewhere") {
				t.Errorf("NoData %v, %d reduce calls; want one, allowing general knowledge", res.NoData, len(reduces))
			}
		})
	}
}

// TestMaxLLMCalls: a question that needs more calls than allowed fails
// before any call, saying how many it needs.
func TestMaxLLMCalls(t *testing.T) {
	srv := server(t, llmtest.Config{})
	s := defaults(t, "v3", 3000)
	s.params.CommunityLevel = 0
	s.opts.MaxLLMCalls = 3
	_, err := s.searcher(t, client(t, srv, 1)).Search(context.Background(), question, globalsearch.Hooks{})
	var le *globalsearch.LimitError
	if !errors.As(err, &le) || le.Need <= 3 || le.Need != le.Batches+1 {
		t.Fatalf("err = %v; want a LimitError with the calls needed", err)
	}
	if n := srv.Count(""); n != 0 {
		t.Errorf("%d requests; want none", n)
	}
	s.opts.MaxLLMCalls = le.Need
	if _, err := s.searcher(t, client(t, srv, 1)).Search(context.Background(), question, globalsearch.Hooks{}); err != nil {
		t.Errorf("with the limit at the calls needed: %v", err)
	}
}

// TestJSONModeFallback: a server that refuses every response_format is
// asked again without it, and not asked for it again.
func TestJSONModeFallback(t *testing.T) {
	srv := server(t, llmtest.Config{ResponseFormats: []string{"text"}})
	s := defaults(t, "v3", 3000)
	s.params.CommunityLevel = 0
	s.opts.Concurrency = 1
	res, err := s.searcher(t, client(t, srv, 1)).Search(context.Background(), question, globalsearch.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	reqs := requestsOf(srv, "map")
	for i, r := range reqs[:2] {
		if _, ok := r.Extra["response_format"]; !ok {
			t.Fatalf("map request %d did not ask for JSON", i)
		}
	}
	for i, r := range reqs[2:] {
		if _, ok := r.Extra["response_format"]; ok {
			t.Errorf("map request %d asks for response_format after the server refused it", i+2)
		}
	}
	if res.MapFailed != 0 || len(reqs) != len(res.Batches)+2 {
		t.Errorf("%d failed, %d map requests for %d batches; want none failed, the first asked thrice", res.MapFailed, len(reqs), len(res.Batches))
	}
}
