package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/indexer/indexertest"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/prompttune"
	"github.com/kgrag/kgrag/prompts"
)

// Markers the scripted model writes, each once, so that the test can
// tell where a step's answer went.
const (
	tunedDomain  = "Victorian ghost stories"
	tunedPersona = "You are an expert in Victorian ghost stories, versed in Dickens's London."
	tunedRole    = "An analyst of Dickens's London who reports to literature students."
	tunedRating  = "How central the group is to Scrooge's change of heart."
)

// tuneScript answers each prompt-tune step by its template's own words,
// with the sloppiness of a small model (a think block, labels, quotes,
// a numbered list), and records which step each request was.
func tuneScript(srv *llmtest.Server, steps *[]string) {
	srv.Respond(func(req llmtest.Request) (string, bool) {
		p := req.Messages[len(req.Messages)-1].Content
		step, reply := "", ""
		switch {
		case strings.Contains(p, "what field or subject it belongs to"):
			step, reply = "domain", "<think>It is a novel.</think>\n**Field:** \""+tunedDomain+"\"."
		case strings.Contains(p, "Which language is the text below written in"):
			step, reply = "language", "The language is English."
		case strings.Contains(p, "Describe, in two or three sentences, the expert"):
			step, reply = "persona", "Persona: "+tunedPersona
		case strings.Contains(p, "list the kinds of entity it names"):
			step, reply = "entity types", "Kinds of entity:\n1. Person\n2. **place**\n3. ghost\n4. other\n5. person"
		case strings.Contains(p, "as records, one to a line"):
			step = "example"
			passage := p[strings.LastIndex(p, "Passage: "):]
			if strings.Contains(passage, "Scrooge") {
				// One good record, one invented entity, one of a type not
				// listed: only the first may reach the prompt.
				reply = `("entity"<|>SCROOGE<|>PERSON<|>Scrooge is a tight-fisted old man.)` + "\n##\n" +
					`("entity"<|>ANNA BERG<|>person<|>Copied from the prompt's example.)` + "\n##\n" +
					`("entity"<|>CHRISTMAS<|>holiday<|>Christmas is coming.)` + "\n<|COMPLETE|>"
			} else {
				reply = "I cannot find any entity."
			}
		case strings.Contains(p, "entities this passage names, one per line"):
			step, reply = "example list", "no names here"
		case strings.Contains(p, "say what the rating should measure"):
			step, reply = "rating", tunedRating
		case strings.Contains(p, "describe the analyst who writes these reports"):
			step, reply = "role", tunedRole
		default:
			return "", false
		}
		*steps = append(*steps, step)
		return reply, true
	})
}

