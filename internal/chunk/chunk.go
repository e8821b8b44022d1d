package chunk

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kgrag/kgrag/internal/documents"
	"github.com/kgrag/kgrag/internal/tokens"
)

// GraphRAG 3.3.0's chunking defaults (graphrag/config/defaults.py
// ChunkingDefaults: type tokens, size 1200, overlap 100, encoding_model
// o200k_base).
const (
	DefaultSize     = 1200
	DefaultOverlap  = 100
	DefaultEncoding = tokens.EncodingO200K
)

// Options are GraphRAG's chunking settings (ChunkingConfig of type
// tokens). The zero value is not valid; start from DefaultOptions.
type Options struct {
	// Size is the number of tokens of a chunk (the last may have fewer).
	Size int
	// Overlap is the number of tokens a chunk shares with the next; it
	// must be less than Size.
	Overlap int
	// PrependMetadata names document fields (documents.Document.Get:
	// id, title, text, creation_date or a CSV column) written before each
	// chunk's text as "name: value" lines ending in ".", as GraphRAG's
	// prepend_metadata. The chunk keeps its Size tokens; the metadata
	// adds to them and to NTokens.
	PrependMetadata []string
	// Strategy is StrategyTokens (GraphRAG's, the default when empty) or
	// StrategyParagraphs.
	Strategy string
}

// DefaultOptions returns GraphRAG's defaults: 1200 tokens, 100 of overlap,
// no metadata.
func DefaultOptions() Options {
	return Options{Size: DefaultSize, Overlap: DefaultOverlap}
}

// Validate reports options GraphRAG would not run with: its splitter
// loops forever when Overlap is not less than Size.
func (o Options) Validate() error {
	switch {
	case o.Size < 1:
		return fmt.Errorf("chunk: size %d: want at least 1 token", o.Size)
	case o.Overlap < 0:
		return fmt.Errorf("chunk: overlap %d: want 0 or more tokens", o.Overlap)
	case o.Overlap >= o.Size:
		return fmt.Errorf("chunk: overlap %d: want fewer tokens than the size, %d", o.Overlap, o.Size)
	case o.Strategy != "" && o.Strategy != StrategyTokens && o.Strategy != StrategyParagraphs:
		return fmt.Errorf("chunk: strategy %q: want %s or %s", o.Strategy, StrategyTokens, StrategyParagraphs)
	}
	return nil
}

// Chunk is one window of a text's tokens.
type Chunk struct {
	// Text is the window's tokens decoded as GraphRAG decodes them: a
	// character cut at either end becomes U+FFFD.
	Text string
	// Start and End are the bytes of the text the window's tokens cover,
	// text[Start:End] (see tokens.Encoder.Tokens for text that is not
	// UTF-8).
	Start, End int
}

// TextUnit is one chunk of a document as GraphRAG's text_units table
// holds it, before extraction fills its entity and relationship ids.
type TextUnit struct {
	// ID is the SHA-512 of Text in hex (GraphRAG's gen_sha512_hash of
	// the row's text): stable across runs, and shared by equal chunks.
	ID         string
	DocumentID string
	// Text is the chunk with the document's metadata before it when
	// Options.PrependMetadata names any.
	Text string
	// NTokens is the number of tokens of Text, encoded afresh as
	// GraphRAG's n_tokens (a window cut through a character or with
	// metadata has a count other than its window's).
	NTokens int
	// Index is the chunk's place in its document, from 0.
	Index int
	// HumanReadableID is GraphRAG's human_readable_id, set by Number.
	HumanReadableID int
	// Start and End are the bytes of the document's text the chunk
	// covers (Chunk.Start, Chunk.End).
	Start, End int
}

// Chunker splits texts into token windows as GraphRAG's TokenChunker
// does. It is safe for concurrent use.
type Chunker struct {
	enc  *tokens.Encoder
	opts Options
}

// New returns a Chunker counting with enc (GraphRAG 3.x's default is
// DefaultEncoding).
func New(enc *tokens.Encoder, opts Options) (*Chunker, error) {
	if enc == nil {
		return nil, errors.New("chunk: no encoder")
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &Chunker{enc: enc, opts: opts}, nil
}

// Split returns the chunks of text as GraphRAG's split_text_on_tokens
// makes them: windows of Size tokens of tiktoken's encoding, each
// starting Size-Overlap tokens after the one before, until a window
// reaches the last token. An empty text has no chunks.
func (c *Chunker) Split(text string) []Chunk {
	text = tokens.ValidText(text)
	toks := c.enc.Tokens(text)
	var out []Chunk
	for start := 0; start < len(toks); start += c.opts.Size - c.opts.Overlap {
		end := min(start+c.opts.Size, len(toks))
		a, b := toks[start].Start, toks[end-1].End
		// The tokens' bytes are text[a:b]: decoding them is replacing
		// the characters cut at either end.
		out = append(out, Chunk{Text: tokens.ReplaceInvalid(text[a:b]), Start: a, End: b})
		if end == len(toks) {
			break
		}
	}
	return out
}

// Document returns the text units of doc in order, as GraphRAG's
// create_base_text_units makes them.
func (c *Chunker) Document(doc documents.Document) []TextUnit {
	prefix := c.metadata(doc)
	var chunks []Chunk
	if c.opts.Strategy == StrategyParagraphs {
		chunks = c.splitParagraphs(doc.Text)
	} else {
		chunks = c.Split(doc.Text)
	}
	units := make([]TextUnit, len(chunks))
	for i, ch := range chunks {
		text := ch.Text
		if prefix != "" {
			text = prefix + text
		}
		units[i] = TextUnit{ID: documents.TextID(text), DocumentID: doc.ID, Text: text,
			NTokens: c.enc.Count(text), Index: i, Start: ch.Start, End: ch.End}
	}
	return units
}

// metadata returns the lines prepended to each chunk of doc, as
// GraphRAG's add_metadata(metadata, line_delimiter=".\n") writes them:
// "name: value" for each field doc has, each line and the block ending
// in ".\n" (so ".\n" alone when it has none of them).
func (c *Chunker) metadata(doc documents.Document) string {
	if len(c.opts.PrependMetadata) == 0 {
		return ""
	}
	var lines []string
	seen := map[string]bool{}
	for _, f := range c.opts.PrependMetadata {
		v, ok := doc.Get(f)
		if !ok || seen[f] { // a dict keeps a repeated name once
			continue
		}
		seen[f] = true
		lines = append(lines, f+": "+v)
	}
	return strings.Join(lines, ".\n") + ".\n"
}

// Number sets HumanReadableID of units to from, from+1, ... and returns
// the next number: GraphRAG numbers text units from 0 in the order it
// writes them, across documents (create_final_text_units).
func Number(units []TextUnit, from int) int {
	for i := range units {
		units[i].HumanReadableID = from
		from++
	}
	return from
}
