// Package llmcall is how a search engine calls the chat model: the record
// of one call, the JSON-mode fallback, the bounded fan-out of a phase's
// calls, the one rule for which errors end a search, and the hooks that
// stream an answer and a reasoning model's thinking. Global and DRIFT
// search make their calls through it; local search, basic search and the
// indexer share its Chatter and its rule for fatal errors.
package llmcall

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/tokens"
	"golang.org/x/sync/errgroup"
)

// Chatter is a chat model that answers in one piece: *llm.Client, or a
// cache or recorder in front of it.
type Chatter interface {
	Chat(ctx context.Context, msgs []llm.Message, opts llm.ChatOptions) (string, llm.Usage, error)
}

// Streamer is a chat model that can also stream its answer.
type Streamer interface {
	Chatter
	ChatStream(ctx context.Context, msgs []llm.Message, opts llm.ChatOptions, onDelta func(string) error) (string, llm.Usage, error)
}

// Call is one model call: its token counts (kgrag's own count of the
// prompt and the reply, with the encoding of the budget, and the server's
// usage when it reported one), how long it took and how its reply parsed.
// Its JSON is part of the ask --json record.
type Call struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// Server is the usage the server reported, when it did.
	Server *ServerUsage `json:"server_usage,omitempty"`
	Millis float64      `json:"ms"`
	// ReasoningChars counts a reasoning model's thinking, which was taken
	// out of Reply before it was parsed.
	ReasoningChars int `json:"reasoning_chars,omitempty"`
	// Reply is the model's reply to a call whose reply is parsed, as it
	// came: what to look at when a small model's replies are unusable.
	Reply string `json:"reply,omitempty"`
	// Parse is ParseValid, ParseRepaired or ParseUnusable; "" for a call
	// that writes the answer and for a call that failed.
	Parse string   `json:"parse,omitempty"`
	Fixes []string `json:"fixes,omitempty"`
	// Err is the error of a call that failed for good (after the client's
	// retries).
	Err string `json:"error,omitempty"`
}

// How a reply parsed.
const (
	ParseValid    = "valid"
	ParseRepaired = "repaired"
	ParseUnusable = "unusable"
)

// ServerUsage is a call's token usage as the model server counted it.
type ServerUsage struct {
	Prompt     int `json:"prompt_tokens"`
	Completion int `json:"completion_tokens"`
}

// serverUsage is u as a Call records it: nil when the server sent none.
func serverUsage(u llm.Usage) *ServerUsage {
	if !u.Tokens() {
		return nil
	}
	return &ServerUsage{u.PromptTokens, u.CompletionTokens}
}

// Hooks receive the answer and a reasoning model's thinking as the call
// that writes the answer streams them. Either may be nil.
type Hooks struct {
	Answer    func(piece string) error
	Reasoning func(piece string) error
}

// Serialized returns h with each hook called under mu, so that a search
// whose phases run calls concurrently hands its caller one piece at a
// time, in step with its progress reports.
func (h Hooks) Serialized(mu *sync.Mutex) Hooks {
	lock := func(f func(string) error) func(string) error {
		if f == nil {
			return nil
		}
		return func(p string) error {
			mu.Lock()
			defer mu.Unlock()
			return f(p)
		}
	}
	return Hooks{Answer: lock(h.Answer), Reasoning: lock(h.Reasoning)}
}

// Locked returns f called under mu, for a search's progress reports from
// concurrent calls; a nil f gives a function that does nothing.
func Locked[T any](mu *sync.Mutex, f func(T)) func(T) {
	return func(v T) {
		if f != nil {
			mu.Lock()
			defer mu.Unlock()
			f(v)
		}
	}
}

// Caller makes the model calls of one search with the same options. It is
// safe for concurrent use.
type Caller struct {
	chat Streamer
	opts llm.ChatOptions
	json bool
	enc  *tokens.Encoder
}

// NewCaller returns a Caller of chat with opts. With jsonMode, calls given
// a schema ask for JSON of that shape (response_format, in the form the
// server takes: llm.JSONFormat); enc counts the tokens the records give.
func NewCaller(chat Streamer, opts llm.ChatOptions, jsonMode bool, enc *tokens.Encoder) *Caller {
	return &Caller{chat: chat, opts: opts, json: jsonMode, enc: enc}
}

