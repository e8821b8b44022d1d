// Package answer holds the record of one question answered: the JSON
// object kgrag ask --json prints and kgrag serve's API returns, built from
// what the search engines (localsearch, globalsearch) return. Field names
// are part of the interface scripts read: add, do not rename.
package answer

import (
	"encoding/json"
	"io"
	"slices"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/basicsearch"
	"github.com/kgrag/kgrag/internal/driftsearch"
	"github.com/kgrag/kgrag/internal/globalsearch"
	"github.com/kgrag/kgrag/internal/llmcall"
	"github.com/kgrag/kgrag/internal/localsearch"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/internal/thoughtgraph"
	"github.com/kgrag/kgrag/internal/walksearch"
)

// Result is one question answered: what `kgrag ask --json` prints, one
// object per question.
type Result struct {
	Question string `json:"question"`
	// Answer is null with --context-only.
	Answer *string `json:"answer"`
	// AnswerPartial marks an answer the server stopped sending before it
	// ended (the exit status is then 11).
	AnswerPartial bool `json:"answer_partial,omitempty"`
	// FinishReason is the server's: "stop", or "length" for an answer
	// cut by --max-tokens.
	FinishReason string `json:"finish_reason,omitempty"`
	// Degraded says, one sentence each, where the search did without a
	// model reply it could not use and what it did instead ("graph of
	// thoughts: ... answered from the subgraph context"): the answer
	// stands, on less than the mode meant to give it.
	Degraded []string `json:"degraded,omitempty"`
	// ReasoningChars counts a reasoning model's thinking, which is never
	// in Answer; Reasoning holds it with --show-reasoning.
	ReasoningChars int     `json:"reasoning_chars,omitempty"`
	Reasoning      *string `json:"reasoning,omitempty"`
	// Mode is local, global, drift, basic, sparql-templates (formerly
	// seed), subgraph, graph-of-thoughts or no-context.
	Mode   string `json:"mode"`
	Source string `json:"source,omitempty"`
	// LeftOut is what the reader left out of an --input output:
	// malformed rows, the rows naming them, the references dropped.
	LeftOut    []graphrag.LeftOut `json:"left_out,omitempty"`
	EmbedModel string             `json:"embed_model,omitempty"`
	ChatModel  string             `json:"chat_model,omitempty"`
	// Neighbours are the kNN hits, nearest first, before the backend
	// dropped unknown ids and kept top-k: entities, or in basic mode
	// text units.
	Neighbours []Hit `json:"neighbours,omitempty"`
	// Ranking is the text units a mode that ranks them ranked, best
	// first (by human-readable id, as Sources): basic search's nearest,
	// the walk's highest scores; kgrag eval's recall@k reads it.
	Ranking []Hit `json:"ranking,omitempty"`
	// Seeds are the entities the walk started from (--mode walk).
	Seeds   []walksearch.Seed `json:"seeds,omitempty"`
	Context *Context          `json:"context,omitempty"`
	Usage   *Usage            `json:"usage,omitempty"`
	// Timings are milliseconds per phase: open (index, graph and token
	// encoder), embed
	// (the question), knn, retrieval (the context), llm, total.
	Timings map[string]float64 `json:"timings_ms"`
	// SPARQLRequests counts the requests the retrieval phase sent to the
	// store (not the graph check before it); absent with --input.
	SPARQLRequests *int `json:"sparql_requests,omitempty"`
	// Global is what --mode global did: batches, points, calls.
	Global *Global `json:"global,omitempty"`
	// Drift is what --mode drift did: the expansion, primer calls, the
	// follow-up actions and the graph they make, calls.
	Drift *driftsearch.Result `json:"drift,omitempty"`
	// Plan is --plan's answer: a *globalsearch.Plan with --mode global, a
	// *driftsearch.Plan with --mode drift.
	Plan any `json:"plan,omitempty"`
	// GraphOfThoughts is the graph --mode graph-of-thoughts built and
	// answered from.
	GraphOfThoughts *Thoughts `json:"graph_of_thoughts,omitempty"`
}

// Thoughts is the knowledge graph graph of thoughts' first call built:
// the question set, the nodes and edges, the repairs the model's JSON
// needed (jsonrepair's names) and that call's token counts.
type Thoughts struct {
	Questions []string            `json:"questions"`
	Nodes     []thoughtgraph.Node `json:"nodes"`
	Edges     []thoughtgraph.Edge `json:"edges"`
	Repairs   []string            `json:"repairs,omitempty"`
	Usage     *Usage              `json:"usage,omitempty"`
}

