package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
)

// Chat with Ollama goes through its own API, /api/chat, not its
// OpenAI-compatible one: only there can a request ask for the context it
// needs (options.num_ctx; the OpenAI endpoint always gets the server's
// default, 4096 on most machines, whatever the prompt's length), and say
// truncate false, so that a prompt longer than the context is refused
// instead of silently cut (Ollama keeps its first tokens and drops the
// middle).

// ollamaMessage is a message of /api/chat.
type ollamaMessage struct {
	Role     string `json:"role"`
	Content  string `json:"content"`
	Thinking string `json:"thinking,omitempty"`
}

type ollamaChatRequest struct {
	Model    string          `json:"model"`
	Messages []ollamaMessage `json:"messages"`
	Stream   bool            `json:"stream"`
	Format   json.RawMessage `json:"format,omitempty"`
	Options  map[string]any  `json:"options,omitempty"`
	Truncate bool            `json:"truncate"`
	Shift    bool            `json:"shift"`
}

type ollamaChatResponse struct {
	Message         ollamaMessage `json:"message"`
	Done            bool          `json:"done"`
	DoneReason      string        `json:"done_reason"`
	PromptEvalCount int           `json:"prompt_eval_count"`
	EvalCount       int           `json:"eval_count"`
	Error           string        `json:"error"`
}

// ollamaNumCtx is the num_ctx to ask for a call that needs need tokens
// (0: ask for none): what the model is loaded with, or what a request
// gets without asking, when that is enough (asking for another context
// reloads the model); else need rounded up to a power of two from 4096,
// so that calls of similar size share one load, within the window.
func ollamaNumCtx(w Window, need int) int {
	if need <= 0 {
		return 0
	}
	for _, have := range []int{w.Loaded, w.Default} {
		if have >= need {
			return have
		}
	}
	n := 4096
	for n < need {
		n *= 2
	}
	if w.Tokens > 0 && n > w.Tokens {
		n = max(w.Tokens, need)
	}
	return n
}

// ollamaRequest builds the /api/chat request of a call.
func (c *Client) ollamaRequest(ctx context.Context, messages []Message, opts ChatOptions, format JSONFormat, stream bool) (ollamaChatRequest, error) {
	model := opts.Model
	if model == "" {
		model = c.cfg.ChatModel
	}
	req := ollamaChatRequest{Model: model, Stream: stream, Options: map[string]any{}}
	for _, m := range messages {
		req.Messages = append(req.Messages, ollamaMessage{Role: m.Role, Content: m.Content})
	}
	if opts.JSON && format != FormatPrompt {
		if len(opts.JSONSchema) > 0 {
			req.Format = opts.JSONSchema
		} else {
			req.Format = json.RawMessage(`"json"`)
		}
	}
	if opts.Temperature != nil {
		req.Options["temperature"] = *opts.Temperature
	}
	if opts.MaxTokens > 0 {
		req.Options["num_predict"] = opts.MaxTokens
	}
	if opts.Seed != nil {
		req.Options["seed"] = *opts.Seed
	}
	if len(opts.Stop) > 0 {
		req.Options["stop"] = opts.Stop
	}
	if opts.ContextTokens > 0 {
		w, err := c.Window(ctx, WindowChat, model)
		if err != nil {
			return req, err
		}
		if n := ollamaNumCtx(w, opts.ContextTokens); n > 0 {
			req.Options["num_ctx"] = n
		}
	}
	return req, nil
}

