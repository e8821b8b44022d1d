package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// Rerank asks the server's rerank endpoint how relevant each of docs is
// to query (a cross-encoder reads each pair whole, where an embedding
// compares two vectors made apart) and returns the scores in docs' order,
// higher more relevant. It posts {model, query, documents, top_n} to
// BaseURL + "/rerank" and reads {results: [{index, relevance_score}]}:
// the shape llama-server (started with --reranking), vLLM (a reranker
// model), Jina's and Cohere's APIs share. It is not retried.
func (c *Client) Rerank(ctx context.Context, model, query string, docs []string) ([]float64, error) {
	endpoint := c.base + "/rerank"
	fail := func(kind error, status int, err error, hint string) error {
		return &Error{Op: "rerank", Endpoint: endpoint, Model: model, Status: status, Attempts: 1, Kind: kind, Err: c.secrets.Error(err), Hint: hint}
	}
	if len(docs) == 0 {
		return nil, nil
	}
	if model == "" {
		return nil, fail(ErrRequest, 0, errors.New("no rerank model named"), "name one with --rerank-model")
	}
	body, err := json.Marshal(map[string]any{"model": model, "query": query, "documents": docs, "top_n": len(docs)})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fail(ErrRequest, 0, err, "")
	}
	req.Header.Set("Content-Type", "application/json")
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	c.attempts.Add(1)
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, fail(ErrUnreachable, 0, err, "is the server running? kgrag doctor checks it")
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fail(ErrServer, resp.StatusCode, err, "")
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, fail(ErrRequest, resp.StatusCode, errors.New(rerankError(raw)),
			"the server has no rerank endpoint or no such model: llama-server must run a reranker model with reranking on, vLLM a reranker model")
	case resp.StatusCode >= 500:
		return nil, fail(ErrServer, resp.StatusCode, errors.New(rerankError(raw)), "")
	case resp.StatusCode != http.StatusOK:
		return nil, fail(ErrRequest, resp.StatusCode, errors.New(rerankError(raw)), "")
	}
	var out struct {
		Results []struct {
			Index int      `json:"index"`
			Score *float64 `json:"relevance_score"`
		} `json:"results"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fail(ErrServer, resp.StatusCode, fmt.Errorf("the answer is not a rerank result: %w", err), "")
	}
	scores := make([]float64, len(docs))
	seen := make([]bool, len(docs))
	for _, r := range out.Results {
		if r.Index < 0 || r.Index >= len(docs) || seen[r.Index] || r.Score == nil {
			return nil, fail(ErrServer, resp.StatusCode, fmt.Errorf("result for document %d out of range, repeated or without a score", r.Index), "")
		}
		seen[r.Index], scores[r.Index] = true, *r.Score
	}
	if len(out.Results) != len(docs) {
		return nil, fail(ErrServer, resp.StatusCode, fmt.Errorf("%d scores for %d documents", len(out.Results), len(docs)), "")
	}
	return scores, nil
}

// rerankError is the message of an error answer, cut short: a proxy's
// HTML error page would otherwise fill the terminal.
func rerankError(raw []byte) string {
	msg := errorText(raw)
	if r := []rune(msg); len(r) > 120 {
		msg = string(r[:120]) + "..."
	}
	if msg == "" {
		msg = "no message"
	}
	return msg
}
