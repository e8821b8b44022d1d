package llmtest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode"
)

// Config sets up a Server. The zero value serves every model name with
// 64-dimensional embeddings and echoes chat messages.
type Config struct {
	// Dim is the embedding dimension for models not in Dims; 0 means 64.
	Dim int
	// Dims overrides Dim per model name, so a test can serve two models of
	// different dimensions and check that an index refuses the wrong one.
	Dims map[string]int
	// Models, when not empty, is the full list of served models: any other
	// model name gets Ollama's 404 "model not found" reply. Empty serves
	// every name.
	Models []string
	// ChunkDelay is slept between the chunks of a streamed chat reply.
	ChunkDelay time.Duration
	// Latency is slept before every chat answer (streamed or not), as a
	// model's time to answer, honouring the client hanging up.
	Latency time.Duration
	// Reasoning, when not empty, makes the server a reasoning model: every
	// chat reply is preceded by this draft, as a <think> block opening the
	// answer, or with ReasoningApart in the message's (or each stream
	// delta's) reasoning_content field, as llama.cpp and vLLM send it.
	// Tests put in the draft what must not leak: records, JSON, ratings.
	Reasoning      string
	ReasoningApart bool
	// Prose makes every chat reply prose, whatever was asked
	// (response_format included): the first words of the reply the queue,
	// rules or echo give, with no character of JSON or of GraphRAG's
	// delimited records. A small model that ignores the format it is
	// asked for.
	Prose bool
	// ResponseFormats, when not nil, are the response_format types the
	// server accepts ("json_schema", "json_object", "text"); a chat
	// request asking for another gets HTTP 400 naming response_format, as
	// LM Studio answers json_object. Nil accepts any.
	ResponseFormats []string
	// Imitate makes the server answer, as its documentation says, the
	// endpoints of a server that cannot be run in the tests, which tell
	// the model's window: ImitateLlamaServer's /props and /v1/models
	// meta, ImitateLMStudio's /api/v1/models, ImitateVLLM's
	// max_model_len. It also refuses a prompt over ChatWindow in that
	// server's words. "" answers none of them.
	Imitate string
	// ChatWindow, when positive, is the chat model's window in the
	// server's tokens (words, as it counts usage): a chat request whose
	// messages and max_tokens hold more is refused with HTTP 400, or with
	// ChatTruncate answered from the prompt's first and last words only,
	// as Ollama and LM Studio's truncateMiddle cut it silently.
	ChatWindow   int
	ChatTruncate bool
	// EmbedWindow, when positive, is the embedding model's window in
	// words: a longer input is embedded as its first EmbedWindow words
	// (cut silently, as llama-cpp-python and Ollama do), or with
	// EmbedRefuse refused with HTTP 500, as llama-server refuses an
	// input over its batch.
	EmbedWindow int
	EmbedRefuse bool
}

// The servers Config.Imitate names.
const (
	ImitateLlamaServer = "llama-server"
	ImitateLMStudio    = "lmstudio"
	ImitateVLLM        = "vllm"
)

// Message is one chat message as the server received it.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Request is one request the server received, recorded before any
// injected failure is applied, so tests can count attempts.
type Request struct {
	Method string
	Path   string
	// Auth is the Authorization header, so tests can check the key was
	// sent (and nowhere else).
	Auth     string
	Model    string
	Inputs   []string  // /v1/embeddings
	Messages []Message // /v1/chat/completions
	Stream   bool
	// Extra is the decoded request body, for fields the struct does not name.
	Extra map[string]any
	At    time.Time
}

