package graphbuild

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kgrag/kgrag/internal/tokens"
)

// Embedder turns texts into vectors, one per text in order, all of one
// dimension; *llm.Client is one (it sends all texts in one request, so
// wrap it in embedindex.NewBatcher to batch, and in embedindex.NewCached
// to pay once across runs).
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Defaults of DedupOptions: the NetworkX article's threshold, and a cut of
// the embedded text that small embedding models read whole
// (all-MiniLM-L6-v2 reads 256 word pieces).
const (
	DefaultDedupThreshold = 0.9
	DefaultDedupMaxTokens = 256
)

// dedupSlack is taken off the threshold before comparing: similarities
// of float32 embeddings are not known closer than about 1e-7, and without
// it identical vectors (whose dot product may round to 1 - 2^-53) would
// not join at Threshold 1.
const dedupSlack = 1e-9

// DedupOptions tune Dedup. Threshold has no default: set it (the CLI
// default is DefaultDedupThreshold).
type DedupOptions struct {
	// Threshold is the lowest cosine similarity that joins two entities,
	// in (0, 1].
	Threshold float64
	// Encoder, when set, cuts each embedded text to MaxTokens tokens
	// (0 means DefaultDedupMaxTokens); nil sends texts whole.
	Encoder   *tokens.Encoder
	MaxTokens int
}

// Validate reports a Threshold outside (0, 1] or a negative MaxTokens.
func (o DedupOptions) Validate() error {
	if !(o.Threshold > 0 && o.Threshold <= 1) {
		return fmt.Errorf("graphbuild: dedup threshold %v: want a cosine similarity above 0 and at most 1", o.Threshold)
	}
	if o.MaxTokens < 0 {
		return fmt.Errorf("graphbuild: dedup max tokens %d: want 0 (default) or more", o.MaxTokens)
	}
	return nil
}

// DedupLink is a pair of entities whose similarity reached the threshold.
type DedupLink struct {
	A, B       string
	Similarity float64
}

// DedupGroup is one set of entities Dedup joined into one.
type DedupGroup struct {
	// Kept is the title the group goes by, Type its type.
	Kept, Type string
	// Joined are the other titles, in entity order.
	Joined []string
	// Links are the pairs of the group at or above the threshold, in
	// entity order: the edges of the connected component.
	Links []DedupLink
	// MinSimilarity is the lowest similarity of any two titles of the
	// group; below the threshold when two joined only through others
	// (a ~ b ~ c with a and c apart).
	MinSimilarity float64
}

// String is the group as one line for people: kept title, the titles
// joined into it, and the lowest similarity.
func (g DedupGroup) String() string {
	q := make([]string, len(g.Joined))
	for i, j := range g.Joined {
		q[i] = fmt.Sprintf("%q", j)
	}
	return fmt.Sprintf("%q <- %s (similarity >= %.3f)", g.Kept, strings.Join(q, ", "), g.MinSimilarity)
}

// DedupReport says what Dedup did. Relationship counts are of merged
// relationships (one per source -> target), before and after.
type DedupReport struct {
	Threshold float64
	// Embedded counts the texts sent to the embedder: one per title.
	Embedded int
	// EntitiesBefore and EntitiesAfter count distinct titles, the rows
	// Finalize writes.
	EntitiesBefore, EntitiesAfter int
	Groups                        []DedupGroup
	RelationshipsBefore           int
	RelationshipsAfter            int
	// Repointed counts the relationships with an end renamed; SelfLoops
	// those of them dropped because both ends joined one entity;
	// Combined those folded into another relationship with the same ends
	// (RelationshipsAfter = RelationshipsBefore - SelfLoops - Combined).
	Repointed, SelfLoops, Combined int
	// SelfLoopRecords counts the extraction records of SelfLoops.
	SelfLoopRecords int
}