// Hit is one kNN neighbour of the question.
type Hit struct {
	ID    string  `json:"id"`
	Score float32 `json:"score"`
}

// Usage is the answer call's token counts, as the server reported them.
type Usage struct {
	Prompt     int `json:"prompt_tokens"`
	Completion int `json:"completion_tokens"`
	Total      int `json:"total_tokens"`
}

// Context is the context sent to the model: its text, token counts and
// the records of each table, in the order printed. Record ids are the ids
// the answer cites.
type Context struct {
	Text   string `json:"text"`
	Tokens int    `json:"tokens"`
	// ReportTokens, LocalTokens (entities and relationships) and
	// TextUnitTokens split Tokens in local mode; sparql-templates mode has no split.
	ReportTokens   *int `json:"report_tokens,omitempty"`
	LocalTokens    *int `json:"local_tokens,omitempty"`
	TextUnitTokens *int `json:"text_unit_tokens,omitempty"`
	// HistoryTurns and HistoryTokens are the earlier questions of a
	// conversation printed first (kgrag serve), and their tokens.
	HistoryTurns  int     `json:"history_turns,omitempty"`
	HistoryTokens int     `json:"history_tokens,omitempty"`
	Records       Records `json:"records"`
}

// Records are the records of each context table, in the order printed.
type Records struct {
	Reports       []Report       `json:"reports"`
	Entities      []Entity       `json:"entities"`
	Relationships []Relationship `json:"relationships"`
	Sources       []Source       `json:"sources"`
}

// Report is one community report of a context.
type Report struct {
	ID          string  `json:"id"`
	CommunityID string  `json:"community_id"`
	Level       int64   `json:"level"`
	Title       string  `json:"title"`
	Rank        float64 `json:"rank"`
}

// Entity is one entity of a context.
type Entity struct {
	ID       string `json:"id"`
	EntityID string `json:"entity_id"`
	Title    string `json:"title"`
	Rank     int64  `json:"rank"`
}

// Relationship is one relationship of a context.
type Relationship struct {
	ID             string  `json:"id"`
	RelationshipID string  `json:"relationship_id"`
	Source         string  `json:"source"`
	Target         string  `json:"target"`
	SourceID       string  `json:"source_id,omitempty"`
	TargetID       string  `json:"target_id,omitempty"`
	Weight         float64 `json:"weight"`
	Rank           int64   `json:"rank"`
	Inside         bool    `json:"inside"`
}

// Source is one text unit of a context.
type Source struct {
	ID         string `json:"id"`
	TextUnitID string `json:"text_unit_id"`
}

// AddSearch records a local or sparql-templates search in r: its neighbours, context
// and phase timings (the answer is AddReply's).
func (r *Result) AddSearch(s *localsearch.Result) {
	r.Neighbours = r.Neighbours[:0]
	for _, h := range s.Neighbours {
		r.Neighbours = append(r.Neighbours, Hit{ID: h.ID, Score: h.Score})
	}
	switch {
	case s.Templates != nil:
		r.Context = TemplatesContext(s.Templates)
	case s.Subgraph != nil:
		r.Context = TemplatesContext(s.Subgraph.Context)
	default:
		r.Context = LocalContext(s.Local)
	}
	r.AddThoughts(s.Thoughts)
	r.Degrade(s.Degraded...)
	if r.Timings == nil {
		r.Timings = map[string]float64{}
	}
	for k, v := range s.Timings {
		r.Timings[k] = v
	}
}

// Degrade adds notes to Degraded, each once.
func (r *Result) Degrade(notes ...string) {
	for _, n := range notes {
		if !slices.Contains(r.Degraded, n) {
			r.Degraded = append(r.Degraded, n)
		}
	}
}

// AddThoughts records the graph graph of thoughts built (nil: none).
func (r *Result) AddThoughts(t *localsearch.Thoughts) {
	if t == nil {
		return
	}
	g := &Thoughts{Questions: t.Questions, Nodes: t.Graph.Nodes, Edges: t.Graph.Edges}
	for _, f := range t.Fixes {
		g.Repairs = append(g.Repairs, string(f))
	}
	if u := t.Usage; u.Tokens() {
		g.Usage = &Usage{Prompt: u.PromptTokens, Completion: u.CompletionTokens, Total: u.TotalTokens}
	}
	r.GraphOfThoughts = g
}

