package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The servers window discovery tells apart, by the endpoints each has
// beside the OpenAI-compatible ones.
const (
	ServerOllama         = "Ollama"
	ServerLlamaServer    = "llama-server"
	ServerLMStudio       = "LM Studio"
	ServerVLLM           = "vLLM"
	ServerLlamaCppPython = "llama-cpp-python"
	// ServerOther is any other OpenAI-compatible server (or a proxy that
	// hides which one is behind it).
	ServerOther = "OpenAI-compatible"
)

// WindowKind says which use of a model a window is for.
type WindowKind string

// The kinds of window.
const (
	WindowChat  WindowKind = "chat"
	WindowEmbed WindowKind = "embedding"
)

// OllamaDefaultContext is the context Ollama gives a request that does not
// ask for one, on a machine without a large GPU, unless OLLAMA_CONTEXT_LENGTH
// says otherwise (it is 4096, 32768 or 262144 by the GPU's memory since
// 0.12; 2048 before).
const OllamaDefaultContext = 4096

// LMStudioDefaultContext is the context LM Studio loads a model with
// when nothing says otherwise.
const LMStudioDefaultContext = 4096

// Window is how many tokens a model reads in one request on the server
// kgrag talks to: the prompt and the answer together for a chat model, the
// text for an embedding model. Tokens are the model's own; kgrag's budgets
// count with tiktoken, and Fit converts.
type Window struct {
	Model string     `json:"model"`
	Kind  WindowKind `json:"kind"`
	// Tokens is the window; 0 when nothing said it.
	Tokens int `json:"tokens,omitempty"`
	// Trained is the model's trained context length, when the server
	// tells it; the most a per-request window can be raised to.
	Trained int `json:"trained,omitempty"`
	// Server is the kind of server (ServerOllama...).
	Server string `json:"server"`
	// Source says where Tokens came from, for people: the flag, the
	// endpoint and field, or the error that named it.
	Source string `json:"source"`
	// PerRequest: the server takes the window per request (Ollama's
	// num_ctx), so a chat asks for what its prompt needs, up to Tokens,
	// and Default is what a request that does not ask gets.
	PerRequest bool `json:"per_request,omitempty"`
	Default    int  `json:"default,omitempty"`
	// Loaded, with PerRequest, is the context of the model as the server
	// has it loaded now (Ollama's /api/ps), which a request keeps by
	// asking for it: asking for another reloads the model.
	Loaded int `json:"loaded,omitempty"`
	// Encoding, for a window measured by probing (an embedding model's),
	// is the tiktoken encoding whose tokens Tokens counts, instead of
	// the model's own; AtLeast says the probe text was read whole, so
	// the window is at least Tokens.
	Encoding string `json:"encoding,omitempty"`
	AtLeast  bool   `json:"at_least,omitempty"`
}

// Known reports whether the window's size is known.
func (w Window) Known() bool { return w.Tokens > 0 }

// String is the window with its source, for messages: "2048 tokens
// (llama-server /props n_ctx)".
func (w Window) String() string {
	if !w.Known() {
		if w.Source != "" {
			return "unknown (" + w.Source + ")"
		}
		return "unknown"
	}
	unit := "tokens"
	if w.Encoding != "" {
		unit = w.Encoding + " tokens"
	}
	if w.AtLeast {
		return fmt.Sprintf("at least %d %s (%s)", w.Tokens, unit, w.Source)
	}
	return fmt.Sprintf("%d %s (%s)", w.Tokens, unit, w.Source)
}

// windowKey is a window's place in the client's memory.
type windowKey struct {
	kind  WindowKind
	model string
}

// SetWindow fixes the window of kind for every model (a flag: the user's
// word wins over any server's); tokens 0 takes the fix back.
func (c *Client) SetWindow(kind WindowKind, tokens int, source string) {
	c.winMu.Lock()
	defer c.winMu.Unlock()
	if c.fixed == nil {
		c.fixed = map[WindowKind]Window{}
	}
	if tokens <= 0 {
		delete(c.fixed, kind)
		return
	}
	c.fixed[kind] = Window{Kind: kind, Tokens: tokens, Source: source}
}

