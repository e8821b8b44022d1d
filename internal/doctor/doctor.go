// Package doctor holds kgrag doctor's checks of what a question needs: the
// store holds the graph, the vector index is whole and of a known model,
// the model server serves the embedding model (at the index's dimension)
// and the chat model, the graph has community reports. Each check gives a
// Result that says what was found and, when it failed, what to change,
// in the words of the settings that change it (How). The command decides
// what is configured and prints; kgrag serve or a script could run the
// same checks.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/embedindex/elastic"
	"github.com/kgrag/kgrag/embedindex/flat"
	"github.com/kgrag/kgrag/internal/engine"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/redact"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/internal/tokens"
	"github.com/kgrag/kgrag/loader"
	"github.com/kgrag/kgrag/sparqlq"
)

// Statuses of a check.
const (
	OK      = "ok"
	Warn    = "warn" // works, but one more fault stops it
	Failed  = "FAIL"
	Skipped = "skipped"
)

// Result is the outcome of one check.
type Result struct {
	Name   string `json:"name"`
	Status string `json:"status"`        // OK, Warn, Failed or Skipped
	Detail string `json:"detail"`        // what was found, or what is wrong
	Fix    string `json:"fix,omitempty"` // on failure, what to change; when skipped, how to enable it
}

// How says every way to set a setting, by its flag name: "--store (env
// KGRAG_STORE, config key store)".
type How map[string]string

func failed(r Result, fix, format string, args ...any) Result {
	r.Status, r.Detail, r.Fix = Failed, fmt.Sprintf(format, args...), fix
	return r
}

// Store checks that the store answers at c's query endpoint, accepts the
// credentials and that graph holds entities. kind names the store kind
// and url its base URL, for the messages.
func Store(ctx context.Context, c *sparqlq.Client, kind, url, graph string, how How) Result {
	r := Result{Name: "store"}
	q, err := sparqlq.Bound("graph_count_entities", sparqlq.Params{"graph": sparqlq.IRIParam(graph)})
	if err != nil {
		return failed(r, how["graph"], "--graph: %v", err)
	}
	where := fmt.Sprintf("%s store at %s", kind, redact.URL(url))
	res, err := c.Select(ctx, q)
	if err != nil {
		var se *sparqlq.StatusError
		switch {
		case loader.Unreachable(err) || errors.Is(err, context.DeadlineExceeded):
			return failed(r, "start the store, or correct "+how["store"], "%s: no answer at %s: %v", where, c.QueryURL(), err)
		case errors.As(err, &se) && (se.StatusCode == http.StatusUnauthorized || se.StatusCode == http.StatusForbidden):
			return failed(r, how["user"]+" with "+how["password"]+", or "+how["token"],
				"%s refused the credentials (%s)", where, se.Status)
		case errors.As(err, &se) && se.StatusCode == http.StatusNotFound:
			return failed(r, how["store"]+" is the store's base URL; "+how["store-type"]+" says where its endpoints are",
				"%s: no SPARQL query endpoint at %s (%s)", where, se.URL, se.Status)
		}
		return failed(r, how["store"], "%s: %v", where, err)
	}
	var n int64
	if len(res.Bindings) == 1 {
		n, err = res.Bindings[0]["n"].Int()
	}
	if err != nil || len(res.Bindings) != 1 {
		return failed(r, "", "%s: the count of entities did not come back as a number", where)
	}
	if n == 0 {
		fix := "correct " + how["graph"] + ", or load it: kgrag load --input DIR --store " + redact.URL(url) + " --graph " + graph
		if others := entityGraphs(ctx, c); len(others) > 0 {
			fix += "; graphs there with entities: " + strings.Join(others, " ")
		}
		return failed(r, fix, "%s: graph <%s> holds no gr:Entity", where, graph)
	}
	r.Status, r.Detail = OK, fmt.Sprintf("%s: graph <%s> holds %d entities", where, graph, n)
	return r
}

// Copy is what was found of one copy of a store: its check, and the
// load record it holds of the graph (loader.Stamp; "" for none).
type Copy struct {
	URL    string
	Result Result
	Stamp  string
}

