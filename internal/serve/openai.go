package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/kgrag/kgrag/internal/engine"
	"github.com/kgrag/kgrag/internal/retrieval"
)

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	type model struct {
		ID          string `json:"id"`
		Object      string `json:"object"`
		Created     int64  `json:"created"`
		OwnedBy     string `json:"owned_by"`
		Description string `json:"description"`
	}
	g, done := s.pin()
	defer done()
	out := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list", Data: []model{}}
	for _, m := range engine.Modes() {
		if _, ok := g.Engines[m.Name]; !ok {
			continue // its vector index was not built
		}
		out.Data = append(out.Data, model{m.Model(), "model", g.loaded.Unix(), "kgrag", m.About})
	}
	writeJSON(w, http.StatusOK, out)
}

// chatRequest is the part of OpenAI's chat completion request kgrag
// reads. The sampling fields are the upstream model's, set by kgrag
// serve's flags, and are accepted and ignored.
type chatRequest struct {
	Model         string        `json:"model"`
	Messages      []chatMessage `json:"messages"`
	Stream        bool          `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// text is a message's content: a string, or the text parts of an array
// of parts.
func (m chatMessage) text() (string, error) {
	if len(m.Content) == 0 || string(m.Content) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(m.Content, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(m.Content, &parts); err != nil {
		return "", errors.New("content must be a string or an array of parts")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}

// decode reads a JSON request body into v, bounded by MaxBodyBytes, and
// answers 400 or 413 itself when it cannot.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		writeError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "body_too_large",
			fmt.Sprintf("the request body is over %d bytes", s.cfg.MaxBodyBytes))
		return false
	case err != nil:
		badRequest(w, "", "read the request body: "+err.Error())
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		badRequest(w, "", "the request body is not valid JSON for this endpoint: "+err.Error())
		return false
	}
	return true
}

// conversation turns the messages into the question (the last user
// message) and the turns before it. System messages are left out: the
// context's own prompt is what the model gets.
func (s *Server) conversation(msgs []chatMessage) (string, []retrieval.Turn, error) {
	if len(msgs) == 0 {
		return "", nil, fmt.Errorf("%w: messages is empty: send at least one user message", errBadQuestion)
	}
	if len(msgs) > s.cfg.MaxTurns {
		return "", nil, fmt.Errorf("%w: %d messages, more than the %d this server takes: send the latest ones", errBadQuestion, len(msgs), s.cfg.MaxTurns)
	}
	var turns []retrieval.Turn
	for i, m := range msgs {
		text, err := m.text()
		if err != nil {
			return "", nil, fmt.Errorf("%w: messages[%d]: %v", errBadQuestion, i, err)
		}
		switch m.Role {
		case "user":
			turns = append(turns, retrieval.Turn{Role: retrieval.RoleUser, Content: text})
		case "assistant":
			turns = append(turns, retrieval.Turn{Role: retrieval.RoleAssistant, Content: text})
		case "system", "developer", "tool":
		default:
			return "", nil, fmt.Errorf("%w: messages[%d]: role %q: want user, assistant or system", errBadQuestion, i, m.Role)
		}
	}
	if len(turns) == 0 || turns[len(turns)-1].Role != retrieval.RoleUser {
		return "", nil, fmt.Errorf("%w: the last message must be the user's question", errBadQuestion)
	}
	q := strings.TrimSpace(turns[len(turns)-1].Content)
	if q == "" {
		return "", nil, fmt.Errorf("%w: the question (the last user message) is empty", errBadQuestion)
	}
	if n := len([]rune(q)); n > s.cfg.MaxQuestionChars {
		return "", nil, fmt.Errorf("%w: the question is %d characters, more than the %d this server takes", errBadQuestion, n, s.cfg.MaxQuestionChars)
	}
	return q, turns[:len(turns)-1], nil
}

// completion is a chat completion, or one chunk of a stream.
type completion struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"`
	Created int64    `json:"created"`
	Model   string   `json:"model"`
	Choices []choice `json:"choices"`
	Usage   *usage   `json:"usage,omitempty"`
	// Citations are the URLs of the records the answer cites; KGRAG is
	// the whole record (kgrag ask --json's, with the citations). Both come
	// with the final chunk of a stream.
	Citations []string `json:"citations,omitempty"`
	KGRAG     *reply   `json:"kgrag,omitempty"`
}

type choice struct {
	Index        int      `json:"index"`
	Message      *message `json:"message,omitempty"`
	Delta        *message `json:"delta,omitempty"`
	FinishReason *string  `json:"finish_reason"`
}

type message struct {
	Role    string `json:"role,omitempty"`
	Content string `json:"content"`
	// Annotations are the records cited, as OpenAI's url_citation
	// annotations, which chat UIs (Open WebUI) show as sources.
	Annotations []annotation `json:"annotations,omitempty"`
}

type annotation struct {
	Type        string      `json:"type"` // "url_citation"
	URLCitation urlCitation `json:"url_citation"`
}

type urlCitation struct {
	URL        string `json:"url"`
	Title      string `json:"title"`
	StartIndex int    `json:"start_index"`
	EndIndex   int    `json:"end_index"`
}