// Window returns the window of model for kind: a flag's (SetWindow), else
// what the server says of it, else what an error of the server named
// earlier (Learn, kept on disk when the client has a WindowCache), else an
// unknown window that says why. Answers are kept for the client's life; a
// server that cannot be asked is no error (the window is unknown), only a
// cancelled ctx is.
func (c *Client) Window(ctx context.Context, kind WindowKind, model string) (Window, error) {
	if model == "" {
		if kind == WindowEmbed {
			model = c.cfg.EmbedModel
		} else {
			model = c.cfg.ChatModel
		}
	}
	key := windowKey{kind, model}
	c.winMu.Lock()
	if w, ok := c.fixed[kind]; ok {
		c.winMu.Unlock()
		w.Model = model
		if c.server != "" {
			w.Server = c.server
		}
		return w, nil
	}
	if w, ok := c.windows[key]; ok {
		c.winMu.Unlock()
		return w, nil
	}
	c.winMu.Unlock()

	server := c.Server(ctx)
	if err := ctx.Err(); err != nil {
		return Window{}, err
	}
	w := c.discover(ctx, server, kind, model)
	if err := ctx.Err(); err != nil {
		return Window{}, err
	}
	if !w.Known() {
		if cached, ok := c.cfg.WindowCache.Get(c.base, kind, model, false); ok {
			w = cached
		}
	}
	if !w.Known() && kind == WindowChat {
		if t, ok := hostedChatWindow(model); ok && server == ServerOther {
			w.Tokens, w.Source = t, "the published context length of "+model
		}
	}
	if !w.Known() && kind == WindowEmbed {
		if t, ok := hostedEmbedWindow(model); ok && server == ServerOther {
			w.Tokens, w.Source = t, "the published input limit of "+model
		}
	}
	c.winMu.Lock()
	if c.windows == nil {
		c.windows = map[windowKey]Window{}
	}
	c.windows[key] = w
	c.winMu.Unlock()
	return w, nil
}

// Learn records a window a server named in an error (see WindowError):
// later calls to Window return it, and the WindowCache keeps it for later
// runs. It returns the window as recorded.
func (c *Client) Learn(kind WindowKind, model string, tokens int, source string) Window {
	w := Window{Model: model, Kind: kind, Tokens: tokens, Server: c.server, Source: source}
	if w.Server == "" {
		w.Server = ServerOther
	}
	c.winMu.Lock()
	if c.windows == nil {
		c.windows = map[windowKey]Window{}
	}
	c.windows[windowKey{kind, model}] = w
	c.winMu.Unlock()
	c.cfg.WindowCache.Put(c.base, w)
	return w
}

// Measured returns the embedding window of model measured earlier (see
// Remember), when the WindowCache holds one.
func (c *Client) Measured(kind WindowKind, model string) (Window, bool) {
	return c.cfg.WindowCache.Get(c.base, kind, model, true)
}

// Remember keeps a measured window (w.Encoding set) in the WindowCache.
func (c *Client) Remember(w Window) error {
	if w.Server == "" {
		w.Server = c.identified()
	}
	return c.cfg.WindowCache.Put(c.base, w)
}

// Server identifies the server behind BaseURL once (ServerOllama...), by
// the endpoints it answers beside the OpenAI-compatible ones; a server
// that answers none of them, or cannot be reached, is ServerOther.
func (c *Client) Server(ctx context.Context) string {
	c.winMu.Lock()
	if c.server != "" {
		s := c.server
		c.winMu.Unlock()
		return s
	}
	c.winMu.Unlock()
	s := c.identify(ctx)
	if ctx.Err() != nil {
		return ServerOther
	}
	c.winMu.Lock()
	c.server = s
	c.winMu.Unlock()
	return s
}

// identified is the server's kind if Server or Window has found it out,
// else "": chat calls go to Ollama's own API only once it is known to be
// Ollama, and never probe for it themselves.
func (c *Client) identified() string {
	c.winMu.Lock()
	defer c.winMu.Unlock()
	return c.server
}

// probeTimeout bounds each request of window discovery: the endpoints
// answer from memory, and a server that does not have one may hang on it
// no longer than this.
const probeTimeout = 5 * time.Second

