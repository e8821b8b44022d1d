package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/serve"
	openai "github.com/sashabaranov/go-openai"
)

// errorReply is an error answer in OpenAI's shape.
type errorReply struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

func (e errorReply) code() string {
	if e.Error.Code == nil {
		return ""
	}
	return *e.Error.Code
}

func chatBody(model string, msgs ...string) map[string]any {
	var m []map[string]string
	for i, s := range msgs {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		m = append(m, map[string]string{"role": role, "content": s})
	}
	return map[string]any{"model": model, "messages": m}
}

// TestServeBadRequests sends what clients get wrong: each is answered
// with an error in OpenAI's shape and a status that fits, and none
// reaches the model server.
func TestServeBadRequests(t *testing.T) {
	f := newAskFixture(t)
	const key = "s3cret-serve-key"
	sf := startServe(t, f, func(o *serveOptions) {
		o.cfg.APIKey, o.cfg.MaxBodyBytes, o.cfg.MaxQuestionChars, o.cfg.MaxTurns = key, 4000, 200, 5
	})
	long := strings.Repeat("x", 201)
	tests := []struct {
		name   string
		path   string
		key    string
		body   any
		status int
		typ    string
		code   string
		msg    string
	}{
		{"malformed JSON", "/v1/chat/completions", key, `{"model": "kgrag-local", "messages": [`, 400, "invalid_request_error", "", "not valid JSON"},
		{"unknown model", "/v1/chat/completions", key, chatBody("gpt-4", "Who?"), 404, "invalid_request_error", "model_not_found", "kgrag-local"},
		{"oversized body", "/v1/chat/completions", key, chatBody("kgrag-local", strings.Repeat("y", 5000)), 413, "invalid_request_error", "body_too_large", "4000 bytes"},
		{"no messages", "/v1/chat/completions", key, chatBody("kgrag-local"), 400, "invalid_request_error", "", "messages is empty"},
		{"last message not the user's", "/v1/chat/completions", key, chatBody("kgrag-local", "Who?", "Him."), 400, "invalid_request_error", "", "last message"},
		{"question too long", "/v1/chat/completions", key, chatBody("kgrag-local", long), 400, "invalid_request_error", "", "201 characters"},
		{"too many turns", "/v1/chat/completions", key, chatBody("kgrag-local", "a", "b", "c", "d", "e", "f", "g"), 400, "invalid_request_error", "", "7 messages"},
		{"unknown role", "/v1/chat/completions", key, map[string]any{"model": "kgrag-local", "messages": []map[string]string{{"role": "wizard", "content": "hi"}}}, 400, "invalid_request_error", "", `role "wizard"`},
		{"no key", "/v1/chat/completions", "", chatBody("kgrag-local", "Who?"), 401, "authentication_error", "missing_api_key", "Bearer"},
		{"wrong key", "/v1/chat/completions", "wrong", chatBody("kgrag-local", "Who?"), 401, "authentication_error", "invalid_api_key", "wrong"},
		{"wrong key on the API", "/api/ask", "wrong", map[string]any{"question": "Who?"}, 401, "authentication_error", "invalid_api_key", ""},
		{"bad mode", "/api/ask", key, map[string]any{"question": "Who?", "mode": "deep"}, 400, "invalid_request_error", "", `mode "deep"`},
		{"mode without its index", "/api/ask", key, map[string]any{"question": "Who?", "mode": "drift"}, 400, "invalid_request_error", "", "kgrag embed --input DIR --tables community_reports"},
		{"no plan for local", "/api/ask", key, map[string]any{"question": "Who?", "mode": "local", "plan": true}, 400, "invalid_request_error", "", "no plan"},
		{"no endpoint", "/v1/embeddings", key, map[string]any{}, 404, "not_found_error", "", "no endpoint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.srv.Reset()
			var e errorReply
			status, _ := sf.post(t, tt.path, tt.key, tt.body, &e)
			if status != tt.status || e.Error.Type != tt.typ || e.code() != tt.code || !strings.Contains(e.Error.Message, tt.msg) {
				t.Errorf("got %d %s/%s %q; want %d %s/%s containing %q", status, e.Error.Type, e.code(), e.Error.Message, tt.status, tt.typ, tt.code, tt.msg)
			}
			if strings.Contains(e.Error.Message, key) {
				t.Errorf("the error shows the API key: %q", e.Error.Message)
			}
			if n := len(f.srv.Requests()); n != 0 {
				t.Errorf("the model server got %d requests; want none", n)
			}
		})
	}
	// Health checks want no key; everything else does.
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 200, "/v1/models": 401} {
		resp, err := http.Get(sf.http.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s without a key: %d; want %d", path, resp.StatusCode, want)
		}
	}
	if _, err := sf.openaiClient(key).ListModels(t.Context()); err != nil {
		t.Errorf("with the key, go-openai cannot list the models: %v", err)
	}
	if strings.Contains(sf.log.String(), key) {
		t.Errorf("the access log shows the API key")
	}
}

