// Package llmtest is an OpenAI-compatible server for kgrag's tests, so the
// LLM client, the embedder and `kgrag ask` are tested without a model:
//
//   - POST /v1/embeddings returns deterministic vectors (Embed): a bag of
//     hashed words, so texts sharing words are closer than unrelated ones;
//   - POST /v1/chat/completions answers from a queue (Enqueue), from rules
//     on the last user message (Reply), or echoes it; "stream": true gives
//     server-sent events like OpenAI's, with usage when asked;
//   - GET /v1/models lists Config.Models; a model not listed gets Ollama's
//     404 "model not found" reply;
//   - every request is recorded (Requests, Count) before injected failures
//     (Fail, FailN: a status with Retry-After, a delay, a dropped
//     connection, a stream cut after N chunks) are applied;
//   - MaxInFlight tells the most requests served at once.
//
// In a test:
//
//	srv := llmtest.Start(t, llmtest.Config{Dim: 32})
//	srv.FailN(2, llmtest.Failure{Status: 429, RetryAfter: "0"})
//	srv.Reply("capital", "Paris")
//	c, _ := llm.New(llm.Config{BaseURL: srv.URL(), ChatModel: "m", EmbedModel: "e"})
//	...
//	if n := srv.Count("/embeddings"); n != 3 { ... }
//
// For manual use, cmd/kgrag-llmtest (at the repository root) serves the same on a fixed address.
package llmtest
