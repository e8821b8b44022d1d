package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/kgrag/kgrag/internal/atomicfile"
)

// WindowCacheFile is the cache's file name in the user's cache folder
// ($XDG_CACHE_HOME/kgrag, ~/.cache/kgrag).
const WindowCacheFile = "windows.json"

// WindowCache keeps on disk what no endpoint says and was learned at a
// cost: a chat window a server named when it refused a prompt, an
// embedding window measured by probing. Entries are keyed by server URL
// (without credentials), use and model. A nil *WindowCache
// keeps nothing. It is safe for concurrent use; a file another process
// writes meanwhile is read again before each write.
type WindowCache struct {
	path string
	mu   sync.Mutex
}

// windowEntry is one line of the cache file.
type windowEntry struct {
	Window
	URL     string    `json:"url"`
	Learned time.Time `json:"learned"`
}

// OpenWindowCache returns the cache kept in path; "" means the default
// file in the user's cache folder. The file need not exist.
func OpenWindowCache(path string) (*WindowCache, error) {
	if path == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Errorf("llm: window cache: %w", err)
		}
		path = filepath.Join(dir, "kgrag", WindowCacheFile)
	}
	return &WindowCache{path: path}, nil
}

// Path is the cache's file.
func (c *WindowCache) Path() string {
	if c == nil {
		return ""
	}
	return c.path
}

func (c *WindowCache) load() []windowEntry {
	b, err := os.ReadFile(c.path)
	if err != nil {
		return nil
	}
	var out []windowEntry
	if json.Unmarshal(b, &out) != nil {
		return nil // a damaged cache is a cold one
	}
	return out
}

// Get returns the window learned for model on the server at url: one
// measured in tiktoken's tokens (Window.Encoding set) when measured, else
// one the server named.
func (c *WindowCache) Get(url string, kind WindowKind, model string, measured bool) (Window, bool) {
	if c == nil {
		return Window{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.load() {
		if e.URL == url && e.Kind == kind && e.Model == model && e.Tokens > 0 && (e.Encoding != "") == measured {
			w := e.Window
			w.Source += fmt.Sprintf(" (learned %s, kept in %s)", e.Learned.Format("2006-01-02"), c.path)
			return w, true
		}
	}
	return Window{}, false
}

// Put records w for the server at url, replacing an entry of the same
// model and use. A cache that cannot be written is left as it was: the
// window is learned again next time.
func (c *WindowCache) Put(url string, w Window) error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	entries := c.load()
	kept := entries[:0]
	for _, e := range entries {
		if !(e.URL == url && e.Kind == w.Kind && e.Model == w.Model && e.Encoding == w.Encoding) {
			kept = append(kept, e)
		}
	}
	kept = append(kept, windowEntry{Window: w, URL: url, Learned: time.Now().UTC()})
	b, err := json.MarshalIndent(kept, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(c.path), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("llm: window cache: %w", err)
	}
	f, err := atomicfile.Create(c.path)
	if err != nil {
		return fmt.Errorf("llm: window cache: %w", err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Abort()
		return fmt.Errorf("llm: window cache: %w", err)
	}
	if err := f.Commit(); err != nil {
		return fmt.Errorf("llm: window cache: %w", err)
	}
	return nil
}
