package embedindex_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/embedindex/flat"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/tokens"
)

func encoder(t *testing.T) *tokens.Encoder {
	t.Helper()
	enc, err := tokens.NewEncoder(tokens.EncodingCL100K)
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

// numbered is a text of n words, "w1 w2 ...", each one token or two.
func numbered(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "w%d", i+1)
	}
	return b.String()
}

func TestSplit(t *testing.T) {
	enc := encoder(t)
	text := numbered(700) + " Straße 東京 🎄"
	tests := []struct {
		size, overlap int
	}{
		{100, 12}, {333, 41}, {64, 0}, {5000, 100}, {50, 40},
	}
	for _, tt := range tests {
		parts := embedindex.Split(enc, text, tt.size, tt.overlap)
		n := enc.Count(text)
		if n <= tt.size {
			if len(parts) != 1 || parts[0] != text {
				t.Errorf("Split(size %d) of a text of %d tokens = %d parts; want the text itself", tt.size, n, len(parts))
			}
			continue
		}
		for i, p := range parts {
			if c := enc.Count(p); c > tt.size {
				t.Errorf("size %d: window %d has %d tokens", tt.size, i, c)
			}
			if !strings.Contains(text, p) {
				t.Errorf("size %d: window %d is not a substring of the text", tt.size, i)
			}
		}
		// Every word is in some window, the first and the last included.
		for _, w := range strings.Fields(text) {
			if !slices.ContainsFunc(parts, func(p string) bool { return strings.Contains(p, w) }) {
				t.Errorf("size %d: %q is in no window", tt.size, w)
				break
			}
		}
		if !strings.HasPrefix(text, parts[0]) || !strings.HasSuffix(text, parts[len(parts)-1]) {
			t.Errorf("size %d: the windows do not start and end with the text", tt.size)
		}
	}
}

func TestWindowIDs(t *testing.T) {
	for _, id := range []string{"8a3f", "e:1", "", "ALICE#w1"} {
		for n := range 3 {
			w := embedindex.WindowID(id, n)
			if got := embedindex.TextID(w); got != id {
				t.Errorf("TextID(WindowID(%q, %d)) = %q", id, n, got)
			}
			if embedindex.IsWindowID(w) != (n > 0) {
				t.Errorf("IsWindowID(WindowID(%q, %d)) = %v", id, n, !(n > 0))
			}
		}
	}
}

// TestFlatSearchDistinct: an index holding several windows of a text
// returns the text once, by its best window, and still k texts.
func TestFlatSearchDistinct(t *testing.T) {
	ctx := context.Background()
	vec := func(x, y float32) []float32 { return []float32{x, y, 0} }
	ids := []string{"a", embedindex.WindowID("a", 1), embedindex.WindowID("a", 2), "b", "c", embedindex.WindowID("c", 1)}
	vecs := [][]float32{vec(1, 0.1), vec(1, 0.01), vec(1, 0.05), vec(1, 0.5), vec(0.1, 1), vec(1, 0.2)}
	path := filepath.Join(t.TempDir(), "x.vec")
	if err := flat.Write(ctx, path, "m", ids, vecs); err != nil {
		t.Fatal(err)
	}
	idx, err := flat.Open(ctx, path, flat.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	if w := idx.Info().Windows; w != 3 {
		t.Errorf("Info().Windows = %d; want 3", w)
	}
	hits, err := idx.Search(ctx, vec(1, 0), 3)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hits {
		got = append(got, h.ID)
	}
	if want := []string{"a", "c", "b"}; !slices.Equal(got, want) {
		t.Errorf("Search = %q; want %q (a by its window 1, c by its window 1)", got, want)
	}
}

// TestWhole: a text over the window gets the weighted mean of its
// windows, of unit length, close to each window; a short one its own.
func TestWhole(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{Dim: 32})
	c, err := llm.New(llm.Config{BaseURL: srv.URL(), EmbedModel: "e", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	enc := encoder(t)
	long, short := numbered(300), "a short text"
	got, err := embedindex.Whole(context.Background(), c.Embedder(), enc, []string{long, short}, 100)
	if err != nil {
		t.Fatal(err)
	}
	if s := embedindex.Cosine(got[1], llmtest.Embed("e", short, 32)); s < 0.99999 {
		t.Errorf("the short text's vector is not its own (cosine %.5f)", s)
	}
	var n float64
	for _, x := range got[0] {
		n += float64(x) * float64(x)
	}
	if n < 0.9999 || n > 1.0001 {
		t.Errorf("the mean has squared length %.5f; want 1", n)
	}
	for i, p := range embedindex.Split(enc, long, 100, embedindex.Overlap(100)) {
		if s := embedindex.Cosine(got[0], llmtest.Embed("e", p, 32)); s <= 0 {
			t.Errorf("window %d: cosine with the mean %.3f; want positive", i, s)
		}
	}
}

// TestProbeWindow: the probe finds a window the server cuts at silently
// and one it refuses beyond, to within a few tokens, and says when the
// whole text was read.
func TestProbeWindow(t *testing.T) {
	enc := encoder(t)
	text := numbered(1200)
	refused := func(err error) bool {
		var we *llm.WindowError
		return errors.As(err, &we)
	}
	tests := []struct {
		name     string
		cfg      llmtest.Config
		wantLo   int // the probe's Tokens, in cl100k tokens, within [wantLo, wantHi]
		wantHi   int
		atLeast  bool
		refusing bool
	}{
		// 300 words of "wN" are 600 cl100k tokens ("w" and the number).
		{"cuts silently", llmtest.Config{EmbedWindow: 300}, 600 - 16, 600, false, false},
		{"refuses", llmtest.Config{EmbedWindow: 300, EmbedRefuse: true}, 600 - 16, 600, false, true},
		{"reads it all", llmtest.Config{}, enc.Count(text), enc.Count(text), true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Dim = 32
			srv := llmtest.Start(t, tt.cfg)
			c, err := llm.New(llm.Config{BaseURL: srv.URL(), EmbedModel: "e", HTTPClient: srv.Client(), Retries: -1})
			if err != nil {
				t.Fatal(err)
			}
			p, err := embedindex.ProbeWindow(context.Background(), c.Embedder(), enc, text, refused)
			if err != nil {
				t.Fatal(err)
			}
			if p.Tokens < tt.wantLo || p.Tokens > tt.wantHi || p.AtLeast != tt.atLeast || p.Refuses != tt.refusing {
				t.Errorf("ProbeWindow = %+v; want Tokens in [%d, %d], AtLeast %v, Refuses %v", p, tt.wantLo, tt.wantHi, tt.atLeast, tt.refusing)
			}
			if p.Calls > 14 {
				t.Errorf("%d embedding calls; want a binary search's dozen at most", p.Calls)
			}
		})
	}
}
