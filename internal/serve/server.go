package serve

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kgrag/kgrag/internal/mode"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Config bounds and secures a Server. DefaultConfig gives the defaults.
type Config struct {
	// APIKey, when set, is wanted as "Authorization: Bearer KEY" on every
	// endpoint but /healthz and /readyz.
	APIKey string
	// CORSOrigins are the browser origins allowed to call the API from
	// another site ("*" for any); none by default.
	CORSOrigins []string
	// MaxBodyBytes bounds a request body, MaxQuestionChars the question,
	// MaxTurns the messages of a conversation.
	MaxBodyBytes     int64
	MaxQuestionChars int
	MaxTurns         int
	// RequestTimeout bounds one request, its model calls included.
	RequestTimeout time.Duration
	// MaxModelCalls is the number of questions asking the model servers
	// at once; MaxQueued more may wait for a turn, and a question beyond
	// that is answered 429 with Retry-After.
	MaxModelCalls int
	MaxQueued     int
	// Admin enables POST /admin/reload.
	Admin bool
	// LogQuestions puts the question text in the access log.
	LogQuestions bool
	// Log gets one line per request, and reloads; nil discards.
	Log *slog.Logger
	// Version is kgrag's, for MCP clients.
	Version string
}

// DefaultConfig returns the bounds kgrag serve starts with.
func DefaultConfig() Config {
	return Config{
		MaxBodyBytes:     1 << 20,
		MaxQuestionChars: 8000,
		MaxTurns:         64,
		RequestTimeout:   5 * time.Minute,
		MaxModelCalls:    4,
		MaxQueued:        64,
	}
}

// Server serves one Graph at a time. Its methods are safe for concurrent
// use.
type Server struct {
	cfg      Config
	load     Loader
	graph    atomic.Pointer[Graph]
	reloadMu sync.Mutex
	versions atomic.Uint64
	limit    *limiter
	log      *slog.Logger
	mux      *http.ServeMux
	mcp      *mcp.Server
	ids      atomic.Uint64 // completion ids
	requests atomic.Int64  // requests served
}

// New loads the first graph and returns the server.
func New(ctx context.Context, cfg Config, load Loader) (*Server, error) {
	def := DefaultConfig()
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = def.MaxBodyBytes
	}
	if cfg.MaxQuestionChars <= 0 {
		cfg.MaxQuestionChars = def.MaxQuestionChars
	}
	if cfg.MaxTurns <= 0 {
		cfg.MaxTurns = def.MaxTurns
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = def.RequestTimeout
	}
	if cfg.MaxModelCalls <= 0 {
		cfg.MaxModelCalls = def.MaxModelCalls
	}
	if cfg.MaxQueued < 0 {
		cfg.MaxQueued = 0
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, load: load, limit: newLimiter(cfg.MaxModelCalls, cfg.MaxQueued), log: log}
	if err := s.Reload(ctx); err != nil {
		return nil, err
	}
	s.mcp = s.newMCP(cfg.Version)
	s.routes()
	return s, nil
}

// Graph is the graph served now. A caller that uses it while a reload may
// run pins it instead (pin).
func (s *Server) Graph() *Graph { return s.graph.Load() }

// pin returns the graph served now and keeps it open until done is called,
// even if a reload replaces it meanwhile.
func (s *Server) pin() (g *Graph, done func()) {
	for {
		g = s.graph.Load()
		if g.refs.Add(1) > 1 {
			return g, func() { s.unpin(g) }
		}
		// Replaced, and its last user gone: it is being closed. Undo, and
		// take the graph that replaced it.
		g.refs.Add(-1)
	}
}

// unpin drops one use of g, closing it with the last.
func (s *Server) unpin(g *Graph) {
	if g.refs.Add(-1) != 0 || g.Close == nil {
		return
	}
	g.closed.Do(func() {
		if err := g.Close(); err != nil {
			s.log.Warn("closing the graph replaced by a reload", "version", g.version, "err", err)
		}
	})
}

// Reload loads the graph again and swaps it in. Requests that started
// before finish on the graph they started with; a failed load leaves the
// served graph as it was. Reloads run one at a time.
func (s *Server) Reload(ctx context.Context) error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	return s.reload(ctx)
}

