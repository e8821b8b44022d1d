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

// BenchmarkEncoderCount counts the tokens of all the v3 sample's text
// units joined into one text, longer than the Encoder memoises, so every
// iteration splits and merges the whole text again.
func BenchmarkEncoderCount(b *testing.B) {
	ds, err := graphrag.Open(context.Background(), filepath.Join(test.GraphRAGSamples(b), "v3"))
	if err != nil {
		b.Fatal(err)
	}
	var sb strings.Builder
	for _, u := range ds.TextUnits {
		sb.WriteString(u.Text)
		sb.WriteString("\n\n")
	}
	text := sb.String()
	for _, name := range []string{tokens.EncodingCL100K, tokens.EncodingO200K} {
		b.Run(name, func(b *testing.B) {
			enc, err := tokens.NewEncoder(name)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(text)))
			b.ResetTimer()
			for range b.N {
				if enc.Count(text) == 0 {
					b.Fatal("no tokens")
				}
			}
		})
	}
}
