package main

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/indexer/indexertest"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/internal/tokens"
)

// TestIndexFastNoModel indexes the whole of A Christmas Carol with
// --method fast --reports none while --llm-url points at a closed port:
// the run needs no model server. The output then goes through kgrag load
// (Turtle) and kgrag ask --context-only, with the test embedder only.
func TestIndexFastNoModel(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "output")
	_, stderr, code := runKgrag(t, "index", "--input", test.SourceText(t), "--output", out,
		"--method", "fast", "--reports", "none", "--llm-url", "http://127.0.0.1:1/v1")
	if code != 0 {
		t.Fatalf("index: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"noun graph", "0 reports", "no model calls"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("index stderr lacks %q:\n%s", want, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, defaultIndexCache)); err == nil {
		t.Error("a run that calls no model made a reply cache")
	}

	ttl := filepath.Join(dir, "carol.ttl")
	if _, stderr, code := runKgrag(t, "load", "-q", "--input", out, "--turtle", ttl); code != 0 {
		t.Fatalf("load: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(ttl)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`gr:title "BOB CRATCHIT"`, `gr:type "NOUN PHRASE"`, "a gr:Community", "a gr:Chunk"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("Turtle lacks %s", want)
		}
	}

	srv := llmtest.Start(t, llmtest.Config{Dim: 64})
	llmArgs := []string{"--llm-url", srv.URL(), "--embed-model", "e"}
	if _, stderr, code := runKgrag(t, append([]string{"embed", "-q", "--input", out}, llmArgs...)...); code != 0 {
		t.Fatalf("embed: exit %d: %s", code, stderr)
	}
	ctx, stderr, code := runKgrag(t, append(append([]string{"ask", "--input", out, "--context-only", "--top-k-entities", "3"}, llmArgs...),
		"What does Bob Cratchit eat with Tiny Tim?")...)
	if code != 0 {
		t.Fatalf("ask: exit %d: %s", code, stderr)
	}
	if srv.Count("/chat/completions") != 0 {
		t.Errorf("%d chat calls; --context-only makes none", srv.Count("/chat/completions"))
	}
	for _, want := range []string{"-----Entities-----", "BOB CRATCHIT", "-----Sources-----"} {
		if !strings.Contains(ctx, want) {
			t.Errorf("context lacks %q:\n%.2000s", want, ctx)
		}
	}
}

