package extraction_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kgrag/kgrag/internal/extraction"
	"github.com/kgrag/kgrag/internal/extraction/tuples"
	"github.com/kgrag/kgrag/internal/graphbuild"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/prompts"
)

// roundReply is the scripted graph reply of round n: one entity named
// after the round, related to Scrooge.
func roundReply(n int) string {
	name := fmt.Sprintf("ENTITY %d", n)
	return reply(ent(name, "PERSON", fmt.Sprintf("Found in round %d.", n)), rel("SCROOGE", name, "knows", n+1))
}

// TestGleaningRounds checks the conversation's shape against the model's
// loop answers: how many calls, in which order, and that the rounds'
// records come back in order.
func TestGleaningRounds(t *testing.T) {
	tests := []struct {
		name    string
		max     int
		answers []string // to the loop questions, in turn
		// want: calls, gleaning rounds, loop questions, unclear answers,
		// and the kinds of message of the last call
		calls, gleanings, loops, unclear int
		last                             []string
	}{
		{"no gleaning", 0, nil, 1, 0, 0, 0, []string{"user first"}},
		{"GraphRAG's default: one round, no loop question", 1, []string{"Y"}, 2, 1, 0, 0,
			[]string{"user first", "assistant", "user continue"}},
		{"yes twice, max respected", 3, []string{"Y", "Y", "Y"}, 6, 3, 2, 0,
			[]string{"user first", "assistant", "user continue", "assistant", "user loop", "user continue", "assistant", "user loop", "user continue"}},
		{"no at once", 3, []string{"N"}, 3, 1, 1, 0,
			[]string{"user first", "assistant", "user continue", "assistant", "user loop"}},
		{"yes then no", 3, []string{"Y", "N"}, 5, 2, 2, 0,
			[]string{"user first", "assistant", "user continue", "assistant", "user loop", "user continue", "assistant", "user loop"}},
		{"small model's yes and no", 5, []string{"Yes.", " **y**\n", "no"}, 7, 3, 3, 0, nil},
		{"unclear answer stops", 2, []string{"Perhaps, let me check."}, 3, 1, 1, 1, nil},
		{"always yes, max 4", 4, []string{"Y", "Y", "Y", "Y", "Y"}, 8, 4, 3, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.Start(t, llmtest.Config{})
			scripted(srv, func(tu turn) string {
				if tu.kind == msgLoop {
					return tt.answers[tu.n-1]
				}
				return roundReply(tu.n)
			})
			opts := extraction.DefaultOptions()
			opts.MaxGleanings = tt.max
			res, err := extractor(t, client(t, srv), opts).Extract(context.Background(), extraction.Unit{ID: "u1", Text: carolText})
			if err != nil {
				t.Fatal(err)
			}
			st := res.Graph
			if st.Calls != tt.calls || st.Gleanings != tt.gleanings || st.LoopChecks != tt.loops || st.UnclearAnswers != tt.unclear {
				t.Errorf("calls %d, gleanings %d, loop checks %d, unclear %d; want %d, %d, %d, %d",
					st.Calls, st.Gleanings, st.LoopChecks, st.UnclearAnswers, tt.calls, tt.gleanings, tt.loops, tt.unclear)
			}
			reqs := srv.Requests()
			if len(reqs) != tt.calls {
				t.Fatalf("server saw %d calls; want %d", len(reqs), tt.calls)
			}
			// The plan, made without the model, brackets what the server
			// saw and names its first request exactly.
			plan, err := extractor(t, client(t, srv), opts).Plan(extraction.Unit{ID: "u1", Text: carolText})
			if err != nil {
				t.Fatal(err)
			}
			if len(reqs) < plan.MinCalls || len(reqs) > plan.MaxCalls {
				t.Errorf("server saw %d calls; plan said %d to %d", len(reqs), plan.MinCalls, plan.MaxCalls)
			}
			if len(plan.First) != 1 || len(plan.First[0]) != 1 || plan.First[0][0].Content != reqs[0].Messages[0].Content {
				t.Errorf("plan's first request is not the one the server received")
			}
			if tt.last != nil {
				var got []string
				for _, m := range reqs[len(reqs)-1].Messages {
					if m.Role == "user" {
						got = append(got, "user "+kindOf(m.Content))
					} else {
						got = append(got, m.Role)
					}
				}
				if d := cmp.Diff(tt.last, got); d != "" {
					t.Errorf("messages of the last call (-want +got):\n%s", d)
				}
			}
			// Every call resends the history: each earlier reply as it was.
			for i, r := range reqs[1:] {
				if !strings.HasPrefix(r.Messages[1].Content, roundReply(0)) || len(r.Messages) <= len(reqs[i].Messages) {
					t.Errorf("call %d does not extend the history of call %d", i+2, i+1)
				}
			}
			var titles []string
			for _, e := range res.Entities {
				titles = append(titles, e.Title)
			}
			var want []string
			for n := 0; n <= tt.gleanings; n++ {
				want = append(want, fmt.Sprintf("ENTITY %d", n))
			}
			if d := cmp.Diff(want, titles); d != "" {
				t.Errorf("entities (-want +got):\n%s", d)
			}
			if len(res.Relationships) != tt.gleanings+1 || st.Entities != tt.gleanings+1 || st.Relationships != tt.gleanings+1 {
				t.Errorf("%d relationships, stats %d entities %d relationships; want %d each",
					len(res.Relationships), st.Entities, st.Relationships, tt.gleanings+1)
			}
		})
	}
}

