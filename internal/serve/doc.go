// Package serve is kgrag serve and kgrag mcp: one loaded graph and its
// vector indexes answering over HTTP (and MCP over stdio), with the
// engines kgrag ask uses (internal/engine, one per mode of the registry).
//
// It offers an OpenAI-compatible chat API (/v1/models, /v1/chat/completions,
// streamed as server-sent events), so that any OpenAI client or chat UI
// talks to the graph by choosing a model per mode (kgrag-local,
// kgrag-global, kgrag-drift, ...: engine.Modes); MCP tools for agents; a
// JSON API for scripts (/api/...: the same record kgrag ask --json prints,
// entities, communities, search); a web page; and /healthz and /readyz.
//
// The graph is loaded by a Loader the caller gives and swapped in whole on
// Reload: a request keeps the Graph it started with, so requests in flight
// finish on the old graph and none sees a mix. Model calls are bounded (a
// request that finds the limit and the queue full is answered 429 with
// Retry-After), request bodies, questions and conversations are bounded,
// every error is a JSON object in OpenAI's error shape, and a client that
// goes away cancels its upstream model call.
package serve
