package retrieval

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kgrag/kgrag/internal/pyrand"
	"github.com/kgrag/kgrag/internal/tokens"
)

// ReportSource is where global search reads community reports from.
// MemoryBackend and SPARQLBackend implement it.
type ReportSource interface {
	// CommunityReports returns the report of every community at a level
	// up to maxLevel that has one, with Parent, Children and Deepest
	// filled (Members is empty), in the order GraphRAG (1.0 on) writes
	// its community reports table: deepest level first, then by
	// community number. That is the order GraphRAG's global search
	// shuffles, so it decides the batches.
	CommunityReports(ctx context.Context, maxLevel int64) ([]ReportRecord, error)
}

// GlobalParams are the knobs of global search's context: which reports,
// how they are packed into map batches, and the budget of the reduce
// context. DefaultGlobalParams returns GraphRAG's defaults
// (graphrag/config/defaults.py GlobalSearchDefaults and the context
// builder parameters of graphrag/query/factory.py get_global_search_engine).
type GlobalParams struct {
	// CommunityLevel is the deepest level whose reports are used.
	CommunityLevel int64
	// RollUpReports keeps only the communities without a sub-community up
	// to CommunityLevel, as GraphRAG 1.x did; 2.x and 3.x use every report
	// up to the level.
	RollUpReports bool
	// MaxContextTokens is the budget of one map batch's report table
	// (GraphRAG max_context_tokens).
	MaxContextTokens int
	// ReduceContextTokens is the budget of the key points handed to the
	// reduce call (GraphRAG data_max_tokens).
	ReduceContextTokens int
	// MinCommunityRank drops reports ranked below it.
	MinCommunityRank float64
	// UseCommunitySummary prints report summaries instead of full content
	// (GraphRAG's global search prints full content).
	UseCommunitySummary    bool
	IncludeCommunityRank   bool
	IncludeCommunityWeight bool
	// ShuffleSeed seeds the shuffle of the reports before they are packed,
	// with CPython's generator, so that the batches are GraphRAG's
	// (random_state 86). A negative seed leaves the reports in community
	// number order.
	ShuffleSeed     int64
	ColumnDelimiter string
	// Encoding names the tiktoken encoding that counts tokens.
	Encoding string
	// GraphRAGTokenCount counts a batch as GraphRAG does rather than
	// exactly: each report as its unquoted line, plus a "-----Reports-----"
	// line that is not sent, and no truncation of a report that alone
	// exceeds the budget. Batches are then GraphRAG's, but the table sent
	// may exceed MaxContextTokens by the quoting of its fields. For
	// comparing with GraphRAG; kgrag counts exactly what it sends.
	GraphRAGTokenCount bool
}

// DefaultGlobalParams returns GraphRAG's global search defaults.
func DefaultGlobalParams() GlobalParams {
	return GlobalParams{
		CommunityLevel:         2,
		MaxContextTokens:       12000,
		ReduceContextTokens:    12000,
		IncludeCommunityRank:   true,
		IncludeCommunityWeight: true,
		ShuffleSeed:            86,
		ColumnDelimiter:        "|",
		Encoding:               tokens.EncodingCL100K,
	}
}

// Validate reports the first parameter that cannot work.
func (p GlobalParams) Validate() error {
	switch {
	case p.CommunityLevel < 0:
		return fmt.Errorf("retrieval: global params: community level %d: must be >= 0", p.CommunityLevel)
	case p.MaxContextTokens <= 0:
		return fmt.Errorf("retrieval: global params: max_context_tokens %d: must be > 0", p.MaxContextTokens)
	case p.ReduceContextTokens <= 0:
		return fmt.Errorf("retrieval: global params: reduce_context_tokens %d: must be > 0", p.ReduceContextTokens)
	case p.ColumnDelimiter == "":
		return fmt.Errorf("retrieval: global params: column delimiter is empty")
	}
	return nil
}

// WeightColumn heads the community weight column, as GraphRAG's global
// search names it.
const WeightColumn = "occurrence weight"

// Batch is one map call's share of the reports: the records in the order
// printed and the report table itself.
type Batch struct {
	Reports []ReportRecord
	// Text is the report table: a header line, then one CSV line per
	// report (fields with the delimiter, quotes or line breaks quoted).
	Text string
	// Tokens is the count the budget was checked against: Text's tokens,
	// or GraphRAG's count with GlobalParams.GraphRAGTokenCount.
	Tokens int
	// Truncated is how many reports were cut to fit the budget alone.
	Truncated int
}

