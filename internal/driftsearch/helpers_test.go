package driftsearch_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/embedindex/flat"
	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/driftsearch"
	"github.com/kgrag/kgrag/internal/embedtext"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/llmcall"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/internal/test"
)

// The models the fixture's indexes are built with.
const (
	embedModel = "test-embed"
	chatModel  = "test-chat"
	dim        = 64
)

// fixture is a sample with its entities' and reports' flat indexes, built
// from the test server's deterministic embeddings as kgrag embed builds
// them ("title:description" by entity id, full content by community
// number), and a test server scripted as scripts/oracle/graphrag_search.py
// scripts GraphRAG's model.
type fixture struct {
	ds                *graphrag.Dataset
	srv               *llmtest.Server
	client            *llm.Client
	entities, reports embedindex.Index
	question          string
}

// newFixture opens sample. With visibleAt >= 0 the entities' index holds
// only the entities in a community at a level up to visibleAt: those
// GraphRAG's read_indexer_entities keeps.
func newFixture(t *testing.T, sample, question string, visibleAt int64) *fixture {
	t.Helper()
	ctx := context.Background()
	ds, err := graphrag.Open(ctx, filepath.Join(test.GraphRAGSamples(t), sample))
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{ds: ds, question: question, srv: llmtest.Start(t, llmtest.Config{Dim: dim})}
	dir := t.TempDir()
	var ids []string
	var vecs [][]float32
	visible := map[string]bool{}
	for _, c := range ds.Communities {
		if c.Level <= visibleAt {
			for _, id := range c.EntityIDs {
				visible[id] = true
			}
		}
	}
	for _, e := range ds.Entities {
		if !e.Placeholder && (visibleAt < 0 || visible[e.ID]) {
			ids, vecs = append(ids, e.ID), append(vecs, llmtest.Embed(embedModel, embedtext.Entity(e), dim))
		}
	}
	f.entities = writeIndex(t, filepath.Join(dir, "entities.vec"), ids, vecs)
	ids, vecs = nil, nil
	for _, c := range ds.Communities {
		if c.Report != nil {
			ids, vecs = append(ids, c.Community), append(vecs, llmtest.Embed(embedModel, c.Report.FullContent, dim))
		}
	}
	f.reports = writeIndex(t, filepath.Join(dir, "community_reports.vec"), ids, vecs)
	f.srv.Respond(f.reply)
	f.client, err = llm.New(llm.Config{BaseURL: f.srv.URL(), ChatModel: chatModel, EmbedModel: embedModel, HTTPClient: f.srv.Client(),
		Retries: -1, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func writeIndex(t *testing.T, path string, ids []string, vecs [][]float32) embedindex.Index {
	t.Helper()
	ctx := context.Background()
	if err := flat.Write(ctx, path, embedModel, ids, vecs); err != nil {
		t.Fatal(err)
	}
	idx, err := flat.Open(ctx, path, flat.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

// callKind tells kgrag's DRIFT calls apart by their prompts.
func callKind(r llmtest.Request) string {
	if len(r.Messages) == 1 && strings.HasPrefix(r.Messages[0].Content, "Write a hypothetical answer") {
		return "expand"
	}
	if len(r.Messages) == 1 && strings.Contains(r.Messages[0].Content, "---Reports---") {
		return "primer"
	}
	if len(r.Messages) == 2 && strings.Contains(r.Messages[0].Content, "The larger question is") {
		return "local"
	}
	if len(r.Messages) == 2 && strings.Contains(r.Messages[0].Content, "---Research---") {
		return "reduce"
	}
	return ""
}

// reply is the scripted model, word for word the oracle's Scripted.
func (f *fixture) reply(r llmtest.Request) (string, bool) {
	switch callKind(r) {
	case "expand":
		return "Hypothetical: " + f.question, true
	case "primer":
		return primerReply(f.ds, r.Messages[0].Content), true
	case "local":
		return localReply(r.Messages[1].Content, r.Messages[0].Content), true
	case "reduce":
		return "Final answer.", true
	}
	return "", false
}

func primerReply(ds *graphrag.Dataset, prompt string) string {
	type rep struct{ id, title string }
	var found []rep
	for _, c := range ds.Communities {
		if c.Report != nil && c.Report.FullContent != "" && strings.Contains(prompt, c.Report.FullContent) {
			found = append(found, rep{c.Community, c.Report.Title})
		}
	}
	slices.SortFunc(found, func(a, b rep) int {
		x, _ := strconv.Atoi(a.id)
		y, _ := strconv.Atoi(b.id)
		return cmp.Compare(x, y)
	})
	ids := make([]string, len(found))
	follow := make([]string, len(found))
	for i, r := range found {
		ids[i], follow[i] = r.id, "What is said about "+r.title+"?"
	}
	return mustJSON(map[string]any{"intermediate_answer": "Primer over reports " + strings.Join(ids, ","),
		"score": 40 + len(ids), "follow_up_queries": follow})
}

func localReply(query, context string) string {
	entity, source := firstIDs(context)
	follow := []string{}
	if entity != "" {
		follow = append(follow, "Tell me more about "+entity+".")
	}
	if source != "" {
		follow = append(follow, "What else happens around passage "+source+"?")
	}
	return mustJSON(map[string]any{"response": "Answer to: " + query, "score": 50, "follow_up_queries": follow})
}

// firstIDs are the first entity title and source id of a local context.
func firstIDs(context string) (entity, source string) {
	first := func(table string, col int) string {
		_, rest, ok := strings.Cut(context, "-----"+table+"-----\n")
		if !ok {
			return ""
		}
		rows := strings.SplitN(rest, "\n", 3)
		if len(rows) < 2 || strings.TrimSpace(rows[1]) == "" || strings.HasPrefix(rows[1], "-----") {
			return ""
		}
		fields := strings.Split(rows[1], "|")
		if len(fields) < 2 {
			return ""
		}
		return fields[col]
	}
	return first("Entities", 1), first("Sources", 0)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// searcher is a DRIFT searcher over the fixture's sample in memory.
func (f *fixture) searcher(t *testing.T, chat llmcall.Streamer, opts driftsearch.Options) *driftsearch.Searcher {
	t.Helper()
	return f.searcherOver(t, retrieval.NewMemorySource(f.ds), chat, opts)
}

func (f *fixture) searcherOver(t *testing.T, src driftsearch.Source, chat llmcall.Streamer, opts driftsearch.Options) *driftsearch.Searcher {
	t.Helper()
	opts.Chat.Model = chatModel
	s, err := driftsearch.New(src, f.entities, f.reports, f.client.Embedder(), chat, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// kinds counts the chat requests the server got, by kind.
func kinds(srv *llmtest.Server) map[string]int {
	out := map[string]int{}
	for _, r := range srv.Requests() {
		if strings.HasSuffix(r.Path, "/chat/completions") {
			out[cmp.Or(callKind(r), fmt.Sprintf("unknown %q", r.Messages))]++
		}
	}
	return out
}