// TestMalformedReplies checks that what the parser repaired and dropped
// in every round is counted, with the round it came from.
func TestMalformedReplies(t *testing.T) {
	replies := []string{
		"Here are the entities I found:\n" +
			"1. (\"entity\"<|>SCROOGE<|>person<|>A squeezing, grasping old sinner)\n" +
			"2. (\"event\"<|>CHRISTMAS EVE<|>event<|>The day the story opens)\n" +
			"3. (\"relationship\"<|>SCROOGE<|>scrooge<|>Scrooge and himself<|>3)\n",
		"```\n(entity<|>\"MARLEY\"<|>person<|>Scrooge's late partner<|>7)\n(\"relationship\"<|>MARLEY<|>SCROOGE<|>partners<|>high)\n```",
		"Y",
		"(\"entity\"<|><|>person<|>nameless)\n##\n(\"relationship\"<|>BOB CRATCHIT<|>SCROOGE<|>clerk<|>8/10)\n<|COMPLETE|>",
	}
	res, _ := extractQueued(t, 2, replies...)
	type drop struct {
		round  int
		reason string
	}
	var got []drop
	for _, d := range res.Dropped {
		got = append(got, drop{d.Round, d.Reason})
	}
	want := []drop{{0, tuples.ReasonUnknownKind}, {0, tuples.ReasonSelfLoop}, {2, tuples.ReasonNoName}}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(drop{})); d != "" {
		t.Errorf("dropped (-want +got):\n%s", d)
	}
	st := res.Graph
	if st.Records != 7 || st.Entities != 2 || st.Relationships != 2 || st.Dropped != 3 {
		t.Errorf("records %d, entities %d, relationships %d, dropped %d; want 7, 2, 2, 3", st.Records, st.Entities, st.Relationships, st.Dropped)
	}
	for _, k := range []tuples.Repair{tuples.RepairProse, tuples.RepairListMarker, tuples.RepairCodeFence, tuples.RepairKind,
		tuples.RepairQuotes, tuples.RepairWeightNotNumeric, tuples.RepairWeightFormat, tuples.RepairCompletionMissing} {
		if st.Repairs[k] == 0 {
			t.Errorf("repair %s not counted (repairs %v)", k, st.Repairs)
		}
	}
	// The counts are the sums of the parser's, reply by reply.
	var sum extraction.Stats
	for i, r := range replies {
		if i == 2 {
			continue // the loop answer
		}
		p := tuples.ParseGraph(r, tuples.DefaultDelimiters())
		for k, n := range p.Repairs {
			sum.Repairs = addRepair(sum.Repairs, k, n)
		}
	}
	if d := cmp.Diff(sum.Repairs, st.Repairs); d != "" {
		t.Errorf("repairs differ from the parser's per reply (-sum +got):\n%s", d)
	}
	if st.RepairCount() < 10 {
		t.Errorf("RepairCount %d; want the many repairs above", st.RepairCount())
	}
	rels := res.Extraction().Relationships
	wantRels := []graphbuild.Relationship{
		{Source: "MARLEY", Target: "SCROOGE", Description: "partners", Weight: tuples.DefaultWeight},
		{Source: "BOB CRATCHIT", Target: "SCROOGE", Description: "clerk", Weight: 8, HasWeight: true},
	}
	if d := cmp.Diff(wantRels, rels); d != "" {
		t.Errorf("relationships (-want +got):\n%s", d)
	}
}

