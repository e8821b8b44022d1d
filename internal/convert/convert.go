// Package convert writes a GraphRAG output as Turtle or N-Triples on every
// core: while one goroutine reads and decodes the next parquet table,
// workers map batches of the current table's rows to triples and encode
// them into segments (rdfenc), which the caller's goroutine writes in
// order. The bytes are those of the serial path (ontology.Stream into one
// encoder), and so are the errors: a batch's error is returned only once
// every batch before it was written, so the first bad row is the one
// named, and a read error of a later table does not hide it.
//
// Memory stays bounded: the walker hands tables over in windows of rows
// (graphrag.Visitor.Windows), of which a few are held (one being mapped,
// one waiting, one being read), rows are let go of as their batch is
// written, and the segments in flight are a fixed number. A table's
// batches are queued once every batch of the table before it was mapped,
// and so are a window of text units', as Stream.Tables asks.
package convert

import (
	"context"
	"runtime"
	"sync"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/ontology"
	"github.com/kgrag/kgrag/rdf"
	"github.com/kgrag/kgrag/rdfenc"
)

// Options tune a conversion; the zero value uses every core.
type Options struct {
	// Workers is how many goroutines map and encode (default GOMAXPROCS).
	Workers int
	// Progress, when set, is called from the caller's goroutine with the
	// number of triples of each batch as it is written.
	Progress func(triples int64)
	// WindowRows caps the rows of each window the walker hands over
	// (graphrag.Visitor.WindowRows); 0 lets it size them. Tests set a
	// few, so that windows end inside pages and row groups.
	WindowRows int
}

// Walker hands over the tables of an output, as *graphrag.Walker does.
type Walker interface {
	Walk(context.Context, graphrag.Visitor) error
}

// segment is what rdfenc's two segment types share.
type segment interface {
	rdf.Writer
	Count() int64
	Reset()
}

// Turtle walks wk, maps with s and writes through enc, as
// wk.Walk(ctx, s.Visitor()) into enc would; the caller closes enc. The
// stats are those s.Stats would give.
func Turtle(ctx context.Context, wk Walker, s *ontology.Stream, enc *rdfenc.Turtle, opts Options) (ontology.Stats, error) {
	return run(ctx, wk, s, enc.NewSegment, enc.WriteSegment, opts)
}

// NTriples is Turtle for N-Triples; the caller flushes enc.
func NTriples(ctx context.Context, wk Walker, s *ontology.Stream, enc *rdfenc.NTriples, opts Options) (ontology.Stats, error) {
	return run(ctx, wk, s, enc.NewSegment, enc.WriteSegment, opts)
}

// result is what a batch gave; its slot receives it once.
type result[S segment] struct {
	seg    S
	hasSeg bool // false for the walk's error, which has none
	stats  ontology.Stats
	err    error
}

// job is one batch: rows [i, j) of t, into seg; done counts t's batches.
type job[S segment] struct {
	t    *ontology.Table
	i, j int
	seg  S
	out  chan result[S]
	done *sync.WaitGroup
}

// maxRows bounds the rows of one batch by table, so that a segment of
// long texts (documents, text units, community reports) stays a few
// megabytes.
var maxRows = map[string]int{
	graphrag.TableDocuments:   4,
	graphrag.TableTextUnits:   256,
	graphrag.TableCommunities: 64,
}

const defaultMaxRows = 1024

func run[S segment](ctx context.Context, wk Walker, s *ontology.Stream, newSeg func() S, write func(S) error, opts Options) (ontology.Stats, error) {
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// inFlight segments bound the batches mapped, encoded or waiting to
	// be written; they are made here, before the encoder is shared.
	inFlight := 2*workers + 2
	free := make(chan S, inFlight)
	for range inFlight {
		free <- newSeg()
	}
	order := make(chan chan result[S], inFlight) // slots, in output order
	jobs := make(chan job[S], inFlight)

	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for jb := range jobs {
				st, err := jb.t.Map(ctx, jb.seg, jb.i, jb.j)
				jb.out <- result[S]{seg: jb.seg, hasSeg: true, stats: st, err: err}
				jb.done.Done()
			}
		})
	}

	// The producer walks the tables. Each table's batches are queued only
	// once every batch of the table before it has been mapped (Table.Map's
	// rule); the walker then reads the next table while they are mapped.
	go func() {
		defer close(order)
		defer close(jobs)
		prev := &sync.WaitGroup{}
		prevName := ""
		v := s.Tables(func(ctx context.Context, t *ontology.Table) error {
			// The windows of one table may be mapped at once, except the
			// text units' (see Stream.Tables).
			if t.Name() != prevName || t.Name() == graphrag.TableTextUnits {
				prev.Wait()
				prev = &sync.WaitGroup{}
				prevName = t.Name()
			}
			size := batchRows(t.Len(), workers, t.Name())
			// One batch at least: the documents' first one writes the run.
			for i := 0; i < t.Len() || i == 0; i += size {
				var seg S
				select {
				case seg = <-free:
				case <-ctx.Done():
					return ctx.Err()
				}
				out := make(chan result[S], 1)
				order <- out // never blocks for long: as many slots as segments
				prev.Add(1)
				jobs <- job[S]{t: t, i: i, j: min(i+size, t.Len()), seg: seg, out: out, done: prev}
				if t.Len() == 0 {
					break
				}
			}
			return nil
		})
		v.WindowRows = opts.WindowRows
		err := wk.Walk(ctx, v)
		if err != nil {
			out := make(chan result[S], 1)
			out <- result[S]{err: err}
			order <- out
		}
	}()

	var stats ontology.Stats
	var firstErr error
	for out := range order {
		r := <-out
		if firstErr == nil {
			if r.err == nil {
				r.err = write(r.seg)
			}
			if r.err != nil {
				firstErr = r.err
				cancel()
			} else {
				stats.Add(r.stats)
				if opts.Progress != nil {
					opts.Progress(r.seg.Count())
				}
			}
		}
		if r.hasSeg {
			r.seg.Reset()
			free <- r.seg
		}
	}
	wg.Wait()
	return stats, firstErr
}

// batchRows splits a table into batches of about a quarter of what each
// worker would get, so that the workers stay busy while the writer waits
// for the oldest, within maxRows.
func batchRows(n, workers int, table string) int {
	limit, ok := maxRows[table]
	if !ok {
		limit = defaultMaxRows
	}
	return max(1, min(limit, n/(4*workers)))
}