// TestIndexFastEmptyInput: a folder whose only file holds no text is
// refused with the folder named.
func TestIndexFastEmptyInput(t *testing.T) {
	in := t.TempDir()
	if err := os.WriteFile(filepath.Join(in, "empty.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runKgrag(t, "index", "--input", in, "--output", filepath.Join(t.TempDir(), "out"), "--method", "fast", "--reports", "none")
	if code != 1 || !strings.Contains(stderr, in) || !strings.Contains(stderr, "no text to index") {
		t.Errorf("exit %d, stderr %q; want 1 naming %s and 'no text to index'", code, stderr, in)
	}
}

// TestIndexFastReports indexes A Christmas Carol with --method fast and
// the (scripted) model writing the reports, and checks the report calls
// against the output's own tables: one call per community that has a text
// unit to show (a unit other than GraphRAG's dropped id 0, named by one
// of the community's entities), no more; each prompt is the text-unit
// prompt, whose SOURCES table (read with encoding/csv) holds text units of
// the output with their exact text, highest entity_degree first, within
// the 8000-token budget unless it is a single unit; some over-budget
// community shows its sub-communities' reports instead; every community
// called gets a report that kgrag reads back.
func TestIndexFastReports(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{})
	indexertest.Script(srv)
	out := filepath.Join(t.TempDir(), "output")
	_, stderr, code := runKgrag(t, "index", "--input", test.SourceText(t), "--output", out,
		"--method", "fast", "--llm-url", srv.URL(), "--chat-model", "m")
	if code != 0 {
		t.Fatalf("index: exit %d: %s", code, stderr)
	}
	ds, err := graphrag.Open(t.Context(), out)
	if err != nil {
		t.Fatal(err)
	}
	units := make(map[string]graphrag.TextUnit)
	hrid := make(map[string]string) // text unit id -> human_readable_id
	for _, u := range ds.TextUnits {
		units[u.HumanReadableID] = u
		hrid[u.ID] = u.HumanReadableID
	}
	names := make(map[string][]string) // entity id -> text unit ids
	for _, e := range ds.Entities {
		names[e.ID] = e.TextUnitIDs
	}
	wantCalls, reported := 0, 0
	for _, c := range ds.Communities {
		named := make(map[string]bool)
		for _, e := range c.EntityIDs {
			for _, u := range names[e] {
				named[u] = true
			}
		}
		if slices.ContainsFunc(c.TextUnitIDs, func(u string) bool { return named[u] && hrid[u] != "0" }) {
			wantCalls++
		}
		if c.Report != nil {
			reported++
			if c.Report.Title != indexertest.ReportTitle || !strings.Contains(c.Report.FullContent, "Scrooge is central") {
				t.Errorf("community %s: report %q does not hold the model's reply", c.Community, c.Report.Title)
			}
		}
	}
	enc, err := tokens.NewEncoder(tokens.EncodingCL100K)
	if err != nil {
		t.Fatal(err)
	}
	calls, mixed := 0, 0
	for _, r := range srv.Requests() {
		if indexertest.Kind(r) != indexertest.KindReport {
			t.Errorf("a %q call; the fast method only asks for reports", indexertest.Kind(r))
			continue
		}
		calls++
		prompt := r.Messages[len(r.Messages)-1].Content
		if !strings.Contains(prompt, "source passages") || strings.Contains(prompt, "-----Entities-----") {
			t.Errorf("report call %d is not the text-unit prompt:\n%.600s", calls, prompt)
		}
		data := prompt[strings.Index(prompt, "---Data---\n\n")+len("---Data---\n\n") : strings.Index(prompt, "---End of data---")]
		if strings.HasPrefix(data, "----REPORTS-----\n") {
			mixed++
			if !strings.Contains(data, indexertest.ReportTitle) {
				t.Errorf("report call %d: a reports table without the sub-communities' reports", calls)
			}
		}
		i := strings.Index(data, "-----SOURCES-----\n")
		if i < 0 {
			continue // reports alone
		}
		rows, err := csv.NewReader(strings.NewReader(data[i+len("-----SOURCES-----\n"):])).ReadAll()
		if err != nil || len(rows) < 2 || !slices.Equal(rows[0], []string{"id", "text", "entity_degree"}) {
			t.Errorf("report call %d: SOURCES is not a CSV table of id,text,entity_degree (%v):\n%.600s", calls, err, data)
			continue
		}
		last := math.Inf(1)
		for _, row := range rows[1:] {
			u, ok := units[row[0]]
			if !ok || u.Text != row[1] || row[0] == "0" {
				t.Errorf("report call %d: source %s is not text unit %s of the output, word for word", calls, row[0], row[0])
			}
			d, err := strconv.ParseFloat(row[2], 64)
			if err != nil || d > last {
				t.Errorf("report call %d: entity_degree %q after %v: not in descending order", calls, row[2], last)
			}
			last = d
		}
		if n := enc.Count(strings.TrimSuffix(data, "\n")); n > 8000 && len(rows) > 2 {
			t.Errorf("report call %d: %d sources, %d tokens: over the 8000-token budget", calls, len(rows)-1, n)
		}
	}
	if calls != wantCalls || reported != wantCalls {
		t.Errorf("%d report calls, %d reports; want one per community with a text unit to show: %d of %d", calls, reported, wantCalls, len(ds.Communities))
	}
	if mixed == 0 {
		t.Error("no report call showed sub-community reports: no over-budget community was compared")
	}
	t.Logf("%d communities, %d report calls (%d with sub-community reports)", len(ds.Communities), calls, mixed)
}
