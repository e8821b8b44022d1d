// Package llm is kgrag's only door to a language model: embeddings and
// chat over any OpenAI-compatible server (Ollama, LM Studio, llama.cpp,
// vLLM), through github.com/sashabaranov/go-openai.
//
// go-openai makes one attempt per call, while a local model server is
// often busy loading a model, rate limits or drops a connection, so every
// call here is retried on 429, 5xx, connection errors and timeouts with
// exponential backoff and jitter, waiting at least as long as a
// Retry-After header asks. Other 4xx answers are not retried: the request
// must change. Each failure comes back as an *Error that names the
// operation, the endpoint and the model, says what to fix in Hint
// ("run: ollama pull nomic-embed-text"), and matches one of the Err*
// kinds with errors.Is. Unreachable tells the CLI to exit 11. The API key
// is never part of an error or a log record.
//
// A reply is checked and cleaned before anyone reads it: a reasoning
// model's thinking (a <think> block, or reasoning_content) is taken out of
// every answer and handed to ChatOptions.OnReasoning (see SplitReasoning),
// a 200 answer that is a web page is an ErrResponse, and so is a stream
// that ends without a finish_reason (ChatStream then also returns what
// came).
//
//	c, err := llm.New(llm.Config{
//		BaseURL:    llm.DefaultBaseURL,
//		ChatModel:  "llama3.2",
//		EmbedModel: "nomic-embed-text",
//	})
//	if err != nil { ... }
//	vecs, err := c.Embed(ctx, []string{"ALICE: a cryptographer"})
//	answer, usage, err := c.ChatStream(ctx, []llm.Message{
//		{Role: llm.RoleSystem, Content: prompt},
//		{Role: llm.RoleUser, Content: question},
//	}, llm.ChatOptions{}, func(piece string) error {
//		_, err := io.WriteString(os.Stdout, piece)
//		return err
//	})
//	if llm.Unreachable(err) { /* exit 11 */ }
//
// Tests run against llmtest, an OpenAI-compatible server in-process.
package llm
