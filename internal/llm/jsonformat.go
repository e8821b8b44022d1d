package llm

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
)

// JSONFormat is how a server is asked for a JSON answer. Servers differ:
// OpenAI, LM Studio, vLLM, Ollama (0.5 on) and llama-server take
// response_format json_schema; llama-cpp-python's server takes only
// json_object (with a "schema" beside it, which it enforces), LM Studio
// refuses json_object; a few take neither. A Client tries them in this
// order, once per server, and keeps the first one not refused.
type JSONFormat int32

const (
	// FormatJSONSchema: {"type": "json_schema", "json_schema": {"name",
	// "schema"}}; a call without a schema asks for json_object.
	FormatJSONSchema JSONFormat = iota
	// FormatJSONObject: {"type": "json_object", "schema": ...}.
	FormatJSONObject
	// FormatPrompt: no response_format; the prompt alone asks for JSON.
	FormatPrompt
)

func (f JSONFormat) String() string {
	switch f {
	case FormatJSONSchema:
		return "json_schema"
	case FormatJSONObject:
		return "json_object"
	}
	return "prompt"
}

// responseFormat is the response_format field of a call in f asking for
// schema (nil: any JSON object); nil for FormatPrompt.
func (f JSONFormat) responseFormat(schema json.RawMessage) json.RawMessage {
	var v any
	switch {
	case f == FormatJSONSchema && len(schema) > 0:
		v = map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "reply", "schema": schema}}
	case f == FormatJSONSchema, f == FormatJSONObject && len(schema) == 0:
		v = map[string]any{"type": "json_object"}
	case f == FormatJSONObject:
		v = map[string]any{"type": "json_object", "schema": schema}
	default:
		return nil
	}
	b, _ := json.Marshal(v)
	return b
}

// JSONFormat is the format the client asks for JSON in: the first the
// server has not refused so far. Before any JSON call it is
// FormatJSONSchema, not yet tried; ProbeJSONFormat finds out.
func (c *Client) JSONFormat() JSONFormat { return JSONFormat(c.format.Load()) }

// withJSONFormat makes call with opts, and for a JSON call, asks again in
// the next format each time the server refuses one: the refusal is
// remembered, so later calls start from the format it took.
func (c *Client) withJSONFormat(opts ChatOptions, call func(JSONFormat) (string, Usage, error)) (string, Usage, error) {
	if !opts.JSON {
		return call(FormatPrompt)
	}
	for {
		f := c.JSONFormat()
		reply, usage, err := call(f)
		if err == nil || f == FormatPrompt || !RefusesJSONMode(err) {
			return reply, usage, err
		}
		c.format.CompareAndSwap(int32(f), int32(f+1))
		c.log.Debug("response_format refused", "format", f.String(), "err", err)
	}
}

// ProbeJSONFormat finds the format the server takes with one short JSON
// call to model ("" for Config.ChatModel), two or three when it refuses
// the first, and returns it: what kgrag doctor reports. An error other
// than a refusal is returned as is.
func (c *Client) ProbeJSONFormat(ctx context.Context, model string) (JSONFormat, error) {
	zero := float32(0)
	schema := json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)
	_, _, err := c.Chat(ctx, []Message{{Role: RoleUser, Content: `Reply with the JSON object {"ok": true}.`}},
		ChatOptions{Model: model, JSON: true, JSONSchema: schema, MaxTokens: 16, Temperature: &zero})
	return c.JSONFormat(), err
}

// RefusesJSONMode says err is a server refusing the response_format it
// was sent: an HTTP 400 or 422 naming it (LM Studio for json_object,
// OpenAI for json_schema on old models), or llama-cpp-python's 500 for a
// type it does not know.
func RefusesJSONMode(err error) bool {
	var e *Error
	return errors.As(err, &e) && errors.Is(err, ErrRequest) && refusesFormat(e.Status, strings.ToLower(err.Error()))
}

// refusesFormat says a reply of status with the (lower-case) message msg
// refuses the request's response_format.
func refusesFormat(status int, msg string) bool {
	if status != http.StatusBadRequest && status != http.StatusUnprocessableEntity && status != http.StatusInternalServerError {
		return false
	}
	return strings.Contains(msg, "response_format") || strings.Contains(msg, "json_schema")
}