// root is BaseURL without its /v1: where Ollama's, llama-server's and LM
// Studio's own endpoints are.
func (c *Client) root() string {
	u, err := url.Parse(strings.TrimRight(c.cfg.BaseURL, "/"))
	if err != nil {
		return strings.TrimRight(c.cfg.BaseURL, "/")
	}
	u.Path = strings.TrimSuffix(u.Path, "/v1")
	return strings.TrimRight(u.String(), "/")
}

// getJSON sends a GET (body nil) or POST to url and decodes a 200 JSON
// answer into v; any other answer is an error, never retried.
func (c *Client) getJSON(ctx context.Context, method, url string, body any, v any) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return c.secrets.Error(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		// The URL in the error may carry the credentials of --llm-url.
		return c.secrets.Error(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return c.secrets.Error(json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(v))
}

// identify asks the endpoints that tell the servers apart, in an order
// where no server answers another's: Ollama's /api/version, llama-server's
// /props, LM Studio's /api/v1/models (or /api/v0/models before 0.4),
// llama-cpp-python's /extras/tokenize/count in its /openapi.json (which
// needs no model loaded), and vLLM's /version: none under /v1, so that a
// proxy serving only the OpenAI API answers none.
func (c *Client) identify(ctx context.Context) string {
	root := c.root()
	var version struct {
		Version string `json:"version"`
	}
	if c.getJSON(ctx, http.MethodGet, root+"/api/version", nil, &version) == nil && version.Version != "" {
		return ServerOllama
	}
	var props map[string]json.RawMessage
	if c.getJSON(ctx, http.MethodGet, root+"/props", nil, &props) == nil && props["default_generation_settings"] != nil {
		return ServerLlamaServer
	}
	var lms struct {
		Models []json.RawMessage `json:"models"`
		Data   []struct {
			ID    string `json:"id"`
			State string `json:"state"`
		} `json:"data"`
	}
	if c.getJSON(ctx, http.MethodGet, root+"/api/v1/models", nil, &lms) == nil && lms.Models != nil {
		return ServerLMStudio
	}
	if c.getJSON(ctx, http.MethodGet, root+"/api/v0/models", nil, &lms) == nil && len(lms.Data) > 0 && lms.Data[0].State != "" {
		return ServerLMStudio
	}
	var api struct {
		Paths map[string]json.RawMessage `json:"paths"`
	}
	if c.getJSON(ctx, http.MethodGet, root+"/openapi.json", nil, &api) == nil && api.Paths["/extras/tokenize/count"] != nil {
		return ServerLlamaCppPython
	}
	// vLLM answers /version (as Ollama does /api/version), outside the
	// OpenAI API.
	if c.getJSON(ctx, http.MethodGet, root+"/version", nil, &version) == nil && version.Version != "" {
		return ServerVLLM
	}
	return ServerOther
}

// discover asks server for model's window.
func (c *Client) discover(ctx context.Context, server string, kind WindowKind, model string) Window {
	w := Window{Model: model, Kind: kind, Server: server}
	switch server {
	case ServerOllama:
		c.ollamaWindow(ctx, &w)
	case ServerLlamaServer:
		c.llamaServerWindow(ctx, &w)
	case ServerLMStudio:
		c.lmStudioWindow(ctx, &w)
	case ServerVLLM:
		c.vllmWindow(ctx, &w)
	case ServerLlamaCppPython:
		w.Source = "llama-cpp-python does not say its n_ctx; kgrag learns it from the first prompt it refuses"
		if kind == WindowEmbed {
			w.Source = "llama-cpp-python does not say its n_ctx; kgrag embed measures it"
		}
	default:
		w.Source = "the server does not say; set --chat-context-tokens"
		if kind == WindowEmbed {
			w.Source = "the server does not say; kgrag embed measures it, or set --embed-max-tokens"
		}
	}
	return w
}

var numCtxParam = regexp.MustCompile(`(?m)^\s*num_ctx\s+(\d+)`)

// ollamaWindow: /api/show gives the trained length (model_info's
// <arch>.context_length) and a num_ctx the Modelfile set; /api/ps the
// context of the model as loaded. kgrag's chat calls ask for num_ctx per
// request (ollama.go), so a chat window is the trained length. An
// embedding through /v1/embeddings gets the server's default, cut to the
// trained length.
func (c *Client) ollamaWindow(ctx context.Context, w *Window) {
	var show struct {
		Parameters string         `json:"parameters"`
		ModelInfo  map[string]any `json:"model_info"`
	}
	if err := c.getJSON(ctx, http.MethodPost, c.root()+"/api/show", map[string]string{"model": w.Model}, &show); err != nil {
		w.Source = fmt.Sprintf("Ollama /api/show %q failed (%v)", w.Model, err)
		return
	}
	for k, v := range show.ModelInfo {
		if strings.HasSuffix(k, ".context_length") {
			if f, ok := v.(float64); ok && f > 0 {
				w.Trained = int(f)
			}
		}
	}
	// A request that does not ask gets the Modelfile's num_ctx, else the
	// server's default, even when the model is loaded with another
	// context (Ollama then reloads it): /api/ps says only what a request
	// asking for the same keeps.
	def, defSource := OllamaDefaultContext, fmt.Sprintf("Ollama's default context %d", OllamaDefaultContext)
	if m := numCtxParam.FindStringSubmatch(show.Parameters); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil && n > 0 {
			def, defSource = n, fmt.Sprintf("num_ctx %d in the model's Modelfile", n)
		}
	}
	var ps struct {
		Models []struct {
			Name          string `json:"name"`
			Model         string `json:"model"`
			ContextLength int    `json:"context_length"`
		} `json:"models"`
	}
	if c.getJSON(ctx, http.MethodGet, c.root()+"/api/ps", nil, &ps) == nil {
		for _, m := range ps.Models {
			if sameOllamaName(m.Name, w.Model) || sameOllamaName(m.Model, w.Model) {
				w.Loaded = m.ContextLength
			}
		}
	}
	if w.Trained > 0 {
		def = min(def, w.Trained)
	}
	w.Default = def
	if w.Kind == WindowChat && w.Trained > 0 {
		w.Tokens, w.PerRequest = w.Trained, true
		w.Source = fmt.Sprintf("Ollama /api/show: trained context %d; kgrag asks num_ctx per request (a request that does not ask gets %s)", w.Trained, defSource)
		return
	}
	w.Tokens = def
	if w.Loaded > 0 && w.Kind == WindowEmbed {
		// An embedding model is cut to its trained length whatever was
		// asked: the context it is loaded with is what it reads.
		w.Tokens, defSource = w.Loaded, fmt.Sprintf("context %d of the model as loaded (/api/ps)", w.Loaded)
	}
	w.Source = "Ollama: " + defSource
	if w.Trained > 0 {
		w.Source += fmt.Sprintf(", within the trained context %d (/api/show)", w.Trained)
	}
}