// String is the report in one line for people, the groups left out
// (print each DedupGroup on its own line).
func (r DedupReport) String() string {
	return fmt.Sprintf("similarity >= %g: %d entities -> %d in %d groups; relationships %d -> %d (%d re-pointed, %d self-loops dropped, %d combined)",
		r.Threshold, r.EntitiesBefore, r.EntitiesAfter, len(r.Groups), r.RelationshipsBefore, r.RelationshipsAfter,
		r.Repointed, r.SelfLoops, r.Combined)
}

// Dedup merges exts (as Merge does), joins the entities whose embeddings
// are alike, and returns the merged graph with the duplicates joined, as
// the NetworkX article's pipeline does after merging by title:
//
//   - each title (the row Finalize keeps: its first type) is embedded as
//     DedupText gives it, and vectors are normalised;
//   - two titles whose cosine similarity (a dot product, in float64) is
//     at least Threshold, less 1e-9 for float32 rounding, are linked, and each connected component of links is
//     one entity: so a and c join through b even when a and c are apart;
//   - the title kept is the one with the most mentions (Frequency of its
//     first row), then the least in byte order; it keeps its type;
//   - every record of a joined title, of whatever type, is renamed to the
//     kept title and type, and relationship ends are renamed likewise; a
//     relationship whose two ends joined one entity is dropped (one
//     extracted as a self-loop stays, as in GraphRAG); then the records
//     are merged again with Merge, so descriptions and text unit ids are
//     gathered in record order and weights summed exactly as Merge sums
//     them. A -> B and B -> A stay two relationships.
//
// Merging records again, rather than the merged graph, is what keeps
// Merge's sums: a MergedRelationship holds its weights summed, and how
// pandas sums depends on the records (see weightRows).
//
// The pair search compares every two titles, on one core: n²/2 dot
// products of the vector dimension (2,000 titles of 768 dimensions take
// half a second, so 10,000 about 12 s), and n times the dimension
// float64s of memory (60 MB for 10,000 of 768).
//
// Dedup makes one Embed call with every text. Errors: a bad Threshold,
// the embedder's (wrapped), a wrong number of vectors, vectors of unequal
// dimension or of zero length, ctx's. exts is not modified and the graph
// shares no memory with it.
func Dedup(ctx context.Context, exts []Extraction, emb Embedder, opts DedupOptions) (*Graph, DedupReport, error) {
	rep := DedupReport{Threshold: opts.Threshold}
	if err := opts.Validate(); err != nil {
		return nil, rep, err
	}
	g := Merge(exts)
	rep.RelationshipsBefore = len(g.Relationships)
	rows := titleRows(g)
	rep.EntitiesBefore, rep.EntitiesAfter, rep.RelationshipsAfter = len(rows), len(rows), len(g.Relationships)
	if len(rows) < 2 {
		return g, rep, nil
	}

	texts := make([]string, len(rows))
	for i, r := range rows {
		texts[i] = DedupText(g.Entities[r], opts)
	}
	rep.Embedded = len(texts)
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		return nil, rep, fmt.Errorf("graphbuild: dedup: embed %d entities: %w", len(texts), err)
	}
	x, dim, err := normalise(vecs, len(texts))
	if err != nil {
		return nil, rep, fmt.Errorf("graphbuild: dedup: %w", err)
	}
	links, err := similarPairs(ctx, x, dim, opts.Threshold-dedupSlack)
	if err != nil {
		return nil, rep, fmt.Errorf("graphbuild: dedup: %w", err)
	}
	if len(links) == 0 {
		return g, rep, nil
	}

	rep.Groups = groups(g, rows, x, dim, links)
	rename := make(map[string]entityKey)
	for _, grp := range rep.Groups {
		for _, j := range grp.Joined {
			rename[j] = entityKey{grp.Kept, grp.Type}
		}
		rep.EntitiesAfter -= len(grp.Joined)
	}
	end := func(t string) string {
		if k, ok := rename[t]; ok {
			return k.title
		}
		return t
	}
	renamed, dropped := renameRecords(exts, rename, end)
	rep.SelfLoopRecords = dropped

	survivors := make(map[pairKey]struct{}, len(g.Relationships))
	kept := 0
	for _, r := range g.Relationships {
		s, t := end(r.Source), end(r.Target)
		if s == r.Source && t == r.Target {
			survivors[pairKey{s, t}] = struct{}{}
			kept++
			continue
		}
		rep.Repointed++
		if s == t && r.Source != r.Target {
			rep.SelfLoops++
			continue
		}
		survivors[pairKey{s, t}] = struct{}{}
		kept++
	}
	rep.Combined = kept - len(survivors)

	g = Merge(renamed)
	rep.RelationshipsAfter = len(g.Relationships)
	return g, rep, nil
}

