package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"math/rand/v2"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/kgrag/kgrag/internal/redact"
	openai "github.com/sashabaranov/go-openai"
)

// DefaultBaseURL is Ollama's OpenAI-compatible endpoint on this machine,
// the server kgrag talks to unless told otherwise.
const DefaultBaseURL = "http://localhost:11434/v1"

// Defaults used for zero fields of Config.
const (
	DefaultTimeout    = 2 * time.Minute
	DefaultRetries    = 3
	DefaultBackoff    = 500 * time.Millisecond
	DefaultMaxBackoff = 20 * time.Second
)

// Config says where the model server is and how patiently to talk to it.
// The zero value talks to Ollama on localhost with the defaults above; the
// models must be set for the calls that use them.
type Config struct {
	// BaseURL is the OpenAI-compatible base, ending in /v1 for Ollama,
	// LM Studio, llama.cpp and vLLM. Empty means DefaultBaseURL.
	BaseURL string
	// APIKey is sent as a bearer token when not empty. It never appears in
	// errors or logs.
	APIKey     string
	ChatModel  string
	EmbedModel string
	// Timeout bounds one attempt of Embed or Chat, and for ChatStream the
	// wait for each piece of the answer (so a long answer that keeps
	// coming is never cut). 0 means DefaultTimeout.
	Timeout time.Duration
	// PromptTokenTime is how much longer than Timeout to wait for the
	// first piece of an answer for each token of its prompt
	// (ChatOptions.ContextTokens). 0 means DefaultPromptTokenTime.
	PromptTokenTime time.Duration
	// Retries is how many times a failed attempt is retried (429, 5xx,
	// connection errors, timeouts; never other 4xx). 0 means
	// DefaultRetries; a negative value means none.
	Retries int
	// Backoff is the delay before the first retry, doubled for each next
	// one, with jitter, up to MaxBackoff. 0 means DefaultBackoff.
	Backoff time.Duration
	// MaxBackoff caps a delay, and the Retry-After a server may ask for:
	// a longer one fails the call at once rather than stall the run.
	// 0 means DefaultMaxBackoff.
	MaxBackoff time.Duration
	// HTTPClient is the client to reuse; nil means a new one. Its own
	// Timeout, if any, applies on top of Timeout.
	HTTPClient *http.Client
	// Logger receives retries at debug level; nil means none.
	Logger *slog.Logger
	// WindowCache keeps the windows servers named in errors, for later
	// runs (see Client.Window); nil keeps them for the client's life.
	WindowCache *WindowCache
}

// Message is one chat message.
type Message struct {
	Role    string // RoleSystem, RoleUser or RoleAssistant
	Content string
}

// Chat roles.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// ChatOptions tune one chat call. The zero value uses Config.ChatModel and
// the server's defaults.
type ChatOptions struct {
	// Model overrides Config.ChatModel.
	Model string
	// Temperature, when not nil, is sent, including 0 for the most
	// repeatable answers.
	Temperature *float32
	// MaxTokens caps the answer; 0 leaves it to the server.
	MaxTokens int
	// Seed, when not nil, asks servers that support it for repeatable
	// sampling.
	Seed *int
	Stop []string
	// JSON asks for a JSON answer with response_format, in the first of
	// the server's JSONFormats it has not refused (see Client.JSONFormat);
	// once it refused them all, the prompt alone asks for JSON.
	JSON bool
	// JSONSchema, with JSON, is the shape the answer must have: sent as
	// json_schema's schema, or as json_object's "schema" (the llama.cpp
	// servers, llama-server and llama-cpp-python, constrain the answer to
	// it, which small models need to keep to a shape).
	JSONSchema json.RawMessage
	// ContextTokens is the context the call needs, in the model's tokens:
	// its prompt and MaxTokens. A server that takes the context per
	// request (Ollama's num_ctx) is asked for it when its default is
	// smaller; 0 asks for nothing.
	ContextTokens int
	// OnReasoning, when not nil, gets the model's reasoning: what the
	// server sent apart from the answer (reasoning_content) and the
	// <think> block taken out of it (see SplitReasoning), in pieces as
	// they arrive with ChatStream, whole with Chat. The answer never
	// holds it, whether OnReasoning is set or not. An error it returns
	// ends the call.
	OnReasoning func(string) error
}