// AddReply records a chat model's answer in r.
func (r *Result) AddReply(rp localsearch.Reply) {
	text := rp.Answer
	r.Answer, r.AnswerPartial = &text, rp.Partial
	r.FinishReason = rp.Usage.FinishReason
	r.ReasoningChars = rp.Usage.ReasoningChars
	if u := rp.Usage; u.Tokens() {
		r.Usage = &Usage{Prompt: u.PromptTokens, Completion: u.CompletionTokens, Total: u.TotalTokens}
	}
}

// RecordReply records the answer call's reply, err its error: the answer
// whole, or as far as it came when the stream was cut (Partial); after
// another error only what the call spent (usage, thinking).
func (r *Result) RecordReply(rp localsearch.Reply, err error) {
	if err == nil || rp.Partial {
		r.AddReply(rp)
		return
	}
	r.ReasoningChars, r.FinishReason = rp.Usage.ReasoningChars, rp.Usage.FinishReason
	if u := rp.Usage; u.Tokens() {
		r.Usage = &Usage{Prompt: u.PromptTokens, Completion: u.CompletionTokens, Total: u.TotalTokens}
	}
}

// LocalContext is a local search context as --json prints it.
func LocalContext(c *retrieval.Context) *Context {
	return &Context{Text: c.Text, Tokens: c.Tokens, HistoryTurns: c.HistoryTurns, HistoryTokens: c.HistoryTokens,
		ReportTokens: &c.ReportTokens, LocalTokens: &c.LocalTokens, TextUnitTokens: &c.TextUnitTokens,
		Records: records(c.Reports, c.Entities, c.Relationships, c.TextUnits)}
}

// TemplatesContext is a sparql-templates mode context as --json prints it: communities as
// reports, chunks as sources, as the text prints them.
func TemplatesContext(r *retrieval.TemplatesResult) *Context {
	reports := make([]retrieval.ReportRecord, len(r.Communities))
	for i, c := range r.Communities {
		reports[i] = c.ReportRecord
	}
	units := make([]retrieval.TextUnitRecord, len(r.Chunks))
	for i, c := range r.Chunks {
		units[i] = c.TextUnitRecord
	}
	return &Context{Text: r.Text, Tokens: r.Tokens, Records: records(reports, r.Entities, r.Relationships, units)}
}

func records(reports []retrieval.ReportRecord, ents []retrieval.EntityRecord, rels []retrieval.RelationshipRecord, units []retrieval.TextUnitRecord) Records {
	r := Records{
		Reports:       make([]Report, 0, len(reports)),
		Entities:      make([]Entity, 0, len(ents)),
		Relationships: make([]Relationship, 0, len(rels)),
		Sources:       make([]Source, 0, len(units)),
	}
	for _, x := range reports {
		r.Reports = append(r.Reports, Report{x.ID, x.CommunityID, x.Level, x.Title, x.Rank})
	}
	for _, x := range ents {
		r.Entities = append(r.Entities, Entity{x.ID, x.EntityID, x.Title, x.Rank})
	}
	for _, x := range rels {
		r.Relationships = append(r.Relationships, Relationship{x.ID, x.RelationshipID, x.Source, x.Target, x.SourceID, x.TargetID, x.Weight, x.Rank, x.Inside})
	}
	for _, x := range units {
		r.Sources = append(r.Sources, Source{x.ID, x.TextUnitID})
	}
	return r
}

// AddBasic records a basic search in r: its neighbours (text units),
// context and phase timings.
func (r *Result) AddBasic(s *basicsearch.Result) {
	r.Neighbours = r.Neighbours[:0]
	for _, h := range s.Neighbours {
		r.Neighbours = append(r.Neighbours, Hit{ID: h.ID, Score: h.Score})
	}
	// The ranking is by GraphRAG id in the index; records give both ids.
	hr := map[string]string{}
	for _, u := range s.Context.Units {
		hr[u.TextUnitID] = u.ID
	}
	r.Ranking = r.Ranking[:0]
	for _, h := range s.Ranking {
		id := h.ID
		if x, ok := hr[id]; ok {
			id = x
		}
		r.Ranking = append(r.Ranking, Hit{ID: id, Score: h.Score})
	}
	r.Context = &Context{Text: s.Context.Text, Tokens: s.Context.Tokens, Records: records(nil, nil, nil, s.Context.Units)}
	if r.Timings == nil {
		r.Timings = map[string]float64{}
	}
	for k, v := range s.Timings {
		r.Timings[k] = v
	}
}

