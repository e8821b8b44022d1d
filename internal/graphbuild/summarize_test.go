package graphbuild_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kgrag/kgrag/internal/graphbuild"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
)

// TestSummarizeCalls checks which items cost a call: only those with two
// or more distinct descriptions, each listed once, sorted, under the
// right name; never a row that Finalize drops.
func TestSummarizeCalls(t *testing.T) {
	g := &graphbuild.Graph{
		Entities: []graphbuild.MergedEntity{
			{Title: "SCROOGE", Type: "PERSON", Descriptions: []string{"Mean.", "A miser.", "Mean."}},
			{Title: "MARLEY", Type: "PERSON", Descriptions: []string{"Dead.", "Dead."}},
			{Title: "FRED", Type: "PERSON", Descriptions: []string{"Nephew."}},
			{Title: "SCROOGE", Type: "MISER", Descriptions: []string{"Counts coins.", "Hoards."}}, // dropped by Finalize
			{Title: "", Type: "PERSON", Descriptions: []string{"x", "y"}},                         // dropped by Finalize
			{Title: "NOBODY", Type: "PERSON", Descriptions: nil},
		},
		Relationships: []graphbuild.MergedRelationship{
			{Source: "SCROOGE", Target: "MARLEY", Descriptions: []string{"Partners.", "Haunted by."}},
			{Source: "MARLEY", Target: "SCROOGE", Descriptions: []string{"Haunts."}},
		},
	}
	srv := summaryServer(t, llmConfig())
	st, err := summarizer(t, srv, 1000).Summarize(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"e SCROOGE":        {"A miser.", "Mean."},
		"r SCROOGE MARLEY": {"Haunted by.", "Partners."},
	}
	got := map[string][]string{}
	for _, c := range calls(t, srv) {
		got[strings.Join(c.Key, " ")] = c.Descriptions
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("summary calls (-want +got):\n%s", d)
	}
	wantDesc := []string{fakeSummary(want["e SCROOGE"]), "Dead.", "Nephew.", "", "", ""}
	for i, e := range g.Entities {
		if e.Description != wantDesc[i] {
			t.Errorf("entity %d (%s) description %q; want %q", i, e.Title, e.Description, wantDesc[i])
		}
	}
	if g.Relationships[0].Description != fakeSummary(want["r SCROOGE MARLEY"]) || g.Relationships[1].Description != "Haunts." {
		t.Errorf("relationship descriptions %q, %q", g.Relationships[0].Description, g.Relationships[1].Description)
	}
	wantSt := graphbuild.Stats{Items: 6, Summarised: 2, Calls: 2}
	st.Usage = llm.Usage{}
	if st != wantSt {
		t.Errorf("Stats = %+v; want %+v", st, wantSt)
	}
}

// TestSummarizeRounds gives one entity more descriptions than a call
// holds: the first call takes what fits plus the one that overflowed, and
// each summary joins the remaining descriptions, sorted among them.
func TestSummarizeRounds(t *testing.T) {
	var descs []string
	for i := range 10 {
		descs = append(descs, fmt.Sprintf("Fact %d: Scrooge keeps the office cold and the coal box in his own room.", i))
	}
	g := &graphbuild.Graph{Entities: []graphbuild.MergedEntity{{Title: "SCROOGE", Descriptions: descs}}}
	srv := summaryServer(t, llmConfig())
	s := summarizer(t, srv, 40) // about two descriptions a call
	enc := encoder(t)
	if _, err := s.Summarize(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	cs := calls(t, srv)
	if len(cs) < 3 {
		t.Fatalf("%d calls for 10 descriptions of %d tokens with room for 40; want several", len(cs), enc.Count(descs[0]))
	}
	seen := 0
	prev := ""
	for i, c := range cs {
		var own []string
		for _, d := range c.Descriptions {
			if d == prev {
				continue
			}
			own = append(own, d)
		}
		if i > 0 && len(own) == len(c.Descriptions) {
			t.Errorf("call %d lacks the summary of call %d: %q", i, i-1, c.Descriptions)
		}
		if !sortedStrings(c.Descriptions) || len(c.Descriptions) < 2 {
			t.Errorf("call %d lists %q; want two or more, sorted", i, c.Descriptions)
		}
		if i < len(cs)-1 {
			tokens := 0
			for _, d := range c.Descriptions[:len(c.Descriptions)-1] {
				tokens += enc.Count(d)
			}
			if tokens > 40 {
				t.Errorf("call %d holds %d tokens before its last description; room was 40", i, tokens)
			}
		}
		seen += len(own)
		prev = fakeSummary(c.Descriptions)
	}
	if seen != len(descs) || g.Entities[0].Description != prev {
		t.Errorf("calls read %d of %d descriptions; description %q, last summary %q", seen, len(descs), g.Entities[0].Description, prev)
	}
}

func sortedStrings(ss []string) bool {
	for i := 1; i < len(ss); i++ {
		if ss[i-1] > ss[i] {
			return false
		}
	}
	return true
}

// TestSummarizeConcurrency checks that no more than Concurrency calls are
// in flight, and that the bound is used.
func TestSummarizeConcurrency(t *testing.T) {
	for _, limit := range []int{1, 3} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			g := &graphbuild.Graph{}
			for i := range 12 {
				g.Entities = append(g.Entities, graphbuild.MergedEntity{Title: fmt.Sprint("E", i), Descriptions: []string{"a", "b"}})
			}
			srv := summaryServer(t, llmtest.Config{Latency: 30 * time.Millisecond})
			s := summarizer(t, srv, 1000)
			s.Concurrency = limit
			var mu sync.Mutex
			var progress [][2]int
			s.Progress = func(done, total int) {
				mu.Lock()
				progress = append(progress, [2]int{done, total})
				mu.Unlock()
			}
			st, err := s.Summarize(context.Background(), g)
			if err != nil {
				t.Fatal(err)
			}
			if got := srv.MaxInFlight(); got != limit {
				t.Errorf("MaxInFlight = %d; want %d", got, limit)
			}
			if st.Calls != 12 || srv.Count("/chat/completions") != 12 {
				t.Errorf("%d calls counted, %d served; want 12", st.Calls, srv.Count("/chat/completions"))
			}
			for i, p := range progress {
				if p != [2]int{i, 12} {
					t.Fatalf("progress %v; want 0..12 of 12 in order", progress)
				}
			}
			if len(progress) != 13 {
				t.Errorf("progress called %d times; want 13", len(progress))
			}
		})
	}
}

