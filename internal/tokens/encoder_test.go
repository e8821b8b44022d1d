package tokens_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

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