// Options are the chat options the calls are made with.
func (c *Caller) Options() llm.ChatOptions { return c.opts }

// messages are a system message (none when "") and the user's.
func messages(system, user string) []llm.Message {
	var msgs []llm.Message
	if system != "" {
		msgs = append(msgs, llm.Message{Role: llm.RoleSystem, Content: system})
	}
	return append(msgs, llm.Message{Role: llm.RoleUser, Content: user})
}

// Call makes one call whose reply is parsed: system (none when "") and
// user messages, and with a schema a request for JSON of that shape.
func (c *Caller) Call(ctx context.Context, system, user string, schema json.RawMessage) (string, Call, error) {
	opts := c.opts
	opts.JSON = schema != nil && c.json
	if opts.JSON {
		opts.JSONSchema = schema
	}
	var rec Call
	counted := c.countPrompt(&rec, system, user)
	defer counted()
	t := time.Now()
	reply, usage, err := c.chat.Chat(ctx, messages(system, user), opts)
	rec.Millis = ms(time.Since(t))
	counted()
	if err != nil {
		rec.Err = err.Error()
		return "", rec, err
	}
	rec.CompletionTokens, rec.Server, rec.Reply, rec.ReasoningChars = c.enc.Count(reply), serverUsage(usage), reply, usage.ReasoningChars
	return reply, rec, nil
}

// Answer makes the call that writes the answer, streaming it and the
// thinking to h (in one piece when h.Answer is nil). The record keeps no
// reply: the answer is the search's.
func (c *Caller) Answer(ctx context.Context, system, user string, h Hooks) (string, Call, error) {
	opts := c.opts
	opts.OnReasoning = h.Reasoning
	var rec Call
	counted := c.countPrompt(&rec, system, user)
	defer counted()
	t := time.Now()
	var (
		answer string
		usage  llm.Usage
		err    error
	)
	if h.Answer != nil {
		answer, usage, err = c.chat.ChatStream(ctx, messages(system, user), opts, h.Answer)
	} else {
		answer, usage, err = c.chat.Chat(ctx, messages(system, user), opts)
	}
	rec.Millis = ms(time.Since(t))
	counted()
	if err != nil {
		rec.Err = err.Error()
		return "", rec, err
	}
	rec.CompletionTokens, rec.Server, rec.ReasoningChars = c.enc.Count(answer), serverUsage(usage), usage.ReasoningChars
	return answer, rec, nil
}

// countPrompt counts the prompt's tokens into rec.PromptTokens while the
// model works on it: a map prompt is a whole batch of reports, whose
// counting would otherwise delay the call. The returned function waits for
// the count; it may be called more than once.
func (c *Caller) countPrompt(rec *Call, system, user string) func() {
	done := make(chan struct{})
	go func() {
		defer close(done)
		rec.PromptTokens = c.enc.Count(system) + c.enc.Count(user)
	}()
	return func() { <-done }
}

// Each runs fn for 0..n-1, limit at a time: the model calls of a phase of
// a search. The first error fn returns cancels the calls still running
// and is returned; so is the cause of ctx ending.
func Each(ctx context.Context, limit, n int, fn func(ctx context.Context, i int) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(limit)
	for i := range n {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error { return fn(gctx, i) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return context.Cause(ctx)
}

// ErrUnusable marks an error that is the model's reply itself, when the
// search has no way on without it (a reasoning model that spent its
// tokens thinking and gave no answer): not kgrag's fault but the model
// server's, as kgrag serve (502, upstream_unusable_reply) and kgrag ask
// (exit 11) report it.
var ErrUnusable = errors.New("the model's reply could not be used")

// Fatal says err, from one call, would fail every other call of the
// search or run as well, so that going on would only spend time: the
// server cannot be reached (after the client's retries), does not serve
// the model, refuses the key or the request (a 4xx: the options every call
// shares), still rate-limits after the retries, or the caller gave up.
// Anything else (a 5xx after the retries, an unusable reply) is the call's
// own: it is skipped and counted.
func Fatal(err error) bool {
	return llm.Unreachable(err) || errors.Is(err, llm.ErrModelNotFound) || errors.Is(err, llm.ErrAuth) ||
		errors.Is(err, llm.ErrRequest) || errors.Is(err, llm.ErrRateLimited) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