// TestPromptTuneThenIndex tunes prompts on a piece of A Christmas Carol
// with the scripted model and indexes with them: each step must get the
// sampled text or the domain found, the files must open as kgrag index
// opens them, and the extraction requests of kgrag index must carry the
// tuned prompt, whose cache keys differ from the built-in prompt's.
func TestPromptTuneThenIndex(t *testing.T) {
	input := indexertest.CarolInput(t, 900)
	srv := llmtest.Start(t, llmtest.Config{})
	var steps []string
	tuneScript(srv, &steps)
	dir := filepath.Join(t.TempDir(), "prompts")
	o := promptTuneOptions{input: input, output: dir, chatModel: "m", selection: prompttune.SelectTop, limit: 3, seed: 1,
		maxEntityTypes: 4, examples: 2, exampleTokens: 150, maxPromptTokens: 2000, sampleTokens: 300,
		chunkSize: 200, overlap: 20, textColumn: "text", llm: llmOptions{url: srv.URL()}}
	term, _, stderr := testTerminal()
	if err := runPromptTune(t.Context(), o, term); err != nil {
		t.Fatalf("runPromptTune: %v\n%s", err, stderr)
	}
	reqs := chatRequests(srv)
	if len(reqs) != len(steps) {
		t.Fatalf("%d chat requests, %d recognised (%v): a request of no known step", len(reqs), len(steps), steps)
	}
	// The first sampled chunk (top selection) opens the book.
	opening := strings.Join(strings.Fields(strings.TrimPrefix(test0(t, input), "\ufeff"))[:12], " ")
	for i, r := range reqs {
		p := r.Messages[0].Content
		switch steps[i] {
		case "domain", "language", "entity types", "rating", "role":
			if !strings.Contains(p, opening) {
				t.Errorf("%s prompt lacks the sample's opening %q:\n%.400s", steps[i], opening, p)
			}
		}
		switch steps[i] {
		case "persona", "entity types", "rating", "role":
			if !strings.Contains(p, tunedDomain) {
				t.Errorf("%s prompt lacks the domain found, %q", steps[i], tunedDomain)
			}
		}
		if (steps[i] == "rating" || steps[i] == "role") && !strings.Contains(p, tunedPersona) {
			t.Errorf("%s prompt lacks the persona found", steps[i])
		}
		if steps[i] == "example" && !strings.Contains(p, "Entity types: person, place, ghost") {
			t.Errorf("example prompt lacks the entity types found:\n%.300s", p)
		}
	}
	if steps[0] != "domain" || steps[1] != "language" || steps[2] != "persona" || steps[3] != "entity types" {
		t.Errorf("steps %v; want domain, language, persona, entity types first", steps)
	}
	if !strings.Contains(stderr.String(), "model calls") {
		t.Errorf("stderr lacks the summary line:\n%s", stderr)
	}

	// The files: they open as kgrag index opens them, and hold what was
	// found.
	set, err := prompts.Open(dir)
	if err != nil {
		t.Fatalf("prompts.Open of what prompt-tune wrote: %v", err)
	}
	if got := strings.Join(set.Replaced(), ","); got != "index_extract,index_report,index_summarize" {
		t.Errorf("replaced %s; want the three templates", got)
	}
	man, err := prompttune.ReadManifest(dir)
	if err != nil || man == nil {
		t.Fatalf("ReadManifest: %v, %v", man, err)
	}
	if man.Domain != tunedDomain || man.Language != "English" || man.Persona != tunedPersona ||
		strings.Join(man.EntityTypes, ",") != "person,place,ghost" || man.Calls != len(reqs) {
		t.Errorf("manifest domain %q, language %q, persona %q, types %v, %d calls; want the scripted answers, cleaned, and %d calls",
			man.Domain, man.Language, man.Persona, man.EntityTypes, man.Calls, len(reqs))
	}
	if len(man.Examples) == 0 {
		t.Fatalf("no example kept; warnings %v", man.Warnings)
	}
	for _, ex := range man.Examples {
		if len(ex.Entities) != 1 || ex.Entities[0].Title != "SCROOGE" || ex.Entities[0].Type != "person" {
			t.Errorf("example entities %+v; want SCROOGE alone, typed as listed (the invented and unlisted ones dropped)", ex.Entities)
		}
	}
	extract, _ := os.ReadFile(filepath.Join(dir, "index_extract.tmpl"))
	for _, want := range []string{tunedPersona, `("entity"{{.Tuple}}SCROOGE{{.Tuple}}person{{.Tuple}}Scrooge is a tight-fisted old man.)`, "{{.Text}}"} {
		if !strings.Contains(string(extract), want) {
			t.Errorf("index_extract.tmpl lacks %q", want)
		}
	}
	if strings.Contains(string(extract), "ANNA BERG") {
		t.Errorf("index_extract.tmpl shows the invented entity")
	}
	report, _ := os.ReadFile(filepath.Join(dir, "index_report.tmpl"))
	if !strings.Contains(string(report), tunedRole) || !strings.Contains(string(report), tunedRating) {
		t.Errorf("index_report.tmpl lacks the role or the rating:\n%s", report)
	}

	// A second run refuses the folder without --force.
	if err := runPromptTune(t.Context(), o, term); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("second run into the same folder: %v; want a refusal naming --force", err)
	}

	// kgrag index with the built-in prompts, then with the tuned ones
	// over the same cache: none of the tuned requests may be answered
	// from the cache, and each must carry the tuned prompt.
	idx := llmtest.Start(t, llmtest.Config{})
	indexertest.Script(idx)
	cache := filepath.Join(t.TempDir(), "cache")
	io := indexRunOptions{input: input, output: filepath.Join(t.TempDir(), "out"), cache: cache, chatModel: "m", concurrency: 2,
		chunkSize: 300, overlap: 30, entityTypes: "person,geo,event", quiet: true, llm: llmOptions{url: idx.URL()}}
	if err := runIndex(t.Context(), io, term); err != nil {
		t.Fatalf("runIndex (built-in prompts): %v", err)
	}
	idx.Reset()
	io.promptsDir, io.output = dir, filepath.Join(t.TempDir(), "out2")
	if err := runIndex(t.Context(), io, term); err != nil {
		t.Fatalf("runIndex --prompts: %v", err)
	}
	extractions := 0
	for _, r := range chatRequests(idx) {
		if indexertest.Kind(r) != indexertest.KindExtraction {
			continue
		}
		extractions++
		p := r.Messages[0].Content
		if !strings.Contains(p, tunedPersona) || !strings.Contains(p, "SCROOGE<|>person<|>Scrooge is a tight-fisted old man.") ||
			!strings.Contains(p, "- ghost\n") {
			t.Errorf("extraction request lacks the tuned prompt (persona, example, types from prompt-tune.json):\n%.1200s", p)
		}
	}
	if extractions == 0 {
		t.Fatal("kgrag index --prompts sent no extraction request to the model: the cache answered them")
	}
	ds, err := graphrag.Open(t.Context(), io.output)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Entities) == 0 {
		t.Errorf("kgrag index --prompts: no entity")
	}
}

