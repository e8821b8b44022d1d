package llmcache_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/llmcache"
)

func client(t *testing.T, srv *llmtest.Server) *llm.Client {
	t.Helper()
	c, err := llm.New(llm.Config{BaseURL: srv.URL(), ChatModel: "m", HTTPClient: srv.Client(), Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func msgs(q string) []llm.Message {
	return []llm.Message{{Role: llm.RoleSystem, Content: "sys"}, {Role: llm.RoleUser, Content: q}}
}

// TestChatCaches: the same request is answered once by the server, then
// from disk, also by a second Cache on the same directory (a new
// process); any change that can change the reply is a new request.
func TestChatCaches(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{})
	dir := t.TempDir()
	c, err := llmcache.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	chat := c.Wrap(client(t, srv), "m")
	zero, one := float32(0), float32(1)
	variants := []struct {
		q    string
		opts llm.ChatOptions
	}{
		{"q", llm.ChatOptions{}},
		{"q2", llm.ChatOptions{}},
		{"q", llm.ChatOptions{Temperature: &zero}},
		{"q", llm.ChatOptions{Temperature: &one}},
		{"q", llm.ChatOptions{MaxTokens: 5}},
		{"q", llm.ChatOptions{JSON: true}},
		{"q", llm.ChatOptions{JSON: true, JSONSchema: []byte(`{"type":"object"}`)}},
		{"q", llm.ChatOptions{Model: "other"}},
	}
	ctx := context.Background()
	for round := range 2 {
		for i, v := range variants {
			got, _, err := chat.Chat(ctx, msgs(v.q), v.opts)
			if err != nil {
				t.Fatal(err)
			}
			if want := "echo: " + v.q; got != want {
				t.Errorf("round %d variant %d: %q; want %q", round, i, got, want)
			}
		}
	}
	if n := srv.Count("/chat/completions"); n != len(variants) {
		t.Errorf("%d server calls for %d distinct requests asked twice; want %d", n, len(variants), len(variants))
	}
	if s := c.Stats(); s.Hits != int64(len(variants)) || s.Misses != int64(len(variants)) {
		t.Errorf("stats %+v; want %d hits and misses", s, len(variants))
	}

	// A second process on the same directory.
	c2, err := llmcache.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	srv.Reset()
	for _, v := range variants {
		if _, _, err := c2.Wrap(client(t, srv), "m").Chat(ctx, msgs(v.q), v.opts); err != nil {
			t.Fatal(err)
		}
	}
	if n := srv.Count(""); n != 0 {
		t.Errorf("a new Cache on the same directory made %d calls; want 0", n)
	}
}

// TestChatErrorsNotCached: a failed call leaves no entry, so the next run
// asks again.
func TestChatErrorsNotCached(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{})
	c, _ := llmcache.Open(t.TempDir())
	cl, _ := llm.New(llm.Config{BaseURL: srv.URL(), ChatModel: "m", HTTPClient: srv.Client(), Retries: -1})
	chat := c.Wrap(cl, "m")
	srv.Fail(llmtest.Failure{Status: 500})
	if _, _, err := chat.Chat(context.Background(), msgs("q"), llm.ChatOptions{}); err == nil {
		t.Fatal("no error from a failing server")
	}
	got, _, err := chat.Chat(context.Background(), msgs("q"), llm.ChatOptions{})
	if err != nil || got != "echo: q" || srv.Count("/chat/completions") != 2 {
		t.Errorf("after a failure: %q, %v, %d calls; want the reply from a second call", got, err, srv.Count("/chat/completions"))
	}
}

// TestConcurrent: many goroutines asking overlapping questions get the
// right replies and leave one entry per question.
func TestConcurrent(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{})
	dir := t.TempDir()
	c, _ := llmcache.Open(dir)
	chat := c.Wrap(client(t, srv), "m")
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				q := fmt.Sprint("q", (i+g)%10)
				got, _, err := chat.Chat(context.Background(), msgs(q), llm.ChatOptions{})
				if err != nil || got != "echo: "+q {
					t.Errorf("%q: %q, %v", q, got, err)
				}
			}
		}()
	}
	wg.Wait()
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.json"))
	if len(files) != 10 {
		t.Errorf("%d entries; want 10", len(files))
	}
	tmp, _ := filepath.Glob(filepath.Join(dir, "*", "*.tmp*"))
	if len(tmp) != 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}

// TestCorruptEntry: an entry that is not whole (a machine crash before it
// reached the disk) is a miss, counted, never a reply; the call is made
// again and the entry rewritten.
func TestCorruptEntry(t *testing.T) {
	dir := t.TempDir()
	c, _ := llmcache.Open(dir)
	key := llmcache.Key("m", msgs("q"), llm.ChatOptions{})
	p := filepath.Join(dir, key[:2], key+".json")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte("{half"), 0o644)
	if reply, _, ok, err := c.Get(key); ok || err != nil || reply != "" {
		t.Fatalf("Get of a corrupt entry: %q, %v, %v; want a miss", reply, ok, err)
	}
	if st := c.Stats(); st.Corrupt != 1 || st.Misses != 1 {
		t.Errorf("stats %+v; want 1 miss, corrupt", st)
	}
	if err := c.Put(key, "m", "whole", llm.Usage{}); err != nil {
		t.Fatal(err)
	}
	if reply, _, ok, err := c.Get(key); !ok || err != nil || reply != "whole" {
		t.Errorf("after Put: %q, %v, %v; want the new reply", reply, ok, err)
	}
}
