package indexer_test

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kgrag/kgrag/internal/indexer"
	"github.com/kgrag/kgrag/internal/indexer/indexertest"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llmcall"
	"github.com/kgrag/kgrag/internal/tokens"
)

// TestRunFitsWindow indexes with GraphRAG's default chunks under windows
// of several sizes and counts, on what the server received, that every
// call's prompt and max_tokens fit the window.
func TestRunFitsWindow(t *testing.T) {
	enc, err := tokens.NewEncoder(indexer.DefaultOptions().Encoding)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		window int
		cut    bool // chunks cut below GraphRAG's 1,200 tokens
	}{
		{"llama-cpp-python's 2048", 2048, true},
		{"Ollama's default 4096", 4096, false},
		{"unknown", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, client := indexertest.Model(t)
			opts := carolOptions(t, 3000)
			opts.Chunk = indexer.DefaultOptions().Chunk
			opts.Window = llm.Window{Tokens: tt.window, Source: "test"}
			sum, ds := runAndOpen(t, client, opts)
			reserve := llm.AnswerReserve(opts.Window, 0)
			for i, r := range srv.Requests() {
				n := 0
				for _, m := range r.Messages {
					n += enc.Count(m.Content) + 4
				}
				mt := 0
				if v, ok := r.Extra["max_tokens"].(float64); ok {
					mt = int(v)
				}
				if tt.window == 0 {
					if mt != 0 {
						t.Errorf("call %d: max_tokens %d with the window unknown; want none, as before windows were known", i+1, mt)
					}
					continue
				}
				if need := int(math.Ceil(float64(n)*llm.DefaultTokenRatio)) + mt; need > tt.window || mt != reserve {
					t.Errorf("call %d (%s): %d prompt tokens and max_tokens %d need %d of the %d window; want max_tokens %d, all within",
						i+1, indexertest.Kind(r), n, mt, need, tt.window, reserve)
				}
			}
			largest := 0
			for _, u := range ds.TextUnits {
				largest = max(largest, int(u.NTokens))
			}
			noted := strings.Contains(strings.Join(sum.Degraded, "\n"), "chunks: ")
			if tt.cut != (largest < 1200) || noted != tt.cut {
				t.Errorf("largest text unit %d tokens, chunks noted %v (%q); want cut %v", largest, noted, sum.Degraded, tt.cut)
			}
			if sum.Entities == 0 || sum.Reports == 0 {
				t.Errorf("%d entities, %d reports; want some of each", sum.Entities, sum.Reports)
			}
			t.Logf("window %d: %d text units (largest %d tokens), %d calls; %q", tt.window, len(ds.TextUnits), largest, len(srv.Requests()), sum.Degraded)
		})
	}

	t.Run("through the cache", func(t *testing.T) {
		// The reply cache (on by default) sits over the fitting: every
		// call must still name the window its prompt needs (Ollama's
		// num_ctx), within the window.
		_, client := indexertest.Model(t)
		rec := &contextRecorder{next: client}
		opts := carolOptions(t, 900)
		opts.CacheDir = filepath.Join(t.TempDir(), "cache")
		opts.Window = llm.Window{Tokens: 4096, Source: "test"}
		runAndOpen(t, rec, opts)
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if len(rec.contexts) == 0 {
			t.Fatal("no call reached the model")
		}
		for i, n := range rec.contexts {
			if n <= 0 || n > 4096 {
				t.Errorf("call %d named a window of %d tokens; want 1 to 4096", i+1, n)
			}
		}
	})

	t.Run("too small", func(t *testing.T) {
		srv, client := indexertest.Model(t)
		opts := carolOptions(t, 300)
		opts.Window = llm.Window{Tokens: 1024, Source: "test"}
		_, err := indexer.Run(t.Context(), client, opts)
		var small *indexer.WindowTooSmallError
		if !errors.As(err, &small) || small.Stage != indexer.StageExtraction || !strings.Contains(err.Error(), "1024 tokens (test)") {
			t.Errorf("Run in a 1024-token window: %v; want a WindowTooSmallError naming the extraction and the window", err)
		}
		if _, err := os.Stat(opts.Output); err == nil || srv.Count("") != 0 {
			t.Errorf("a refused run made its output or called the model %d times", srv.Count(""))
		}
	})
}

// contextRecorder records the window each call names
// (llm.ChatOptions.ContextTokens) before passing it on.
type contextRecorder struct {
	next     llmcall.Chatter
	mu       sync.Mutex
	contexts []int
}

func (c *contextRecorder) Chat(ctx context.Context, msgs []llm.Message, opts llm.ChatOptions) (string, llm.Usage, error) {
	c.mu.Lock()
	c.contexts = append(c.contexts, opts.ContextTokens)
	c.mu.Unlock()
	return c.next.Chat(ctx, msgs, opts)
}
