package serve

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llmcall"
	"github.com/kgrag/kgrag/internal/localsearch"
)

// apiError is an error as OpenAI's API shapes it, which OpenAI clients
// show: {"error": {"message", "type", "param", "code"}}.
type apiError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

type errorBody struct {
	Error apiError `json:"error"`
}

func newAPIError(typ, code, msg string) apiError {
	e := apiError{Message: msg, Type: typ}
	if code != "" {
		e.Code = &code
	}
	return e
}

func writeError(w http.ResponseWriter, status int, typ, code, msg string) {
	writeJSON(w, status, errorBody{newAPIError(typ, code, msg)})
}

// badRequest answers 400 naming the field at fault.
func badRequest(w http.ResponseWriter, param, msg string) {
	e := newAPIError("invalid_request_error", "", msg)
	if param != "" {
		e.Param = &param
	}
	writeJSON(w, http.StatusBadRequest, errorBody{e})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // the client went away: nothing to tell it
}

// failure is how a failed question is answered: a status and an error
// that says which service failed. Messages come from errors whose secrets
// were taken out where they were made (llm, sparqlq).
func failure(err error) (int, apiError) {
	var ne *localsearch.NoEntitiesError
	var se *localsearch.SourceError
	var ie *localsearch.IndexError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout, newAPIError("server_error", "timeout", "the question took longer than the server's request timeout: "+err.Error())
	case errors.Is(err, context.Canceled):
		// The client went away; nobody reads this.
		return 499, newAPIError("server_error", "canceled", err.Error())
	case errors.Is(err, errBusyGraph):
		return http.StatusServiceUnavailable, newAPIError("server_error", "graph_updating", err.Error())
	case errors.Is(err, llm.ErrRateLimited):
		return http.StatusServiceUnavailable, newAPIError("server_error", "upstream_rate_limited", "the model server is rate limiting: "+err.Error())
	case errors.Is(err, llm.ErrUnreachable):
		return http.StatusBadGateway, newAPIError("server_error", "upstream_unavailable", "the model server does not answer: "+err.Error())
	case errors.Is(err, llm.ErrModelNotFound), errors.Is(err, llm.ErrAuth), errors.Is(err, llm.ErrRequest),
		errors.Is(err, llm.ErrServer), errors.Is(err, llm.ErrResponse):
		return http.StatusBadGateway, newAPIError("server_error", "upstream_error", "the model server failed: "+err.Error())
	case errors.Is(err, llmcall.ErrUnusable):
		return http.StatusBadGateway, newAPIError("server_error", "upstream_unusable_reply", "the model's reply could not be used: "+err.Error())
	case errors.As(err, &se):
		return http.StatusBadGateway, newAPIError("server_error", "store_error", "the graph's store failed: "+err.Error())
	case errors.As(err, &ie):
		return http.StatusBadGateway, newAPIError("server_error", "index_error", "the vector index failed: "+err.Error())
	case errors.As(err, &ne):
		return http.StatusInternalServerError, newAPIError("server_error", "index_mismatch", err.Error())
	}
	return http.StatusInternalServerError, newAPIError("server_error", "", err.Error())
}