// Copies sums up the checks of the copies of one store (--store A,B).
// It is OK when every copy answers, holds the graph and the same load of
// it; Warn when readers still have a copy but one is down or empty (one
// more fault stops them), or when the copies hold different loads
// (readers get the one of the copy they reach); Failed when no copy
// holds the graph.
func Copies(copies []Copy, how How) Result {
	r := Result{Name: "store"}
	var up, down []string
	stamps := map[string][]string{}
	for i, c := range copies {
		name := fmt.Sprintf("copy %d", i+1)
		if c.Result.Status != OK {
			down = append(down, name+": "+c.Result.Detail)
			if r.Fix == "" {
				r.Fix = c.Result.Fix
			}
			continue
		}
		up = append(up, fmt.Sprintf("%s: %s", name, c.Result.Detail))
		stamps[c.Stamp] = append(stamps[c.Stamp], fmt.Sprint(i+1))
	}
	switch {
	case len(up) == 0:
		r.Status = Failed
	case len(down) > 0:
		r.Status = Warn
	case len(stamps) > 1 || stamps[""] != nil:
		r.Status = Warn
		r.Fix = "load every copy again with --diff: each is sent only its difference"
	default:
		r.Status = OK
	}
	parts := append(up, down...)
	if len(up) > 1 && len(stamps) > 1 {
		var groups []string
		for _, st := range slices.Sorted(maps.Keys(stamps)) {
			what := "the load recorded as " + st
			if st == "" {
				what = "no load record"
			}
			who := "copies " + strings.Join(stamps[st], ", ") + " hold"
			if len(stamps[st]) == 1 {
				who = "copy " + stamps[st][0] + " holds"
			}
			groups = append(groups, who+" "+what)
		}
		parts = append(parts, "the copies hold different loads: "+strings.Join(groups, "; "))
	}
	r.Detail = strings.Join(parts, "; ")
	return r
}

// entityGraphs names a few graphs of the store that hold entities, to
// suggest for --graph. Errors leave the hint out.
func entityGraphs(ctx context.Context, c *sparqlq.Client) []string {
	q, err := sparqlq.Bound("graphs_with_entities", sparqlq.Params{})
	if err != nil {
		return nil
	}
	res, err := c.Select(ctx, q)
	if err != nil {
		return nil
	}
	var out []string
	for _, row := range res.Bindings {
		if t, ok := row["g"]; ok && t.Type == sparqlq.TypeURI {
			out = append(out, "<"+t.Value+">")
		}
	}
	return out
}

// IndexTarget is a vector index to check: a flat file at Path, or the
// Elasticsearch alias of Elastic when its URL is set.
type IndexTarget struct {
	Name    string // the check's name: "index", "index (text units)"
	Path    string
	Elastic elastic.Config
	// Build is the command that builds it ("kgrag embed --input DIR");
	// File the flat file's name.
	Build, File, DefaultDir string
}

// Index opens the vector index, reads every vector of a flat file against
// its checksum, and returns its description for Embedder (zero when it
// could not be read).
func Index(ctx context.Context, t IndexTarget, how How) (Result, embedindex.Info) {
	r := Result{Name: t.Name}
	fail := func(fix, format string, args ...any) (Result, embedindex.Info) {
		return failed(r, fix, format, args...), embedindex.Info{}
	}
	var (
		info   embedindex.Info
		health elastic.Health
	)
	if t.Elastic.URL != "" {
		x, err := elastic.Open(ctx, t.Elastic)
		var ee *elastic.Error
		switch {
		case errors.Is(err, elastic.ErrUnavailable):
			return fail("bring the lost nodes back: a search needs every primary shard and an elected master", "%v", err)
		case elastic.Unreachable(err):
			return fail("start Elasticsearch, or correct "+how["index-url"], "%v", err)
		case errors.Is(err, elastic.ErrNotFound):
			return fail("correct "+how["index-name"]+", or build the index with "+t.Build+" --index-url URL", "%v", err)
		case errors.As(err, &ee) && (ee.Status == http.StatusUnauthorized || ee.Status == http.StatusForbidden):
			return fail(how["index-api-key"]+", or "+how["index-user"]+" with "+how["index-password"], "%v", err)
		case err != nil:
			return fail(how["index-url"], "%v", err)
		}
		info = x.Info()
		if health, err = x.Health(ctx); err != nil {
			return fail(how["index-url"], "%v", err)
		}
	} else {
		x, err := flat.Open(ctx, t.Path, flat.Options{})
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return fail("build it with "+t.Build+" (it writes DIR/"+t.DefaultDir+"/"+t.File+"), or correct "+how["index"],
				"no vector index at %s", t.Path)
		case errors.Is(err, flat.ErrCorrupt):
			return fail("rebuild it with kgrag embed, or correct "+how["index"], "%v", err)
		case err != nil:
			return fail(how["index"], "%v", err)
		}
		defer x.Close()
		// Open checks the vectors only of a small index; doctor reads
		// them all (3 GB at a million 768-dimensional vectors).
		if err := x.Verify(ctx); errors.Is(err, flat.ErrCorrupt) {
			return fail("rebuild it with kgrag embed", "%v", err)
		} else if err != nil {
			return fail(how["index"], "%v", err)
		}
		info = x.Info()
	}
	if info.Count == 0 {
		return fail("rebuild it with kgrag embed", "vector index %s is empty", info.Path)
	}
	r.Status = OK
	r.Detail = fmt.Sprintf("%s: %d vectors of %s, dimension %d", info.Path, info.Count, info.Model, info.Dim)
	if info.ANN != "" {
		r.Detail += fmt.Sprintf("; approximate index %s, recall@10 %.3f at efSearch %d", info.ANN, info.Recall, info.EfSearch)
	}
	if t.Elastic.URL != "" {
		r.Detail += "; cluster health " + health.String()
		if health.Status == "yellow" {
			// Searches go on from the primaries; the next lost node may
			// hold the last copy of a shard.
			r.Status = Warn
			r.Detail += ": searches are served, but a replica is missing, so losing another node may take the last copy of a shard"
			r.Fix = "bring the lost node back, or lower the index's replicas to the nodes left (Elasticsearch reassigns them)"
		}
	}
	return r, info
}