// test0 is the text of the only file of input.
func test0(t *testing.T, input string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(input, "carol.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPromptTuneBadInput: an empty corpus, an output that cannot be
// written and a prompts folder with a bad template fail with an error
// naming what is wrong, before any model call.
func TestPromptTuneBadInput(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{})
	empty := t.TempDir()
	os.WriteFile(filepath.Join(empty, "blank.txt"), []byte("  \n"), 0o644)
	file := filepath.Join(t.TempDir(), "a-file")
	os.WriteFile(file, []byte("x"), 0o644)
	base := func() promptTuneOptions {
		return promptTuneOptions{input: indexertest.CarolInput(t, 300), output: filepath.Join(t.TempDir(), "p"), chatModel: "m",
			selection: "random", limit: 2, maxEntityTypes: 4, examples: 1, exampleTokens: 60, maxPromptTokens: 2000, sampleTokens: 200,
			chunkSize: 200, overlap: 20, llm: llmOptions{url: srv.URL()}}
	}
	tests := []struct {
		name string
		edit func(*promptTuneOptions)
		want string
	}{
		{"empty corpus", func(o *promptTuneOptions) { o.input = empty }, "no text to sample"},
		{"missing corpus", func(o *promptTuneOptions) { o.input = filepath.Join(empty, "nope") }, "nope"},
		{"output under a file", func(o *promptTuneOptions) { o.output = filepath.Join(file, "p") }, "a-file"},
		{"output is a file", func(o *promptTuneOptions) { o.output = file }, "a-file"},
		{"bad selection", func(o *promptTuneOptions) { o.selection = "auto" }, "--selection"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.Reset()
			o := base()
			tt.edit(&o)
			term, _, _ := testTerminal()
			err := runPromptTune(t.Context(), o, term)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("runPromptTune: %v; want an error naming %q", err, tt.want)
			}
			if n := srv.Count("/chat/completions"); n != 0 {
				t.Errorf("%d model calls before the error; want 0", n)
			}
		})
	}

	t.Run("unreadable output", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root reads any folder")
		}
		dir := filepath.Join(t.TempDir(), "locked")
		os.Mkdir(dir, 0o000)
		t.Cleanup(func() { os.Chmod(dir, 0o755) })
		o := base()
		o.output = dir
		term, _, _ := testTerminal()
		if err := runPromptTune(t.Context(), o, term); err == nil || !strings.Contains(err.Error(), "locked") {
			t.Fatalf("runPromptTune into an unreadable folder: %v; want an error naming it", err)
		}
	})
}