func addRepair(m map[tuples.Repair]int, k tuples.Repair, n int) map[tuples.Repair]int {
	if n == 0 {
		return m
	}
	if m == nil {
		m = map[tuples.Repair]int{}
	}
	m[k] += n
	return m
}

// TestClaims checks that claims cost no call when off, and when on run a
// conversation of their own after the graph's, with the claim settings
// in the prompt, the text unstripped (as GraphRAG passes it) and the
// gleaning rounds' claims kept.
func TestClaims(t *testing.T) {
	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprint("claims ", on), func(t *testing.T) {
			srv := llmtest.Start(t, llmtest.Config{})
			scripted(srv, func(tu turn) string {
				switch {
				case tu.kind == msgLoop:
					return "Y"
				case tu.stage == extraction.StageGraph:
					return roundReply(tu.n)
				}
				return reply(claim(fmt.Sprintf("SUBJECT %d", tu.n), "NONE", "MISERLINESS", "Scrooge is a miser."))
			})
			opts := extraction.DefaultOptions()
			opts.Claims.Enabled = on
			opts.Claims.Description = "acts of meanness"
			opts.Claims.EntitySpecs = []string{"SCROOGE", "person"}
			opts.Claims.MaxGleanings = 2
			text := "  " + carolText + "\n"
			res, err := extractor(t, client(t, srv), opts).Extract(context.Background(), extraction.Unit{ID: "u", Text: text})
			if err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			if !on {
				if len(reqs) != 2 || res.ClaimStats.Calls != 0 || len(res.Claims) != 0 {
					t.Errorf("claims off: %d calls, %d claim calls, %d claims; want the graph's 2 calls only", len(reqs), res.ClaimStats.Calls, len(res.Claims))
				}
				return
			}
			if len(reqs) != 2+4 || res.Graph.Calls != 2 || res.ClaimStats.Calls != 4 || res.ClaimStats.Gleanings != 2 {
				t.Fatalf("%d calls (graph %d, claims %d, claim gleanings %d); want 2 + 4, 2 rounds",
					len(reqs), res.Graph.Calls, res.ClaimStats.Calls, res.ClaimStats.Gleanings)
			}
			first := reqs[2].Messages[0].Content
			for _, want := range []string{"find claims", "Claims to look for: acts of meanness", "- SCROOGE\n- person\n", "Passage:\n" + text + "\n\nOutput:"} {
				if !strings.Contains(first, want) {
					t.Errorf("claim prompt lacks %q", want)
				}
			}
			if g := reqs[0].Messages[0].Content; !strings.Contains(g, "Passage:\n"+carolText+"\n\nOutput:") {
				t.Errorf("graph prompt does not hold the stripped text")
			}
			var subjects []string
			for _, c := range res.Claims {
				subjects = append(subjects, c.Subject)
			}
			if d := cmp.Diff([]string{"SUBJECT 0", "SUBJECT 1", "SUBJECT 2"}, subjects); d != "" {
				t.Errorf("claim subjects (-want +got):\n%s", d)
			}
			if c := res.Claims[0]; c.Object != "NONE" || c.Type != "MISERLINESS" || c.Status != "TRUE" || c.Description != "Scrooge is a miser." {
				t.Errorf("claim %+v", c)
			}
			if res.ClaimStats.Claims != 3 || res.ClaimStats.Entities != 0 || res.Graph.Claims != 0 {
				t.Errorf("claim stats %+v, graph stats %+v", res.ClaimStats, res.Graph)
			}
		})
	}
}