// annotations are rep's citations as url_citation annotations, with the
// URLs of citationURLs.
func annotations(r *http.Request, rep *reply) []annotation {
	urls := citationURLs(r, rep)
	out := make([]annotation, 0, len(urls))
	for i, c := range rep.Citations {
		title := c.Title
		if title == "" {
			title = c.Kind + " " + c.ID
		}
		out = append(out, annotation{Type: "url_citation", URLCitation: urlCitation{URL: urls[i], Title: title, StartIndex: c.Start, EndIndex: c.End}})
	}
	return out
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if !s.decode(w, r, &req) {
		return
	}
	n := note(r)
	n.model = req.Model
	mode, ok := modeOf(req.Model)
	if !ok {
		var names []string
		for _, m := range engine.Modes() {
			names = append(names, m.Model())
		}
		param := "model"
		writeJSON(w, http.StatusNotFound, errorBody{apiError{Type: "invalid_request_error", Param: &param, Code: ptr("model_not_found"),
			Message: fmt.Sprintf("the model %q does not exist: this server answers as %s", req.Model, strings.Join(names, ", "))}})
		return
	}
	text, history, err := s.conversation(req.Messages)
	if err != nil {
		s.askError(w, r, err)
		return
	}
	n.question = text
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
	defer cancel()
	q := question{mode: mode, text: text, history: history}
	id := fmt.Sprintf("chatcmpl-kgrag-%d-%d", time.Now().UnixNano(), s.ids.Add(1))
	base := completion{ID: id, Object: "chat.completion", Created: time.Now().Unix(), Model: req.Model}
	if !req.Stream {
		rep, err := s.ask(ctx, q, nil)
		if err != nil {
			s.askError(w, r, err)
			return
		}
		w.Header().Set("X-Kgrag-Graph-Version", fmt.Sprint(rep.GraphVersion))
		w.Header().Set("Server-Timing", serverTiming(rep))
		c := base
		c.Choices = []choice{{Message: &message{Role: "assistant", Content: deref(rep.Answer), Annotations: annotations(r, rep)},
			FinishReason: ptr(finish(rep))}}
		c.Usage = usageOf(rep)
		c.Citations, c.KGRAG = citationURLs(r, rep), rep
		writeJSON(w, http.StatusOK, c)
		return
	}
	st := &stream{w: w, base: base}
	rep, err := s.ask(ctx, q, func(version uint64, piece string) error {
		if !st.started {
			w.Header().Set("X-Kgrag-Graph-Version", fmt.Sprint(version))
		}
		return st.delta(piece)
	})
	if err != nil {
		if !st.started {
			s.askError(w, r, err)
			return
		}
		// Headers are gone: the error goes in the stream, as OpenAI
		// sends one, and the stream ends without [DONE].
		n.err = err.Error()
		_, e := failure(err)
		st.event(errorBody{e})
		s.log.Warn("stream failed", "err", err)
		return
	}
	if !st.started {
		w.Header().Set("X-Kgrag-Graph-Version", fmt.Sprint(rep.GraphVersion))
	}
	st.start()
	last := base
	last.Object = "chat.completion.chunk"
	last.Choices = []choice{{Delta: &message{Annotations: annotations(r, rep)}, FinishReason: ptr(finish(rep))}}
	last.Citations, last.KGRAG = citationURLs(r, rep), rep
	st.event(last)
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		u := base
		u.Object, u.Choices, u.Usage = "chat.completion.chunk", []choice{}, usageOf(rep)
		if u.Usage == nil {
			u.Usage = &usage{}
		}
		st.event(u)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	st.flush()
}

// stream writes server-sent events of chat completion chunks. Headers go
// with the first piece of the answer, so that an error before it is an
// ordinary HTTP error.
type stream struct {
	w       http.ResponseWriter
	base    completion
	started bool
}

func (st *stream) start() {
	if st.started {
		return
	}
	st.started = true
	h := st.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	st.w.WriteHeader(http.StatusOK)
	c := st.base
	c.Object = "chat.completion.chunk"
	c.Choices = []choice{{Delta: &message{Role: "assistant", Content: ""}}}
	st.event(c)
}

func (st *stream) delta(piece string) error {
	st.start()
	c := st.base
	c.Object = "chat.completion.chunk"
	c.Choices = []choice{{Delta: &message{Content: piece}}}
	return st.event(c)
}

func (st *stream) event(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(st.w, "data: %s\n\n", b); err != nil {
		return err
	}
	st.flush()
	return nil
}

func (st *stream) flush() {
	if f, ok := st.w.(http.Flusher); ok {
		f.Flush()
	}
}

// serverTiming is the Server-Timing header of an answer: the time spent
// waiting for the model servers (embedding and answer calls) and kgrag's
// own time (total less those), in milliseconds.
func serverTiming(rep *reply) string {
	t := rep.Timings
	up := t["embed"] + t["llm"] + t["rate"] + t["map"] + t["reduce"]
	return fmt.Sprintf("kgrag;dur=%.3f, upstream;dur=%.3f", t["total"]-up, up)
}

func finish(rep *reply) string {
	if rep.FinishReason != "" {
		return rep.FinishReason
	}
	return "stop"
}

func usageOf(rep *reply) *usage {
	if rep.Usage != nil {
		return &usage{rep.Usage.Prompt, rep.Usage.Completion, rep.Usage.Total}
	}
	if rep.Global != nil {
		return &usage{rep.Global.PromptTokens, rep.Global.CompletionTok, rep.Global.PromptTokens + rep.Global.CompletionTok}
	}
	return &usage{}
}

// citationURLs are the absolute URLs of the records rep cites, on the
// host the client reached.
func citationURLs(r *http.Request, rep *reply) []string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	out := make([]string, 0, len(rep.Citations))
	for _, c := range rep.Citations {
		out = append(out, scheme+"://"+r.Host+c.URL)
	}
	return out
}

func pathID(id string) string { return url.PathEscape(id) }

func ptr[T any](v T) *T { return &v }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
