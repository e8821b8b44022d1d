package embedindex

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/kgrag/kgrag/internal/atomicfile"
)

// CacheFile is the cache's file name inside an index directory.
const CacheFile = "embeddings.cache"

// cacheMagic opens a cache file; the byte after "KGEC" is the version.
var cacheMagic = [8]byte{'K', 'G', 'E', 'C', 0, 0, 0, 1}

// Cache maps sha256(model, text) to the text's vector, so a rerun of
// `kgrag embed` sends only texts that are new or changed, and a changed
// model misses every entry. It lives in one file, read whole by
// OpenCache and rewritten atomically by Save, which a long run may call
// as it goes so an interrupted run keeps what it paid for. After a
// complete run, Prune drops the entries it did not use, so texts that
// left the graph leave the cache. A Cache is safe for concurrent use.
type Cache struct {
	path string

	mu      sync.Mutex
	entries map[[32]byte][]float32
	used    map[[32]byte]bool
	dirty   bool
}

// CacheKey is the cache key of text under model.
func CacheKey(model, text string) [32]byte {
	h := sha256.New()
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(model)))
	h.Write(n[:])
	h.Write([]byte(model))
	h.Write([]byte(text))
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// OpenCache reads the cache at path; a missing file is an empty cache.
// An empty path is a cache held in memory only, which Save never writes.
// A file that is not a cache, or is cut short or corrupted, is an error
// naming it: delete it and the next run re-embeds everything.
func OpenCache(path string) (*Cache, error) {
	c := &Cache{path: path, entries: map[[32]byte][]float32{}, used: map[[32]byte]bool{}}
	if path == "" {
		return c, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("embedindex: open cache %s: %w", path, err)
	}
	defer f.Close()
	if err := c.read(bufio.NewReaderSize(f, 1<<20)); err != nil {
		return nil, fmt.Errorf("embedindex: read cache %s: %w (delete the file to rebuild the cache)", path, err)
	}
	return c, nil
}

func (c *Cache) read(r io.Reader) error {
	crc := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	tr := io.TeeReader(r, crc)
	var hdr struct {
		Magic [8]byte
		Count uint64
	}
	if err := binary.Read(tr, binary.LittleEndian, &hdr); err != nil {
		return truncated(err)
	}
	if hdr.Magic != cacheMagic {
		return errors.New("not a kgrag embedding cache (bad magic or version)")
	}
	for i := uint64(0); i < hdr.Count; i++ {
		var key [32]byte
		var dim uint32
		if _, err := io.ReadFull(tr, key[:]); err != nil {
			return truncated(err)
		}
		if err := binary.Read(tr, binary.LittleEndian, &dim); err != nil {
			return truncated(err)
		}
		if dim == 0 || dim > 1<<16 {
			return fmt.Errorf("entry %d: implausible dimension %d: corrupted", i, dim)
		}
		v := make([]float32, dim)
		if err := binary.Read(tr, binary.LittleEndian, v); err != nil {
			return truncated(err)
		}
		c.entries[key] = v
	}
	want := crc.Sum32()
	var got uint32
	if err := binary.Read(r, binary.LittleEndian, &got); err != nil {
		return truncated(err)
	}
	if got != want {
		return errors.New("checksum mismatch: corrupted")
	}
	return nil
}

func truncated(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("file ends early: truncated")
	}
	return err
}

// Get returns the vector of text under model and marks it used.
func (c *Cache) Get(model, text string) ([]float32, bool) {
	k := CacheKey(model, text)
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.entries[k]
	if ok {
		c.used[k] = true
	}
	return v, ok
}

// Put stores the vector of text under model.
func (c *Cache) Put(model, text string, vec []float32) {
	k := CacheKey(model, text)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries[k] = vec
	c.used[k] = true
	c.dirty = true
}

// Len is the number of entries held.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// Prune drops the entries not used (by Get or Put) since OpenCache and
// returns how many it dropped. Call it after a run that embedded every
// current text, before Save.
func (c *Cache) Prune() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for k := range c.entries {
		if !c.used[k] {
			delete(c.entries, k)
			n++
		}
	}
	if n > 0 {
		c.dirty = true
	}
	return n
}