// DedupText is the text Dedup embeds for e: "title: description", the
// distinct non-blank descriptions in order of first mention joined by
// newlines, cut to opts.MaxTokens when opts.Encoder is set; the title
// alone when there is no description.
//
// All descriptions rather than the first, as the NetworkX article's pipeline embeds
// its joined description: which description comes first depends on text
// unit order, and one mention says less about an entity than all of them.
// The cut keeps the earliest, and keeps the text within what small
// embedding models read.
func DedupText(e MergedEntity, opts DedupOptions) string {
	var b strings.Builder
	b.WriteString(e.Title)
	seen := make(map[string]struct{}, len(e.Descriptions))
	for _, d := range e.Descriptions {
		d = strings.TrimSpace(d)
		if _, dup := seen[d]; dup || d == "" {
			continue
		}
		sep := "\n"
		if len(seen) == 0 {
			sep = ": "
		}
		seen[d] = struct{}{}
		b.WriteString(sep)
		b.WriteString(d)
	}
	s := b.String()
	if opts.Encoder == nil {
		return s
	}
	limit := opts.MaxTokens
	if limit == 0 {
		limit = DefaultDedupMaxTokens
	}
	head, _ := opts.Encoder.Head(s, limit)
	return head
}

// titleRows returns the index in g.Entities of the first row of each
// non-empty title, in order: the rows Finalize writes.
func titleRows(g *Graph) []int {
	seen := make(map[string]struct{}, len(g.Entities))
	var rows []int
	for i, e := range g.Entities {
		if _, dup := seen[e.Title]; dup || e.Title == "" {
			continue
		}
		seen[e.Title] = struct{}{}
		rows = append(rows, i)
	}
	return rows
}

// normalise checks that there are n vectors of one nonzero dimension and
// returns them scaled to length 1, in float64 (so that a similarity of
// exactly representable vectors, like 9/10, compares exactly), one after
// the other.
func normalise(vecs [][]float32, n int) ([]float64, int, error) {
	if len(vecs) != n {
		return nil, 0, fmt.Errorf("embedder gave %d vectors for %d texts", len(vecs), n)
	}
	dim := len(vecs[0])
	if dim == 0 {
		return nil, 0, errors.New("embedder gave an empty vector")
	}
	x := make([]float64, n*dim)
	for i, v := range vecs {
		if len(v) != dim {
			return nil, 0, fmt.Errorf("vector %d has %d dimensions, vector 0 has %d", i, len(v), dim)
		}
		row := x[i*dim : (i+1)*dim]
		var sq float64
		for k, f := range v {
			row[k] = float64(f)
			sq += row[k] * row[k]
		}
		norm := math.Sqrt(sq)
		if norm == 0 || math.IsNaN(norm) || math.IsInf(norm, 0) {
			return nil, 0, fmt.Errorf("vector %d has length %v: no direction to compare", i, norm)
		}
		for k := range row {
			row[k] /= norm
		}
	}
	return x, dim, nil
}

// pairLink is a pair of rows (i < j) at or above the threshold.
type pairLink struct {
	i, j int
	sim  float64
}

