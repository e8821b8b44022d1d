package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/kgrag/kgrag/internal/engine"
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
	// chatWindow and embedWindow fix the models' windows (tokens of the
	// model; 0 asks the server).
	chatWindow  int
	embedWindow int
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
		&cli.IntFlag{Name: "embed-max-tokens", Destination: &o.embedWindow, Category: "model server", Usage: "the most tokens the embedding model reads of one text (0: ask the server, or measure it); longer texts are embedded in overlapping windows", Sources: cli.EnvVars("KGRAG_EMBED_MAX_TOKENS")},
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
	case o.chatWindow < 0:
		return usagef("--chat-context-tokens 8192", "--chat-context-tokens must not be negative")
	case o.embedWindow < 0:
		return usagef("--embed-max-tokens 512", "--embed-max-tokens must not be negative")
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
		// A cache that cannot be placed (no home folder) only means
		// windows are learned again in each run.
		WindowCache: windowCache(),
	})
	if err != nil {
		return nil, usagef("--llm-url "+llm.DefaultBaseURL, "--llm-url: %v", err)
	}
	c.SetWindow(llm.WindowChat, o.chatWindow, "--chat-context-tokens")
	c.SetWindow(llm.WindowEmbed, o.embedWindow, "--embed-max-tokens")
	return c, nil
}

// chatWindowFlag is --chat-context-tokens, bound to dst.
func chatWindowFlag(dst *int) cli.Flag {
	return &cli.IntFlag{Name: "chat-context-tokens", Category: "model server", Destination: dst, Sources: cli.EnvVars("KGRAG_CHAT_CONTEXT_TOKENS"),
		Usage: "the chat model's context window in its tokens, prompt and answer together (0: ask the server: Ollama, llama-server, LM Studio and vLLM say it); every prompt is cut to fit"}
}

// chatWindow is the chat model's window for the engines: what the flag
// or the server says, learning from the server's refusals.
func chatWindow(ctx context.Context, client *llm.Client, model string) (*engine.Window, error) {
	w, err := client.Window(ctx, llm.WindowChat, model)
	if err != nil {
		return nil, err
	}
	return &engine.Window{Window: w, Learn: func(tokens, prompt int) llm.Window {
		src := fmt.Sprintf("%s named it refusing a prompt", client.BaseURL())
		if prompt > 0 {
			src = fmt.Sprintf("%s named it refusing a prompt of %d tokens", client.BaseURL(), prompt)
		}
		return client.Learn(llm.WindowChat, model, tokens, src)
	}}, nil
}

// chatModelFlag is --chat-model, with usage saying what the model does
// in the command, bound to dst (whose value is the default).
func chatModelFlag(usage string, dst *string) cli.Flag {
	return &cli.StringFlag{Name: "chat-model", Category: "model server", Value: *dst, Destination: dst, Usage: usage, Sources: cli.EnvVars("KGRAG_CHAT_MODEL")}
}

// windowCache is the cache of learned windows: KGRAG_WINDOW_CACHE, else
// the user's cache folder; nil when neither can be had.
func windowCache() *llm.WindowCache {
	c, err := llm.OpenWindowCache(os.Getenv("KGRAG_WINDOW_CACHE"))
	if err != nil {
		return nil
	}
	return c
}
