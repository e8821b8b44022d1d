package prompttune

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/kgrag/kgrag/internal/chunk"
	"github.com/kgrag/kgrag/internal/documents"
	"github.com/kgrag/kgrag/internal/tokens"
)

// Chunk selections, GraphRAG's DocSelectionType (its "auto", chunks
// nearest the centroid of their embeddings, is not offered).
const (
	SelectRandom = "random"
	SelectTop    = "top"
	SelectAll    = "all"
)

// Chunk is one sampled text unit.
type Chunk struct {
	ID, Document, Text string
}

// sample reads and chunks the corpus as kgrag index does and picks the
// chunks the tuning reads.
func sample(ctx context.Context, enc *tokens.Encoder, o Options) ([]Chunk, error) {
	chunker, err := chunk.New(enc, o.Chunk)
	if err != nil {
		return nil, fmt.Errorf("prompttune: chunking: %w", err)
	}
	var all []Chunk
	seen := map[string]bool{}
	_, err = documents.Read(ctx, o.Input, o.Documents, func(d documents.Document) error {
		for _, u := range chunker.Document(d) {
			if seen[u.ID] || strings.TrimSpace(u.Text) == "" {
				continue
			}
			seen[u.ID] = true
			all = append(all, Chunk{ID: u.ID, Document: d.Title, Text: u.Text})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("prompttune: input %s: %w", o.Input, err)
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("prompttune: input %s: no text to sample (no .txt, .md, .csv or .pdf file with text in it)", o.Input)
	}
	return selectChunks(all, o.Selection, o.Limit, o.Seed)
}

// selectChunks picks limit chunks (all of them when there are fewer).
// Random selection is a seeded shuffle, so the same seed picks the same
// chunks; the picked chunks keep the corpus's order.
func selectChunks(all []Chunk, how string, limit int, seed uint64) ([]Chunk, error) {
	if how == SelectAll || limit >= len(all) {
		return all, nil
	}
	switch how {
	case SelectTop:
		return all[:limit], nil
	case SelectRandom, "":
		r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		idx := r.Perm(len(all))[:limit]
		pick := make([]bool, len(all))
		for _, i := range idx {
			pick[i] = true
		}
		out := make([]Chunk, 0, limit)
		for i, c := range all {
			if pick[i] {
				out = append(out, c)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("prompttune: selection %q: want %s, %s or %s", how, SelectRandom, SelectTop, SelectAll)
}

// excerpt is the first n tokens of text from token skip on, cut back to
// the end of its last sentence when that keeps at least half of it.
func excerpt(enc *tokens.Encoder, text string, skip, n int) string {
	ids := enc.Encode(text)
	if skip >= len(ids) {
		return ""
	}
	ids = ids[skip:]
	cut := len(ids) > n
	if cut {
		ids = ids[:n]
	}
	s, err := enc.Decode(ids)
	if err != nil {
		return ""
	}
	s = strings.ToValidUTF8(s, "")
	if skip > 0 {
		// Start at a word, not inside one.
		if i := strings.IndexAny(s, " \n"); i >= 0 && i < len(s)/4 {
			s = s[i:]
		}
	}
	if cut {
		if end := lastSentenceEnd(s); end >= len(s)/2 {
			s = s[:end]
		}
	}
	// A byte order mark opening the file is no text to show a model.
	return strings.Join(strings.Fields(strings.TrimPrefix(s, "\ufeff")), " ")
}

// lastSentenceEnd is the byte just after the last sentence end of s (a
// full stop, question or exclamation mark, Latin or CJK, with any closing
// quote), or -1.
func lastSentenceEnd(s string) int {
	best := -1
	for i, r := range s {
		switch r {
		case '.', '!', '?', '。', '！', '？':
			end := i + len(string(r))
			for end < len(s) && strings.ContainsRune(`"'”’」』)`, rune(s[end])) {
				end++
			}
			if end == len(s) || s[end] == ' ' || s[end] == '\n' || r >= 0x3000 {
				best = end
			}
		}
	}
	return best
}

// sampleText is the text of the chunks sent with a question: an equal
// share of budget tokens from the start of each (at least 50), joined by
// blank lines, at most budget tokens in all.
func sampleText(enc *tokens.Encoder, chunks []Chunk, budget int) string {
	share := max(budget/len(chunks), 50)
	var parts []string
	used := 0
	for _, c := range chunks {
		if used+share > budget && len(parts) > 0 {
			break
		}
		if p := excerpt(enc, c.Text, 0, share); p != "" {
			parts = append(parts, p)
			used += share
		}
	}
	return strings.Join(parts, "\n\n")
}