// TestServeUpstreamFaults breaks the model server in the ways real ones
// break: each question gets a clean error (an error event when the
// stream had started) and the server goes on answering.
func TestServeUpstreamFaults(t *testing.T) {
	f := newAskFixture(t)
	sf := startServe(t, f, func(o *serveOptions) { o.cfg.RequestTimeout = 500 * time.Millisecond })
	c := sf.openaiClient("")
	q := []openai.ChatCompletionMessage{{Role: "user", Content: "Who is Scrooge?"}}
	chat := "/chat/completions"
	tests := []struct {
		name   string
		fail   llmtest.Failure
		status int
		code   string
	}{
		{"down", llmtest.Failure{Path: chat, Drop: true}, 502, "upstream_unavailable"},
		{"slow", llmtest.Failure{Path: chat, Delay: 3 * time.Second}, 504, "timeout"},
		{"429", llmtest.Failure{Path: chat, Status: 429, RetryAfter: "0"}, 503, "upstream_rate_limited"},
		{"500", llmtest.Failure{Path: chat, Status: 500}, 502, "upstream_error"},
		{"HTML page", llmtest.Failure{Path: chat, Page: "<html><body>Login</body></html>"}, 502, "upstream_error"},
		{"embedding model down", llmtest.Failure{Path: "/embeddings", Drop: true}, 502, "upstream_unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.srv.Reset()
			f.srv.FailN(5, tt.fail)
			_, err := c.CreateChatCompletion(t.Context(), openai.ChatCompletionRequest{Model: "kgrag-local", Messages: q})
			var ae *openai.APIError
			if !errors.As(err, &ae) || ae.HTTPStatusCode != tt.status || fmt.Sprint(ae.Code) != tt.code {
				t.Errorf("error %v; want an API error %d %s", err, tt.status, tt.code)
			}
			f.srv.Reset()
			if _, err := c.CreateChatCompletion(t.Context(), openai.ChatCompletionRequest{Model: "kgrag-local", Messages: q}); err != nil {
				t.Errorf("after the fault, a question fails: %v", err)
			}
		})
	}

	t.Run("cut mid-stream", func(t *testing.T) {
		f.srv.Reset()
		f.srv.Reply("", "Scrooge is a miser who learns to keep Christmas in his heart all the year.")
		f.srv.Fail(llmtest.Failure{Path: chat, DropAfterChunks: 3})
		st, err := c.CreateChatCompletionStream(t.Context(), openai.ChatCompletionRequest{Model: "kgrag-local", Messages: q, Stream: true})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		var text strings.Builder
		for {
			r, err := st.Recv()
			if err != nil {
				var ae *openai.APIError
				if !errors.As(err, &ae) || !strings.Contains(ae.Message, "model server") {
					t.Errorf("stream ended with %v; want an error event saying the model server failed", err)
				}
				break
			}
			if len(r.Choices) > 0 {
				text.WriteString(r.Choices[0].Delta.Content)
			}
		}
		if !strings.HasPrefix("Scrooge is a miser who learns", strings.TrimSpace(text.String())) || text.Len() == 0 {
			t.Errorf("streamed %q before the cut; want the start of the answer", text.String())
		}
		if code := getJSON(t, sf.http.URL+"/healthz", &map[string]any{}); code != 200 {
			t.Errorf("after the cut, /healthz answers %d", code)
		}
	})
}