// refresh reloads the graph unless it is no longer old: a question that
// found its graph stale and others that did at the same moment cause one
// reload.
func (s *Server) refresh(ctx context.Context, old *Graph) error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	if s.Graph() != old {
		return nil
	}
	return s.reload(ctx)
}

func (s *Server) reload(ctx context.Context) error {
	t := time.Now()
	var g *Graph
	for try := 1; ; try++ {
		var err error
		if g, err = s.load(ctx); err != nil {
			return fmt.Errorf("serve: load the graph: %w", err)
		}
		if g == nil || g.Source == nil || len(g.Engines) == 0 {
			return errors.New("serve: load the graph: the loader returned no source or no engine")
		}
		// A load that committed while the graph was read leaves it
		// half old: read it again.
		err = g.current(ctx)
		if err == nil {
			break
		}
		if g.Close != nil {
			g.Close()
		}
		if !errors.Is(err, errStale) || try == staleTries {
			return fmt.Errorf("serve: load the graph: %w", err)
		}
	}
	g.loaded, g.version = time.Now(), s.versions.Add(1)
	g.refs.Store(1)
	if old := s.graph.Swap(g); old != nil {
		s.unpin(old) // closed once its requests are done
	}
	s.log.Info("graph loaded", "source", g.Name, "version", g.version, "ms", time.Since(t).Milliseconds())
	return nil
}

// Handler is the server's HTTP handler, with authentication, CORS,
// request bounds and the access log around the routes.
func (s *Server) Handler() http.Handler {
	return s.logged(s.cors(s.authorised(s.mux)))
}

func (s *Server) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	m.HandleFunc("GET /readyz", s.handleReady)
	m.HandleFunc("GET /v1/models", s.handleModels)
	m.HandleFunc("POST /v1/chat/completions", s.handleChat)
	m.HandleFunc("POST /api/ask", s.handleAsk)
	m.HandleFunc("GET /api/entities/{id}", s.handleEntity)
	m.HandleFunc("GET /api/entities", s.handleEntitySearch)
	m.HandleFunc("GET /api/communities/{id}", s.handleCommunity)
	m.HandleFunc("GET /api/text-units/{id}", s.handleTextUnit)
	mh := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{MaxRequestBodyBytes: s.cfg.MaxBodyBytes, Logger: s.log})
	m.Handle("/mcp", mh)
	if s.cfg.Admin {
		m.HandleFunc("POST /admin/reload", s.handleReload)
		m.HandleFunc("GET /admin/stats", s.handleStats)
		// The Go profiler, for a server under real load.
		m.HandleFunc("GET /admin/pprof/", pprof.Index)
		m.HandleFunc("GET /admin/pprof/profile", pprof.Profile)
	}
	s.webRoutes(m)
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found_error", "", fmt.Sprintf("no endpoint %s %s", r.Method, r.URL.Path))
	})
	s.mux = m
}

func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	g := s.Graph()
	writeJSON(w, http.StatusOK, map[string]any{"status": "ready", "graph": g.Name, "version": g.version,
		"loaded": g.loaded.UTC().Format(time.RFC3339), "local_search": g.Engines[mode.Local] != nil, "modes": servedNames(g)})
}

