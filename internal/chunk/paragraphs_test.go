package chunk_test

import (
	"strings"
	"testing"

	"github.com/kgrag/kgrag/internal/chunk"
	"github.com/kgrag/kgrag/internal/documents"
	"github.com/kgrag/kgrag/internal/indexer/indexertest"
	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/internal/tokens"
)

// TestParagraphsCoverAndFit: without overlap the chunks of every stave
// are the stave's text end to end, each within Size tokens unless it is
// part of a paragraph longer than that.
func TestParagraphsCoverAndFit(t *testing.T) {
	enc := encoder(t, tokens.EncodingO200K)
	staves, err := indexertest.SplitStaves(test.ChristmasCarol(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{50, 300, 1200} {
		c, err := chunk.New(enc, chunk.Options{Size: size, Strategy: chunk.StrategyParagraphs})
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range staves {
			units := c.Document(documents.Document{ID: "d", Text: s})
			var b strings.Builder
			for _, u := range units {
				b.WriteString(u.Text)
				if u.NTokens > size {
					t.Errorf("size %d, stave %d: chunk %d has %d tokens", size, i+1, u.Index, u.NTokens)
				}
			}
			if b.String() != s {
				t.Errorf("size %d, stave %d: the chunks do not make up the text (%d of %d bytes)", size, i+1, b.Len(), len(s))
			}
		}
	}
}

// TestParagraphsEditIsLocal edits one sentence in the middle of a stave:
// with paragraph chunks only the chunks near the edit change, where
// GraphRAG's token windows change every chunk after it.
func TestParagraphsEditIsLocal(t *testing.T) {
	enc := encoder(t, tokens.EncodingO200K)
	staves, err := indexertest.SplitStaves(test.ChristmasCarol(t))
	if err != nil {
		t.Fatal(err)
	}
	orig := staves[1]
	edited := strings.Replace(orig, "The curtains of his bed were drawn aside", "The curtains of his bed were flung aside", 1)
	changed := func(strategy string) (int, int) {
		c, err := chunk.New(enc, chunk.Options{Size: 300, Overlap: 30, Strategy: strategy})
		if err != nil {
			t.Fatal(err)
		}
		before := map[string]bool{}
		for _, u := range c.Document(documents.Document{ID: "d", Text: orig}) {
			before[u.ID] = true
		}
		units := c.Document(documents.Document{ID: "d", Text: edited})
		n := 0
		for _, u := range units {
			if !before[u.ID] {
				n++
			}
		}
		return n, len(units)
	}
	tn, tt := changed(chunk.StrategyTokens)
	pn, pt := changed(chunk.StrategyParagraphs)
	t.Logf("new chunks after a one-word edit: tokens %d of %d, paragraphs %d of %d", tn, tt, pn, pt)
	if pn < 1 || pn > 2 {
		t.Errorf("paragraphs: %d new chunks; want the one or two around the edit", pn)
	}
	if tn <= pn {
		t.Errorf("tokens: %d new chunks; want more than paragraphs' %d (every window after the edit moves)", tn, pn)
	}
}
