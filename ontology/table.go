package ontology

import (
	"context"
	"sync"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/rdf"
)

// Table is one table of a Stream, ready to be mapped in row ranges by
// several goroutines at once: kgrag load maps batches of rows on every
// core and writes their triples in order, which gives Map's output. A
// Table is made by the Visitor of Stream.Tables.
type Table struct {
	s    *Stream
	name string // graphrag.Table*
	n    int
	rows func(e *emitter, ctx context.Context, i, j int) error
}

// Name returns the table's name (graphrag.TableEntities, ...); the
// communities table holds the merged reports.
func (t *Table) Name() string { return t.name }

// Len returns the number of rows.
func (t *Table) Len() int { return t.n }

// Map writes the triples of rows [i, j) to w, as the Stream writes them
// between row i-1 and row j; the range that starts at 0 of the documents'
// first window begins with the index run, as Stream.Documents does, even when the table
// has no rows. It returns what it wrote. Map may be called from several
// goroutines at once for ranges that do not overlap; each row once, as
// Map lets go of the rows it has written (they are zeroed), so that the
// table's memory goes as it is written. It stops at the first error of w
// and when ctx is done (checked every checkEvery rows).
func (t *Table) Map(ctx context.Context, w rdf.Writer, i, j int) (Stats, error) {
	if err := ctx.Err(); err != nil {
		return Stats{}, err
	}
	e := t.s.e.fork(w)
	err := t.rows(&e, ctx, i, j)
	return e.stats, err
}

// fork returns an emitter that writes to w with the read-only state of e
// (base, keys, the run, the text units' documents) and its own counts and
// scratch space.
func (e *emitter) fork(w rdf.Writer) emitter {
	f := *e
	f.w, f.buf, f.stats, f.s = w, nil, Stats{}, rdf.Term{}
	f.prov.order, f.prov.seen, f.prov.stamp = nil, nil, 0
	return f
}

// tableRows makes the rows function of a Table: write each row, check ctx
// every checkEvery rows, and zero what was written.
func tableRows[T any](rows []T, write func(e *emitter, r *T) error) func(*emitter, context.Context, int, int) error {
	return func(e *emitter, ctx context.Context, i, j int) error {
		for k := i; k < j; k++ {
			if err := write(e, &rows[k]); err != nil {
				return err
			}
			if (k-i+1)%checkEvery == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
		}
		clear(rows[i:j])
		return nil
	}
}

// Tables returns a graphrag.Visitor that hands each table Walk reads to fn
// as a Table, in Map's order. The Stream's own methods must not be used
// with it. A table's rows may still be mapped while the next is read and
// handed over, but every Map call of a table must have returned before the
// first of the next table: later tables read what earlier ones recorded
// (the text units' documents, recorded by the first Map of their Table). The
// Visitor asks for windows (graphrag.Visitor.Windows): each window is a
// Table of its own, and only the documents' first begins with the index
// run. The windows of one table may be mapped at once, except the text
// units': every Map of a window of text units must have returned before
// the first Map of the next (which records its documents). fn's error stops the walk. The Stream's Stats do not count what Tables map:
// add up what Map returns.
func (s *Stream) Tables(fn func(context.Context, *Table) error) graphrag.Visitor {
	table := func(name string, n int, rows func(*emitter, context.Context, int, int) error) *Table {
		return &Table{s: s, name: name, n: n, rows: rows}
	}
	run := true // the first window of documents writes the run
	return graphrag.Visitor{
		Documents: func(ctx context.Context, rows []graphrag.Document) error {
			omit := s.omitText
			docs := tableRows(rows, func(e *emitter, d *graphrag.Document) error { return e.document(d, omit) })
			first := run
			run = false
			return fn(ctx, table(graphrag.TableDocuments, len(rows), func(e *emitter, ctx context.Context, i, j int) error {
				if i == 0 && first {
					if err := e.runNode(); err != nil {
						return err
					}
				}
				return docs(e, ctx, i, j)
			}))
		},
		TextUnits: func(ctx context.Context, rows []graphrag.TextUnit) error {
			// The documents are recorded by the first Map of the window,
			// not here: the windows before it may still be mapped, and
			// their chunks read what is recorded.
			var record sync.Once
			chunks := tableRows(rows, (*emitter).chunk)
			return fn(ctx, table(graphrag.TableTextUnits, len(rows), func(e *emitter, ctx context.Context, i, j int) error {
				record.Do(func() { s.e.recordDocuments(rows) })
				return chunks(e, ctx, i, j)
			}))
		},
		Entities: func(ctx context.Context, rows []graphrag.Entity) error {
			return fn(ctx, table(graphrag.TableEntities, len(rows), tableRows(rows, (*emitter).entity)))
		},
		Relationships: func(ctx context.Context, rows []graphrag.Relationship) error {
			return fn(ctx, table(graphrag.TableRelationships, len(rows), tableRows(rows, (*emitter).relationship)))
		},
		Communities: func(ctx context.Context, rows []graphrag.Community) error {
			return fn(ctx, table(graphrag.TableCommunities, len(rows), tableRows(rows, (*emitter).community)))
		},
		Covariates: func(ctx context.Context, rows []graphrag.Covariate) error {
			return fn(ctx, table(graphrag.TableCovariates, len(rows), tableRows(rows, (*emitter).covariate)))
		},
		OmitReportJSON: true, // the mapping writes full_content, not its JSON
		Windows:        true,
	}
}

// Add adds the counts of o to s.
func (s *Stats) Add(o Stats) {
	s.Triples += o.Triples
	s.Documents += o.Documents
	s.Chunks += o.Chunks
	s.Entities += o.Entities
	s.Unresolved += o.Unresolved
	s.Relationships += o.Relationships
	s.Communities += o.Communities
	s.Findings += o.Findings
	s.Covariates += o.Covariates
	s.RepeatedLinks += o.RepeatedLinks
}