// handleStats answers GET /admin/stats: what a load test watches for
// leaks (goroutines, heap) and how many requests and refusals there were.
// With ?gc=1 it collects garbage first, so that heaps compare.
func (s *Server) handleStats(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("gc") == "1" {
		runtime.GC()
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	writeJSON(w, http.StatusOK, map[string]any{"goroutines": runtime.NumGoroutine(), "heap_alloc": ms.HeapAlloc,
		"heap_inuse": ms.HeapInuse, "sys": ms.Sys, "num_gc": ms.NumGC, "requests": s.requests.Load(), "refused": s.limit.refused.Load()})
}

func (s *Server) handleReload(w http.ResponseWriter, r *http.Request) {
	if err := s.Reload(r.Context()); err != nil {
		s.log.Error("reload failed", "err", err)
		writeError(w, http.StatusInternalServerError, "server_error", "", err.Error())
		return
	}
	g := s.Graph()
	writeJSON(w, http.StatusOK, map[string]any{"status": "reloaded", "graph": g.Name, "version": g.version})
}

func (s *Server) authorised(next http.Handler) http.Handler {
	if s.cfg.APIKey == "" {
		return next
	}
	want := []byte("Bearer " + s.cfg.APIKey)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if public(r.URL.Path) || r.Method == http.MethodOptions {
			next.ServeHTTP(w, r)
			return
		}
		got := r.Header.Get("Authorization")
		if got == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="kgrag"`)
			writeError(w, http.StatusUnauthorized, "authentication_error", "missing_api_key",
				"this server wants an API key: send Authorization: Bearer KEY")
			return
		}
		if subtle.ConstantTimeCompare([]byte(got), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="kgrag", error="invalid_token"`)
			writeError(w, http.StatusUnauthorized, "authentication_error", "invalid_api_key", "the API key is wrong")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) cors(next http.Handler) http.Handler {
	if len(s.cfg.CORSOrigins) == 0 {
		return next
	}
	any := slices.Contains(s.cfg.CORSOrigins, "*")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin != "" && (any || slices.Contains(s.cfg.CORSOrigins, origin)) {
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Add("Vary", "Origin")
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
				h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
				h.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// logged writes one access log line per request: method, path, status,
// bytes, duration; the question only when Config.LogQuestions (handlers
// record it in the request's logNote).
func (s *Server) logged(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t := time.Now()
		s.requests.Add(1)
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		note := &logNote{}
		r = r.WithContext(context.WithValue(r.Context(), noteKey{}, note))
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("handler panicked", "path", r.URL.Path, "panic", fmt.Sprint(v))
				if !rec.wrote {
					writeError(rec, http.StatusInternalServerError, "server_error", "", "internal error")
				}
			}
			attrs := []any{"method", r.Method, "path", r.URL.Path, "status", rec.status, "bytes", rec.bytes,
				"ms", time.Since(t).Milliseconds(), "remote", remoteHost(r)}
			if note.model != "" {
				attrs = append(attrs, "model", note.model)
			}
			if s.cfg.LogQuestions && note.question != "" {
				attrs = append(attrs, "question", note.question)
			}
			if note.err != "" {
				attrs = append(attrs, "err", note.err)
			}
			s.log.Info("request", attrs...)
		}()
		next.ServeHTTP(rec, r)
	})
}

func remoteHost(r *http.Request) string {
	h, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return h
}

// logNote is what a handler adds to its request's log line.
type logNote struct{ model, question, err string }

type noteKey struct{}

func note(r *http.Request) *logNote {
	if n, ok := r.Context().Value(noteKey{}).(*logNote); ok {
		return n
	}
	return &logNote{}
}

// recorder notes the status and size of a response for the log.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
	wrote  bool
}

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

// Flush lets handlers stream through the recorder.
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// limiter bounds the questions asking the model servers at once, with a
// bounded queue in front.
type limiter struct {
	slots   chan struct{}
	waiting atomic.Int64
	queue   int64
	refused atomic.Int64
}

func newLimiter(n, queue int) *limiter {
	return &limiter{slots: make(chan struct{}, n), queue: int64(queue)}
}

// errBusy: every slot is taken and the queue is full.
var errBusy = errors.New("busy")

// acquire takes a slot, waiting in the queue if there is room in it, and
// returns its release.
func (l *limiter) acquire(ctx context.Context) (func(), error) {
	select {
	case l.slots <- struct{}{}:
		return l.release, nil
	default:
	}
	if l.waiting.Add(1) > l.queue {
		l.waiting.Add(-1)
		l.refused.Add(1)
		return nil, errBusy
	}
	defer l.waiting.Add(-1)
	select {
	case l.slots <- struct{}{}:
		return l.release, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (l *limiter) release() { <-l.slots }

// Refused is the number of questions answered 429 so far.
func (s *Server) Refused() int64 { return s.limit.refused.Load() }

// Serve serves on ln until ctx is done, then stops taking requests and
// waits up to drain for those in flight (streams included) to end.
func (s *Server) Serve(ctx context.Context, ln net.Listener, drain time.Duration) error {
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) }}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	err := hs.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		hs.Close()
		return fmt.Errorf("serve: requests still running after %s were cut", drain)
	}
	return err
}

// retryAfter is the Retry-After of a 429: a second, as a question
// usually takes a few.
const retryAfter = 1

func writeBusy(w http.ResponseWriter, max int) {
	w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	writeError(w, http.StatusTooManyRequests, "rate_limit_error", "busy",
		fmt.Sprintf("the server is answering %d questions and has as many waiting as it queues: retry after %d s", max, retryAfter))
}