// Failure is a fault injected into the next requests. Exactly one of
// Status, Drop or Delay is usually set; Delay may combine with Status.
type Failure struct {
	// Path limits the failure to requests whose path ends with it
	// ("/embeddings", "/chat/completions"); empty matches any request.
	Path string
	// Status, when not 0, is returned with an OpenAI-style error body.
	Status int
	// RetryAfter is sent as the Retry-After header when not empty
	// ("1", or an HTTP date).
	RetryAfter string
	// Message is the error message; a default names the status.
	Message string
	// Delay is slept before answering (or before failing), honouring the
	// client hanging up.
	Delay time.Duration
	// Drop closes the connection without an answer.
	Drop bool
	// DropAfterChunks, for streamed chat, sends this many chunks and then
	// closes the connection mid-stream.
	DropAfterChunks int
	// EndAfterChunks, for streamed chat, sends this many chunks and then
	// ends the response cleanly, with no finish_reason and no [DONE]: a
	// stream a proxy cut short.
	EndAfterChunks int
	// Page, when not empty, is answered with status 200 as text/html: a
	// proxy, login page or web UI at the API's address.
	Page string
}

// Server is an OpenAI-compatible endpoint for tests: deterministic
// embeddings, scripted chat replies, recorded requests and injected
// failures. It is safe for concurrent use; scripting methods may be called
// while requests are served.
type Server struct {
	cfg Config

	mu       sync.Mutex
	requests []Request
	failures []Failure
	queue    []string
	rules    []rule
	respond  func(Request) (string, bool)

	inflight    atomic.Int64
	maxInflight atomic.Int64
	canceled    atomic.Int64

	srv *httptest.Server
}

type rule struct{ substr, reply string }

// New returns a Server that is not listening: use it as an http.Handler,
// or call Start for one on a loopback port.
func New(cfg Config) *Server {
	if cfg.Dim <= 0 {
		cfg.Dim = 64
	}
	return &Server{cfg: cfg}
}