// Save writes the cache file, replacing it atomically (temporary file,
// then rename) and creating its directory if needed. It writes nothing
// when nothing changed since OpenCache or the last Save.
func (c *Cache) Save(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dirty || c.path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(c.path), 0o755); err != nil {
		return fmt.Errorf("embedindex: save cache %s: %w", c.path, err)
	}
	f, err := atomicfile.Create(c.path)
	if err != nil {
		return fmt.Errorf("embedindex: save cache: %w", err)
	}
	defer f.Abort()
	crc := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	bw := bufio.NewWriterSize(f, 1<<20)
	w := io.MultiWriter(bw, crc)
	hdr := struct {
		Magic [8]byte
		Count uint64
	}{cacheMagic, uint64(len(c.entries))}
	if err := binary.Write(w, binary.LittleEndian, hdr); err != nil {
		return fmt.Errorf("embedindex: save cache %s: %w", c.path, err)
	}
	n := 0
	for k, v := range c.entries {
		if n++; n%4096 == 0 && ctx.Err() != nil {
			return fmt.Errorf("embedindex: save cache %s: %w", c.path, ctx.Err())
		}
		w.Write(k[:])
		binary.Write(w, binary.LittleEndian, uint32(len(v)))
		if err := binary.Write(w, binary.LittleEndian, v); err != nil {
			return fmt.Errorf("embedindex: save cache %s: %w", c.path, err)
		}
	}
	if err := binary.Write(bw, binary.LittleEndian, crc.Sum32()); err != nil {
		return fmt.Errorf("embedindex: save cache %s: %w", c.path, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("embedindex: save cache %s: %w", c.path, err)
	}
	if err := f.Commit(); err != nil {
		return fmt.Errorf("embedindex: save cache: %w", err)
	}
	c.dirty = false
	return nil
}

// Cached is an Embedder that answers from a Cache and sends only the
// misses, each distinct text once, to the Embedder below (typically a
// Batcher). It is safe for concurrent use.
type Cached struct {
	e     Embedder
	cache *Cache
	// counter, when not nil, counts the texts not sent below (hits and
	// repeats), so progress reaches the total while the Embedder below
	// counts the ones it embeds.
	counter Counter

	mu           sync.Mutex
	hits, misses int
}

var _ Embedder = (*Cached)(nil)

// NewCached returns e behind cache. counter, if not nil, gets the texts
// that are not sent to e.
func NewCached(e Embedder, cache *Cache, counter Counter) *Cached {
	return &Cached{e: e, cache: cache, counter: counter}
}

// Model is the model of the Embedder below.
func (c *Cached) Model() string { return c.e.Model() }

// Stats returns the texts answered from the cache and those embedded
// since NewCached.
func (c *Cached) Stats() (hits, misses int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.misses
}

// Embed returns the vectors of texts, embedding only the cache misses.
// The vectors it returns are shared with the cache: do not modify them.
func (c *Cached) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	model := c.e.Model()
	out := make([][]float32, len(texts))
	var todo []string
	where := map[string][]int{}
	for i, t := range texts {
		if v, ok := c.cache.Get(model, t); ok {
			out[i] = v
			continue
		}
		if _, seen := where[t]; !seen {
			todo = append(todo, t)
		}
		where[t] = append(where[t], i)
	}
	hits := len(texts)
	for _, t := range todo {
		hits -= len(where[t])
	}
	c.mu.Lock()
	c.hits += hits
	c.misses += len(todo)
	c.mu.Unlock()
	if n := len(texts) - len(todo); c.counter != nil && n > 0 {
		// Hits, and repeats of a text embedded once below.
		c.counter.Add(int64(n))
	}
	if len(todo) == 0 {
		return out, nil
	}
	vecs, err := c.e.Embed(ctx, todo)
	if err != nil {
		return nil, err
	}
	if len(vecs) != len(todo) {
		return nil, fmt.Errorf("embedindex: embed with %q: got %d vectors for %d texts", model, len(vecs), len(todo))
	}
	for j, t := range todo {
		c.cache.Put(model, t, vecs[j])
		for _, i := range where[t] {
			out[i] = vecs[j]
		}
	}
	return out, nil
}
