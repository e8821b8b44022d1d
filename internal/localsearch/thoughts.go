package localsearch

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kgrag/kgrag/internal/jsonrepair"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/thoughtgraph"
	"github.com/kgrag/kgrag/prompts"
)

// Thoughts is what graph of thoughts' first call gave: the question set
// the graph was built for, the graph, the repairs its JSON needed and the
// call's token counts.
type Thoughts struct {
	Questions []string
	Graph     *thoughtgraph.Graph
	Fixes     []jsonrepair.Fix
	Usage     llm.Usage
}

// buildRequest is the user message of the first call; the context and
// the question set are in the system prompt.
const buildRequest = "Build the knowledge graph for the question set, as JSON."

// NoGraphError is a first call of graph of thoughts whose reply held no
// usable graph. Search answers from the subgraph context instead.
type NoGraphError struct {
	Chars int    // the reply's length
	Hint  string // what might help
	Err   error  // what was wrong: thoughtgraph.ErrEmpty, jsonrepair.ErrNoJSON...
}

func (e *NoGraphError) Error() string {
	return fmt.Sprintf("graph of thoughts: the model's reply (%d characters) held no graph: %v; %s", e.Chars, e.Err, e.Hint)
}

func (e *NoGraphError) Unwrap() error { return e.Err }

// BuildGraph is graph of thoughts' first call: it asks the chat model to
// build a knowledge graph from res's context for q's question set (Text,
// then SubQuestions), as JSON of thoughtgraph.Schema's shape with
// JSONMode, and puts it in res.Thoughts. A model that fails returns its
// error (an *llm.Error inside), wrapped; a reply holding no usable graph
// is a *NoGraphError.
func (s *Searcher) BuildGraph(ctx context.Context, q Question, res *Result) error {
	if s.chat == nil {
		return errors.New("localsearch: no chat model")
	}
	qs := questionSet(q)
	system, err := prompts.Render("thoughts_graph", prompts.ThoughtsGraph{Context: res.Text(), Questions: qs})
	if err != nil {
		return err
	}
	t := time.Now()
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: system}, {Role: llm.RoleUser, Content: buildRequest}}
	opts := s.opts.Chat
	if s.opts.JSONMode {
		opts.JSON, opts.JSONSchema = true, thoughtgraph.Schema
	}
	text, usage, err := s.chat.ChatStream(ctx, msgs, opts, func(string) error { return nil })
	res.Timings["llm_graph"] = ms(time.Since(t))
	if err != nil {
		return fmt.Errorf("graph of thoughts: build the graph: %w", err)
	}
	g, fixes, err := thoughtgraph.Parse(text)
	if err != nil {
		hint := "try a larger chat model"
		if usage.FinishReason == "length" {
			hint = "the reply was cut by the token limit: raise --max-tokens"
		}
		return &NoGraphError{Chars: len(text), Hint: hint, Err: err}
	}
	res.Thoughts = &Thoughts{Questions: qs, Graph: g, Fixes: fixes, Usage: usage}
	return nil
}

// questionSet is q's question and sub-questions, blank ones left out.
func questionSet(q Question) prompts.Questions {
	qs := prompts.Questions{q.Text}
	for _, sq := range q.SubQuestions {
		if sq = strings.TrimSpace(sq); sq != "" {
			qs = append(qs, sq)
		}
	}
	return qs
}

// AnswerPrompt is the system prompt of the answer call for res: the
// graph of thoughts built (after BuildGraph), or else the context (in
// graph of thoughts, when the graph could not be built: res.Degraded).
func (s *Searcher) AnswerPrompt(res *Result) (string, error) {
	if t := res.Thoughts; t != nil {
		return prompts.Render("thoughts_answer", prompts.ThoughtsAnswer{Graph: t.Graph.Text(), Questions: t.Questions, ResponseType: s.opts.ResponseType})
	}
	if s.opts.Mode == ModeGraphOfThoughts && len(res.Degraded) == 0 {
		return "", errors.New("localsearch: graph of thoughts: no graph built (call BuildGraph first)")
	}
	return prompts.Render("local_answer", prompts.LocalAnswer{Context: res.Text(), ResponseType: s.opts.ResponseType})
}
