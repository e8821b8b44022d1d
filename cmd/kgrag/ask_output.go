package main

import (
	"fmt"
	"strings"
)

// retrievalLine is the terminal summary of the retrieval, on stderr.
func retrievalLine(r *askResult) string {
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
func answerLine(r *askResult) string {
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