// TestEntityTypesReachPrompt runs the NetworkX article's ESG entity types and
// checks that each reaches the prompt as a line of its own, and that the
// chat options reach the server.
func TestEntityTypesReachPrompt(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{})
	srv.Enqueue(reply(ent("PACCAR", "Carbon Emmision reduction", "Cuts CO2 by 35% by 2030.")))
	opts := extraction.DefaultOptions()
	opts.EntityTypes = esgTypes
	opts.MaxGleanings = 0
	temp := float32(0)
	opts.Chat = llm.ChatOptions{Model: "extract-model", Temperature: &temp}
	res, err := extractor(t, client(t, srv), opts).Extract(context.Background(), extraction.Unit{ID: "u", Text: esgText})
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	prompt := reqs[0].Messages[0].Content
	for _, typ := range esgTypes {
		if !strings.Contains(prompt, "\n- "+typ+"\n") {
			t.Errorf("prompt lacks entity type %q", typ)
		}
	}
	for _, typ := range extraction.DefaultEntityTypes() {
		if strings.Contains(prompt, "\n- "+typ+"\n") {
			t.Errorf("prompt lists default type %q", typ)
		}
	}
	if reqs[0].Model != "extract-model" || reqs[0].Extra["temperature"] != float64(0) {
		t.Errorf("model %q, temperature %v; want the chat options'", reqs[0].Model, reqs[0].Extra["temperature"])
	}
	if len(res.Entities) != 1 || res.Entities[0].Type != "CARBON EMMISION REDUCTION" {
		t.Errorf("entities %+v", res.Entities)
	}
}

// TestPromptExamplesParse checks that the examples in the prompts are
// what the parser reads with no repair at all: the prompt teaches the
// format the parser expects.
func TestPromptExamplesParse(t *testing.T) {
	d := tuples.DefaultDelimiters()
	f := prompts.RecordFormat{Tuple: d.Tuple, Record: d.Record, Completion: d.Completion}
	example := func(name string, data any) string {
		s, err := prompts.Render(name, data)
		if err != nil {
			t.Fatal(err)
		}
		_, s, _ = strings.Cut(s, "\nOutput:\n")
		s, _, _ = strings.Cut(s, "\n\nNow the real passage")
		return s
	}
	g := tuples.ParseGraph(example("index_extract", prompts.IndexExtract{RecordFormat: f, EntityTypes: []string{"x"}, Text: "t"}), d)
	if len(g.Entities) != 6 || len(g.Relationships) != 6 || len(g.Dropped) != 0 || len(g.Repairs) != 0 {
		t.Errorf("graph example: %d entities, %d relationships, dropped %v, repairs %v; want 6, 6, none, none",
			len(g.Entities), len(g.Relationships), g.Dropped, g.Repairs)
	}
	titles := map[string]bool{}
	for _, e := range g.Entities {
		titles[e.Title] = true
	}
	for _, r := range g.Relationships {
		if !titles[r.Source] || !titles[r.Target] || !r.HasWeight {
			t.Errorf("graph example relationship %+v: an end is no entity, or no strength", r)
		}
	}
	c := tuples.ParseClaims(example("index_claims", prompts.IndexClaims{RecordFormat: f, EntitySpecs: []string{"x"}, ClaimDescription: "y", Text: "t"}), d)
	if len(c.Claims) != 2 || len(c.Dropped) != 0 || len(c.Repairs) != 0 {
		t.Errorf("claims example: %d claims, dropped %v, repairs %v; want 2, none, none", len(c.Claims), c.Dropped, c.Repairs)
	}
}