// ollamaChat is Chat and ChatStream (onDelta not nil) through /api/chat.
func (c *Client) ollamaChat(ctx context.Context, messages []Message, opts ChatOptions, format JSONFormat, onDelta func(string) error) (string, Usage, error) {
	stream := onDelta != nil
	op := "chat"
	if stream {
		op = "chat stream"
	}
	req, err := c.ollamaRequest(ctx, messages, opts, format, stream)
	if err != nil {
		return "", Usage{}, err
	}
	if req.Model == "" {
		return "", Usage{}, noChatModel(c, op)
	}
	body, err := json.Marshal(req)
	if err != nil {
		return "", Usage{}, fmt.Errorf("llm: %s: %w", op, err)
	}
	var answer, reasoning strings.Builder
	var usage Usage
	ctx = withFirstWait(ctx, opts)
	err = c.retry(ctx, op, "/api/chat", req.Model, func(actx context.Context) error {
		answer.Reset()
		reasoning.Reset()
		usage = Usage{}
		sctx, cancel := context.WithCancelCause(actx)
		defer cancel(nil)
		var idle *time.Timer
		if stream {
			wait, _ := c.firstWait(actx)
			idle = time.AfterFunc(wait, func() { cancel(errIdle) })
			defer idle.Stop()
		}
		hreq, err := http.NewRequestWithContext(sctx, http.MethodPost, c.root()+"/api/chat", bytes.NewReader(body))
		if err != nil {
			return err
		}
		hreq.Header.Set("Content-Type", "application/json")
		if c.cfg.APIKey != "" {
			hreq.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
		}
		resp, err := doer{c.cfg.HTTPClient}.Do(hreq)
		if err != nil {
			if context.Cause(sctx) == errIdle {
				return errIdle
			}
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			return ollamaError(resp.StatusCode, b)
		}
		started, finished := false, false
		var think thinkFilter
		emit := func(answerPiece, reasoningPiece string) error {
			if reasoningPiece != "" {
				reasoning.WriteString(reasoningPiece)
				if opts.OnReasoning != nil && stream {
					started = true
					if err := opts.OnReasoning(reasoningPiece); err != nil {
						return errCallback{err}
					}
				}
			}
			if answerPiece == "" {
				return nil
			}
			answer.WriteString(answerPiece)
			if stream {
				started = true
				if err := onDelta(answerPiece); err != nil {
					return errCallback{err}
				}
			}
			return nil
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			if idle != nil {
				idle.Reset(c.cfg.Timeout)
			}
			var r ollamaChatResponse
			if err := json.Unmarshal(line, &r); err != nil {
				return afterOutput(started, errBadResponse{msg: fmt.Sprintf("unreadable line in the answer: %q", truncate(string(line), 120))})
			}
			if r.Error != "" {
				return afterOutput(started, &openai.APIError{HTTPStatusCode: http.StatusInternalServerError, Message: r.Error})
			}
			if err := emit("", r.Message.Thinking); err != nil {
				return err
			}
			if r.Message.Content != "" {
				if err := emit(think.write(r.Message.Content)); err != nil {
					return err
				}
			}
			if r.Done {
				finished = true
				usage.PromptTokens, usage.CompletionTokens = r.PromptEvalCount, r.EvalCount
				usage.TotalTokens = r.PromptEvalCount + r.EvalCount
				usage.FinishReason = r.DoneReason
				if usage.FinishReason == "" {
					usage.FinishReason = "stop"
				}
			}
		}
		if err := sc.Err(); err != nil {
			if context.Cause(sctx) == errIdle {
				err = errIdle
			}
			return afterOutput(started, err)
		}
		if err := emit(think.flush()); err != nil {
			return err
		}
		if !finished {
			return afterOutput(started, errCut)
		}
		return nil
	})
	text := answer.String()
	if r, a := SplitReasoning(text); r != "" {
		text = a
		reasoning.WriteString(r)
	}
	usage.ReasoningChars = utf8.RuneCountInString(reasoning.String())
	if reasoning.Len() > 0 && !stream && opts.OnReasoning != nil && err == nil {
		if cbErr := opts.OnReasoning(reasoning.String()); cbErr != nil {
			return "", Usage{}, fmt.Errorf("llm: chat: %w", cbErr)
		}
	}
	var cb errCallback
	if errors.As(err, &cb) {
		return text, usage, fmt.Errorf("llm: %s: %w", op, cb.err)
	}
	return text, usage, err
}

// afterOutput marks err as coming after pieces were shown, when they were.
func afterOutput(started bool, err error) error {
	if started {
		return errAfterOutput{err}
	}
	return err
}

// ollamaError is a non-200 answer of Ollama's API ({"error": "..."}) as
// the error go-openai gives for the OpenAI endpoints, which classify reads.
func ollamaError(status int, body []byte) error {
	var e struct {
		Error string `json:"error"`
	}
	msg := strings.TrimSpace(string(body))
	if json.Unmarshal(body, &e) == nil && e.Error != "" {
		msg = e.Error
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	return &openai.APIError{HTTPStatusCode: status, Message: msg}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