// sameOllamaName compares model names as Ollama does, with ":latest"
// implied.
func sameOllamaName(a, b string) bool {
	norm := func(s string) string {
		if !strings.Contains(s, ":") {
			s += ":latest"
		}
		return s
	}
	return a != "" && b != "" && norm(a) == norm(b)
}

// llamaServerWindow: /props gives the context of each slot
// (default_generation_settings.n_ctx), /v1/models the trained length
// (meta.n_ctx_train).
func (c *Client) llamaServerWindow(ctx context.Context, w *Window) {
	var props struct {
		Default struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
		NCtx int `json:"n_ctx"`
	}
	if err := c.getJSON(ctx, http.MethodGet, c.root()+"/props", nil, &props); err != nil {
		w.Source = fmt.Sprintf("llama-server /props failed (%v)", err)
		return
	}
	switch {
	case props.Default.NCtx > 0:
		w.Tokens, w.Source = props.Default.NCtx, "llama-server /props default_generation_settings.n_ctx"
	case props.NCtx > 0:
		w.Tokens, w.Source = props.NCtx, "llama-server /props n_ctx"
	}
	var models struct {
		Data []struct {
			ID   string `json:"id"`
			Meta struct {
				NCtxTrain int `json:"n_ctx_train"`
			} `json:"meta"`
		} `json:"data"`
	}
	if c.getJSON(ctx, http.MethodGet, strings.TrimRight(c.cfg.BaseURL, "/")+"/models", nil, &models) == nil {
		for _, m := range models.Data {
			if m.Meta.NCtxTrain > 0 && (m.ID == w.Model || len(models.Data) == 1) {
				w.Trained = m.Meta.NCtxTrain
			}
		}
	}
}