// TestTokenCounts checks kgrag's token counts against the messages the
// server received, counted with the encoder: every message of every call,
// and every reply.
func TestTokenCounts(t *testing.T) {
	replies := []string{roundReply(0), roundReply(1), "Y", roundReply(2)}
	res, srv := extractQueued(t, 2, replies...)
	enc := encoder(t)
	prompt, completion := 0, 0
	for _, r := range srv.Requests() {
		for _, m := range r.Messages {
			prompt += enc.Count(m.Content)
		}
	}
	for _, r := range replies {
		completion += enc.Count(r)
	}
	st := res.Graph
	if st.PromptTokens != prompt || st.CompletionTokens != completion {
		t.Errorf("tokens %d + %d; want %d + %d", st.PromptTokens, st.CompletionTokens, prompt, completion)
	}
	if st.Server.PromptTokens == 0 || st.Server.TotalTokens != st.Server.PromptTokens+st.Server.CompletionTokens {
		t.Errorf("server usage %+v; want the server's counts added up", st.Server)
	}
	if st.Elapsed <= 0 || res.Elapsed < st.Elapsed {
		t.Errorf("elapsed %v, unit %v", st.Elapsed, res.Elapsed)
	}
}

// TestBlankText checks that a blank text unit costs no call.
func TestBlankText(t *testing.T) {
	m := &fakeModel{answer: func(int, []llm.Message) (string, error) { return "", nil }}
	opts := extraction.DefaultOptions()
	opts.Claims.Enabled = true
	res, err := extractor(t, m, opts).Extract(context.Background(), extraction.Unit{ID: "u", Text: " \n\t\x1c\u3000"})
	if err != nil || len(m.calls) != 0 || res.Graph.Calls != 0 || res.TextUnitID != "u" {
		t.Errorf("blank text: err %v, %d calls; want none", err, len(m.calls))
	}
}