// Models checks the embedding model against the index and the chat
// model (with tryChat, by asking it for a token), with one listing of the
// server's models. chatModel "" skips the chat check.
func Models(ctx context.Context, client *llm.Client, chatModel string, tryChat bool, index embedindex.Info, how How) (emb, chat Result) {
	emb, chat = Result{Name: "embedder"}, Result{Name: "chat"}
	server := client.BaseURL()
	models, err := client.Models(ctx)
	if err != nil {
		fix := how["llm-url"]
		switch {
		case llm.Unreachable(err):
			fix = "start the model server (ollama serve), or correct " + how["llm-url"]
		case errors.Is(err, llm.ErrAuth):
			fix = how["llm-key"]
		}
		emb = failed(emb, fix, "%v", err)
		chat.Status, chat.Detail = Failed, "not checked: the model server at "+server+" failed (see embedder)"
		return emb, chat
	}
	listed := func(model string) bool {
		// Ollama lists "name:latest" for a model pulled as "name".
		return len(models) == 0 || slices.Contains(models, model) || slices.Contains(models, model+":latest")
	}
	listing := fmt.Sprintf("it lists %d models", len(models))
	if len(models) <= 8 {
		listing = "it lists: " + strings.Join(models, ", ")
	}

	if model := client.EmbedModel(); !listed(model) {
		emb = failed(emb, "pull it (ollama pull "+model+"), or correct "+how["embed-model"],
			"the model server at %s does not serve embedding model %s (%s)", server, model, listing)
	} else {
		emb = Embedder(ctx, client, index, how)
	}

	switch model := chatModel; {
	case model == "":
		chat.Status, chat.Detail, chat.Fix = Skipped, "no chat model configured", "set "+how["chat-model"]
	case !listed(model):
		chat = failed(chat, "pull it (ollama pull "+model+"), or correct "+how["chat-model"],
			"the model server at %s does not serve chat model %s (%s)", server, model, listing)
	case tryChat:
		t := time.Now()
		_, _, err := client.Chat(ctx, []llm.Message{{Role: llm.RoleUser, Content: "Say OK."}}, llm.ChatOptions{Model: model, MaxTokens: 1})
		if err != nil {
			chat = failed(chat, how["chat-model"], "%v", err)
			break
		}
		chat.Status, chat.Detail = OK, fmt.Sprintf("%s at %s answered a one-token chat in %d ms", model, server, time.Since(t).Milliseconds())
		// The modes that parse replies ask for JSON in the form found here.
		switch f, err := client.ProbeJSONFormat(ctx, model); {
		case err != nil:
			chat.Detail += fmt.Sprintf("; asking for JSON failed: %v", err)
		case f == llm.FormatPrompt:
			chat.Detail += "; JSON replies: asked for in the prompt only (the server takes no response_format)"
		default:
			chat.Detail += "; JSON replies: response_format " + f.String()
		}
	default:
		chat.Status, chat.Detail = OK, fmt.Sprintf("%s is served at %s (--try-chat to ask it)", model, server)
	}
	return emb, chat
}

