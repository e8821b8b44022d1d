package llm

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// WindowError is a prompt (or text to embed) the server refused for being
// longer than the model's window. Window and Prompt are in the model's
// tokens, 0 when the server's message did not give them. An *Error whose
// request was refused so carries one: errors.As finds it.
type WindowError struct {
	Window int
	Prompt int
	// Message is the server's own, with secrets scrubbed.
	Message string
}

func (e *WindowError) Error() string { return e.Message }

// The servers' words for a prompt longer than the window, with the numbers
// they give:
//   - OpenAI, vLLM and llama-cpp-python's server: "This model's maximum
//     context length is 2048 tokens. However, you requested 2845 tokens
//     (...)", or vLLM's "... and your request has 3500 input tokens";
//   - llama-server: "the request exceeds the available context size" with
//     n_ctx and n_prompt_tokens beside the message in the error object;
//     for embeddings "input is too large to process. increase the
//     physical batch size";
//   - LM Studio: "Trying to keep the first 3120 tokens when context the
//     overflows. However, the model is loaded with context length of only
//     2048 tokens";
//   - Ollama (with truncate off, as kgrag asks): "the input length exceeds
//     the context length";
//   - llama-cpp-python's own: "Requested tokens (2845) exceed context
//     window of 2048".
var (
	overflowWindow = []*regexp.Regexp{
		regexp.MustCompile(`maximum context length is (\d+)`),
		regexp.MustCompile(`context length of only (\d+)`),
		regexp.MustCompile(`exceed context window of (\d+)`),
		regexp.MustCompile(`context (?:window|length|size) (?:is |of )?(\d+) tokens`),
	}
	overflowPrompt = []*regexp.Regexp{
		regexp.MustCompile(`you requested (\d+) tokens`),
		regexp.MustCompile(`request has (\d+) input tokens`),
		regexp.MustCompile(`Requested tokens \((\d+)\)`),
		regexp.MustCompile(`keep the first (\d+) tokens`),
	}
	overflowWords = []string{
		"maximum context length", "exceeds the available context size", "exceed context window",
		"context length of only", "input length exceeds the context length", "exceeds maximum context length",
		"input is too large to process", "context_length_exceeded", "exceed_context_size_error",
		"prompt is too long", "too many tokens",
	}
)

// parseOverflow reads a refusal for length from a server's error message
// and, when there is one, the error body it came in (for llama-server's
// n_ctx and n_prompt_tokens). It returns nil for any other error.
func parseOverflow(msg string, body []byte) *WindowError {
	text := msg + " " + string(body)
	lower := strings.ToLower(text)
	found := false
	for _, w := range overflowWords {
		if strings.Contains(lower, w) {
			found = true
			break
		}
	}
	if !found {
		return nil
	}
	e := &WindowError{Message: msg}
	for _, re := range overflowWindow {
		if m := re.FindStringSubmatch(text); m != nil {
			e.Window, _ = strconv.Atoi(m[1])
			break
		}
	}
	for _, re := range overflowPrompt {
		if m := re.FindStringSubmatch(text); m != nil {
			e.Prompt, _ = strconv.Atoi(m[1])
			break
		}
	}
	var obj struct {
		Error struct {
			NCtx    int `json:"n_ctx"`
			NPrompt int `json:"n_prompt_tokens"`
		} `json:"error"`
	}
	if len(body) > 0 && json.Unmarshal(body, &obj) == nil {
		if obj.Error.NCtx > 0 {
			e.Window = obj.Error.NCtx
		}
		if obj.Error.NPrompt > 0 {
			e.Prompt = obj.Error.NPrompt
		}
	}
	return e
}

// hint is what to do about e, for an *Error's Hint.
func (e *WindowError) hint(op string) string {
	what := "the prompt"
	if op == "embed" {
		what = "a text"
	}
	switch {
	case e.Window > 0 && e.Prompt > 0:
		return fmt.Sprintf("%s of %d tokens is longer than the model's window of %d tokens: lower --max-context-tokens, or give the model a longer context (--chat-context-tokens says what kgrag may use)", what, e.Prompt, e.Window)
	case e.Window > 0:
		return fmt.Sprintf("%s is longer than the model's window of %d tokens: lower --max-context-tokens, or give the model a longer context", what, e.Window)
	}
	return fmt.Sprintf("%s is longer than the model's window: lower --max-context-tokens, or set the window with --chat-context-tokens", what)
}

// hostedChat are the context windows of hosted chat models, as their
// providers publish them, for servers that do not say (a proxy to one).
// Prefixes match dated versions ("gpt-4o-2024-08-06").
var hostedChat = []struct {
	prefix string
	tokens int
}{
	{"gpt-4.1", 1047576},
	{"gpt-4o", 128000},
	{"gpt-4-turbo", 128000},
	{"gpt-4", 8192},
	{"gpt-3.5-turbo", 16385},
	{"gpt-5", 400000},
	{"o1", 200000},
	{"o3", 200000},
	{"o4-mini", 200000},
}

// hostedEmbed are the input limits of hosted embedding models.
var hostedEmbed = map[string]int{
	"text-embedding-3-small": 8191,
	"text-embedding-3-large": 8191,
	"text-embedding-ada-002": 8191,
}

func hostedChatWindow(model string) (int, bool) {
	best, n := 0, 0
	for _, h := range hostedChat {
		if strings.HasPrefix(model, h.prefix) && len(h.prefix) > best {
			best, n = len(h.prefix), h.tokens
		}
	}
	return n, n > 0
}

func hostedEmbedWindow(model string) (int, bool) {
	n, ok := hostedEmbed[model]
	return n, ok
}