// TestFailedCalls checks that a failed call is reported with the text
// unit's id, the stage and the round, and that the others go on unless
// the failure would fail them too.
func TestFailedCalls(t *testing.T) {
	units := []extraction.Unit{{ID: "unit-a", Text: "Text A."}, {ID: "unit-b", Text: "Text B."}, {ID: "unit-c", Text: "Text C."}}

	t.Run("refused request fails one unit", func(t *testing.T) {
		srv := llmtest.Start(t, llmtest.Config{})
		scripted(srv, func(tu turn) string { return roundReply(tu.n) })
		srv.Fail(llmtest.Failure{Path: "/chat/completions", Status: 400, Message: "prompt too long"})
		b, err := extractor(t, client(t, srv), extraction.DefaultOptions()).Run(context.Background(), units, extraction.RunOptions{Concurrency: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Failed) != 1 || b.Failed[0].TextUnitID != "unit-a" || b.Failed[0].Stage != extraction.StageGraph || b.Failed[0].Round != 0 {
			t.Fatalf("failed %v; want unit-a's first graph call", b.Failed)
		}
		f := b.Failed[0]
		if !errors.Is(f, llm.ErrRequest) || !strings.Contains(f.Error(), "text unit unit-a") || b.Results[0].Err != f {
			t.Errorf("error %q; want it to name unit-a and wrap llm.ErrRequest", f)
		}
		if b.Results[1].Err != nil || b.Results[2].Err != nil || len(b.Results[2].Entities) != 2 {
			t.Errorf("the other units: %v, %v, %d entities; want them done", b.Results[1].Err, b.Results[2].Err, len(b.Results[2].Entities))
		}
		if x := extraction.Extractions(b.Results); len(x) != 2 || x[0].TextUnitID != "unit-b" {
			t.Errorf("Extractions kept %d units; want unit-b and unit-c", len(x))
		}
	})

	t.Run("unknown model stops the run", func(t *testing.T) {
		srv := llmtest.Start(t, llmtest.Config{Models: []string{"another-model"}})
		var progress []int
		b, err := extractor(t, client(t, srv), extraction.DefaultOptions()).Run(context.Background(), units,
			extraction.RunOptions{Concurrency: 1, Progress: func(done, _ int) { progress = append(progress, done) }})
		var ue *extraction.UnitError
		if !errors.As(err, &ue) || ue.TextUnitID != "unit-a" || !errors.Is(err, llm.ErrModelNotFound) {
			t.Fatalf("Run error %v; want unit-a's model-not-found", err)
		}
		if srv.Count("/chat/completions") != 1 || b.Results[1] != nil || len(b.Failed) != 1 {
			t.Errorf("%d calls, result b %v, failed %v; want the run stopped after one", srv.Count("/chat/completions"), b.Results[1], b.Failed)
		}
		if d := cmp.Diff([]int{0, 1}, progress); d != "" {
			t.Errorf("progress (-want +got):\n%s", d)
		}
	})

	t.Run("every unit failing fails the run", func(t *testing.T) {
		srv := llmtest.Start(t, llmtest.Config{})
		srv.FailN(3, llmtest.Failure{Path: "/chat/completions", Status: 400})
		b, err := extractor(t, client(t, srv), extraction.DefaultOptions()).Run(context.Background(), units, extraction.RunOptions{Concurrency: 2})
		if err == nil || !strings.Contains(err.Error(), "all 3 text units failed") || len(b.Failed) != 3 {
			t.Errorf("Run error %v, %d failed; want all 3", err, len(b.Failed))
		}
	})

	t.Run("gleaning round fails", func(t *testing.T) {
		m := &fakeModel{answer: func(call int, _ []llm.Message) (string, error) {
			if call == 1 {
				return "", errModel
			}
			return roundReply(call), nil
		}}
		res, err := extractor(t, m, extraction.DefaultOptions()).Extract(context.Background(), units[1])
		var ue *extraction.UnitError
		if !errors.As(err, &ue) || ue.TextUnitID != "unit-b" || ue.Stage != extraction.StageGraph || ue.Round != 1 || !errors.Is(err, errModel) {
			t.Fatalf("error %v; want unit-b's graph round 1", err)
		}
		if res.GraphOK() || len(res.Entities) != 1 || res.Graph.Calls != 2 {
			t.Errorf("GraphOK %v, %d entities, %d calls; want the first round's records kept, the graph failed", res.GraphOK(), len(res.Entities), res.Graph.Calls)
		}
	})

	t.Run("claims fail, graph kept", func(t *testing.T) {
		m := &fakeModel{answer: func(call int, _ []llm.Message) (string, error) {
			if call == 2 {
				return "", errModel
			}
			return roundReply(call), nil
		}}
		opts := extraction.DefaultOptions()
		opts.Claims.Enabled = true
		res, err := extractor(t, m, opts).Extract(context.Background(), units[2])
		var ue *extraction.UnitError
		if !errors.As(err, &ue) || ue.Stage != extraction.StageClaims || ue.Round != 0 {
			t.Fatalf("error %v; want the first claims call", err)
		}
		x := extraction.Extractions([]*extraction.Result{res})
		if !res.GraphOK() || len(x) != 1 || len(x[0].Entities) != 2 {
			t.Errorf("Extractions %+v; want the graph's 2 entities", x)
		}
	})

	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		m := &fakeModel{answer: func(call int, _ []llm.Message) (string, error) {
			cancel()
			return roundReply(call), nil
		}}
		b, err := extractor(t, m, extraction.DefaultOptions()).Run(ctx, units, extraction.RunOptions{Concurrency: 1})
		if !errors.Is(err, context.Canceled) || len(m.calls) != 1 || b.Results[1] != nil {
			t.Errorf("Run error %v after %d calls; want context.Canceled after 1", err, len(m.calls))
		}
	})
}

