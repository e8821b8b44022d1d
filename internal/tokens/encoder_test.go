package tokens_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/internal/tokens"
)

// v3Text returns all the v3 sample's text units joined into one text,
// longer than the Encoder memoises, so every iteration of a benchmark
// splits and merges the whole text again.
func v3Text(b *testing.B) string {
	ds, err := graphrag.Open(context.Background(), filepath.Join(test.GraphRAGSamples(b), "v3"))
	if err != nil {
		b.Fatal(err)
	}
	var sb strings.Builder
	for _, u := range ds.TextUnits {
		sb.WriteString(u.Text)
		sb.WriteString("\n\n")
	}
	return sb.String()
}

// BenchmarkEncoderCount counts the tokens of v3Text.
func BenchmarkEncoderCount(b *testing.B) {
	benchEncoders(b, func(enc *tokens.Encoder, text string) int { return enc.Count(text) })
}

// BenchmarkEncoderTokens is BenchmarkEncoderCount for Tokens, which the
// chunker calls once per document: the tokens and spans of v3Text
// appended to a reused slice.
func BenchmarkEncoderTokens(b *testing.B) {
	var toks []tokens.Token
	benchEncoders(b, func(enc *tokens.Encoder, text string) int {
		toks = enc.AppendTokens(toks[:0], text)
		return len(toks)
	})
}

// benchEncoders times op on v3Text with each encoding; op returns the
// number of tokens.
func benchEncoders(b *testing.B, op func(enc *tokens.Encoder, text string) int) {
	text := v3Text(b)
	for _, name := range []string{tokens.EncodingCL100K, tokens.EncodingO200K} {
		b.Run(name, func(b *testing.B) {
			enc, err := tokens.NewEncoder(name)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(text)))
			b.ResetTimer()
			for range b.N {
				if op(enc, text) == 0 {
					b.Fatal("no tokens")
				}
			}
		})
	}
}

// TestHead checks Head against Count: the head is a prefix of whole
// characters within n tokens, and close to n when it cuts.
func TestHead(t *testing.T) {
	enc, err := tokens.NewEncoder(tokens.EncodingCL100K)
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{
		"Marley was dead, to begin with. There is no doubt whatever about that.",
		"Scrooge: « Bah ! » 日本語のテキストと emoji 🎄🎅 between words",
		"",
	}
	for _, s := range texts {
		total := enc.Count(s)
		for _, n := range []int{0, 1, 3, 7, total - 1, total, total + 5} {
			if n < 0 {
				continue
			}
			head, cut := enc.Head(s, n)
			switch {
			case !strings.HasPrefix(s, head) || !utf8.ValidString(head):
				t.Errorf("Head(%q, %d) = %q: not a prefix of whole characters", s, n, head)
			case enc.Count(head) > n:
				t.Errorf("Head(%q, %d) = %q: %d tokens", s, n, head, enc.Count(head))
			case cut != (total > n):
				t.Errorf("Head(%q, %d): cut %v with %d tokens in all", s, n, cut, total)
			case cut && enc.Count(head) < n-2:
				// The cut may fall a token short where one ends inside a
				// character or merges across the cut; not more.
				t.Errorf("Head(%q, %d) = %q: only %d tokens", s, n, head, enc.Count(head))
			}
		}
	}
}