// GlobalBuilder packs community reports into map batches and key points
// into the reduce context. It is safe for concurrent use.
type GlobalBuilder struct {
	p   GlobalParams
	enc *tokens.Encoder
}

// NewGlobalBuilder validates p; enc counts tokens and must be of
// p.Encoding, or nil to build one.
func NewGlobalBuilder(p GlobalParams, enc *tokens.Encoder) (*GlobalBuilder, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	enc, err := encoderFor(enc, p.Encoding)
	if err != nil {
		return nil, err
	}
	return &GlobalBuilder{p: p, enc: enc}, nil
}

// Params returns the builder's parameters.
func (b *GlobalBuilder) Params() GlobalParams { return b.p }

// Encoder returns the builder's token counter.
func (b *GlobalBuilder) Encoder() *tokens.Encoder { return b.enc }

// Select returns the reports global search starts from, of all those a
// ReportSource returned up to the level: all of them, or with
// RollUpReports those of communities without a sub-community up to the
// level (GraphRAG read_indexer_reports). The order is kept.
func (b *GlobalBuilder) Select(all []ReportRecord) []ReportRecord {
	if !b.p.RollUpReports {
		return all
	}
	var out []ReportRecord
	for _, r := range all {
		if r.Deepest {
			out = append(out, r)
		}
	}
	return out
}

// Batches packs reports into map batches as GraphRAG's
// build_community_context does with single_batch off: the weights are
// normalised by the largest among reports, reports ranked below
// MinCommunityRank are dropped, the rest are shuffled (CPython's
// random.shuffle seeded with ShuffleSeed, the same order as GraphRAG's)
// and taken in that order into a batch until the next would take it past
// MaxContextTokens; each batch is then sorted by weight and rank, both
// descending. A report that alone exceeds the budget is cut to fit (see
// GraphRAGTokenCount for the other way).
func (b *GlobalBuilder) Batches(reports []ReportRecord) []Batch {
	p := b.p
	most := 0.0
	for _, r := range reports {
		most = max(most, r.Weight)
	}
	var sel []ReportRecord
	for _, r := range reports {
		if r.Rank < p.MinCommunityRank {
			continue
		}
		if most > 0 {
			r.Weight /= most
		}
		sel = append(sel, r)
	}
	if len(sel) == 0 {
		return nil
	}
	if p.ShuffleSeed >= 0 {
		pyrand.Shuffle(pyrand.New(p.ShuffleSeed), sel)
	}

	header := b.headerLine()
	var headerTokens int
	if p.GraphRAGTokenCount {
		headerTokens = b.enc.Count("-----" + SectionReports + "-----\n" + header)
	} else {
		headerTokens = b.enc.Count(header)
	}
	var out []Batch
	cur := Batch{Tokens: headerTokens}
	var lines []string
	cut := func() {
		if len(cur.Reports) > 0 {
			out = append(out, b.finish(cur, lines, header))
		}
		cur, lines = Batch{Tokens: headerTokens}, nil
	}
	for _, r := range sel {
		line, n := b.reportLine(r)
		if cur.Tokens+n > p.MaxContextTokens {
			cut()
			if !p.GraphRAGTokenCount && cur.Tokens+n > p.MaxContextTokens {
				r, line, n = b.truncate(r, p.MaxContextTokens-cur.Tokens)
				cur.Truncated++
			}
		}
		cur.Reports = append(cur.Reports, r)
		lines = append(lines, line)
		cur.Tokens += n
	}
	cut()
	return out
}

func (b *GlobalBuilder) headerLine() string {
	p := b.p
	h := []string{"id", "title"}
	if p.IncludeCommunityWeight {
		h = append(h, WeightColumn)
	}
	if p.UseCommunitySummary {
		h = append(h, "summary")
	} else {
		h = append(h, "content")
	}
	if p.IncludeCommunityRank {
		h = append(h, "rank")
	}
	return CSVRow(h, p.ColumnDelimiter)
}

// fields are a report's columns as printed.
func (b *GlobalBuilder) fields(r ReportRecord) []string {
	p := b.p
	f := []string{r.ID, r.Title}
	if p.IncludeCommunityWeight {
		f = append(f, pyFloat(r.Weight))
	}
	if p.UseCommunitySummary {
		f = append(f, r.Summary)
	} else {
		f = append(f, r.FullContent)
	}
	if p.IncludeCommunityRank {
		f = append(f, pyFloat(r.Rank))
	}
	return f
}