// lmStudioWindow: /api/v1/models (0.4 on) gives the context of each
// loaded instance and the model's maximum; /api/v0/models/{model} before
// it. A model not loaded yet is loaded, on its first request, with LM
// Studio's default context.
func (c *Client) lmStudioWindow(ctx context.Context, w *Window) {
	var v1 struct {
		Models []struct {
			Key             string        `json:"key"`
			Type            string        `json:"type"`
			MaxContext      int           `json:"max_context_length"`
			LoadedInstances []lmsInstance `json:"loaded_instances"`
		} `json:"models"`
	}
	if c.getJSON(ctx, http.MethodGet, c.root()+"/api/v1/models", nil, &v1) == nil && v1.Models != nil {
		for _, m := range v1.Models {
			if m.Key != w.Model && !slices.ContainsFunc(m.LoadedInstances, func(in lmsInstance) bool { return in.ID == w.Model }) {
				continue
			}
			w.Trained = m.MaxContext
			for _, in := range m.LoadedInstances {
				if in.Config.ContextLength > 0 && (w.Tokens == 0 || in.Config.ContextLength < w.Tokens) {
					w.Tokens, w.Source = in.Config.ContextLength, "LM Studio /api/v1/models: context_length of the loaded instance"
				}
			}
			if w.Tokens == 0 {
				w.Tokens = LMStudioDefaultContext
				if w.Trained > 0 {
					w.Tokens = min(w.Tokens, w.Trained)
				}
				w.Source = fmt.Sprintf("LM Studio: %s is not loaded; it loads with LM Studio's default context, %d, unless set in LM Studio", w.Model, w.Tokens)
			}
			return
		}
		w.Source = fmt.Sprintf("LM Studio /api/v1/models does not list %s", w.Model)
		return
	}
	var v0 struct {
		State         string `json:"state"`
		MaxContext    int    `json:"max_context_length"`
		LoadedContext int    `json:"loaded_context_length"`
	}
	if err := c.getJSON(ctx, http.MethodGet, c.root()+"/api/v0/models/"+url.PathEscape(w.Model), nil, &v0); err != nil {
		w.Source = fmt.Sprintf("LM Studio /api/v0/models/%s failed (%v)", w.Model, err)
		return
	}
	w.Trained = v0.MaxContext
	switch {
	case v0.LoadedContext > 0:
		w.Tokens, w.Source = v0.LoadedContext, "LM Studio /api/v0/models: loaded_context_length"
	default:
		w.Tokens = LMStudioDefaultContext
		if w.Trained > 0 {
			w.Tokens = min(w.Tokens, w.Trained)
		}
		w.Source = fmt.Sprintf("LM Studio: %s (state %s) gets LM Studio's default context, %d, unless set in LM Studio", w.Model, v0.State, w.Tokens)
	}
}

// lmsInstance is a loaded instance in LM Studio's /api/v1/models.
type lmsInstance struct {
	ID     string `json:"id"`
	Config struct {
		ContextLength int `json:"context_length"`
	} `json:"config"`
}

// vllmWindow: /v1/models gives each model's max_model_len.
func (c *Client) vllmWindow(ctx context.Context, w *Window) {
	var models struct {
		Data []struct {
			ID          string `json:"id"`
			MaxModelLen int    `json:"max_model_len"`
		} `json:"data"`
	}
	if err := c.getJSON(ctx, http.MethodGet, strings.TrimRight(c.cfg.BaseURL, "/")+"/models", nil, &models); err != nil {
		w.Source = fmt.Sprintf("vLLM /v1/models failed (%v)", err)
		return
	}
	for _, m := range models.Data {
		if m.ID == w.Model && m.MaxModelLen > 0 {
			w.Tokens, w.Trained, w.Source = m.MaxModelLen, m.MaxModelLen, "vLLM /v1/models max_model_len"
			return
		}
	}
	w.Source = fmt.Sprintf("vLLM /v1/models does not list %s", w.Model)
}
