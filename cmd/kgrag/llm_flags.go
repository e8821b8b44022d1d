package main

import (
	"time"

	"github.com/kgrag/kgrag/internal/llm"
	"github.com/urfave/cli/v3"
)

// defaultEmbedModel is Ollama's usual embedding model.
const defaultEmbedModel = "nomic-embed-text"

// llmOptions say which model server to talk to and how patiently.
type llmOptions struct {
	url        string
	key        string // a secret: never printed
	embedModel string
	timeout    time.Duration
	retries    int           // 0 means none
	maxBackoff time.Duration // the longest wait before a retry
}

// llmFlags are the flags of the commands that talk to the model server,
// bound to o.
func llmFlags(o *llmOptions) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "llm-url", Destination: &o.url, Category: "model server", Value: llm.DefaultBaseURL, Usage: "OpenAI-compatible base `URL` (Ollama, LM Studio, llama.cpp, vLLM)", Sources: cli.EnvVars("KGRAG_LLM_URL")},
		&cli.StringFlag{Name: "llm-key", Destination: &o.key, Category: "model server", Usage: "API key, if the server wants one (better: env KGRAG_LLM_KEY or KGRAG_LLM_KEY_FILE)", Sources: secretSource("KGRAG_LLM_KEY")},
		&cli.StringFlag{Name: "embed-model", Destination: &o.embedModel, Category: "model server", Value: defaultEmbedModel, Usage: "embedding model `NAME`", Sources: cli.EnvVars("KGRAG_EMBED_MODEL")},
		&cli.DurationFlag{Name: "llm-timeout", Destination: &o.timeout, Category: "model server", Value: llm.DefaultTimeout, Usage: "time limit of each request to the model server"},
		&cli.IntFlag{Name: "llm-retries", Destination: &o.retries, Category: "model server", Value: llm.DefaultRetries, Usage: "retries of a request to the model server that failed transiently (connection error, timeout, 5xx, 429); 0 for none"},
		retriesAlias("llm-retries"),
		&cli.DurationFlag{Name: "llm-max-backoff", Destination: &o.maxBackoff, Category: "model server", Value: llm.DefaultMaxBackoff, Usage: "longest wait before a retry; a server that asks (Retry-After) for longer fails the request"},
	}
}

func (o llmOptions) validate() error {
	switch {
	case o.url == "":
		return usagef("--llm-url "+llm.DefaultBaseURL, "--llm-url is empty: give the model server's OpenAI-compatible base URL")
	case o.timeout < 0:
		return usagef("--llm-timeout 2m", "--llm-timeout must not be negative")
	case o.retries < 0:
		return usagef("--llm-retries 3", "--llm-retries must not be negative")
	case o.maxBackoff < 0:
		return usagef("--llm-max-backoff 20s", "--llm-max-backoff must not be negative")
	}
	// Building the client checks the URL without contacting the server,
	// so a bad --llm-url fails before any data is read or written.
	_, err := o.client()
	return err
}

// client returns a client of the model server. It does not contact it.
func (o llmOptions) client() (*llm.Client, error) {
	retries := o.retries
	if retries == 0 {
		retries = -1 // llm.Config: 0 is the default, negative is none
	}
	c, err := llm.New(llm.Config{
		BaseURL:    o.url,
		APIKey:     o.key,
		EmbedModel: o.embedModel,
		Timeout:    o.timeout,
		Retries:    retries,
		MaxBackoff: o.maxBackoff,
	})
	if err != nil {
		return nil, usagef("--llm-url "+llm.DefaultBaseURL, "--llm-url: %v", err)
	}
	return c, nil
}

// chatModelFlag is --chat-model, with usage saying what the model does
// in the command, bound to dst (whose value is the default).
func chatModelFlag(usage string, dst *string) cli.Flag {
	return &cli.StringFlag{Name: "chat-model", Category: "model server", Value: *dst, Destination: dst, Usage: usage, Sources: cli.EnvVars("KGRAG_CHAT_MODEL")}
}
