// Package serve is kgrag serve: one loaded graph and vector index answering
// over HTTP, with the search engines kgrag ask uses (localsearch,
// globalsearch).
//
// It offers an OpenAI-compatible chat API (/v1/models, /v1/chat/completions,
// streamed as server-sent events), so that any OpenAI client or chat UI
// talks to the graph by choosing a model per mode (kgrag-local,
// kgrag-global, kgrag-sparql-templates, kgrag-subgraph, kgrag-graph-of-thoughts); a JSON API for scripts (/api/...: the same
// record kgrag ask --json prints, entities, communities, search); and
// /healthz and /readyz.
//
// The graph is loaded by a Loader the caller gives and swapped in whole on
// Reload: a request keeps the Graph it started with, so requests in flight
// finish on the old graph and none sees a mix. Model calls are bounded (a
// request that finds the limit and the queue full is answered 429 with
// Retry-After), request bodies, questions and conversations are bounded,
// every error is a JSON object in OpenAI's error shape, and a client that
// goes away cancels its upstream model call.
package serve
