// Package llmcache keeps model replies on disk, keyed by a hash of the
// request, so that a long job (kgrag index makes thousands of calls) that
// is interrupted and started again pays for no call twice, and a re-run
// with the same inputs and prompts costs nothing.
//
// A request's key is the SHA-256 of everything that can change the reply:
// the model, the messages, and the options sent with them (temperature,
// max tokens, seed, stop words, JSON mode and schema). Each reply is one
// small JSON file under dir/xx/, written to a temporary name and renamed,
// so a process killed mid-write leaves no broken entry, and several
// processes may share a cache. Entries are not synced to disk one by one:
// that cost more than the rest of a call's own work, and after a crash of
// the machine an entry that did not reach the disk whole is read as a
// miss (counted in Stats.Corrupt) and asked again, never as a reply.
package llmcache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llmcall"
)

// Cache is a directory of cached replies. It is safe for concurrent use,
// also by several processes.
type Cache struct {
	dir                   string
	hits, misses, corrupt atomic.Int64
	seq                   atomic.Int64 // temporary file names
	// shards says which dir/xx folders exist, so that Put makes each once.
	shards [256]atomic.Bool
}

// Open opens the cache in dir, creating it if needed.
func Open(dir string) (*Cache, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("llmcache: %w", err)
	}
	return &Cache{dir: dir}, nil
}

// Dir is the cache's directory.
func (c *Cache) Dir() string { return c.dir }

// Stats are the lookups since Open. Corrupt counts the misses that found
// an entry they could not read (a machine crash mid-write).
type Stats struct{ Hits, Misses, Corrupt int64 }

// Stats returns the hits and misses so far.
func (c *Cache) Stats() Stats { return Stats{c.hits.Load(), c.misses.Load(), c.corrupt.Load()} }

// request is what a key hashes: every field that can change a reply.
type request struct {
	Model       string          `json:"model"`
	Messages    []llm.Message   `json:"messages"`
	Temperature *float32        `json:"temperature,omitempty"`
	MaxTokens   int             `json:"max_tokens,omitempty"`
	Seed        *int            `json:"seed,omitempty"`
	Stop        []string        `json:"stop,omitempty"`
	JSON        bool            `json:"json,omitempty"`
	JSONSchema  json.RawMessage `json:"json_schema,omitempty"`
}

// Key returns the cache key of a chat request to model (the model the
// server is asked for: ChatOptions.Model when set).
func Key(model string, msgs []llm.Message, opts llm.ChatOptions) string {
	if opts.Model != "" {
		model = opts.Model
	}
	b, _ := json.Marshal(request{model, msgs, opts.Temperature, opts.MaxTokens, opts.Seed, opts.Stop, opts.JSON, opts.JSONSchema})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// entry is one cached reply as stored.
type entry struct {
	Reply   string    `json:"reply"`
	Usage   llm.Usage `json:"usage"`
	Model   string    `json:"model"`
	Created time.Time `json:"created"`
}

func (c *Cache) path(key string) string { return filepath.Join(c.dir, key[:2], key+".json") }

// Get returns the reply stored under key. A missing entry is no error,
// nor is one that is not whole (a miss, counted in Stats.Corrupt); a file
// that cannot be read at all is.
func (c *Cache) Get(key string) (string, llm.Usage, bool, error) {
	b, err := os.ReadFile(c.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		c.misses.Add(1)
		return "", llm.Usage{}, false, nil
	}
	if err != nil {
		return "", llm.Usage{}, false, fmt.Errorf("llmcache: %w", err)
	}
	var e entry
	if err := json.Unmarshal(b, &e); err != nil {
		c.misses.Add(1)
		c.corrupt.Add(1)
		return "", llm.Usage{}, false, nil
	}
	c.hits.Add(1)
	return e.Reply, e.Usage, true, nil
}

// Put stores reply under key.
func (c *Cache) Put(key, model, reply string, usage llm.Usage) error {
	p := c.path(key)
	if err := c.shard(key); err != nil {
		return err
	}
	b, err := json.Marshal(entry{Reply: reply, Usage: usage, Model: model, Created: time.Now().UTC()})
	if err != nil {
		return fmt.Errorf("llmcache: %w", err)
	}
	// A name of its own per writer: two processes may store the same key.
	tmp := fmt.Sprintf("%s.%d-%d.tmp", p, os.Getpid(), c.seq.Add(1))
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("llmcache: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("llmcache: %w", err)
	}
	return nil
}

// shard makes key's folder, once per Cache.
func (c *Cache) shard(key string) error {
	n, err := strconv.ParseUint(key[:2], 16, 8)
	if err != nil {
		return fmt.Errorf("llmcache: key %q: %w", key, err)
	}
	if c.shards[n].Load() {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(c.path(key)), 0o755); err != nil {
		return fmt.Errorf("llmcache: %w", err)
	}
	c.shards[n].Store(true)
	return nil
}

// Chat is next seen through the cache: a cached reply is returned without
// a call; otherwise next is asked and its reply stored. model is the
// model next uses when ChatOptions.Model is empty.
type Chat struct {
	cache *Cache
	next  llmcall.Chatter
	model string
}

// Wrap returns next seen through c.
func (c *Cache) Wrap(next llmcall.Chatter, model string) *Chat {
	return &Chat{cache: c, next: next, model: model}
}

// Chat implements Chatter. Errors are not cached. An error writing the
// cache is returned with the reply, which is still good.
func (w *Chat) Chat(ctx context.Context, msgs []llm.Message, opts llm.ChatOptions) (string, llm.Usage, error) {
	key := Key(w.model, msgs, opts)
	if reply, usage, ok, err := w.cache.Get(key); err != nil || ok {
		return reply, usage, err
	}
	reply, usage, err := w.next.Chat(ctx, msgs, opts)
	if err != nil {
		return "", llm.Usage{}, err
	}
	model := w.model
	if opts.Model != "" {
		model = opts.Model
	}
	return reply, usage, w.cache.Put(key, model, reply, usage)
}