// Start returns a Server listening on 127.0.0.1, closed when the test ends.
func Start(t testing.TB, cfg Config) *Server {
	t.Helper()
	s := New(cfg)
	s.srv = httptest.NewServer(s)
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the base URL to give an OpenAI client: the server's root plus
// "/v1". It is empty for a Server that was not started.
func (s *Server) URL() string {
	if s.srv == nil {
		return ""
	}
	return s.srv.URL + "/v1"
}

// Client returns an *http.Client for the started server.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// Fail queues failures; each later request matching a failure's Path
// takes the first matching one. FailN queues n copies.
func (s *Server) Fail(f ...Failure) {
	s.mu.Lock()
	s.failures = append(s.failures, f...)
	s.mu.Unlock()
}

// FailN queues n copies of f.
func (s *Server) FailN(n int, f Failure) {
	for range n {
		s.Fail(f)
	}
}

// Reply makes chat answer reply whenever the last user message contains
// substr. Rules are tried in the order they were added.
func (s *Server) Reply(substr, reply string) {
	s.mu.Lock()
	s.rules = append(s.rules, rule{substr, reply})
	s.mu.Unlock()
}

// Respond installs f as the first source of chat replies: for each chat
// request it is given the request and answers with ok true, or declines
// with ok false (the queue, the rules and the echo then apply). f may be
// called concurrently.
func (s *Server) Respond(f func(req Request) (reply string, ok bool)) {
	s.mu.Lock()
	s.respond = f
	s.mu.Unlock()
}

// Enqueue queues chat replies that are returned, one per chat request,
// before any Reply rule or the default echo.
func (s *Server) Enqueue(replies ...string) {
	s.mu.Lock()
	s.queue = append(s.queue, replies...)
	s.mu.Unlock()
}

// Requests returns a copy of the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Count returns how many requests had a path ending with suffix ("" for all).
func (s *Server) Count(suffix string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.requests {
		if strings.HasSuffix(r.Path, suffix) {
			n++
		}
	}
	return n
}

// Reset forgets recorded requests, pending failures, queued replies and
// the concurrency gauge; Reply rules stay.
func (s *Server) Reset() {
	s.mu.Lock()
	s.requests, s.failures, s.queue = nil, nil, nil
	s.mu.Unlock()
	s.maxInflight.Store(0)
}

// Canceled is the number of requests whose client went away (cancelled
// its call) while the server was still delaying or streaming the reply.
func (s *Server) Canceled() int { return int(s.canceled.Load()) }

// MaxInFlight is the largest number of requests served at once so far.
func (s *Server) MaxInFlight() int { return int(s.maxInflight.Load()) }

// Dim returns the embedding dimension the server uses for model.
func (s *Server) Dim(model string) int {
	if d, ok := s.cfg.Dims[model]; ok && d > 0 {
		return d
	}
	return s.cfg.Dim
}

// ServeHTTP answers GET /v1/models, POST /v1/embeddings and
// POST /v1/chat/completions.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := s.inflight.Add(1)
	// A request stops counting just before the last bytes of its answer
	// are written: the client may send its next request as soon as it has
	// them, before this handler returns.
	gw := &gaugeWriter{ResponseWriter: w, leave: sync.OnceFunc(func() { s.inflight.Add(-1) })}
	defer gw.leave()
	w = gw
	for {
		m := s.maxInflight.Load()
		if n <= m || s.maxInflight.CompareAndSwap(m, n) {
			break
		}
	}

	req := Request{Method: r.Method, Path: r.URL.Path, Auth: r.Header.Get("Authorization"), At: time.Now()}
	var body map[string]any
	if r.Method == http.MethodPost {
		raw, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		if err := json.Unmarshal(raw, &body); err != nil {
			writeError(w, http.StatusBadRequest, "invalid json: "+err.Error(), "invalid_request_error")
			return
		}
		req.Extra = body
		req.Model, _ = body["model"].(string)
		req.Stream, _ = body["stream"].(bool)
		switch in := body["input"].(type) {
		case string:
			req.Inputs = []string{in}
		case []any:
			for _, v := range in {
				str, _ := v.(string)
				req.Inputs = append(req.Inputs, str)
			}
		}
		if msgs, ok := body["messages"].([]any); ok {
			for _, m := range msgs {
				mm, _ := m.(map[string]any)
				role, _ := mm["role"].(string)
				content, _ := mm["content"].(string)
				req.Messages = append(req.Messages, Message{role, content})
			}
		}
	}

	s.mu.Lock()
	if strings.HasPrefix(r.URL.Path, "/v1/") {
		// Only the OpenAI API's: the others are clients telling servers
		// apart (llm.Client.Server), which tests of the API do not count.
		s.requests = append(s.requests, req)
	}
	var fail *Failure
	for i, f := range s.failures {
		if f.Path == "" || strings.HasSuffix(r.URL.Path, f.Path) {
			fail = &f
			s.failures = append(s.failures[:i:i], s.failures[i+1:]...)
			break
		}
	}
	s.mu.Unlock()

	if fail != nil {
		if fail.Delay > 0 {
			select {
			case <-time.After(fail.Delay):
			case <-r.Context().Done():
				s.canceled.Add(1)
				return
			}
		}
		if fail.Drop {
			drop(w)
			return
		}
		if fail.Page != "" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, fail.Page)
			return
		}
		if fail.Status != 0 {
			if fail.RetryAfter != "" {
				w.Header().Set("Retry-After", fail.RetryAfter)
			}
			msg := fail.Message
			if msg == "" {
				msg = fmt.Sprintf("injected %d %s", fail.Status, http.StatusText(fail.Status))
			}
			writeError(w, fail.Status, msg, "server_error")
			return
		}
	}

	if msg := s.refusedFormat(r, body); msg != "" {
		writeError(w, http.StatusBadRequest, msg, "invalid_request_error")
		return
	}
	switch {
	case s.imitated(w, r):
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models"):
		s.serveModels(w)
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/embeddings"):
		if !s.known(w, req.Model) {
			return
		}
		s.serveEmbeddings(w, req)
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/rerank"):
		if !s.known(w, req.Model) {
			return
		}
		serveRerank(w, req)
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/chat/completions"):
		if !s.known(w, req.Model) {
			return
		}
		cut := streamCut{drop: -1, end: -1}
		if fail != nil && fail.DropAfterChunks > 0 {
			cut.drop = fail.DropAfterChunks
		}
		if fail != nil && fail.EndAfterChunks > 0 {
			cut.end = fail.EndAfterChunks
		}
		if s.overWindow(w, &req, body) {
			return
		}
		s.serveChat(w, r, req, body, cut)
	default:
		writeError(w, http.StatusNotFound, "404 page not found: "+r.URL.Path, "not_found")
	}
}

