package embedindex_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/embedindex/flat"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
)

// Embed entity texts through a cache and a batcher, write a flat index,
// and find the entities nearest a question. The model server here is
// llmtest; kgrag's default is Ollama at llm.DefaultBaseURL.
func Example() {
	ctx := context.Background()
	srv := httptest.NewServer(llmtest.New(llmtest.Config{Dim: 64}))
	defer srv.Close()
	client, err := llm.New(llm.Config{BaseURL: srv.URL + "/v1", EmbedModel: "nomic-embed-text"})
	if err != nil {
		panic(err)
	}
	dir, _ := os.MkdirTemp("", "kgrag-example")
	defer os.RemoveAll(dir)

	ids := []string{"alice", "bob", "paris"}
	texts := []string{
		"ALICE: a cryptographer who sends secret messages to Bob",
		"BOB: a courier who receives messages",
		"PARIS: the capital city of France",
	}
	cache, err := embedindex.OpenCache(filepath.Join(dir, embedindex.CacheFile))
	if err != nil {
		panic(err)
	}
	emb := embedindex.NewCached(
		embedindex.NewBatcher(client.Embedder(), embedindex.BatchOptions{Size: 2, Concurrency: 2}),
		cache, nil)
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		panic(err)
	}
	if err := cache.Save(ctx); err != nil {
		panic(err)
	}
	path := filepath.Join(dir, "entities.vec")
	if err := flat.Write(ctx, path, emb.Model(), ids, vecs); err != nil {
		panic(err)
	}

	idx, err := flat.Open(ctx, path, flat.Options{})
	if err != nil {
		panic(err)
	}
	info := idx.Info()
	fmt.Println(info.Model, info.Dim, info.Count, info.Metric)
	hits, err := embedindex.Query(ctx, idx, client.Embedder(), "which city is the capital of France?", 2)
	if err != nil {
		panic(err)
	}
	fmt.Println(hits[0].ID)
	// Output:
	// nomic-embed-text 64 3 cosine
	// paris
}
