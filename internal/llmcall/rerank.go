package llmcall

import (
	"context"
	"fmt"
	"slices"
)

// Reranker scores docs against query, higher more relevant, in docs'
// order: a cross-encoder behind a rerank endpoint (llm.Client.Rerank with
// a model).
type Reranker func(ctx context.Context, query string, docs []string) ([]float64, error)

// Rerank reorders the first n of items, best first by r's score of
// text(item) (ties keep their order); the rest follow as they were.
func Rerank[T any](ctx context.Context, r Reranker, query string, items []T, n int, text func(T) string) ([]T, error) {
	n = min(n, len(items))
	if r == nil || n < 2 {
		return items, nil
	}
	docs := make([]string, n)
	for i := range n {
		docs[i] = text(items[i])
	}
	scores, err := r(ctx, query, docs)
	if err != nil {
		return nil, fmt.Errorf("rerank: %w", err)
	}
	if len(scores) != n {
		return nil, fmt.Errorf("rerank: %d scores for %d texts", len(scores), n)
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case scores[a] > scores[b]:
			return -1
		case scores[a] < scores[b]:
			return 1
		}
		return 0
	})
	out := make([]T, 0, len(items))
	for _, i := range order {
		out = append(out, items[i])
	}
	return append(out, items[n:]...), nil
}
