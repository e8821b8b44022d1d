package graphbuild_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/internal/graphbuild"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/tokens"
)

// genConfig shapes a generated corpus of extraction records.
type genConfig struct {
	units       int // text units
	maxRecords  int // entities and relationships per unit: 0..maxRecords each
	titles      int // distinct entity titles
	orphans     int // relationship ends that are never entity titles
	descs       int // distinct descriptions
	allRelate   bool
	emptyTitles bool // now and then an entity or end titled ""
}

// generate draws extraction records: titles repeated across units and
// with more than one type, descriptions repeated, some records twice in a
// unit, relationships in both directions, self-pairs, ends that are no
// entity, weights missing or fractional. With allRelate every unit has a
// relationship, else some have none (the two ways pandas sums weights).
func generate(seed uint64, c genConfig) []graphbuild.Extraction {
	r := rand.New(rand.NewPCG(seed, 0x6b677261))
	// Odd titles sort differently by bytes and by case, and are not ASCII.
	oddTitles := []string{"apple", "Apple", "ÉCOLE", "ZÜRICH", "東京", "Ω-LAB", "A B", "Z"}
	titles := make([]string, c.titles)
	for i := range titles {
		titles[i] = fmt.Sprintf("E%03d", i)
		if i < len(oddTitles) {
			titles[i] = oddTitles[i]
		}
	}
	types := []string{"PERSON", "ORGANIZATION", "GEO", "EVENT"}
	words := strings.Fields("the a miser clerk ghost of Christmas past present future who visits Scrooge " +
		"at night and shows him his own grave counting house in London partner Marley died seven years ago " +
		"nephew Fred invites dinner Tiny Tim is ill Cratchit family café naïve 東京")
	descs := make([]string, c.descs)
	for i := range descs {
		n := 1 + r.IntN(30)
		ws := make([]string, n)
		for j := range ws {
			ws[j] = words[r.IntN(len(words))]
		}
		descs[i] = strings.Join(ws, " ") + "."
	}
	descs[0] = "" // GraphRAG keeps empty descriptions in the list
	weights := []float64{1, 2, 5, 10, 0.1, 0.7, 2.5, 1e-3, 3.3333, 7.25}
	title := func() string {
		if c.emptyTitles && r.IntN(100) == 0 {
			return ""
		}
		return titles[r.IntN(len(titles))]
	}
	end := func() string {
		if c.orphans > 0 && r.IntN(10) == 0 {
			return fmt.Sprintf("ORPHAN%d", r.IntN(c.orphans))
		}
		return title()
	}
	exts := make([]graphbuild.Extraction, c.units)
	for u := range exts {
		x := &exts[u]
		x.TextUnitID = fmt.Sprintf("tu-%04d", u)
		for range r.IntN(c.maxRecords + 1) {
			e := graphbuild.Entity{Title: title(), Type: types[r.IntN(len(types))], Description: descs[r.IntN(len(descs))]}
			x.Entities = append(x.Entities, e)
			if r.IntN(20) == 0 {
				x.Entities = append(x.Entities, e)
			}
		}
		n := r.IntN(c.maxRecords + 1)
		if c.allRelate {
			n = max(n, 1)
		}
		for range n {
			rel := graphbuild.Relationship{Source: end(), Target: end(), Description: descs[r.IntN(len(descs))]}
			switch r.IntN(20) {
			case 0:
				rel.Target = rel.Source
			case 1, 2:
				rel.Source, rel.Target = rel.Target, rel.Source
			}
			if r.IntN(5) > 0 {
				rel.Weight, rel.HasWeight = weights[r.IntN(len(weights))], true
			}
			x.Relationships = append(x.Relationships, rel)
		}
	}
	return exts
}

// fakeSummary is the test model's reply to a summary call over descs:
// scripts/graphrag_graph.py's summary(), byte for byte.
func fakeSummary(descs []string) string {
	h := sha256.Sum256([]byte(strings.Join(descs, "\n")))
	firsts := make([]string, len(descs))
	for i, d := range descs {
		if f := strings.Fields(d); len(f) > 0 {
			firsts[i] = f[0]
		}
	}
	return "S" + hex.EncodeToString(h[:])[:8] + " " + strings.Join(firsts, " ")
}

// summaryCall is one summary prompt as the model received it: whose
// description it asks for ("e", title or "r", source, target) and the
// descriptions listed.
type summaryCall struct {
	Key          []string
	Descriptions []string
}

// parseSummaryPrompt reads back what index_summarize.tmpl wrote.
func parseSummaryPrompt(t testing.TB, p string) summaryCall {
	t.Helper()
	var c summaryCall
	in := false
	for line := range strings.SplitSeq(p, "\n") {
		switch {
		case strings.HasPrefix(line, "Entity: "):
			c.Key = []string{"e", strings.TrimPrefix(line, "Entity: ")}
		case strings.HasPrefix(line, "Relationship: "):
			s, tg, ok := strings.Cut(strings.TrimPrefix(line, "Relationship: "), " -> ")
			if !ok {
				t.Fatalf("relationship line %q", line)
			}
			c.Key = []string{"r", s, tg}
		case line == "Descriptions:":
			in = true
		case in && strings.HasPrefix(line, "- "):
			c.Descriptions = append(c.Descriptions, strings.TrimPrefix(line, "- "))
		case in:
			in = false
		}
	}
	if c.Key == nil || c.Descriptions == nil {
		t.Fatalf("not a summary prompt:\n%s", p)
	}
	return c
}

// summaryServer answers every summary prompt with fakeSummary.
func summaryServer(t testing.TB, cfg llmtest.Config) *llmtest.Server {
	srv := llmtest.Start(t, cfg)
	srv.Respond(func(r llmtest.Request) (string, bool) {
		return fakeSummary(parseSummaryPrompt(t, r.Messages[len(r.Messages)-1].Content).Descriptions), true
	})
	return srv
}

// calls returns the summary prompts srv received, in order.
func calls(t testing.TB, srv *llmtest.Server) []summaryCall {
	t.Helper()
	var out []summaryCall
	for _, r := range srv.Requests() {
		if strings.HasSuffix(r.Path, "/chat/completions") {
			if len(r.Messages) != 1 || r.Messages[0].Role != llm.RoleUser {
				t.Fatalf("summary request has messages %+v; want one user message", r.Messages)
			}
			out = append(out, parseSummaryPrompt(t, r.Messages[0].Content))
		}
	}
	return out
}

func client(t testing.TB, srv *llmtest.Server) *llm.Client {
	t.Helper()
	c, err := llm.New(llm.Config{BaseURL: srv.URL(), ChatModel: "test-chat", HTTPClient: srv.Client(), Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func encoder(t testing.TB) *tokens.Encoder {
	t.Helper()
	enc, err := tokens.NewEncoder(tokens.EncodingO200K)
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

// summarizer returns a Summarizer over srv whose calls leave budget
// tokens for descriptions.
func summarizer(t testing.TB, srv *llmtest.Server, budget int) *graphbuild.Summarizer {
	t.Helper()
	s := &graphbuild.Summarizer{Model: client(t, srv), Encoder: encoder(t), MaxLength: 120, Concurrency: 4}
	n, err := s.PromptTokens()
	if err != nil {
		t.Fatal(err)
	}
	s.MaxInputTokens = n + budget
	return s
}