// refusedFormat is the error message for a chat request whose
// response_format type Config.ResponseFormats does not list; "" when the
// request may go on.
func (s *Server) refusedFormat(r *http.Request, body map[string]any) string {
	if s.cfg.ResponseFormats == nil || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		return ""
	}
	rf, ok := body["response_format"].(map[string]any)
	if !ok {
		return ""
	}
	typ, _ := rf["type"].(string)
	for _, f := range s.cfg.ResponseFormats {
		if f == typ {
			return ""
		}
	}
	return fmt.Sprintf("'response_format.type' must be one of %s, not %q", strings.Join(s.cfg.ResponseFormats, ", "), typ)
}

// proseWords is how many words a Prose reply keeps.
const proseWords = 60

// prose is reply as a small model's prose: its first proseWords words,
// with nothing but letters, digits and sentence punctuation, so that
// neither JSON nor GraphRAG's delimited records survive in it.
func prose(reply string) string {
	clean := strings.Map(func(r rune) rune {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), unicode.IsSpace(r), strings.ContainsRune(".,;:?!'-", r):
			return r
		}
		return ' '
	}, reply)
	words := strings.Fields(clean)
	if len(words) == 0 {
		return "I could not find that in the text."
	}
	return strings.Join(words[:min(len(words), proseWords)], " ") + "."
}

// known answers like Ollama for a model it does not serve.
func (s *Server) known(w http.ResponseWriter, model string) bool {
	if len(s.cfg.Models) == 0 {
		return true
	}
	for _, m := range s.cfg.Models {
		if m == model {
			return true
		}
	}
	writeError(w, http.StatusNotFound, fmt.Sprintf("model %q not found, try pulling it first", model), "api_error")
	return false
}

func (s *Server) serveModels(w http.ResponseWriter) {
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	out := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list", Data: []model{}}
	for _, m := range s.cfg.Models {
		out.Data = append(out.Data, model{m, "model", 0, "llmtest"})
	}
	writeJSON(w, out)
}

func (s *Server) serveEmbeddings(w http.ResponseWriter, req Request) {
	type item struct {
		Object    string    `json:"object"`
		Embedding []float32 `json:"embedding"`
		Index     int       `json:"index"`
	}
	out := struct {
		Object string         `json:"object"`
		Data   []item         `json:"data"`
		Model  string         `json:"model"`
		Usage  map[string]int `json:"usage"`
	}{Object: "list", Data: []item{}, Model: req.Model}
	dim := s.Dim(req.Model)
	tokens := 0
	for i, text := range req.Inputs {
		if ws := words(text); s.cfg.EmbedWindow > 0 && len(ws) > s.cfg.EmbedWindow {
			if s.cfg.EmbedRefuse {
				writeError(w, http.StatusInternalServerError, "input is too large to process. increase the physical batch size", "server_error")
				return
			}
			text = strings.Join(ws[:s.cfg.EmbedWindow], " ")
		}
		out.Data = append(out.Data, item{"embedding", Embed(req.Model, text, dim), i})
		tokens += len(words(text))
	}
	out.Usage = map[string]int{"prompt_tokens": tokens, "total_tokens": tokens}
	writeJSON(w, out)
}