// TestSummarizeError checks that a failed call stops the run with an
// error naming the entity or relationship and keeping the model's error.
func TestSummarizeError(t *testing.T) {
	tests := []struct {
		name string
		g    *graphbuild.Graph
		want string
	}{
		{"entity", &graphbuild.Graph{Entities: []graphbuild.MergedEntity{
			{Title: "FRED", Descriptions: []string{"one"}},
			{Title: "SCROOGE", Descriptions: []string{"a", "b"}},
			{Title: "MARLEY", Descriptions: []string{"a", "b"}},
		}}, `graphbuild: summarize entity "SCROOGE": llm: chat`},
		{"relationship", &graphbuild.Graph{Relationships: []graphbuild.MergedRelationship{
			{Source: "SCROOGE", Target: "MARLEY", Descriptions: []string{"a", "b"}},
		}}, `graphbuild: summarize relationship "SCROOGE" -> "MARLEY": llm: chat`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := summaryServer(t, llmConfig())
			srv.Fail(llmtest.Failure{Status: 400, Message: "prompt too long"})
			s := summarizer(t, srv, 1000)
			s.Concurrency = 1 // the first item is the one that fails
			_, err := s.Summarize(context.Background(), tt.g)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) || !errors.Is(err, llm.ErrRequest) ||
				!strings.Contains(err.Error(), "prompt too long") {
				t.Fatalf("Summarize error = %v; want it to start %q and wrap llm.ErrRequest", err, tt.want)
			}
		})
	}
}

// TestSummarizeReplies checks the handling of replies: white space
// trimmed, an empty reply replaced by the descriptions joined, JoinUnder
// joining short lists without a call.
func TestSummarizeReplies(t *testing.T) {
	srv := llmtest.Start(t, llmConfig())
	srv.Respond(func(r llmtest.Request) (string, bool) {
		if strings.Contains(r.Messages[0].Content, "Entity: EMPTY") {
			return " \n", true
		}
		return "\n  A summary.  \n", true
	})
	g := &graphbuild.Graph{Entities: []graphbuild.MergedEntity{
		{Title: "EMPTY", Descriptions: []string{"b", "a"}},
		{Title: "SPACED", Descriptions: []string{"c", "d"}},
	}}
	s := summarizer(t, srv, 1000)
	st, err := s.Summarize(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	if g.Entities[0].Description != "a\nb" || g.Entities[1].Description != "A summary." || st.EmptyReplies != 1 {
		t.Errorf("descriptions %q, %q, %d empty replies; want the joined list, the trimmed reply, 1",
			g.Entities[0].Description, g.Entities[1].Description, st.EmptyReplies)
	}

	long := strings.Repeat("word ", 50)
	g = &graphbuild.Graph{Entities: []graphbuild.MergedEntity{
		{Title: "SHORT", Descriptions: []string{"Mean.", "A miser."}},
		{Title: "LONG", Descriptions: []string{long, "A miser."}},
	}}
	srv.Reset()
	s.JoinUnder = 20
	st, err = s.Summarize(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	if g.Entities[0].Description != "A miser.\nMean." || g.Entities[1].Description != "A summary." ||
		st.Joined != 1 || st.Calls != 1 || srv.Count("/chat/completions") != 1 {
		t.Errorf("JoinUnder 20: descriptions %q, %q; stats %+v", g.Entities[0].Description, g.Entities[1].Description, st)
	}
}

// TestSummarizeNeedsModel checks the refusal of an incomplete Summarizer.
func TestSummarizeNeedsModel(t *testing.T) {
	_, err := (&graphbuild.Summarizer{}).Summarize(context.Background(), &graphbuild.Graph{})
	if err == nil || !strings.Contains(err.Error(), "needs a model") {
		t.Errorf("Summarize without a model: %v", err)
	}
}

// TestSummarizeCanceled checks that a cancelled run reports the
// cancellation, not success.
func TestSummarizeCanceled(t *testing.T) {
	srv := summaryServer(t, llmConfig())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g := &graphbuild.Graph{Entities: []graphbuild.MergedEntity{{Title: "A", Descriptions: []string{"a", "b"}}}}
	if _, err := summarizer(t, srv, 1000).Summarize(ctx, g); !errors.Is(err, context.Canceled) {
		t.Errorf("Summarize after cancel: %v; want context.Canceled", err)
	}
}