// reportLine is a report's CSV line and the tokens the budget charges for
// it: the line's own, or with GraphRAGTokenCount those of the unquoted
// line GraphRAG counts.
func (b *GlobalBuilder) reportLine(r ReportRecord) (string, int) {
	f := b.fields(r)
	line := CSVRow(f, b.p.ColumnDelimiter)
	if b.p.GraphRAGTokenCount {
		return line, b.enc.Count(strings.Join(f, b.p.ColumnDelimiter) + "\n")
	}
	return line, b.enc.Count(line)
}

// truncate cuts the printed text of r (content or summary) to the longest
// prefix, on a rune boundary, whose line fits budget tokens.
func (b *GlobalBuilder) truncate(r ReportRecord, budget int) (ReportRecord, string, int) {
	body := &r.FullContent
	if b.p.UseCommunitySummary {
		body = &r.Summary
	}
	full := []rune(*body)
	lo, hi := 0, len(full) // the longest fitting prefix is in [lo, hi]
	for lo < hi {
		mid := (lo + hi + 1) / 2
		*body = string(full[:mid])
		if _, n := b.reportLine(r); n <= budget {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	*body = string(full[:lo])
	line, n := b.reportLine(r)
	return r, line, n
}

// finish sorts a batch by weight, then rank, both descending (pandas'
// stable sort_values in GraphRAG), and prints it.
func (b *GlobalBuilder) finish(batch Batch, lines []string, header string) Batch {
	order := make([]int, len(batch.Reports))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int {
		rx, ry := batch.Reports[x], batch.Reports[y]
		if b.p.IncludeCommunityWeight {
			if c := cmp.Compare(ry.Weight, rx.Weight); c != 0 {
				return c
			}
		}
		if b.p.IncludeCommunityRank {
			return cmp.Compare(ry.Rank, rx.Rank)
		}
		return 0
	})
	var sb strings.Builder
	sb.WriteString(header)
	sorted := make([]ReportRecord, len(order))
	for i, j := range order {
		sorted[i] = batch.Reports[j]
		sb.WriteString(lines[j])
	}
	batch.Reports, batch.Text = sorted, sb.String()
	return batch
}

// KeyPoint is one point a map call made: its text (citing reports), the
// importance score the model gave it (0-100) and the batch it came from.
type KeyPoint struct {
	Batch       int
	Description string
	Score       int
}

// ReduceContext is what the reduce call is given: the key points that fit
// its budget, best first, printed as GraphRAG prints them for its reduce
// prompt ("----Analyst 3----", "Importance Score: 80", the text).
type ReduceContext struct {
	Points []KeyPoint
	Text   string
	Tokens int
	// Scored is how many points had a score above 0; Points is the prefix
	// of them, by score, that fitted.
	Scored int
}

// ReduceContext drops the points scored 0 or less, ranks the rest by
// score (descending; ties in batch and point order) and takes them until
// the next would take the text past ReduceContextTokens.
func (b *GlobalBuilder) ReduceContext(points []KeyPoint) ReduceContext {
	var kept []KeyPoint
	for _, pt := range points {
		if pt.Score > 0 {
			kept = append(kept, pt)
		}
	}
	slices.SortStableFunc(kept, func(x, y KeyPoint) int { return cmp.Compare(y.Score, x.Score) })
	rc := ReduceContext{Scored: len(kept)}
	var sb strings.Builder
	last := ""
	for _, pt := range kept {
		block := "----Analyst " + strconv.Itoa(pt.Batch+1) + "----\nImportance Score: " + strconv.Itoa(pt.Score) + "\n" + pt.Description
		n := b.enc.Count(block)
		if last != "" && !b.p.GraphRAGTokenCount {
			// Blocks start with "-", which the pre-tokeniser always cuts
			// before after a line break: only the joint's tokens change.
			n += b.enc.Count(last+"\n\n") - b.enc.Count(last)
		}
		if rc.Tokens+n > b.p.ReduceContextTokens {
			break
		}
		if last != "" {
			sb.WriteString("\n\n")
		}
		sb.WriteString(block)
		rc.Tokens += n
		rc.Points = append(rc.Points, pt)
		last = block
	}
	rc.Text = sb.String()
	return rc
}
