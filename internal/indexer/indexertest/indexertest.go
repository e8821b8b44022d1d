// Package indexertest scripts llmtest's server as the model of a kgrag
// index run, and gives the tests a piece of A Christmas Carol to index, so
// that the indexer and the CLI are tested on the same scripted model.
package indexertest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

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

// CarolInput writes the first words of A Christmas Carol into a fresh
// input folder.
func CarolInput(t *testing.T, words int) string {
	t.Helper()
	text := test.ChristmasCarol(t)
	dir := filepath.Join(t.TempDir(), "input")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "carol.txt"), []byte(FirstWords(text, words)), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// FirstWords returns the first n words of text joined by single spaces
// (all of them when n <= 0 or there are fewer), as CarolInput writes them.
func FirstWords(text string, n int) string {
	fields := strings.Fields(text)
	if n > 0 && len(fields) > n {
		fields = fields[:n]
	}
	return strings.Join(fields, " ")
}

// Kinds of indexing request, as Kind tells them apart.
const (
	KindExtraction = "extraction" // a text unit's first extraction call
	KindGleaning   = "gleaning"   // a later extraction round of the same unit
	KindClaims     = "claims"     // a text unit's first claim extraction call
	KindClaimsMore = "claims-gleaning"
	KindSummary    = "summary" // a description summary
	KindReport     = "report"  // a community report
)

// Kind tells which indexing prompt req is, by the prompts' own markers,
// or "" for a request kgrag index does not make.
func Kind(req llmtest.Request) string {
	if len(req.Messages) == 0 {
		return ""
	}
	first := req.Messages[0].Content
	last := req.Messages[len(req.Messages)-1].Content
	switch {
	case strings.Contains(first, "Entity types") && len(req.Messages) > 1:
		return KindGleaning
	case strings.Contains(first, "Entity types"):
		return KindExtraction
	case strings.Contains(first, "Claims to look for") && len(req.Messages) > 1:
		return KindClaimsMore
	case strings.Contains(first, "Claims to look for"):
		return KindClaims
	case strings.Contains(last, "Combine these descriptions"):
		return KindSummary
	case strings.Contains(last, "---Data---"):
		return KindReport
	}
	return ""
}

// ReportTitle is the title of every report Reply writes.
const ReportTitle = "Scrooge and his circle"

// Script makes srv answer with Reply.
func Script(srv *llmtest.Server) { srv.Respond(Reply) }

// Reply answers extraction prompts with records naming the characters of
// the passage, claim prompts with claims about Scrooge, gleaning prompts
// with nothing more, summary prompts with a
// sentence and report prompts with a report titled ReportTitle. It
// declines (ok false) any other request, so a test can answer those
// itself; it is safe for concurrent use.
func Reply(req llmtest.Request) (reply string, ok bool) {
	switch Kind(req) {
	case KindGleaning, KindClaimsMore:
		return "<|COMPLETE|>", true
	case KindClaims:
		return claimsReply(req.Messages[len(req.Messages)-1].Content), true
	case KindExtraction:
		return extractionReply(req.Messages[len(req.Messages)-1].Content), true
	case KindSummary:
		return "One combined description of the entity.", true
	case KindReport:
		b, _ := json.Marshal(map[string]any{
			"title": ReportTitle, "summary": "Scrooge and those he deals with.",
			"findings": []map[string]string{{"summary": "Scrooge is central", "explanation": "He links the others."}},
			"rating":   5.0, "rating_explanation": "Moderate importance.",
		})
		return string(b), true
	}
	return "", false
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

// claimsReply makes one claim about Scrooge in every passage that names
// him, and one about Marley as its object when both are named.
func claimsReply(prompt string) string {
	text := strings.ToLower(prompt[strings.LastIndex(prompt, "Passage:"):])
	if !strings.Contains(text, "scrooge") {
		return "<|COMPLETE|>"
	}
	recs := []string{fmt.Sprintf(`(SCROOGE<|>NONE<|>MISERLINESS<|>TRUE<|>NONE<|>NONE<|>Scrooge keeps his money close, in a passage of %d characters.<|>Scrooge)`, len(text))}
	if strings.Contains(text, "marley") {
		recs = append(recs, `(SCROOGE<|>MARLEY<|>PARTNERSHIP<|>TRUE<|>NONE<|>NONE<|>Scrooge was Marley's partner.<|>Scrooge and Marley)`)
	}
	return strings.Join(recs, "\n##\n") + "\n<|COMPLETE|>"
}

// Model starts a scripted server (see Script) and returns it with a client
// of its chat model "m".
func Model(t *testing.T) (*llmtest.Server, *llm.Client) {
	t.Helper()
	srv := llmtest.Start(t, llmtest.Config{})
	Script(srv)
	client, err := llm.New(llm.Config{BaseURL: srv.URL(), ChatModel: "m"})
	if err != nil {
		t.Fatal(err)
	}
	return srv, client
}