// Embedder embeds one text and compares the vector with the index's.
func Embedder(ctx context.Context, client *llm.Client, index embedindex.Info, how How) Result {
	r := Result{Name: "embedder"}
	model := client.EmbedModel()
	vecs, err := client.Embed(ctx, []string{"kgrag doctor: a test sentence"})
	if err != nil {
		return failed(r, how["embed-model"], "%v", err)
	}
	dim := len(vecs[0])
	where := fmt.Sprintf("%s at %s", model, client.BaseURL())
	switch {
	case index.Dim == 0:
		r.Status, r.Detail = OK, fmt.Sprintf("%s: dimension %d (no index to compare with)", where, dim)
	case index.Model != "" && index.Model != model:
		r = failed(r, fmt.Sprintf("set %s to %s, or rebuild the index with kgrag embed --embed-model %s", how["embed-model"], index.Model, model),
			"%s: the index was built with %s, not %s", where, index.Model, model)
	case dim != index.Dim:
		r = failed(r, "rebuild the index with kgrag embed, using the same model and server as ask ("+how["embed-model"]+", "+how["llm-url"]+")",
			"%s: vectors of dimension %d, but the index holds dimension %d", where, dim, index.Dim)
	default:
		r.Status, r.Detail = OK, fmt.Sprintf("%s: dimension %d, as the index", where, dim)
	}
	return r
}

// Reports counts the community reports global search would read, up to
// level, in src (where names it).
func Reports(ctx context.Context, src retrieval.ReportSource, where string, level int64, how How) Result {
	r := Result{Name: "reports"}
	all, err := src.CommunityReports(ctx, level)
	if err != nil {
		r.Status, r.Detail = Failed, err.Error()
		return r
	}
	if len(all) == 0 {
		return failed(r, "global search reads community reports: index with them (GraphRAG's create_community_reports), or raise "+how["community-level"],
			"%s holds no community report up to level %d", where, level)
	}
	r.Status, r.Detail = OK, fmt.Sprintf("%s holds %d community reports up to level %d", where, len(all), level)
	return r
}

// Windows reports the chat model's window and what it means for the
// budgets of mode (o, as ask would run it), and the embedding model's
// window: said by the server, set by a flag, or measured by kgrag embed.
func Windows(ctx context.Context, client *llm.Client, chatModel, mode string, o engine.Options, enc *tokens.Encoder, how How) (chat, emb Result) {
	chat, emb = Result{Name: "chat window"}, Result{Name: "embedding window"}
	if chatModel == "" {
		chat.Status, chat.Detail, chat.Fix = Skipped, "no chat model configured", "set "+how["chat-model"]
	} else {
		w, err := client.Window(ctx, llm.WindowChat, chatModel)
		switch {
		case err != nil:
			chat = failed(chat, how["llm-url"], "%v", err)
		case !w.Known():
			chat.Status = Warn
			chat.Detail = fmt.Sprintf("%s on %s (%s): %s; kgrag learns it from the first prompt the server refuses, and sends max_tokens %d",
				chatModel, client.BaseURL(), w.Server, w, llm.AnswerReserve(w, o.Local.Chat.MaxTokens))
			chat.Fix = "set the window with " + how["chat-context-tokens"]
		default:
			chat.Status = OK
			chat.Detail = fmt.Sprintf("%s on %s (%s): %s", chatModel, client.BaseURL(), w.Server, w)
			notes, err := engine.FitNotes(mode, o, engine.Window{Window: w}, enc)
			switch {
			case err != nil:
				chat = failed(chat, how["chat-context-tokens"], "%s: %v", chat.Detail, err)
			case len(notes) > 0:
				// The notes name the window and its source.
				chat.Detail = fmt.Sprintf("%s on %s (%s), --mode %s: %s", chatModel, client.BaseURL(), w.Server, mode, strings.Join(notes, "; "))
			default:
				chat.Detail += fmt.Sprintf("; --mode %s's budgets fit, with %d tokens kept for the answer", mode, llm.AnswerReserve(w, o.Local.Chat.MaxTokens))
			}
		}
	}
	model := client.EmbedModel()
	w, err := client.Window(ctx, llm.WindowEmbed, model)
	if err != nil {
		return chat, failed(emb, how["llm-url"], "%v", err)
	}
	emb.Status, emb.Detail = OK, fmt.Sprintf("%s: the server says %s", model, w)
	if !w.Known() {
		emb.Detail = fmt.Sprintf("%s: %s", model, w)
	}
	if m, ok := client.Measured(llm.WindowEmbed, model); ok {
		emb.Detail += fmt.Sprintf("; measured: %s: longer texts are embedded in windows", m)
	} else if !w.Known() {
		emb.Status = Warn
		emb.Detail += "; not measured yet: kgrag embed measures it before it embeds"
		emb.Fix = "run kgrag embed, or set " + how["embed-max-tokens"]
	}
	return chat, emb
}
