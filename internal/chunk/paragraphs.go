package chunk

import (
	"hash/fnv"
	"strings"

	"github.com/kgrag/kgrag/internal/tokens"
)

// Chunking strategies (Options.Strategy).
const (
	// StrategyTokens is GraphRAG's: fixed windows of Size tokens from the
	// start of the document, Size-Overlap apart. An edit moves every
	// window after it, so every later chunk is new and extracted again.
	StrategyTokens = "tokens"
	// StrategyParagraphs anchors chunks to the text: a chunk is whole
	// paragraphs (text between blank lines), and where one ends depends
	// only on the paragraphs themselves, so chunks before an edit stay and
	// those after it are the same again from the next boundary on. A
	// paragraph longer than Size is cut into token windows of its own.
	StrategyParagraphs = "paragraphs"
)

// boundaryEvery is how often, on average, a paragraph ends a chunk by
// its content (a hash) once the chunk holds half of Size: the content
// decides most boundaries, so that they come back after an edit.
const boundaryEvery = 4

// paragraph is the bytes [start, end) of a text: one paragraph with the
// blank lines after it.
type paragraph struct {
	start, end int
	tokens     int
	cut        bool // ends a chunk by its content
}

// paragraphs splits text at blank lines, the separator staying with the
// paragraph before it.
func (c *Chunker) paragraphs(text string) []paragraph {
	var out []paragraph
	start := 0
	for i := 0; i < len(text); {
		j := strings.Index(text[i:], "\n")
		if j < 0 {
			break
		}
		k := i + j + 1
		// A blank line (spaces allowed) after this one ends the paragraph.
		end := k
		for end < len(text) {
			nl := strings.IndexByte(text[end:], '\n')
			if nl < 0 || strings.TrimSpace(text[end:end+nl]) != "" {
				break
			}
			end += nl + 1
		}
		if end > k && strings.TrimSpace(text[start:k]) != "" {
			out = append(out, c.paragraph(text, start, end))
			start = end
		}
		i = end
	}
	if start < len(text) {
		if strings.TrimSpace(text[start:]) != "" || len(out) == 0 {
			out = append(out, c.paragraph(text, start, len(text)))
		} else {
			out[len(out)-1].end = len(text)
		}
	}
	return out
}

func (c *Chunker) paragraph(text string, start, end int) paragraph {
	h := fnv.New32a()
	h.Write([]byte(strings.TrimSpace(text[start:end])))
	return paragraph{start: start, end: end, tokens: c.enc.Count(text[start:end]), cut: h.Sum32()%boundaryEvery == 0}
}

// splitParagraphs is Split for StrategyParagraphs. A chunk takes whole
// paragraphs while they fit in Size tokens and ends after a paragraph
// whose content says so once it holds Size/2; Overlap tokens of the
// previous chunk's last paragraph go before it, so that the overlap too
// depends only on the paragraph next to it.
func (c *Chunker) splitParagraphs(text string) []Chunk {
	text = tokens.ValidText(text)
	ps := c.paragraphs(text)
	var out []Chunk
	emit := func(a, b int, prevPara *paragraph) {
		if c.opts.Overlap > 0 && prevPara != nil {
			toks := c.enc.Tokens(text[prevPara.start:prevPara.end])
			if n := min(c.opts.Overlap, len(toks)); n > 0 {
				a = prevPara.start + toks[len(toks)-n].Start
			}
		}
		out = append(out, Chunk{Text: text[a:b], Start: a, End: b})
	}
	var prev *paragraph
	for i := 0; i < len(ps); {
		p := ps[i]
		if p.tokens > c.opts.Size {
			// Too long for one chunk: token windows of its own.
			for _, ch := range c.Split(text[p.start:p.end]) {
				out = append(out, Chunk{Text: ch.Text, Start: p.start + ch.Start, End: p.start + ch.End})
			}
			prev = &ps[i]
			i++
			continue
		}
		j, n := i, 0
		for j < len(ps) && n+ps[j].tokens <= c.opts.Size {
			n += ps[j].tokens
			j++
			if ps[j-1].cut && n >= c.opts.Size/2 {
				break
			}
		}
		emit(ps[i].start, ps[j-1].end, prev)
		prev = &ps[j-1]
		i = j
	}
	return out
}