// Usage is what the server reported of a call: the token counts (zero
// when it reported none) and how the answer ended, with what the client
// took out of it as reasoning.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	TotalTokens      int
	// FinishReason is the server's finish_reason: "stop", or "length" for
	// an answer cut by MaxTokens or the context; "" when none was sent.
	FinishReason string
	// ReasoningChars counts the characters of reasoning the reply held
	// (see ChatOptions.OnReasoning); 0 for a model that does not reason.
	ReasoningChars int
}

// Tokens reports whether the server reported token counts.
func (u Usage) Tokens() bool {
	return u.PromptTokens != 0 || u.CompletionTokens != 0 || u.TotalTokens != 0
}

// Client calls an OpenAI-compatible server for embeddings and chat,
// retrying what a retry can fix. It is safe for concurrent use; it holds
// no connections of its own beyond those of the http.Client.
type Client struct {
	api      *openai.Client
	cfg      Config
	base     string // BaseURL without credentials or trailing slash, for messages
	ollama   bool   // the server looks like Ollama: hints say "ollama pull"
	log      *slog.Logger
	attempts atomic.Int64
	// format is the first JSONFormat the server has not refused.
	format  atomic.Int32
	secrets redact.Secrets // the API key and what the URL carries: never in an error

	// winMu guards what window discovery found: the server's kind, the
	// windows the flags fix, and those found per model.
	winMu   sync.Mutex
	server  string
	fixed   map[WindowKind]Window
	windows map[windowKey]Window
}