// serveRerank answers a rerank request ({query, documents}) as llama-server
// and vLLM do, best first: a document's score is Rerank's.
func serveRerank(w http.ResponseWriter, req Request) {
	query, _ := req.Extra["query"].(string)
	docs, _ := req.Extra["documents"].([]any)
	type result struct {
		Index int     `json:"index"`
		Score float64 `json:"relevance_score"`
	}
	results := make([]result, 0, len(docs))
	for i, d := range docs {
		text, _ := d.(string)
		results = append(results, result{i, Rerank(query, text)})
	}
	sort.SliceStable(results, func(i, j int) bool { return results[i].Score > results[j].Score })
	writeJSON(w, map[string]any{"model": req.Model, "results": results})
}

// Rerank is the server's relevance of doc to query: the share of the
// query's distinct words the document holds, so that tests can tell the
// order a rerank must give.
func Rerank(query, doc string) float64 {
	q := map[string]bool{}
	for _, w := range words(query) {
		q[w] = true
	}
	if len(q) == 0 {
		return 0
	}
	held := map[string]bool{}
	for _, w := range words(doc) {
		if q[w] {
			held[w] = true
		}
	}
	return float64(len(held)) / float64(len(q))
}

// reply picks the scripted answer: the Respond function, the queue, then
// the rules, then an echo.
func (s *Server) reply(req Request) string {
	s.mu.Lock()
	f := s.respond
	s.mu.Unlock()
	if f != nil {
		if r, ok := f(req); ok {
			return r
		}
	}
	msgs := req.Messages
	last := ""
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			last = msgs[i].Content
			break
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) > 0 {
		r := s.queue[0]
		s.queue = s.queue[1:]
		return r
	}
	for _, ru := range s.rules {
		if strings.Contains(last, ru.substr) {
			return ru.reply
		}
	}
	return "echo: " + last
}

// chatReply is the reply to a chat request: reply's, as prose with
// Config.Prose.
func (s *Server) chatReply(req Request) string {
	r := s.reply(req)
	if s.cfg.Prose {
		r = prose(r)
	}
	return r
}

// streamCut says after how many chunks a streamed reply is cut: dropped
// (the connection closed) or ended cleanly; -1 for never.
type streamCut struct{ drop, end int }

func (s *Server) serveChat(w http.ResponseWriter, r *http.Request, req Request, body map[string]any, cut streamCut) {
	if s.cfg.Latency > 0 {
		select {
		case <-time.After(s.cfg.Latency):
		case <-r.Context().Done():
			s.canceled.Add(1)
			return
		}
	}
	answer := s.chatReply(req)
	prompt := 0
	for _, m := range req.Messages {
		prompt += len(words(m.Content))
	}
	usage := map[string]int{"prompt_tokens": prompt, "completion_tokens": len(words(answer)),
		"total_tokens": prompt + len(words(answer))}
	created := time.Now().Unix()
	draft, apart := s.cfg.Reasoning, s.cfg.ReasoningApart
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": answer}
		switch {
		case draft != "" && apart:
			msg["reasoning_content"] = draft
		case draft != "":
			msg["content"] = "<think>\n" + draft + "\n</think>\n\n" + answer
		}
		writeJSON(w, map[string]any{
			"id": "chatcmpl-llmtest", "object": "chat.completion", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": msg}},
			"usage":   usage,
		})
		return
	}
	includeUsage := false
	if so, ok := body["stream_options"].(map[string]any); ok {
		includeUsage, _ = so["include_usage"].(bool)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-llmtest", "object": "chat.completion.chunk", "created": created,
			"model": req.Model, "choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	send(chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	if draft != "" && apart {
		for _, piece := range Chunks(draft) {
			send(chunk(map[string]any{"reasoning_content": piece}, nil))
		}
	}
	pieces := Chunks(answer)
	if draft != "" && !apart {
		// The tags arrive split across pieces, as real servers send them.
		pieces = append(append([]string{"<th", "ink>\n"}, Chunks(draft)...), append([]string{"\n</thi", "nk>\n\n"}, pieces...)...)
	}
	for i, piece := range pieces {
		if i == cut.drop {
			drop(w)
			return
		}
		if i == cut.end {
			leave(w)
			return
		}
		if s.cfg.ChunkDelay > 0 {
			select {
			case <-time.After(s.cfg.ChunkDelay):
			case <-r.Context().Done():
				s.canceled.Add(1)
				return
			}
		}
		send(chunk(map[string]any{"content": piece}, nil))
	}
	send(chunk(map[string]any{}, "stop"))
	if includeUsage {
		send(map[string]any{"id": "chatcmpl-llmtest", "object": "chat.completion.chunk", "created": created,
			"model": req.Model, "choices": []any{}, "usage": usage})
	}
	leave(w)
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