// TestServeClientGoesAway hangs up mid-stream: the server cancels its
// call to the model, which the model server counts.
func TestServeClientGoesAway(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{Dim: askDim, ChunkDelay: 40 * time.Millisecond})
	f := newSampleFixture(t, "v3", srv)
	sf := startServe(t, f, nil)
	srv.Reply("", strings.Repeat("Scrooge counts his money again and again. ", 30))
	ctx, cancel := context.WithCancel(t.Context())
	st, err := sf.openaiClient("").CreateChatCompletionStream(ctx, openai.ChatCompletionRequest{Model: "kgrag-local",
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "Who is Scrooge?"}}, Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	for got := ""; !strings.Contains(got, "Scrooge"); {
		r, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Choices) > 0 {
			got += r.Choices[0].Delta.Content
		}
	}
	cancel()
	st.Close()
	deadline := time.Now().Add(3 * time.Second)
	for srv.Canceled() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := srv.Canceled(); n != 1 {
		t.Errorf("the model server saw %d cancelled calls; want 1 (the client's)", n)
	}
}

// TestServeBusy lets one question ask the model at a time and queues
// none: a second one at once is answered 429 with Retry-After, counted.
func TestServeBusy(t *testing.T) {
	f := newAskFixture(t)
	sf := startServe(t, f, func(o *serveOptions) { o.cfg.MaxModelCalls, o.cfg.MaxQueued = 1, 0 })
	f.srv.Fail(llmtest.Failure{Path: "/chat/completions", Delay: 500 * time.Millisecond})
	first := make(chan int)
	go func() {
		code, _ := sf.post(t, "/v1/chat/completions", "", chatBody("kgrag-local", "Who is Scrooge?"), nil)
		first <- code
	}()
	deadline := time.Now().Add(2 * time.Second)
	for len(f.srv.Requests()) < 2 && time.Now().Before(deadline) { // the embedding, then the chat call
		time.Sleep(5 * time.Millisecond)
	}
	var e errorReply
	code, h := sf.post(t, "/v1/chat/completions", "", chatBody("kgrag-local", "Who is Marley?"), &e)
	if code != http.StatusTooManyRequests || h.Get("Retry-After") == "" || e.Error.Type != "rate_limit_error" {
		t.Errorf("second question: %d, Retry-After %q, %s; want 429 with Retry-After, rate_limit_error", code, h.Get("Retry-After"), e.Error.Type)
	}
	if code := <-first; code != http.StatusOK {
		t.Errorf("first question: %d; want 200", code)
	}
	if n := sf.s.Refused(); n != 1 {
		t.Errorf("Refused() = %d; want 1", n)
	}
}