// New returns a Client for cfg. It does not contact the server; use
// Models to check that it is up and serves the models.
func New(cfg Config) (*Client, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("llm: base URL %q: want http(s)://host[:port]/v1", redact.URL(cfg.BaseURL))
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.PromptTokenTime <= 0 {
		cfg.PromptTokenTime = DefaultPromptTokenTime
	}
	switch {
	case cfg.Retries == 0:
		cfg.Retries = DefaultRetries
	case cfg.Retries < 0:
		cfg.Retries = 0
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = DefaultBackoff
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = DefaultMaxBackoff
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	oc.HTTPClient = doer{cfg.HTTPClient}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Client{
		api:     openai.NewClientWithConfig(oc),
		cfg:     cfg,
		base:    strings.TrimRight(redact.URL(cfg.BaseURL), "/"),
		ollama:  u.Port() == "11434",
		log:     log.WithGroup("llm"),
		secrets: redact.New().Token(cfg.APIKey).URL(cfg.BaseURL),
	}, nil
}

// EmbedModel is the model Embed uses.
func (c *Client) EmbedModel() string { return c.cfg.EmbedModel }

// ChatModel is the model Chat uses unless ChatOptions.Model says otherwise.
func (c *Client) ChatModel() string { return c.cfg.ChatModel }

// BaseURL is the server's base URL without credentials.
func (c *Client) BaseURL() string { return c.base }

// Attempts is the number of HTTP attempts made so far, retries included:
// for tests and for a summary line.
func (c *Client) Attempts() int64 { return c.attempts.Load() }

// Models lists the models the server serves (GET /models), retrying like
// the other calls. Servers that list nothing return an empty slice.
func (c *Client) Models(ctx context.Context) ([]string, error) {
	var out []string
	err := c.retry(ctx, "list models", "/models", "", func(ctx context.Context) error {
		list, err := c.api.ListModels(ctx)
		if err != nil {
			return err
		}
		out = out[:0]
		for _, m := range list.Models {
			out = append(out, m.ID)
		}
		return nil
	})
	return out, err
}

// Embed returns one vector per text, in order, from Config.EmbedModel in
// one request: callers batch (see embedindex). No texts means no request.
// Errors are *Error; a 2xx answer with the wrong number of vectors or
// vectors of different lengths is ErrResponse.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	model := c.cfg.EmbedModel
	if model == "" {
		return nil, &Error{Op: "embed", Endpoint: c.base + "/embeddings", Kind: ErrRequest,
			Hint: "set an embedding model with --embed-model (KGRAG_EMBED_MODEL)"}
	}
	var out [][]float32
	err := c.retry(ctx, "embed", "/embeddings", model, func(ctx context.Context) error {
		resp, err := c.api.CreateEmbeddings(ctx, openai.EmbeddingRequest{
			Input:          texts,
			Model:          openai.EmbeddingModel(model),
			EncodingFormat: openai.EmbeddingEncodingFormatFloat,
		})
		if err != nil {
			return err
		}
		out, err = orderEmbeddings(resp.Data, len(texts))
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// errBadResponse marks an unusable 2xx answer; it is not retried.
type errBadResponse struct{ msg, hint string }

func (e errBadResponse) Error() string { return e.msg }

// orderEmbeddings places each vector at its index and checks that every
// text got exactly one, all of the same nonzero length.
func orderEmbeddings(data []openai.Embedding, n int) ([][]float32, error) {
	if len(data) != n {
		return nil, errBadResponse{msg: fmt.Sprintf("got %d vectors for %d texts", len(data), n)}
	}
	out := make([][]float32, n)
	for _, d := range data {
		if d.Index < 0 || d.Index >= n || out[d.Index] != nil {
			return nil, errBadResponse{msg: fmt.Sprintf("vector index %d out of range or repeated", d.Index)}
		}
		if len(d.Embedding) == 0 {
			return nil, errBadResponse{msg: fmt.Sprintf("empty vector for text %d", d.Index)}
		}
		out[d.Index] = d.Embedding
	}
	for i, v := range out {
		if len(v) != len(out[0]) {
			return nil, errBadResponse{msg: fmt.Sprintf("vector %d has %d dimensions, vector 0 has %d", i, len(v), len(out[0]))}
		}
	}
	return out, nil
}

func (c *Client) request(messages []Message, opts ChatOptions) (openai.ChatCompletionRequest, string) {
	model := opts.Model
	if model == "" {
		model = c.cfg.ChatModel
	}
	req := openai.ChatCompletionRequest{
		Model:     model,
		MaxTokens: opts.MaxTokens,
		Seed:      opts.Seed,
		Stop:      opts.Stop,
	}
	for _, m := range messages {
		req.Messages = append(req.Messages, openai.ChatCompletionMessage{Role: m.Role, Content: m.Content})
	}
	if opts.Temperature != nil {
		// go-openai omits a zero temperature from the JSON, which would
		// leave the server's default (often 0.8) in force: withPatches
		// has the doer write it. (A tiny non-zero value is no substitute:
		// llama.cpp divides the logits by it and samples noise.)
		req.Temperature = *opts.Temperature
	}
	return req, model
}

func noChatModel(c *Client, op string) error {
	return &Error{Op: op, Endpoint: c.base + "/chat/completions", Kind: ErrRequest,
		Hint: "set a chat model with --chat-model (KGRAG_CHAT_MODEL)"}
}

// Chat returns the model's answer to messages in one piece. Errors are
// *Error.
func (c *Client) Chat(ctx context.Context, messages []Message, opts ChatOptions) (string, Usage, error) {
	return c.withJSONFormat(opts, func(f JSONFormat) (string, Usage, error) { return c.chat(ctx, messages, opts, f) })
}

func (c *Client) chat(ctx context.Context, messages []Message, opts ChatOptions, format JSONFormat) (string, Usage, error) {
	if c.identified() == ServerOllama {
		return c.ollamaChat(ctx, messages, opts, format, nil)
	}
	ctx = withFirstWait(withPatches(ctx, opts, format), opts)
	req, model := c.request(messages, opts)
	if model == "" {
		return "", Usage{}, noChatModel(c, "chat")
	}
	var answer string
	var usage Usage
	err := c.retry(ctx, "chat", "/chat/completions", model, func(ctx context.Context) error {
		resp, err := c.api.CreateChatCompletion(ctx, req)
		if err != nil {
			return err
		}
		if len(resp.Choices) == 0 {
			return errBadResponse{msg: "no choices in the answer"}
		}
		msg := resp.Choices[0].Message
		var reasoning string
		reasoning, answer = SplitReasoning(msg.Content)
		reasoning = joinReasoning(msg.ReasoningContent, reasoning)
		usage = Usage{PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens,
			TotalTokens: resp.Usage.TotalTokens, FinishReason: string(resp.Choices[0].FinishReason),
			ReasoningChars: utf8.RuneCountInString(reasoning)}
		if reasoning != "" && opts.OnReasoning != nil {
			if err := opts.OnReasoning(reasoning); err != nil {
				return errCallback{err}
			}
		}
		return nil
	})
	var cb errCallback
	if errors.As(err, &cb) {
		return "", Usage{}, fmt.Errorf("llm: chat: %w", cb.err)
	}
	if err != nil {
		return "", Usage{}, err
	}
	return answer, usage, nil
}

// joinReasoning joins reasoning the server sent apart and reasoning taken
// out of the answer (a server may send both, the second a repeat).
func joinReasoning(apart, inline string) string {
	switch {
	case apart == "":
		return inline
	case inline == "" || inline == apart:
		return apart
	}
	return apart + "\n\n" + inline
}

// errCut is the cause of a stream that ended without saying how the
// answer ended: a server or proxy that closed it early, cleanly.
var errCut = errBadResponse{msg: "the stream ended before the answer did (no finish_reason): the server or a proxy in front of it cut it"}

// errIdle is the cause of a stream's context when no piece came in time.
var errIdle = errors.New("no data within the timeout")

// errAfterOutput marks a stream that failed after onDelta had been
// called: a retry would repeat text the caller has already shown.
type errAfterOutput struct{ err error }

func (e errAfterOutput) Error() string { return e.err.Error() }
func (e errAfterOutput) Unwrap() error { return e.err }

// errCallback carries an error returned by onDelta, which ends the call
// unretried and unwrapped into an *Error.
type errCallback struct{ err error }

func (e errCallback) Error() string { return e.err.Error() }
func (e errCallback) Unwrap() error { return e.err }

// ChatStream is Chat with the answer streamed: onDelta gets each piece as
// it arrives, and the whole answer is returned at the end. A failure
// before the first piece is retried like Chat; one after it is not, since
// the caller has already used the pieces. An error from onDelta stops the
// stream and is returned wrapped with %w. Usage is filled when the server
// reports it (stream_options.include_usage). Other errors are *Error.
func (c *Client) ChatStream(ctx context.Context, messages []Message, opts ChatOptions, onDelta func(string) error) (string, Usage, error) {
	return c.withJSONFormat(opts, func(f JSONFormat) (string, Usage, error) { return c.chatStream(ctx, messages, opts, f, onDelta) })
}

func (c *Client) chatStream(ctx context.Context, messages []Message, opts ChatOptions, format JSONFormat, onDelta func(string) error) (string, Usage, error) {
	if c.identified() == ServerOllama {
		return c.ollamaChat(ctx, messages, opts, format, onDelta)
	}
	ctx = withFirstWait(withPatches(ctx, opts, format), opts)
	req, model := c.request(messages, opts)
	if model == "" {
		return "", Usage{}, noChatModel(c, "chat stream")
	}
	req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	var answer, reasoning strings.Builder
	var usage Usage
	cutEarly := false // the stream ended cleanly before any piece
	err := c.retry(ctx, "chat stream", "/chat/completions", model, func(actx context.Context) error {
		// A stream is bounded by the wait for each piece, not as a whole:
		// the timer is reset by every piece.
		sctx, cancel := context.WithCancelCause(actx)
		defer cancel(nil)
		wait, _ := c.firstWait(actx)
		idle := time.AfterFunc(wait, func() { cancel(errIdle) })
		defer idle.Stop()

		stream, err := c.api.CreateChatCompletionStream(sctx, req)
		if err != nil {
			if context.Cause(sctx) == errIdle {
				return errIdle
			}
			return err
		}
		defer stream.Close()
		reasoning.Reset() // an attempt that failed before showing anything starts over
		started, finished := false, false
		var think thinkFilter
		emit := func(answerPiece, reasoningPiece string) error {
			if reasoningPiece != "" {
				reasoning.WriteString(reasoningPiece)
				if opts.OnReasoning != nil {
					started = true // shown: a retry would show it again
					if err := opts.OnReasoning(reasoningPiece); err != nil {
						return errCallback{err}
					}
				}
			}
			if answerPiece == "" {
				return nil
			}
			started = true
			answer.WriteString(answerPiece)
			if err := onDelta(answerPiece); err != nil {
				return errCallback{err}
			}
			return nil
		}
		for {
			resp, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				if err := emit(think.flush()); err != nil {
					return err
				}
				if !finished {
					if started {
						return errAfterOutput{errCut}
					}
					cutEarly = true
					return errCut
				}
				return nil
			}
			if err != nil {
				if context.Cause(sctx) == errIdle {
					err = errIdle
				}
				if started {
					return errAfterOutput{err}
				}
				return err
			}
			idle.Reset(c.cfg.Timeout)
			if resp.Usage != nil {
				usage.PromptTokens, usage.CompletionTokens, usage.TotalTokens = resp.Usage.PromptTokens, resp.Usage.CompletionTokens, resp.Usage.TotalTokens
			}
			for _, ch := range resp.Choices {
				if ch.Index != 0 {
					continue
				}
				if ch.FinishReason != "" {
					finished = true
					usage.FinishReason = string(ch.FinishReason)
				}
				if err := emit("", ch.Delta.ReasoningContent); err != nil {
					return err
				}
				if ch.Delta.Content != "" {
					if err := emit(think.write(ch.Delta.Content)); err != nil {
						return err
					}
				}
			}
		}
	})
	if err != nil && cutEarly && answer.Len() == 0 && reasoning.Len() == 0 {
		// A server that fails after sending its 200 headers can only end
		// the stream: llama-cpp-python does so for a prompt longer than
		// its window. Asked again without streaming, it says why (a
		// refusal costs nothing), or answers in one piece.
		text, u, cerr := c.chat(ctx, messages, opts, format)
		if cerr != nil {
			return "", u, cerr
		}
		if err := onDelta(text); err != nil {
			return text, u, fmt.Errorf("llm: chat stream: %w", err)
		}
		return text, u, nil
	}
	// A block only closed (its tag opened by the chat template) is
	// known only now: the answer returned is without it, even though the
	// pieces held it.
	text := answer.String()
	if r, a := SplitReasoning(text); r != "" {
		text = a
		reasoning.WriteString(r)
	}
	usage.ReasoningChars = utf8.RuneCountInString(reasoning.String())
	var cb errCallback
	if errors.As(err, &cb) {
		return text, usage, fmt.Errorf("llm: chat stream: %w", cb.err)
	}
	if err != nil {
		return text, usage, err
	}
	return text, usage, nil
}

// respInfoKey carries a *respInfo in a request's context, so the HTTP
// layer can report what go-openai's errors drop: the status and the
// Retry-After header.
type respInfoKey struct{}

type respInfo struct {
	status     int
	retryAfter time.Duration
	hasRetry   bool
	// body is the start of a non-2xx answer's body: llama-server puts
	// the window beside the message, where go-openai does not look.
	body []byte
	// wait is how long the attempt waited for the first piece, long
	// whether its prompt was long (firstWait).
	wait   time.Duration
	long   bool
	prompt int
}

// doer is the http.Client under go-openai, noting each response's status
// and Retry-After in the request's respInfo.
type doer struct{ c *http.Client }

// patchKey in a request's context carries JSON fields the doer writes
// into the request body, for what go-openai cannot send: a temperature of
// exactly 0, and response_format (go-openai's has no schema in json_object).
type patchKey struct{}

func withPatches(ctx context.Context, opts ChatOptions, format JSONFormat) context.Context {
	patch := map[string]json.RawMessage{}
	if opts.Temperature != nil && *opts.Temperature == 0 {
		patch["temperature"] = json.RawMessage("0")
	}
	if opts.JSON {
		if rf := format.responseFormat(opts.JSONSchema); rf != nil {
			patch["response_format"] = rf
		}
	}
	if len(patch) == 0 {
		return ctx
	}
	return context.WithValue(ctx, patchKey{}, patch)
}

// patchBody writes the fields of patch into a JSON request body. It
// inserts them after the opening brace rather than decoding the body,
// which for a map call of global search is tens of kilobytes: go-openai
// never writes these fields itself (a zero temperature is omitted, and
// request leaves ResponseFormat unset when a schema is to be sent), so no
// key is repeated.
func patchBody(req *http.Request, patch map[string]json.RawMessage) error {
	if req.Body == nil {
		return nil
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return err
	}
	body = bytes.TrimLeft(body, " \t\r\n")
	if len(body) < 2 || body[0] != '{' {
		return fmt.Errorf("llm: request body is not a JSON object")
	}
	var b bytes.Buffer
	b.Grow(len(body) + 128)
	b.WriteByte('{')
	for _, k := range slices.Sorted(maps.Keys(patch)) {
		name, _ := json.Marshal(k)
		b.Write(name)
		b.WriteByte(':')
		b.Write(patch[k])
		b.WriteByte(',')
	}
	rest := bytes.TrimLeft(body[1:], " \t\r\n")
	if len(rest) > 0 && rest[0] == '}' { // an empty object: no comma after ours
		b.Truncate(b.Len() - 1)
	}
	b.Write(rest)
	body = b.Bytes()
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return nil
}

func (d doer) Do(req *http.Request) (*http.Response, error) {
	if patch, _ := req.Context().Value(patchKey{}).(map[string]json.RawMessage); patch != nil {
		if err := patchBody(req, patch); err != nil {
			return nil, err
		}
	}
	resp, err := d.c.Do(req)
	if info, ok := req.Context().Value(respInfoKey{}).(*respInfo); ok && resp != nil {
		info.status = resp.StatusCode
		info.retryAfter, info.hasRetry = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	if err == nil && resp.StatusCode/100 == 2 {
		if err := htmlPage(resp); err != nil {
			return nil, err
		}
	}
	if info, ok := req.Context().Value(respInfoKey{}).(*respInfo); ok && err == nil && resp.StatusCode >= 400 {
		// Keep the start of the body and hand go-openai all of it.
		head, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		info.body = head
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	}
	return resp, err
}

// htmlPage returns an errBadResponse for a 2xx answer that is a web page:
// a proxy, a login page or a web UI at --llm-url answers 200 with HTML,
// which go-openai reads as an empty stream or fails to decode with a
// message that names no cause. It closes the body it refuses.
func htmlPage(resp *http.Response) error {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "text/html" && mt != "application/xhtml+xml" {
		return nil
	}
	head, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
	resp.Body.Close()
	text := strings.Join(strings.Fields(string(head)), " ")
	return errBadResponse{
		msg:  fmt.Sprintf("the server answered HTTP %d with a web page (%s), not an API reply: %q", resp.StatusCode, mt, text),
		hint: "--llm-url must be the OpenAI-compatible API base, e.g. " + DefaultBaseURL + "; a proxy or login page may be answering in its place",
	}
}

// parseRetryAfter reads delay-seconds or an HTTP date (RFC 9110 10.2.3).
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs < 0 || math.IsNaN(secs) || math.IsInf(secs, 0) {
			return 0, false
		}
		return time.Duration(secs * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		d := t.Sub(now)
		if d < 0 {
			d = 0
		}
		return d, true
	}
	return 0, false
}

// DefaultPromptTokenTime is the longest a server may take per prompt token before
// the first piece of its answer: a CPU reads tens of tokens a second
// (Ollama read Gemma 3 270M prompts at 135-180 tokens/s on 2 idle cores,
// took as long again to prepare them, and under CI's load did not answer
// a 5,300-token prompt within 25 ms a token), a GPU thousands.
const DefaultPromptTokenTime = 40 * time.Millisecond

// longPrompt is the size of a call's context from which a timed-out
// attempt is not tried again: its wait was already sized to the prompt,
// so the server is slow, not stalled, and Ollama goes on reading the
// abandoned prompt, so a retry would queue behind it (four attempts of a
// 5,300-token prompt took 9 minutes in CI, each timed out).
const longPrompt = 2048

// firstWaitKey in a call's context carries how long to wait for the
// first byte of the answer (firstWait).
type firstWaitKey struct{}

// withFirstWait puts into ctx the wait for the first piece of a call
// needing opts.ContextTokens: Timeout, or longer for a long prompt.
func withFirstWait(ctx context.Context, opts ChatOptions) context.Context {
	return context.WithValue(ctx, firstWaitKey{}, opts.ContextTokens)
}

// firstWait is the wait for the first piece of the answer of a call in
// ctx (see withFirstWait), and whether its prompt is long: Timeout, for
// the server to take the call up (Ollama loads a model again when num_ctx
// changes), then PromptTokenTime a prompt token.
func (c *Client) firstWait(ctx context.Context) (time.Duration, bool) {
	n, _ := ctx.Value(firstWaitKey{}).(int)
	return c.cfg.Timeout + time.Duration(n)*c.cfg.PromptTokenTime, n >= longPrompt
}

// errAttemptTimeout is the cause of an attempt's context when Timeout passed.
var errAttemptTimeout = errors.New("attempt timed out")

// retry runs call until it succeeds, fails for good, or the retries are
// spent, and turns the last failure into an *Error.
// A streaming call bounds its own waits, so streaming attempts get no
// overall deadline.
func (c *Client) retry(ctx context.Context, op, path, model string, call func(context.Context) error) error {
	endpoint := c.base + path
	if strings.HasPrefix(path, "/api/") {
		// Ollama's own API, beside its /v1.
		endpoint = strings.TrimSuffix(c.base, "/v1") + path
	}
	streaming := op == "chat stream"
	for attempt := 1; ; attempt++ {
		info := &respInfo{}
		actx, cancel := ctx, context.CancelFunc(func() {})
		wait, long := c.firstWait(ctx)
		info.wait, info.long = wait, long
		info.prompt, _ = ctx.Value(firstWaitKey{}).(int)
		if !streaming {
			d := c.cfg.Timeout
			if wait > d {
				d = wait + c.cfg.Timeout // the prompt's reading, then the answer's writing
			}
			actx, cancel = context.WithTimeoutCause(ctx, d, errAttemptTimeout)
		}
		actx = context.WithValue(actx, respInfoKey{}, info)
		c.attempts.Add(1)
		err := call(actx)
		timedOut := context.Cause(actx) == errAttemptTimeout || errors.Is(err, errIdle)
		cancel()
		if err == nil {
			return nil
		}
		var cb errCallback
		if errors.As(err, &cb) {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("llm: %s %s: %w", op, endpoint, context.Cause(ctx))
		}
		e := c.classify(op, endpoint, model, err, info, timedOut)
		e.Attempts = attempt
		var after errAfterOutput
		retryable := e.Kind == ErrUnreachable || e.Kind == ErrRateLimited || e.Kind == ErrServer
		if !retryable || errors.As(err, &after) || attempt > c.cfg.Retries || (timedOut && long) {
			return e
		}
		delay := c.backoff(attempt)
		if info.hasRetry {
			if info.retryAfter > c.cfg.MaxBackoff {
				e.Hint = fmt.Sprintf("the server asked to wait %s, longer than the %s limit; retry later or raise --llm-max-backoff",
					info.retryAfter.Round(time.Second), c.cfg.MaxBackoff)
				return e
			}
			delay = max(delay, info.retryAfter)
		}
		c.log.DebugContext(ctx, "retry", "op", op, "endpoint", endpoint, "model", model,
			"attempt", attempt, "status", e.Status, "delay", delay, "err", e.Err)
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("llm: %s %s: %w", op, endpoint, context.Cause(ctx))
		case <-t.C:
		}
	}
}

// backoff is the delay before retry n (1-based): Backoff doubled n-1
// times, capped, with the upper half jittered so concurrent callers that
// failed together do not retry together.
func (c *Client) backoff(n int) time.Duration {
	d := c.cfg.Backoff << min(n-1, 30)
	if d <= 0 || d > c.cfg.MaxBackoff {
		d = c.cfg.MaxBackoff
	}
	half := d / 2
	return half + time.Duration(rand.Int64N(int64(half)+1))
}

// classify turns a failed attempt into an *Error with a kind and a hint.
func (c *Client) classify(op, endpoint, model string, err error, info *respInfo, timedOut bool) *Error {
	e := &Error{Op: op, Endpoint: endpoint, Model: model, Status: info.status}
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	var bad errBadResponse
	msg := ""
	switch {
	case errors.As(err, &bad):
		e.Kind = ErrResponse
		e.Err = c.secrets.Error(message{bad.msg, err})
		e.Hint = bad.hint
		return e
	case timedOut:
		e.Kind = ErrUnreachable
		e.Status = 0
		e.Err = message{fmt.Sprintf("no answer within %s", c.cfg.Timeout), err}
		e.Hint = "the server is up but slow: raise --llm-timeout, or check that the model fits in memory"
		if info.wait > c.cfg.Timeout {
			e.Err = message{fmt.Sprintf("no answer within %s (for a prompt of about %d tokens)", info.wait.Round(time.Second), info.prompt), err}
			if info.long {
				e.Hint = "the server is slow to read prompts this long: lower --max-context-tokens, or raise --llm-timeout; a timed-out long prompt is not sent again, since the server goes on reading it"
			}
		}
		return e
	case errors.As(err, &reqErr) && reqErr.HTTPStatusCode != 0:
		// An error body go-openai could not read: LM Studio's
		// {"error": "text"}, a proxy's page. (Its half-read *APIError,
		// which errors.As would find too, has no status.)
		apiErr = nil
		e.Status = reqErr.HTTPStatusCode
		msg = errorText(reqErr.Body)
		if len(msg) > 300 {
			msg = msg[:300] + "..."
		}
		if msg == "" {
			msg = http.StatusText(e.Status)
		}
	case errors.As(err, &apiErr):
		if apiErr.HTTPStatusCode != 0 {
			e.Status = apiErr.HTTPStatusCode
		}
		msg = apiErr.Message
	case errors.As(err, &reqErr):
		msg = strings.TrimSpace(string(reqErr.Body))
		if len(msg) > 200 {
			msg = msg[:200] + "..."
		}
	}
	if apiErr != nil && apiErr.HTTPStatusCode == 0 {
		// An error event inside a 200 stream.
		e.Kind = ErrServer
		e.Status = 0
		e.Err = c.secrets.Error(message{msg, err})
		return e
	}
	if e.Status == 0 || (apiErr == nil && reqErr == nil) {
		// No HTTP answer: the connection failed, or a stream was cut.
		e.Kind = ErrUnreachable
		e.Status = 0
		e.Err = c.secrets.Error(err)
		e.Hint = "is the server running? start it (ollama serve) or point --llm-url (KGRAG_LLM_URL) at it"
		return e
	}
	e.Err = c.secrets.Error(message{msg, err})
	flag := "--chat-model"
	if op == "embed" {
		flag = "--embed-model"
	}
	lower := strings.ToLower(msg)
	if we := parseOverflow(c.secrets.Text(msg), []byte(c.secrets.Text(string(info.body)))); we != nil && e.Status >= 400 {
		// Not retried: the same text is refused again. llama-server
		// refuses an embedding over its batch with a 500.
		e.Kind, e.Err, e.Hint = ErrRequest, we, we.hint(op)
		return e
	}
	switch s := e.Status; {
	case refusesFormat(s, lower):
		// Not retried: the same request is refused again. withJSONFormat
		// asks again in the next format.
		e.Kind = ErrRequest
		e.Hint = "the server does not take this response_format"
	case s == http.StatusNotFound && strings.Contains(lower, "model"):
		e.Kind = ErrModelNotFound
		if c.ollama || strings.Contains(lower, "pull") {
			e.Hint = fmt.Sprintf("run: ollama pull %s (or choose another model with %s)", model, flag)
		} else {
			e.Hint = fmt.Sprintf("choose a model the server lists (GET %s/models) with %s", c.base, flag)
		}
	case s == http.StatusNotFound:
		e.Kind = ErrRequest
		e.Hint = fmt.Sprintf("no such endpoint: --llm-url must be the OpenAI-compatible base, e.g. %s", DefaultBaseURL)
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		e.Kind = ErrAuth
		e.Hint = "check the API key: --llm-key, KGRAG_LLM_KEY or KGRAG_LLM_KEY_FILE"
	case s == http.StatusTooManyRequests:
		e.Kind = ErrRateLimited
		e.Hint = "the server is rate limiting: lower the concurrency or retry later"
	case s == http.StatusBadGateway || s == http.StatusServiceUnavailable || s == http.StatusGatewayTimeout:
		e.Kind = ErrUnreachable
		e.Hint = "the server or a proxy in front of it says the model is not available; is it still loading?"
	case s >= 500:
		e.Kind = ErrServer
	case s == http.StatusRequestTimeout:
		e.Kind = ErrUnreachable
	default:
		e.Kind = ErrRequest
		long := strings.Contains(lower, "context") || strings.Contains(lower, "too long") || strings.Contains(lower, "length")
		switch {
		case long && op == "embed":
			e.Hint = "a text may be longer than the embedding model's context"
		case long:
			e.Hint = "the prompt may be longer than the model's context: lower --max-context-tokens, try --profile small, or give the model a longer context (Ollama: num_ctx)"
		}
	}
	return e
}

// errorText is the message of an error body: the string of
// {"error": "text"}, else the body itself.
func errorText(body []byte) string {
	var v struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(body, &v) == nil && v.Error != "" {
		return v.Error
	}
	return strings.TrimSpace(string(body))
}

// Embedder is the client seen as an embedder of one model: the shape
// embedindex.Embedder wants (Embed, Model), without embedindex importing
// this package's configuration. It is safe for concurrent use.
type Embedder struct{ c *Client }

// Embedder returns the client as an Embedder of Config.EmbedModel.
func (c *Client) Embedder() Embedder { return Embedder{c} }

// Embed is Client.Embed.
func (e Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return e.c.Embed(ctx, texts)
}

// Model is Config.EmbedModel.
func (e Embedder) Model() string { return e.c.cfg.EmbedModel }