// TestRun runs many units concurrently against a slow server: the limit
// holds, progress counts up one call at a time, results keep the units'
// order and the batch adds up their counts.
func TestRun(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{Latency: 10 * time.Millisecond})
	scripted(srv, func(tu turn) string {
		if tu.kind == msgLoop {
			return "N"
		}
		return reply(ent(strings.ToUpper(strings.TrimSuffix(tu.text, ".")), "PERSON", "round "+fmt.Sprint(tu.n)))
	})
	var units []extraction.Unit
	for i := range 24 {
		units = append(units, extraction.Unit{ID: fmt.Sprintf("id-%02d", i), Text: fmt.Sprintf("Person %d.", i)})
	}
	opts := extraction.DefaultOptions()
	opts.MaxGleanings = 2
	var mu sync.Mutex
	var progress []int
	b, err := extractor(t, client(t, srv), opts).Run(context.Background(), units, extraction.RunOptions{Concurrency: 4,
		Progress: func(done, total int) {
			mu.Lock()
			defer mu.Unlock()
			if total != len(units) {
				t.Errorf("progress total %d", total)
			}
			progress = append(progress, done)
		}})
	if err != nil {
		t.Fatal(err)
	}
	if n := srv.MaxInFlight(); n > 4 || n < 2 {
		t.Errorf("at most %d calls in flight; want 2 to 4", n)
	}
	for i, p := range progress {
		if p != i {
			t.Fatalf("progress %v; want 0, 1, ..., %d", progress, len(units))
		}
	}
	if len(progress) != len(units)+1 {
		t.Errorf("%d progress calls; want %d", len(progress), len(units)+1)
	}
	for i, r := range b.Results {
		want := fmt.Sprintf("PERSON %d", i)
		if r.TextUnitID != units[i].ID || len(r.Entities) != 2 || r.Entities[0].Title != want {
			t.Errorf("result %d: unit %s, entities %+v; want %s's two records of %s", i, r.TextUnitID, r.Entities, units[i].ID, want)
		}
	}
	calls := srv.Count("/chat/completions")
	if b.Graph.Calls != calls || calls != 3*len(units) || b.Graph.Gleanings != 24 || b.Graph.Entities != 48 || b.Claims.Calls != 0 {
		t.Errorf("batch stats %+v for %d server calls; want 3 calls a unit", b.Graph, calls)
	}
	x := extraction.Extractions(b.Results)
	if len(x) != len(units) || x[5].TextUnitID != "id-05" || x[5].Entities[1].Description != "round 1" {
		t.Errorf("Extractions: %d, %+v", len(x), x[5])
	}
}

// TestExtraction checks the mapping to graphbuild's input, and that it
// merges as GraphRAG merges gleaning rounds: a record repeated in a later
// round counts twice.
func TestExtraction(t *testing.T) {
	res := &extraction.Result{TextUnitID: "t1",
		Entities: []tuples.Entity{{Title: "SCROOGE", Type: "PERSON", Description: "a miser"}, {Title: "SCROOGE", Type: "PERSON", Description: "a miser"}},
		Relationships: []tuples.Relationship{{Source: "SCROOGE", Target: "MARLEY", Description: "partners", Weight: 9, HasWeight: true},
			{Source: "SCROOGE", Target: "MARLEY", Description: "partners", Weight: tuples.DefaultWeight}},
	}
	x := res.Extraction()
	want := graphbuild.Extraction{TextUnitID: "t1",
		Entities: []graphbuild.Entity{{Title: "SCROOGE", Type: "PERSON", Description: "a miser"}, {Title: "SCROOGE", Type: "PERSON", Description: "a miser"}},
		Relationships: []graphbuild.Relationship{{Source: "SCROOGE", Target: "MARLEY", Description: "partners", Weight: 9, HasWeight: true},
			{Source: "SCROOGE", Target: "MARLEY", Description: "partners", Weight: 1}},
	}
	if d := cmp.Diff(want, x); d != "" {
		t.Errorf("Extraction (-want +got):\n%s", d)
	}
	g := graphbuild.Merge([]graphbuild.Extraction{x, {TextUnitID: "t2", Entities: []graphbuild.Entity{{Title: "MARLEY", Type: "PERSON"}}}})
	if len(g.Entities) != 2 || g.Entities[0].Frequency != 2 || len(g.Relationships) != 1 || g.Relationships[0].Weight != 10 {
		t.Errorf("merged %+v", g)
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*extraction.Options)
		want string // "" for valid
	}{
		{"defaults", func(*extraction.Options) {}, ""},
		{"claims on with defaults", func(o *extraction.Options) { o.Claims.Enabled = true }, ""},
		{"no entity types", func(o *extraction.Options) { o.EntityTypes = nil }, "no entity type"},
		{"blank entity type", func(o *extraction.Options) { o.EntityTypes = []string{"person", " "} }, "entity type 2"},
		{"entity type on two lines", func(o *extraction.Options) { o.EntityTypes = []string{"a\nb"} }, "one non-blank line"},
		{"negative gleanings", func(o *extraction.Options) { o.MaxGleanings = -1 }, "max gleanings -1"},
		{"claims off ignore their settings", func(o *extraction.Options) { o.Claims.EntitySpecs = nil; o.Claims.MaxGleanings = -1 }, ""},
		{"claims without specs", func(o *extraction.Options) { o.Claims.Enabled = true; o.Claims.EntitySpecs = nil }, "claim entity specification"},
		{"claims without description", func(o *extraction.Options) { o.Claims.Enabled = true; o.Claims.Description = "" }, "claim description"},
		{"claims negative gleanings", func(o *extraction.Options) { o.Claims.Enabled = true; o.Claims.MaxGleanings = -2 }, "claim max gleanings"},
	}
	for _, tt := range tests {
		o := extraction.DefaultOptions()
		tt.edit(&o)
		err := o.Validate()
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s: Validate() = %v; want %q", tt.name, err, tt.want)
		}
		if _, nerr := extraction.New(&fakeModel{}, nil, o); (nerr == nil) != (err == nil) {
			t.Errorf("%s: New error %v, Validate %v", tt.name, nerr, err)
		}
	}
	if _, err := extraction.New(nil, nil, extraction.DefaultOptions()); err == nil {
		t.Error("New(nil model) did not fail")
	}
	// GraphRAG 3.3.0's defaults.
	d := extraction.DefaultOptions()
	want := extraction.Options{EntityTypes: []string{"organization", "person", "geo", "event"}, MaxGleanings: 1,
		Claims: extraction.ClaimOptions{Description: "Any claims or facts that could be relevant to information discovery.",
			EntitySpecs: []string{"organization", "person", "geo", "event"}, MaxGleanings: 1}}
	if d := cmp.Diff(want, d, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("DefaultOptions (-want +got):\n%s", d)
	}
}

