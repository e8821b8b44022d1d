package embedindex_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/embedindex/flat"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
)

func client(t testing.TB, srv *llmtest.Server, model string) *llm.Client {
	t.Helper()
	c, err := llm.New(llm.Config{BaseURL: srv.URL(), EmbedModel: model, Backoff: time.Millisecond,
		Timeout: 5 * time.Second, HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type counter struct{ n atomic.Int64 }

func (c *counter) Add(n int64) { c.n.Add(n) }

func texts(n int, prefix string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s entity %d: description number %d", prefix, i, i*7)
	}
	return out
}

func TestBatcher(t *testing.T) {
	tests := []struct {
		n, size, conc int
		wantReqs      int
	}{
		{1000, 64, 3, 16},
		{64, 64, 2, 1},
		{65, 64, 2, 2},
		{5, 1, 1, 5},
		{0, 8, 2, 0},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d/%d/%d", tt.n, tt.size, tt.conc), func(t *testing.T) {
			srv := llmtest.Start(t, llmtest.Config{Dim: 8})
			// Slow every request a little so concurrent batches overlap.
			srv.FailN(tt.wantReqs, llmtest.Failure{Delay: 20 * time.Millisecond})
			var cnt counter
			b := embedindex.NewBatcher(client(t, srv, "m").Embedder(),
				embedindex.BatchOptions{Size: tt.size, Concurrency: tt.conc, Counter: &cnt})
			in := texts(tt.n, "x")
			got, err := b.Embed(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tt.n || cnt.n.Load() != int64(tt.n) {
				t.Fatalf("got %d vectors, counted %d; want %d", len(got), cnt.n.Load(), tt.n)
			}
			for i, v := range got {
				if want := llmtest.Embed("m", in[i], 8); v[0] != want[0] || v[7] != want[7] {
					t.Fatalf("vector %d is not the embedding of text %d", i, i)
				}
			}
			if n := srv.Count("/embeddings"); n != tt.wantReqs {
				t.Errorf("%d requests; want %d", n, tt.wantReqs)
			}
			for _, r := range srv.Requests() {
				if len(r.Inputs) > tt.size {
					t.Errorf("a request held %d texts; batch size is %d", len(r.Inputs), tt.size)
				}
			}
			if m := srv.MaxInFlight(); m > tt.conc || (tt.wantReqs >= tt.conc && tt.conc > 1 && m < 2) {
				t.Errorf("max in flight %d; want at most %d, and overlap", m, tt.conc)
			}
		})
	}
}

func TestBatcherError(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{Dim: 8})
	srv.Fail(llmtest.Failure{Status: 400, Message: "input too long"})
	b := embedindex.NewBatcher(client(t, srv, "m").Embedder(), embedindex.BatchOptions{Size: 10, Concurrency: 1})
	_, err := b.Embed(context.Background(), texts(100, "x"))
	if !errors.Is(err, llm.ErrRequest) || !strings.Contains(err.Error(), "texts 1..10 of 100") {
		t.Errorf("Embed with a refused batch: %v; want the llm error naming texts 1..10", err)
	}
	if n := srv.Count(""); n != 1 {
		t.Errorf("%d requests after the first failed; want 1 (the rest cancelled)", n)
	}
}

func TestCacheRerunEmbedsOnlyChanges(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{Dim: 8})
	path := filepath.Join(t.TempDir(), "idx", embedindex.CacheFile)
	run := func(model string, in []string) (hits, misses, inputs int, vecs [][]float32) {
		t.Helper()
		cache, err := embedindex.OpenCache(path)
		if err != nil {
			t.Fatal(err)
		}
		srv.Reset()
		var cnt counter
		e := embedindex.NewCached(embedindex.NewBatcher(client(t, srv, model).Embedder(),
			embedindex.BatchOptions{Size: 16, Counter: &cnt}), cache, &cnt)
		vecs, err = e.Embed(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		cache.Prune() // each run is complete
		if err := cache.Save(context.Background()); err != nil {
			t.Fatal(err)
		}
		if cnt.n.Load() != int64(len(in)) {
			t.Errorf("progress counted %d; want %d", cnt.n.Load(), len(in))
		}
		for _, r := range srv.Requests() {
			inputs += len(r.Inputs)
		}
		hits, misses = e.Stats()
		return hits, misses, inputs, vecs
	}
	first := texts(100, "a")
	first = append(first, first[0]) // a repeat is embedded once
	tests := []struct {
		name                string
		model               string
		in                  []string
		hits, misses, sends int
	}{
		{"cold", "m", first, 0, 100, 100},
		{"rerun", "m", first, 101, 0, 0},
		{"ten changed", "m", append(texts(90, "a"), texts(10, "b")...), 90, 10, 10},
		{"other model", "m2", texts(5, "a"), 0, 5, 5},
		{"dropped entries", "m", texts(20, "a"), 0, 20, 20}, // only the m2 run's entries were kept
	}
	for _, tt := range tests {
		hits, misses, sends, vecs := run(tt.model, tt.in)
		if hits != tt.hits || misses != tt.misses || sends != tt.sends {
			t.Errorf("%s: hits %d misses %d texts sent %d; want %d %d %d", tt.name, hits, misses, sends, tt.hits, tt.misses, tt.sends)
		}
		for i, v := range vecs {
			if want := llmtest.Embed(tt.model, tt.in[i], 8); v[3] != want[3] {
				t.Fatalf("%s: vector %d is not the embedding of its text", tt.name, i)
			}
		}
	}
}