// Chunks splits a reply into the pieces the server streams: each word
// with the whitespace before it, so joining the pieces gives the reply.
func Chunks(s string) []string {
	var out []string
	start := 0
	for i := 1; i < len(s); i++ {
		if s[i] == ' ' && s[i-1] != ' ' {
			out = append(out, s[start:i])
			start = i
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// Embed is the server's embedding of text under model: the normalised sum
// of one pseudo-random Gaussian vector per lower-cased word, seeded by a
// hash of model and word. Texts that share words are therefore closer
// than unrelated ones, and the same text always gets the same vector. A
// text without words gets the vector of its whole content.
func Embed(model, text string, dim int) []float32 {
	acc := make([]float64, dim)
	ws := words(text)
	if len(ws) == 0 {
		ws = []string{"\x00" + text}
	}
	for _, w := range ws {
		h := fnv.New64a()
		h.Write([]byte(model))
		h.Write([]byte{0})
		h.Write([]byte(w))
		seed := h.Sum64()
		rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		for i := range acc {
			acc[i] += rng.NormFloat64()
		}
	}
	var norm float64
	for _, v := range acc {
		norm += v * v
	}
	norm = math.Sqrt(norm)
	out := make([]float32, dim)
	for i, v := range acc {
		out[i] = float32(v / norm)
	}
	return out
}

func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

func writeJSON(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	leave(w)
	w.Write(b)
}

func writeError(w http.ResponseWriter, status int, msg, typ string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	leave(w)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": nil}})
}

// gaugeWriter carries the request's exit from the concurrency gauge.
type gaugeWriter struct {
	http.ResponseWriter
	leave func()
}

func (g *gaugeWriter) Flush() {
	if f, ok := g.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (g *gaugeWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if h, ok := g.ResponseWriter.(http.Hijacker); ok {
		return h.Hijack()
	}
	return nil, nil, http.ErrNotSupported
}

func leave(w http.ResponseWriter) {
	if g, ok := w.(*gaugeWriter); ok {
		g.leave()
	}
}

// drop closes the connection under the handler, as a crashed server would.
func drop(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if buf != nil {
		buf.Flush()
	}
	conn.Close()
}

// imitated answers the endpoints of the server Config.Imitate names and
// reports whether it did.
func (s *Server) imitated(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	models := s.cfg.Models
	if len(models) == 0 {
		models = []string{"llmtest"}
	}
	switch {
	case s.cfg.Imitate == ImitateLlamaServer && r.URL.Path == "/props":
		writeJSON(w, map[string]any{
			"default_generation_settings": map[string]any{"n_ctx": s.cfg.ChatWindow, "params": map[string]any{"n_predict": -1}},
			"total_slots":                 1, "model_path": "/models/" + models[0] + ".gguf", "chat_template": "",
		})
	case s.cfg.Imitate == ImitateLlamaServer && r.URL.Path == "/v1/models":
		var data []any
		for _, m := range models {
			data = append(data, map[string]any{"id": m, "object": "model", "created": 0, "owned_by": "llamacpp",
				"meta": map[string]any{"vocab_type": 2, "n_vocab": 262144, "n_ctx_train": 32768, "n_embd": 640, "n_params": 268098176, "size": 253114368}})
		}
		writeJSON(w, map[string]any{"object": "list", "data": data})
	case s.cfg.Imitate == ImitateLMStudio && r.URL.Path == "/api/v1/models":
		var list []any
		for _, m := range models {
			var loaded []any
			if s.cfg.ChatWindow > 0 {
				loaded = append(loaded, map[string]any{"id": m, "config": map[string]any{"context_length": s.cfg.ChatWindow, "eval_batch_size": 512}})
			}
			list = append(list, map[string]any{"type": "llm", "publisher": "llmtest", "key": m, "display_name": m,
				"loaded_instances": append([]any{}, loaded...), "max_context_length": 32768, "format": "gguf"})
		}
		writeJSON(w, map[string]any{"models": list})
	case s.cfg.Imitate == ImitateVLLM && r.URL.Path == "/version":
		writeJSON(w, map[string]any{"version": "0.11.0"})
	case s.cfg.Imitate == ImitateVLLM && r.URL.Path == "/v1/models":
		var data []any
		for _, m := range models {
			data = append(data, map[string]any{"id": m, "object": "model", "created": 0, "owned_by": "vllm", "root": m, "max_model_len": s.cfg.ChatWindow})
		}
		writeJSON(w, map[string]any{"object": "list", "data": data})
	default:
		return false
	}
	return true
}

// overWindow refuses, or cuts, a chat request over Config.ChatWindow and
// reports whether it answered.
func (s *Server) overWindow(w http.ResponseWriter, req *Request, body map[string]any) bool {
	if s.cfg.ChatWindow <= 0 {
		return false
	}
	prompt := 0
	for _, m := range req.Messages {
		prompt += len(words(m.Content))
	}
	answer := 0
	if mt, ok := body["max_tokens"].(float64); ok {
		answer = int(mt)
	}
	// llama-server and llama-cpp-python refuse a prompt over the window
	// and shorten the answer to fit; vLLM refuses the two together.
	over := prompt >= s.cfg.ChatWindow || (s.cfg.Imitate == ImitateVLLM && prompt+answer > s.cfg.ChatWindow)
	if !over {
		return false
	}
	if s.cfg.ChatTruncate {
		// Keep the first and the last words, drop the middle: the model
		// answers from what is left.
		keep := s.cfg.ChatWindow / 2
		for i, m := range req.Messages {
			ws := strings.Fields(m.Content)
			if len(ws) > keep*2 {
				req.Messages[i].Content = strings.Join(append(ws[:keep:keep], ws[len(ws)-keep:]...), " ")
			}
		}
		return false
	}
	switch s.cfg.Imitate {
	case ImitateLlamaServer:
		writeJSON400(w, map[string]any{"error": map[string]any{"code": 400, "message": "the request exceeds the available context size, try increasing it",
			"type": "exceed_context_size_error", "n_prompt_tokens": prompt, "n_ctx": s.cfg.ChatWindow}})
	case ImitateLMStudio:
		writeJSON400(w, map[string]any{"error": fmt.Sprintf("Trying to keep the first %d tokens when context the overflows. However, the model is loaded with context length of only %d tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input", prompt, s.cfg.ChatWindow)})
	case ImitateVLLM:
		writeJSON400(w, map[string]any{"object": "error", "message": fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.", s.cfg.ChatWindow, prompt+answer, prompt, answer),
			"type": "BadRequestError", "param": nil, "code": 400})
	default: // llama-cpp-python's server, as OpenAI words it
		writeJSON400(w, map[string]any{"error": map[string]any{"message": fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.", s.cfg.ChatWindow, prompt+answer, prompt, answer),
			"type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}})
	}
	return true
}

func writeJSON400(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	json.NewEncoder(w).Encode(v)
}
