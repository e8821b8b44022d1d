package driftsearch

import (
	"strings"

	"github.com/kgrag/kgrag/internal/globalsearch"
	"github.com/kgrag/kgrag/internal/llmcall"
)

// reply is what a primer or follow-up reply held.
type reply struct {
	answer    string
	score     *float64
	followUps []string
	parse     string
	fixes     []string
}

// parseReply reads {"<answerKey>": ..., "score": ..., "follow_up_queries":
// [...]}, repairing the JSON where that is safe. Small models also write
// "answer" or "response" for the answer key and "follow_ups" or
// "follow_up_questions" for the list; those are read too. A reply that is
// no JSON object is taken as the answer itself, with no score and no
// follow-ups: GraphRAG drops it (a primer reply fails the search, a
// follow-up's stays open), but the text is usually an answer.
// Follow-ups that are not strings, or are blank, are dropped.
func parseReply(text, answerKey string) reply {
	v, parse, fixes := globalsearch.Decode(text)
	m, ok := v.(map[string]any)
	if parse == llmcall.ParseUnusable || !ok {
		return reply{answer: strings.TrimSpace(text), parse: llmcall.ParseUnusable}
	}
	r := reply{parse: parse, fixes: fixes}
	for _, k := range []string{answerKey, "response", "answer", "intermediate_answer"} {
		if s, ok := m[k].(string); ok && strings.TrimSpace(s) != "" {
			r.answer = s
			break
		}
	}
	if f, ok := globalsearch.Number(m["score"]); ok {
		r.score = &f
	}
	for _, k := range []string{"follow_up_queries", "follow_ups", "follow_up_questions"} {
		list, ok := m[k].([]any)
		if !ok {
			continue
		}
		for _, x := range list {
			if s, ok := x.(string); ok && strings.TrimSpace(s) != "" {
				r.followUps = append(r.followUps, s)
			}
		}
		break
	}
	return r
}
