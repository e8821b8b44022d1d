package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/kgrag/kgrag/internal/globalsearch"
	"github.com/kgrag/kgrag/internal/retrieval"
)

// askResult is what `kgrag ask --json` prints: one object per question.
// Field names are part of the interface scripts read; add, do not rename.
type askResult struct {
	Question string `json:"question"`
	// Answer is null with --context-only.
	Answer *string `json:"answer"`
	// AnswerPartial marks an answer the server stopped sending before it
	// ended (the exit status is then 11).
	AnswerPartial bool `json:"answer_partial,omitempty"`
	// FinishReason is the server's: "stop", or "length" for an answer
	// cut by --max-tokens.
	FinishReason string `json:"finish_reason,omitempty"`
	// ReasoningChars counts a reasoning model's thinking, which is never
	// in Answer; Reasoning holds it with --show-reasoning.
	ReasoningChars int     `json:"reasoning_chars,omitempty"`
	Reasoning      *string `json:"reasoning,omitempty"`
	// Mode is local, global, seed or no-context.
	Mode       string `json:"mode"`
	Source     string `json:"source,omitempty"`
	EmbedModel string `json:"embed_model,omitempty"`
	ChatModel  string `json:"chat_model,omitempty"`
	// Neighbours are the kNN hits, nearest first, before the backend
	// dropped unknown ids and kept top-k.
	Neighbours []hitJSON    `json:"neighbours,omitempty"`
	Context    *contextJSON `json:"context,omitempty"`
	Usage      *usageJSON   `json:"usage,omitempty"`
	// Timings are milliseconds per phase: open (index, graph and token
	// encoder), embed
	// (the question), knn, retrieval (the context), llm, total.
	Timings map[string]float64 `json:"timings_ms"`
	// SPARQLRequests counts the requests the retrieval phase sent to the
	// store (not the graph check before it); absent with --input.
	SPARQLRequests *int `json:"sparql_requests,omitempty"`
	// Global is what --mode global did: batches, points, calls.
	Global *globalJSON `json:"global,omitempty"`
	// Plan is --plan's answer (with --mode global).
	Plan *globalsearch.Plan `json:"plan,omitempty"`
}

type hitJSON struct {
	ID    string  `json:"id"`
	Score float32 `json:"score"`
}

type usageJSON struct {
	Prompt     int `json:"prompt_tokens"`
	Completion int `json:"completion_tokens"`
	Total      int `json:"total_tokens"`
}

// contextJSON is the context sent to the model: its text, token counts and
// the records of each table, in the order printed. Record ids are the ids
// the answer cites.
type contextJSON struct {
	Text   string `json:"text"`
	Tokens int    `json:"tokens"`
	// ReportTokens, LocalTokens (entities and relationships) and
	// TextUnitTokens split Tokens in local mode; seed mode has no split.
	ReportTokens   *int        `json:"report_tokens,omitempty"`
	LocalTokens    *int        `json:"local_tokens,omitempty"`
	TextUnitTokens *int        `json:"text_unit_tokens,omitempty"`
	Records        recordsJSON `json:"records"`
}

type recordsJSON struct {
	Reports       []reportJSON       `json:"reports"`
	Entities      []entityJSON       `json:"entities"`
	Relationships []relationshipJSON `json:"relationships"`
	Sources       []sourceJSON       `json:"sources"`
}

type reportJSON struct {
	ID          string  `json:"id"`
	CommunityID string  `json:"community_id"`
	Level       int64   `json:"level"`
	Title       string  `json:"title"`
	Rank        float64 `json:"rank"`
}

type entityJSON struct {
	ID       string `json:"id"`
	EntityID string `json:"entity_id"`
	Title    string `json:"title"`
	Rank     int64  `json:"rank"`
}

type relationshipJSON struct {
	ID             string  `json:"id"`
	RelationshipID string  `json:"relationship_id"`
	Source         string  `json:"source"`
	Target         string  `json:"target"`
	Weight         float64 `json:"weight"`
	Rank           int64   `json:"rank"`
	Inside         bool    `json:"inside"`
}

type sourceJSON struct {
	ID         string `json:"id"`
	TextUnitID string `json:"text_unit_id"`
}

// contextRecords is a local search context as --json prints it.
func contextRecords(c *retrieval.Context) *contextJSON {
	return &contextJSON{Text: c.Text, Tokens: c.Tokens,
		ReportTokens: &c.ReportTokens, LocalTokens: &c.LocalTokens, TextUnitTokens: &c.TextUnitTokens,
		Records: records(c.Reports, c.Entities, c.Relationships, c.TextUnits)}
}

// seedRecords is a seed mode context as --json prints it: communities as
// reports, chunks as sources, as the text prints them.
func seedRecords(r *retrieval.SeedResult) *contextJSON {
	reports := make([]retrieval.ReportRecord, len(r.Communities))
	for i, c := range r.Communities {
		reports[i] = c.ReportRecord
	}
	units := make([]retrieval.TextUnitRecord, len(r.Chunks))
	for i, c := range r.Chunks {
		units[i] = c.TextUnitRecord
	}
	return &contextJSON{Text: r.Text, Tokens: r.Tokens, Records: records(reports, r.Entities, r.Relationships, units)}
}

func records(reports []retrieval.ReportRecord, ents []retrieval.EntityRecord, rels []retrieval.RelationshipRecord, units []retrieval.TextUnitRecord) recordsJSON {
	r := recordsJSON{
		Reports:       make([]reportJSON, 0, len(reports)),
		Entities:      make([]entityJSON, 0, len(ents)),
		Relationships: make([]relationshipJSON, 0, len(rels)),
		Sources:       make([]sourceJSON, 0, len(units)),
	}
	for _, x := range reports {
		r.Reports = append(r.Reports, reportJSON{x.ID, x.CommunityID, x.Level, x.Title, x.Rank})
	}
	for _, x := range ents {
		r.Entities = append(r.Entities, entityJSON{x.ID, x.EntityID, x.Title, x.Rank})
	}
	for _, x := range rels {
		r.Relationships = append(r.Relationships, relationshipJSON{x.ID, x.RelationshipID, x.Source, x.Target, x.Weight, x.Rank, x.Inside})
	}
	for _, x := range units {
		r.Sources = append(r.Sources, sourceJSON{x.ID, x.TextUnitID})
	}
	return r
}

func (r *askResult) write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// retrievalLine is the terminal summary of the retrieval, on stderr.
func (r *askResult) retrievalLine() string {
	c := r.Context
	var b strings.Builder
	fmt.Fprintf(&b, "context: %d entities, %d relationships, %d reports, %d sources; %d tokens",
		len(c.Records.Entities), len(c.Records.Relationships), len(c.Records.Reports), len(c.Records.Sources), c.Tokens)
	fmt.Fprintf(&b, " · embed %s, knn %s, retrieval %s", msText(r.Timings["embed"]), msText(r.Timings["knn"]), msText(r.Timings["retrieval"]))
	if r.SPARQLRequests != nil {
		fmt.Fprintf(&b, " (%d SPARQL requests)", *r.SPARQLRequests)
	}
	return b.String()
}

// answerLine is the terminal summary of the answer, on stderr.
func (r *askResult) answerLine() string {
	s := fmt.Sprintf("answer: %s in %s", r.ChatModel, msText(r.Timings["llm"]))
	if r.Usage != nil {
		s += fmt.Sprintf(", %d prompt + %d answer tokens", r.Usage.Prompt, r.Usage.Completion)
	}
	return s
}

func msText(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.1fs", v/1000)
	}
	return fmt.Sprintf("%.1fms", v)
}