// AddWalk records a walk in r: its seeds, ranking, context and timings.
func (r *Result) AddWalk(s *walksearch.Result) {
	r.Seeds = s.Seeds
	r.Ranking = r.Ranking[:0]
	for _, x := range s.Ranking {
		r.Ranking = append(r.Ranking, Hit{ID: x.ID, Score: float32(x.Score)})
	}
	r.Context = &Context{Text: s.Text, Tokens: s.Tokens, Records: records(nil, s.Entities, nil, s.Units)}
	if r.Timings == nil {
		r.Timings = map[string]float64{}
	}
	for k, v := range s.Timings {
		r.Timings[k] = v
	}
}

// Write prints r as kgrag ask --json does: indented, one object.
func (r *Result) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// Global is the "global" object of `kgrag ask --mode global --json`.
type Global struct {
	CommunityLevel  int64                     `json:"community_level"`
	Reports         int                       `json:"reports"`
	SelectedReports int                       `json:"selected_reports"`
	Dynamic         *globalsearch.Selection   `json:"dynamic,omitempty"`
	Batches         []Batch                   `json:"batches"`
	MapParse        *globalsearch.ParseCounts `json:"map_parse,omitempty"`
	MapFailed       int                       `json:"map_failed"`
	Points          int                       `json:"points"`
	ScoredPoints    int                       `json:"scored_points"`
	Reduce          *Reduce                   `json:"reduce,omitempty"`
	NoData          bool                      `json:"no_data"`
	LLMCalls        int                       `json:"llm_calls"`
	PromptTokens    int                       `json:"prompt_tokens"`
	CompletionTok   int                       `json:"completion_tokens"`
	Cited           []string                  `json:"cited_reports"`
	UnknownCited    []string                  `json:"unknown_cited_reports"`
}

// Batch is one map batch of a global search.
type Batch struct {
	Index         int      `json:"index"`
	ReportIDs     []string `json:"report_ids"`
	ContextTokens int      `json:"context_tokens"`
	Truncated     int      `json:"truncated_reports,omitempty"`
	// Text is the batch's report table, with --context-only.
	Text string `json:"text,omitempty"`
	*llmcall.Call
	Points        []Point `json:"points,omitempty"`
	DroppedPoints int     `json:"dropped_points,omitempty"`
	// Prose marks a reply without JSON taken whole as one point.
	Prose bool `json:"prose,omitempty"`
}

// Point is one key point a map call gave.
type Point struct {
	Description string `json:"description"`
	Score       int    `json:"score"`
}

// Reduce is the answer call of a global search.
type Reduce struct {
	llmcall.Call
	ContextTokens int `json:"context_tokens"`
	// Points are the points in the context, best first: batch index and
	// score.
	Points []ReducePoint `json:"points"`
}

// ReducePoint is a point in the answer call's context.
type ReducePoint struct {
	Batch int `json:"batch"`
	Score int `json:"score"`
}

func GlobalResult(r *globalsearch.Result, level int64) *Global {
	g := &Global{CommunityLevel: level, Reports: r.Reports, SelectedReports: r.Selected, Dynamic: r.Selection,
		MapParse: &r.MapParse, MapFailed: r.MapFailed, NoData: r.NoData, LLMCalls: r.LLMCalls,
		Cited: nonNil(r.Cited), UnknownCited: nonNil(r.UnknownCited), Batches: []Batch{}}
	if sel := r.Selection; sel != nil {
		for _, x := range sel.Rated {
			g.PromptTokens += x.PromptTokens
			g.CompletionTok += x.CompletionTokens
		}
	}
	for i := range r.Batches {
		x := &r.Batches[i]
		bj := Batch{Index: x.Index, ReportIDs: x.ReportIDs, ContextTokens: x.ContextTokens, Truncated: x.Truncated,
			Call: &x.Call, DroppedPoints: x.Dropped, Prose: x.Prose}
		for _, p := range x.Points {
			bj.Points = append(bj.Points, Point{p.Description, p.Score})
			g.Points++
			if p.Score > 0 {
				g.ScoredPoints++
			}
		}
		g.PromptTokens += x.PromptTokens
		g.CompletionTok += x.CompletionTokens
		g.Batches = append(g.Batches, bj)
	}
	if rd := r.Reduce; rd != nil && !r.NoData {
		rj := &Reduce{Call: rd.Call, ContextTokens: rd.Context.Tokens, Points: []ReducePoint{}}
		for _, p := range rd.Context.Points {
			rj.Points = append(rj.Points, ReducePoint{p.Batch, p.Score})
		}
		g.PromptTokens += rd.PromptTokens
		g.CompletionTok += rd.CompletionTokens
		g.Reduce = rj
	}
	return g
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