func TestCacheKeepsUnusedUntilPruned(t *testing.T) {
	path := filepath.Join(t.TempDir(), embedindex.CacheFile)
	c, _ := embedindex.OpenCache(path)
	c.Put("m", "a", []float32{1})
	c.Put("m", "b", []float32{2})
	if err := c.Save(context.Background()); err != nil {
		t.Fatal(err)
	}
	c, _ = embedindex.OpenCache(path)
	c.Get("m", "a")
	c.Save(context.Background()) // an interrupted run saves as it goes
	c, _ = embedindex.OpenCache(path)
	if c.Len() != 2 {
		t.Fatalf("after a save without Prune the cache holds %d entries; want 2", c.Len())
	}
	c.Get("m", "b")
	if n := c.Prune(); n != 1 {
		t.Errorf("Prune() = %d; want 1", n)
	}
	c.Save(context.Background())
	c, _ = embedindex.OpenCache(path)
	if _, ok := c.Get("m", "b"); !ok || c.Len() != 1 {
		t.Errorf("after Prune and Save: %d entries, b present %v; want only b", c.Len(), ok)
	}
}

// TestCacheInMemory: a cache with no path serves what was put in it and
// writes nothing, not even into the working directory.
func TestCacheInMemory(t *testing.T) {
	t.Chdir(t.TempDir())
	c, err := embedindex.OpenCache("")
	if err != nil {
		t.Fatal(err)
	}
	c.Put("m", "a", []float32{1})
	if v, ok := c.Get("m", "a"); !ok || v[0] != 1 {
		t.Errorf("Get after Put = %v, %v; want [1], true", v, ok)
	}
	if err := c.Save(context.Background()); err != nil {
		t.Fatal(err)
	}
	if files, _ := os.ReadDir("."); len(files) != 0 {
		t.Errorf("Save of an in-memory cache wrote %v", files)
	}
}

func TestCacheBadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, embedindex.CacheFile)
	cache, _ := embedindex.OpenCache(path)
	cache.Put("m", "hello", []float32{1, 2, 3})
	cache.Put("m", "world", []float32{4, 5, 6})
	if err := cache.Save(context.Background()); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(path)
	for name, data := range map[string][]byte{
		"truncated": good[:len(good)-7],
		"flipped":   append(append([]byte(nil), good[:30]...), append([]byte{good[30] ^ 1}, good[31:]...)...),
		"not cache": []byte("KGVECIDX and more bytes here"),
	} {
		os.WriteFile(path, data, 0o644)
		_, err := embedindex.OpenCache(path)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "delete the file") {
			t.Errorf("OpenCache(%s) = %v; want an error naming %s and the fix", name, err, path)
		}
	}
}

func TestQueryMismatch(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{Dim: 8, Dims: map[string]int{"small": 4}})
	path := filepath.Join(t.TempDir(), "entities.vec")
	in := texts(10, "a")
	vecs, err := client(t, srv, "m").Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if err := flat.Write(context.Background(), path, "m", in, vecs); err != nil {
		t.Fatal(err)
	}
	idx, err := flat.Open(context.Background(), path, flat.Options{})
	if err != nil {
		t.Fatal(err)
	}

	hits, err := embedindex.Query(context.Background(), idx, client(t, srv, "m").Embedder(), in[3], 3)
	if err != nil || len(hits) != 3 || hits[0].ID != in[3] {
		t.Errorf("Query(text 3) = %v, %v; want text 3 first", hits, err)
	}

	srv.Reset()
	_, err = embedindex.Query(context.Background(), idx, client(t, srv, "other").Embedder(), "q", 3)
	var me *embedindex.MismatchError
	if !errors.Is(err, embedindex.ErrModelMismatch) || !errors.As(err, &me) ||
		!strings.Contains(err.Error(), `"m"`) || !strings.Contains(err.Error(), `"other"`) ||
		!strings.Contains(err.Error(), "--embed-model m") || !strings.Contains(err.Error(), path) {
		t.Errorf("Query with another model: %v; want ErrModelMismatch naming both models, the flag and the index", err)
	}
	if srv.Count("") != 0 {
		t.Errorf("a model mismatch sent %d requests; want it refused before embedding", srv.Count(""))
	}

	// Same name, other dimension: a model re-pulled at another size, or a
	// server that truncates.
	small := embedindex.Info{Model: "small", Dim: 8, Path: path}
	if err := embedindex.Check(small, "small", 4); !errors.Is(err, embedindex.ErrDimMismatch) ||
		!strings.Contains(err.Error(), "8-dimensional") || !strings.Contains(err.Error(), "gave 4") {
		t.Errorf("Check with 4 dims against 8: %v; want ErrDimMismatch naming both", err)
	}
	if err := embedindex.Check(small, "small", 8); err != nil {
		t.Errorf("Check of a match: %v", err)
	}
}