// TestServeReloadUnderLoad asks questions from 8 clients while the graph
// is reloaded, alternately from two samples: no question fails, and every
// answer's records all come from the one graph it names.
func TestServeReloadUnderLoad(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{Dim: askDim})
	a, b := newSampleFixture(t, "v3", srv), newSampleFixture(t, "v2.5.0", srv)
	oa, ob := a.serveOptions(), b.serveOptions()
	for _, o := range []*serveOptions{&oa, &ob} {
		if err := o.validate(); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	n := 0
	var closes []int // per graph loaded: how often it was closed
	load := func(ctx context.Context) (*serve.Graph, error) {
		mu.Lock()
		o := []serveOptions{oa, ob}[n%2]
		i := n
		n++
		closes = append(closes, 0)
		mu.Unlock()
		g, err := o.load(ctx)
		if err != nil {
			return nil, err
		}
		release := g.Close
		g.Close = func() error {
			mu.Lock()
			closes[i]++
			mu.Unlock()
			return release()
		}
		return g, nil
	}
	s, err := serve.New(t.Context(), serve.DefaultConfig(), load)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptestServer(t, s)
	ids := map[string]map[string]bool{a.input: entityIDs(a.ds), b.input: entityIDs(b.ds)}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var failures, answers, mixed int
	var fmu sync.Mutex
	sfx := &serveFixture{http: hs}
	for i := range 8 {
		wg.Go(func() {
			for j := 0; ; j++ {
				select {
				case <-stop:
					return
				default:
				}
				var r serveReply
				code, _ := sfx.post(t, "/api/ask", "", map[string]any{"question": fmt.Sprintf("Who is %d-%d?", i, j), "context_only": true}, &r)
				fmu.Lock()
				answers++
				if code != http.StatusOK || r.Context == nil {
					failures++
				} else {
					for _, e := range r.Context.Records.Entities {
						if !ids[r.Source][e.EntityID] {
							mixed++
						}
					}
				}
				fmu.Unlock()
			}
		})
	}
	for range 10 {
		time.Sleep(30 * time.Millisecond)
		if err := s.Reload(t.Context()); err != nil {
			t.Error(err)
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("%d answers during 10 reloads", answers)
	if failures > 0 || mixed > 0 || answers < 20 {
		t.Errorf("%d of %d questions failed, %d records from the other graph; want none (and at least 20 answers)", failures, answers, mixed)
	}
	// Every graph a reload replaced was closed (its files unmapped) once
	// its last question ended, and the one served is open.
	mu.Lock()
	defer mu.Unlock()
	for i, c := range closes {
		if want := 1; i == len(closes)-1 && c != 0 || i < len(closes)-1 && c != want {
			t.Errorf("graph %d of %d closed %d times; want once, and the served one not at all", i, len(closes), c)
		}
	}
}

func entityIDs(ds *graphrag.Dataset) map[string]bool {
	m := map[string]bool{}
	for _, e := range ds.Entities {
		m[e.ID] = true
	}
	return m
}

// TestServeDrainsOnShutdown stops the server while an answer streams: the
// stream ends whole, new connections are refused, Serve returns nil.
func TestServeDrainsOnShutdown(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{Dim: askDim, ChunkDelay: 20 * time.Millisecond})
	f := newSampleFixture(t, "v3", srv)
	o := f.serveOptions()
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}
	s, err := serve.New(t.Context(), o.cfg, o.load)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln, 10*time.Second) }()
	reply := strings.Repeat("Marley was dead, to begin with. ", 10)
	srv.Reply("", reply)
	cfg := openai.DefaultConfig("")
	cfg.BaseURL = "http://" + ln.Addr().String() + "/v1"
	st, err := openai.NewClientWithConfig(cfg).CreateChatCompletionStream(t.Context(), openai.ChatCompletionRequest{Model: "kgrag-local",
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "Who is Marley?"}}, Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var text strings.Builder
	for first := true; ; first = false {
		r, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the stream broke during shutdown: %v", err)
		}
		if len(r.Choices) > 0 {
			text.WriteString(r.Choices[0].Delta.Content)
		}
		if first {
			stop()
		}
	}
	if text.String() != reply {
		t.Errorf("streamed %q; want the whole answer %q", text.String(), reply)
	}
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if _, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		t.Errorf("the server still takes connections after shutdown")
	}
}

// TestServeAccessLog: one line per request, the question only with
// --log-questions.
func TestServeAccessLog(t *testing.T) {
	for _, logQ := range []bool{false, true} {
		f := newAskFixture(t)
		sf := startServe(t, f, func(o *serveOptions) { o.cfg.LogQuestions = logQ })
		const q = "Who is the clerk of Scrooge?"
		sf.post(t, "/v1/chat/completions", "", chatBody("kgrag-local", q), nil)
		getJSON(t, sf.http.URL+"/healthz", &map[string]any{})
		log := sf.log.String()
		if n := strings.Count(log, "msg=request"); n != 2 {
			t.Errorf("log-questions %v: %d request lines; want 2:\n%s", logQ, n, log)
		}
		if strings.Contains(log, q) != logQ {
			t.Errorf("log-questions %v: the question in the log is %v:\n%s", logQ, !logQ, log)
		}
	}
}

// TestServeCORS: no cross-origin access unless origins are listed, then
// only for those.
func TestServeCORS(t *testing.T) {
	f := newAskFixture(t)
	for _, origins := range [][]string{nil, {"http://app.example"}} {
		sf := startServe(t, f, func(o *serveOptions) { o.cfg.CORSOrigins = origins })
		for _, origin := range []string{"http://app.example", "http://evil.example"} {
			req, _ := http.NewRequest(http.MethodOptions, sf.http.URL+"/v1/chat/completions", nil)
			req.Header.Set("Origin", origin)
			req.Header.Set("Access-Control-Request-Method", "POST")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			allowed := resp.Header.Get("Access-Control-Allow-Origin") == origin
			want := len(origins) > 0 && origin == origins[0]
			if allowed != want {
				t.Errorf("origins %q, preflight from %s: allowed %v (status %d); want %v", origins, origin, allowed, resp.StatusCode, want)
			}
		}
	}
}
