package retrieval

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kgrag/kgrag/internal/tokens"
)

// BasicParams are the knobs of basic search: plain vector search over
// text units (graphrag/query/structured_search/basic_search).
// DefaultBasicParams returns GraphRAG 3.x's defaults (BasicSearchDefaults).
type BasicParams struct {
	// K is how many text units the vector index is asked for.
	K int
	// MaxContextTokens is the budget of the Sources table.
	MaxContextTokens int
	ColumnDelimiter  string
	// Encoding names the tiktoken encoding that counts tokens.
	Encoding string
	// Retriever is how the text units are found: RetrieverGraphRAG (the
	// default), RetrieverVector, RetrieverBM25 or RetrieverHybrid.
	Retriever string
}

// The retrievers of basic search (kgrag ask --basic-retriever).
const (
	// RetrieverGraphRAG is GraphRAG's basic search: the K nearest text
	// units, printed in table order, the table cut at the first that
	// does not fit the budget (so under a small budget the nearest may
	// be the ones left out).
	RetrieverGraphRAG = "graphrag"
	// RetrieverVector: the nearest text units, kept best first while
	// they fit the budget (K at most).
	RetrieverVector = "vector"
	// RetrieverBM25: the text units of highest Okapi BM25 score.
	RetrieverBM25 = "bm25"
	// RetrieverHybrid: the vector and BM25 rankings joined by reciprocal
	// rank fusion.
	RetrieverHybrid = "hybrid"
)

// Retrievers are basic search's retrievers, the default first.
func Retrievers() []string {
	return []string{RetrieverGraphRAG, RetrieverVector, RetrieverBM25, RetrieverHybrid}
}

// ByRank says the context keeps the text units best first (every
// retriever but GraphRAG's).
func (p BasicParams) ByRank() bool { return p.Retriever != "" && p.Retriever != RetrieverGraphRAG }

// DefaultBasicParams returns GraphRAG's basic search defaults (k 10,
// max_context_tokens 12000) with kgrag's default encoding.
func DefaultBasicParams() BasicParams {
	return BasicParams{K: 10, MaxContextTokens: 12000, ColumnDelimiter: "|", Encoding: tokens.EncodingCL100K}
}

// Validate reports the first parameter that cannot work.
func (p BasicParams) Validate() error {
	switch {
	case p.K <= 0:
		return fmt.Errorf("retrieval: basic params: k %d: must be > 0", p.K)
	case p.MaxContextTokens <= 0:
		return fmt.Errorf("retrieval: basic params: max_context_tokens %d: must be > 0", p.MaxContextTokens)
	case p.ColumnDelimiter == "":
		return fmt.Errorf("retrieval: basic params: column delimiter is empty")
	case p.Retriever != "" && !slices.Contains(Retrievers(), p.Retriever):
		return fmt.Errorf("retrieval: basic params: retriever %q: want %s", p.Retriever, strings.Join(Retrievers(), ", "))
	}
	return nil
}

// BasicContext is basic search's context: the text units kept, in the
// order printed, and their table.
type BasicContext struct {
	Units []TextUnitRecord
	// Found is how many of the units the index returned the graph holds;
	// Units is fewer when the budget ran out.
	Found int
	Text  string
	// Tokens is the token count of Text.
	Tokens int
}

// BasicBuilder builds basic search's context from the text units the
// vector index found. It is safe for concurrent use.
type BasicBuilder struct {
	backend Backend
	p       BasicParams
	enc     *tokens.Encoder
}

// NewBasicBuilder returns a builder over backend; enc counts tokens with
// p.Encoding (nil builds one).
func NewBasicBuilder(backend Backend, p BasicParams, enc *tokens.Encoder) (*BasicBuilder, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	enc, err := encoderFor(enc, p.Encoding)
	if err != nil {
		return nil, err
	}
	return &BasicBuilder{backend: backend, p: p, enc: enc}, nil
}

// encoderFor is enc, which must be of encoding, or when nil a new encoder
// of it (a few hundred milliseconds: builders of one graph share one).
func encoderFor(enc *tokens.Encoder, encoding string) (*tokens.Encoder, error) {
	if enc == nil {
		return tokens.NewEncoder(encoding)
	}
	if enc.Name() != encoding {
		return nil, fmt.Errorf("retrieval: encoder is %s, params ask for %s", enc.Name(), encoding)
	}
	return enc, nil
}

// Params are the builder's parameters.
func (b *BasicBuilder) Params() BasicParams { return b.p }

// BasicContext builds the context of the text units with ids (as the
// vector index returned them, nearest first), as GraphRAG's
// BasicSearchContext does:
//   - the units are printed in table order, not by similarity: GraphRAG
//     walks its text unit list and keeps those the index returned. kgrag
//     orders by human_readable_id, which is the table order of every
//     GraphRAG output (and the same from memory and from a store);
//   - rows are added while "id|text\n" fits the budget, counted on the
//     raw text after the header line; the first row that does not fit
//     ends the table;
//   - the table is printed as pandas' to_csv with "|" and escapechar "\"
//     prints it (CSV quoting, backslashes doubled; see basicRow).
//
// The id column is the unit's human_readable_id, as in kgrag's local
// search, where GraphRAG prints the row's position (the same from 2.x on,
// where human_readable_id counts from 0).
func (b *BasicBuilder) BasicContext(ctx context.Context, ids []string) (*BasicContext, error) {
	units, err := b.backend.TextUnits(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("retrieval: basic: text units: %w", err)
	}
	d := b.p.ColumnDelimiter
	header := "id" + d + "text\n"
	used := b.enc.Count(header)
	byRank := b.p.ByRank()
	if !byRank {
		slices.SortStableFunc(units, func(x, y TextUnitRecord) int { return compareIDs(x.ID, y.ID) })
	}
	kept := units[:0:0]
	for _, u := range units {
		n := b.enc.Count(u.ID + d + u.Text + "\n")
		if used+n > b.p.MaxContextTokens {
			if byRank {
				continue // a shorter unit further down may take the room
			}
			break
		}
		used += n
		kept = append(kept, u)
	}
	// Kept best first, printed in table order.
	slices.SortStableFunc(kept, func(x, y TextUnitRecord) int { return compareIDs(x.ID, y.ID) })
	var sb strings.Builder
	sb.WriteString(header)
	for _, u := range kept {
		sb.WriteString(basicRow([]string{u.ID, u.Text}, d))
	}
	text := sb.String()
	return &BasicContext{Units: kept, Found: len(units), Text: text, Tokens: b.enc.Count(text)}, nil
}

// basicRow prints fields as pandas' to_csv(sep=delim, escapechar="\\")
// does (Python's csv writer, QUOTE_MINIMAL): a backslash is escaped with
// itself, and a field holding the delimiter, a double quote or "\n" is
// quoted with its quotes doubled. A "\r" alone quotes nothing: the line
// terminator is "\n".
func basicRow(fields []string, delim string) string {
	var sb strings.Builder
	for i, f := range fields {
		if i > 0 {
			sb.WriteString(delim)
		}
		f = strings.ReplaceAll(f, `\`, `\\`)
		if strings.Contains(f, delim) || strings.ContainsAny(f, "\"\n") {
			sb.WriteString(`"` + strings.ReplaceAll(f, `"`, `""`) + `"`)
		} else {
			sb.WriteString(f)
		}
	}
	sb.WriteString("\n")
	return sb.String()
}