// TestGleaningsFitWindow checks that no call's conversation passes
// MaxPromptTokens, counted on what the server received, and that the
// rounds left out are counted.
func TestGleaningsFitWindow(t *testing.T) {
	enc := encoder(t)
	var first int
	prev := -1
	for _, extra := range []int{20, 150, 300, 450, 1 << 20} {
		srv := llmtest.Start(t, llmtest.Config{})
		scripted(srv, func(tu turn) string {
			if tu.kind == msgLoop {
				return "Y"
			}
			return roundReply(tu.n)
		})
		opts := extraction.DefaultOptions()
		opts.MaxGleanings = 3
		x := extractor(t, client(t, srv), opts)
		if first == 0 {
			p, err := x.PromptTokens()
			if err != nil {
				t.Fatal(err)
			}
			first = p + enc.Count(strings.TrimSpace(carolText))
		}
		opts.MaxPromptTokens = first + extra
		res, err := extractor(t, client(t, srv), opts).Extract(context.Background(), extraction.Unit{ID: "u1", Text: carolText})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range srv.Requests() {
			n := 0
			for _, m := range r.Messages {
				n += enc.Count(m.Content) + 4
			}
			if n > opts.MaxPromptTokens {
				t.Errorf("bound %d: call %d sent %d tokens", opts.MaxPromptTokens, i+1, n)
			}
		}
		st := res.Graph
		t.Logf("bound first+%d: %d gleanings, %d skipped, %d calls", extra, st.Gleanings, st.GleaningsSkipped, st.Calls)
		if st.Gleanings < prev {
			t.Errorf("bound first+%d: %d gleanings, fewer than under a smaller bound (%d)", extra, st.Gleanings, prev)
		}
		prev = st.Gleanings
		if want := st.Gleanings < 3; (st.GleaningsSkipped == 1) != want || st.GleaningsSkipped > 1 {
			t.Errorf("bound first+%d: %d gleanings, %d skipped; want 1 skipped exactly when fewer than 3 rounds ran", extra, st.Gleanings, st.GleaningsSkipped)
		}
		if extra == 20 && st.Gleanings != 0 || extra == 1<<20 && st.Gleanings != 3 {
			t.Errorf("bound first+%d: %d gleanings; want none with no room, all 3 with all of it", extra, st.Gleanings)
		}
	}
}