// similarPairs returns every pair of the n unit vectors in x whose dot
// product is at least least, ordered by i then j. It compares blocks of
// rows against blocks so that both stay in cache.
func similarPairs(ctx context.Context, x []float64, dim int, least float64) ([]pairLink, error) {
	const block = 64
	n := len(x) / dim
	var out []pairLink
	for bi := 0; bi < n; bi += block {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ei := min(bi+block, n)
		for bj := bi; bj < n; bj += block {
			ej := min(bj+block, n)
			for i := bi; i < ei; i++ {
				xi := x[i*dim : (i+1)*dim]
				for j := max(bj, i+1); j < ej; j++ {
					if s := dot(xi, x[j*dim:(j+1)*dim]); s >= least {
						out = append(out, pairLink{i, j, s})
					}
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b pairLink) int {
		return cmp.Or(cmp.Compare(a.i, b.i), cmp.Compare(a.j, b.j))
	})
	return out, nil
}

func dot(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	k := 0
	for ; k+4 <= len(a); k += 4 {
		s0 += a[k] * b[k]
		s1 += a[k+1] * b[k+1]
		s2 += a[k+2] * b[k+2]
		s3 += a[k+3] * b[k+3]
	}
	for ; k < len(a); k++ {
		s0 += a[k] * b[k]
	}
	return (s0 + s1) + (s2 + s3)
}

// groups returns the connected components of links with more than one
// member, ordered by their first member, each with its kept title.
// Indexes are into rows (and x); rows index g.Entities.
func groups(g *Graph, rows []int, x []float64, dim int, links []pairLink) []DedupGroup {
	parent := make([]int, len(rows))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for _, l := range links {
		a, b := find(l.i), find(l.j)
		if a != b {
			parent[max(a, b)] = min(a, b) // the root is the least member
		}
	}
	members := make(map[int][]int)
	var roots []int
	for i := range rows {
		r := find(i)
		if len(members[r]) == 0 {
			roots = append(roots, r)
		}
		members[r] = append(members[r], i)
	}
	groupLinks := make(map[int][]DedupLink)
	for _, l := range links {
		r := find(l.i)
		groupLinks[r] = append(groupLinks[r], DedupLink{
			A: g.Entities[rows[l.i]].Title, B: g.Entities[rows[l.j]].Title, Similarity: l.sim})
	}

	var out []DedupGroup
	for _, r := range roots {
		ms := members[r]
		if len(ms) < 2 {
			continue
		}
		keep := slices.MinFunc(ms, func(a, b int) int {
			ea, eb := &g.Entities[rows[a]], &g.Entities[rows[b]]
			return cmp.Or(cmp.Compare(eb.Frequency, ea.Frequency), strings.Compare(ea.Title, eb.Title))
		})
		grp := DedupGroup{
			Kept:          g.Entities[rows[keep]].Title,
			Type:          g.Entities[rows[keep]].Type,
			Links:         groupLinks[r],
			MinSimilarity: math.Inf(1),
		}
		for k, a := range ms {
			if a != keep {
				grp.Joined = append(grp.Joined, g.Entities[rows[a]].Title)
			}
			for _, b := range ms[k+1:] {
				grp.MinSimilarity = min(grp.MinSimilarity, dot(x[a*dim:(a+1)*dim], x[b*dim:(b+1)*dim]))
			}
		}
		out = append(out, grp)
	}
	return out
}

// renameRecords returns a copy of exts with every entity record of a
// title in rename given the kept title and type, relationship ends
// renamed by end, and the relationships that became self-loops left out
// (their count is returned). A text unit left without relationships
// counts as one that had none, for Merge's choice of how to sum.
func renameRecords(exts []Extraction, rename map[string]entityKey, end func(string) string) ([]Extraction, int) {
	out := make([]Extraction, len(exts))
	dropped := 0
	for i, x := range exts {
		y := Extraction{TextUnitID: x.TextUnitID, Entities: slices.Clone(x.Entities)}
		for k, e := range y.Entities {
			if to, ok := rename[e.Title]; ok {
				y.Entities[k].Title, y.Entities[k].Type = to.title, to.typ
			}
		}
		for _, r := range x.Relationships {
			s, t := end(r.Source), end(r.Target)
			if s == t && r.Source != r.Target {
				dropped++
				continue
			}
			r.Source, r.Target = s, t
			y.Relationships = append(y.Relationships, r)
		}
		out[i] = y
	}
	return out, dropped
}