// TestIndexPromptsBadTemplate: kgrag index refuses a prompts folder whose
// template uses an unknown placeholder, lacks a required one, does not
// parse or is named for no template, naming the file and the placeholder.
func TestIndexPromptsBadTemplate(t *testing.T) {
	tests := []struct {
		file, text string
		want       []string
	}{
		{"index_extract.tmpl", "Types: {{range .EntityTypes}}{{.}} {{end}}\n{{.Passage}}", []string{"index_extract.tmpl", "{{.Passage}}", "unknown", "{{.Text}}"}},
		{"index_extract.tmpl", "Extract the entities.", []string{"index_extract.tmpl", "{{.Text}}", "missing"}},
		{"index_report.tmpl", "{{.Context}", []string{"index_report.tmpl", "not a valid template"}},
		{"index_summarize.tmpl", "Combine {description_list}", []string{"index_summarize.tmpl", "{description_list}", "GraphRAG"}},
		{"index_extrct.tmpl", "{{.Text}}", []string{"index_extrct.tmpl", "index_extract.tmpl"}},
	}
	for _, tt := range tests {
		t.Run(tt.file+" "+tt.want[len(tt.want)-1], func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, tt.file), []byte(tt.text), 0o644); err != nil {
				t.Fatal(err)
			}
			srv := llmtest.Start(t, llmtest.Config{})
			_, stderr, code := runKgrag(t, "index", "--input", indexertest.CarolInput(t, 200), "--output", filepath.Join(t.TempDir(), "o"),
				"--llm-url", srv.URL(), "--chat-model", "m", "--prompts", dir)
			if code == 0 {
				t.Fatal("kgrag index --prompts with a bad template: exit 0")
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
			if n := srv.Count("/chat/completions"); n != 0 {
				t.Errorf("%d model calls; want none", n)
			}
		})
	}
}

// TestPromptTuneManifestJSON: prompt-tune.json is JSON a script can read.
func TestPromptTuneManifestJSON(t *testing.T) {
	m := prompttune.Manifest{Domain: "d", EntityTypes: []string{"a"}}
	b, _ := json.Marshal(m)
	if !strings.Contains(string(b), `"entity_types":["a"]`) {
		t.Errorf("manifest JSON %s lacks entity_types", b)
	}
}

// TestPromptTuneFitsWindow tunes with GraphRAG's defaults (1,000 tokens
// of sample, 2,000 of extraction prompt) against a server imitating
// llama-server at a small window, which refuses a longer prompt: every
// call must fit, each cut must be a warning, and kgrag index must then
// run with the tuned prompt under the same window.
func TestPromptTuneFitsWindow(t *testing.T) {
	const window = 1024 // the test server's tokens: words
	input := indexertest.CarolInput(t, 3000)
	srv := llmtest.Start(t, llmtest.Config{Imitate: llmtest.ImitateLlamaServer, ChatWindow: window, Models: []string{"m"}})
	var steps []string
	tuneScript(srv, &steps)
	dir := filepath.Join(t.TempDir(), "prompts")
	_, stderr, code := runKgrag(t, "prompt-tune", "--input", input, "--output", dir, "--llm-url", srv.URL(), "--chat-model", "m",
		"--selection", "top", "--limit", "3")
	if code != 0 {
		t.Fatalf("kgrag prompt-tune: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"chat window: 1024 tokens", "the sample sent with each question cut from 1000 to", "the extraction prompt kept within"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	for i, r := range chatRequests(srv) {
		n := 0
		for _, m := range r.Messages {
			n += len(strings.Fields(m.Content))
		}
		mt, _ := r.Extra["max_tokens"].(float64)
		if n+int(mt) > window || mt == 0 {
			t.Errorf("call %d (%s): %d words and max_tokens %v; want max_tokens set, both within %d", i+1, steps[i], n, mt, window)
		}
	}
	// kgrag index with the tuned prompt under the same window.
	idx := llmtest.Start(t, llmtest.Config{Imitate: llmtest.ImitateLlamaServer, ChatWindow: window, Models: []string{"m"}})
	indexertest.Script(idx)
	out := filepath.Join(t.TempDir(), "output")
	_, stderr, code = runKgrag(t, "index", "--input", input, "--output", out, "--llm-url", idx.URL(), "--chat-model", "m", "--cache", "", "--prompts", dir)
	if code != 0 {
		t.Fatalf("kgrag index --prompts under the same window: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "degraded: chunks: ") {
		t.Errorf("kgrag index says nothing of chunks cut to the window:\n%s", stderr)
	}
}
