package indexer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/indexer"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/test"
)

// characters are names the scripted model "finds" in a chunk when the
// chunk's text holds them (any case), so the graph is made of real
// characters of the text, as a model would extract them.
var characters = []struct{ name, typ string }{
	{"Scrooge", "person"}, {"Marley", "person"}, {"Fred", "person"},
	{"Cratchit", "person"}, {"Fezziwig", "person"}, {"Belle", "person"},
	{"London", "geo"}, {"Christmas", "event"},
}

// carolInput writes the first words of A Christmas Carol into a fresh
// input folder.
func carolInput(t *testing.T, words int) string {
	t.Helper()
	path := filepath.Join(filepath.Dir(test.GraphRAGSamples(t)), "text", "a-christmas-carol.txt")
	b, err := os.ReadFile(path)
	if err != nil {
		test.SkipOrFail(t, "Christmas Carol text: %v", err)
	}
	fields := strings.Fields(string(b))
	if len(fields) > words {
		fields = fields[:words]
	}
	dir := filepath.Join(t.TempDir(), "input")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "carol.txt"), []byte(strings.Join(fields, " ")), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// scriptModel answers extraction prompts with records naming the
// characters of the passage, summary prompts with a sentence and report
// prompts with a report.
func scriptModel(srv *llmtest.Server) {
	srv.Respond(func(req llmtest.Request) (string, bool) {
		if len(req.Messages) == 0 {
			return "", false
		}
		first := req.Messages[0].Content
		last := req.Messages[len(req.Messages)-1].Content
		switch {
		case strings.Contains(first, "Entity types") && len(req.Messages) > 1:
			return "<|COMPLETE|>", true // gleaning: nothing more
		case strings.Contains(first, "Entity types"):
			return extractionReply(last), true
		case strings.Contains(last, "Combine these descriptions"):
			return "One combined description of the entity.", true
		case strings.Contains(last, "---Data---"):
			b, _ := json.Marshal(map[string]any{
				"title": "Scrooge and his circle", "summary": "Scrooge and those he deals with.",
				"findings": []map[string]string{{"summary": "Scrooge is central", "explanation": "He links the others."}},
				"rating":   5.0, "rating_explanation": "Moderate importance.",
			})
			return string(b), true
		}
		return "", false
	})
}

func extractionReply(prompt string) string {
	text := strings.ToLower(prompt[strings.LastIndex(prompt, "Entity types"):])
	var found []string
	var recs []string
	for _, c := range characters {
		if strings.Contains(text, strings.ToLower(c.name)) {
			n := strings.ToUpper(c.name)
			found = append(found, n)
			// The description differs between passages, so that merged
			// entities need a summary.
			recs = append(recs, fmt.Sprintf(`("entity"<|>%s<|>%s<|>%s appears in a passage of %d characters.)`, n, c.typ, c.name, len(text)))
		}
	}
	// A chain, so that the graph is more than one star.
	for i := 1; i < len(found); i++ {
		recs = append(recs, fmt.Sprintf(`("relationship"<|>%s<|>%s<|>%s and %s appear together in %d characters.<|>%d)`,
			found[i-1], found[i], found[i-1], found[i], len(text), i+1))
	}
	return strings.Join(recs, "\n##\n") + "\n<|COMPLETE|>"
}

func TestRunChristmasCarol(t *testing.T) {
	ctx := context.Background()
	srv := llmtest.Start(t, llmtest.Config{})
	scriptModel(srv)
	client, err := llm.New(llm.Config{BaseURL: srv.URL(), ChatModel: "m", Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	opts := indexer.DefaultOptions()
	opts.Input = carolInput(t, 4000)
	opts.Output = filepath.Join(tmp, "output")
	opts.CacheDir = filepath.Join(tmp, "cache")
	opts.Model = "m"
	opts.Concurrency = 2
	opts.Chunk.Size, opts.Chunk.Overlap = 400, 50

	sum, err := indexer.Run(ctx, client, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("summary %+v", *sum)
	calls := srv.Count("/chat/completions")
	if calls == 0 {
		t.Fatal("no model calls")
	}
	var stageCalls int64
	for _, s := range sum.Stages {
		stageCalls += s.Calls
		if s.Calls == 0 {
			t.Errorf("stage %s made no call", s.Stage)
		}
	}
	if stageCalls != int64(calls) {
		t.Errorf("stages count %d calls, the server saw %d (%+v)", stageCalls, calls, sum.Stages)
	}

	ds, err := graphrag.Open(ctx, opts.Output)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Release != graphrag.Release3 {
		t.Errorf("release %q, want %q", ds.Release, graphrag.Release3)
	}
	if len(ds.Documents) != 1 || len(ds.TextUnits) < 5 || len(ds.Entities) < 3 || len(ds.Relationships) < 2 || len(ds.Communities) == 0 {
		t.Fatalf("documents %d, text units %d, entities %d, relationships %d, communities %d",
			len(ds.Documents), len(ds.TextUnits), len(ds.Entities), len(ds.Relationships), len(ds.Communities))
	}
	reportsN := 0
	for _, c := range ds.Communities {
		if c.Report != nil {
			reportsN++
		}
	}
	if reportsN == 0 || reportsN != sum.Reports {
		t.Errorf("%d communities with reports, run wrote %d", reportsN, sum.Reports)
	}
	titles := map[string]bool{}
	for _, e := range ds.Entities {
		titles[e.Title] = true
	}
	for _, want := range []string{"SCROOGE", "MARLEY"} {
		if !titles[want] {
			t.Errorf("no entity %s", want)
		}
	}
	// Every text unit naming Scrooge (the model named him wherever the
	// text does) lists his entity id.
	var scrooge string
	for _, e := range ds.Entities {
		if e.Title == "SCROOGE" {
			scrooge = e.ID
		}
	}
	withIDs := 0
	for _, u := range ds.TextUnits {
		if strings.Contains(strings.ToLower(u.Text), "scrooge") != contains(u.EntityIDs, scrooge) {
			t.Errorf("text unit %s: names Scrooge %v, entity ids %v", u.HumanReadableID,
				strings.Contains(strings.ToLower(u.Text), "scrooge"), u.EntityIDs)
		}
		if len(u.RelationshipIDs) > 0 {
			withIDs++
		}
	}
	if withIDs == 0 {
		t.Error("no text unit carries relationship ids")
	}

	// A second run with the same cache makes no call and writes the same.
	srv.Reset()
	sum2, err := indexer.Run(ctx, client, opts)
	if err != nil {
		t.Fatal(err)
	}
	if n := srv.Count("/chat/completions"); n != 0 {
		t.Errorf("second run made %d model calls, want 0", n)
	}
	for _, s := range sum2.Stages {
		if s.Calls != s.Cached {
			t.Errorf("second run, stage %s: %d calls, %d cached", s.Stage, s.Calls, s.Cached)
		}
	}
	ds2, err := graphrag.Open(ctx, opts.Output)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds2.Entities) != len(ds.Entities) || len(ds2.Communities) != len(ds.Communities) {
		t.Errorf("second run: %d entities, %d communities; first %d, %d",
			len(ds2.Entities), len(ds2.Communities), len(ds.Entities), len(ds.Communities))
	}
	left, _ := filepath.Glob(filepath.Join(tmp, ".output.tmp-*"))
	if len(left) > 0 {
		t.Errorf("temporary folders left: %v", left)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
