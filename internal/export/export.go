// Package export is kgrag load's pipeline: a GraphRAG output read table
// by table, mapped to the gr: ontology and written as Turtle or
// N-Triples to a file (which appears only once complete), or uploaded
// into a named graph of a SPARQL store (atomically, in place, or as a
// difference). The input is walked while it is written, so that memory
// holds one table rather than the dataset; a diff load that falls back
// to replacing the graph walks the input again.
//
// kgrag load, kgrag index --load and the benchmarks run loads through
// it; they choose the store (loader.Open) and say what happened.
package export

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/atomicfile"
	"github.com/kgrag/kgrag/internal/convert"
	"github.com/kgrag/kgrag/loader"
	"github.com/kgrag/kgrag/ontology"
	"github.com/kgrag/kgrag/rdf"
	"github.com/kgrag/kgrag/rdfenc"
)

// Options say what to read and how to map it.
type Options struct {
	// Input is the GraphRAG output folder; Policy how it is read.
	Input  string
	Policy graphrag.Policy
	// Base is the base IRI of the instances.
	Base             string
	OmitDocumentText bool
	// Keys makes entity and relationship IRIs from titles (--iris keys)
	// instead of GraphRAG's ids.
	Keys bool
	// WithOntology writes the gr: ontology too: into a file before the
	// data, or into OntologyGraph of a store.
	WithOntology bool
	// Serial writes a file on one goroutine, reading, mapping and
	// encoding in turn: the reference the concurrent path is checked
	// against, and what one core does anyway.
	Serial bool
	// Progress, when set, is called with counts of triples written or
	// uploaded as they go.
	Progress func(triples int64)
}

// Result is what a load wrote.
type Result struct {
	// Dataset describes the input: release, what the reader left out or
	// fixed (LeftOut, Notes). Its tables are not held.
	Dataset *graphrag.Dataset
	Stats   ontology.Stats
	// Diff is what a diff load did; zero for other loads.
	Diff loader.DiffResult
}

// open starts a walk of the input and the mapper of its instances. NewWalker
// reads what ties the tables together first: most bad input fails here,
// before a file is created or the store is contacted.
func (o Options) open(ctx context.Context) (*graphrag.Walker, ontology.Mapper, error) {
	wk, err := graphrag.NewWalkerWith(ctx, o.Input, o.Policy)
	if err != nil {
		return nil, ontology.Mapper{}, err
	}
	ds := wk.Dataset()
	m := ontology.Mapper{Base: o.Base, OmitDocumentText: o.OmitDocumentText, Run: ds.Run, Release: ds.Release}
	if o.Keys {
		if m.Keys, err = wk.Keys(ctx); err != nil {
			wk.Close()
			return nil, ontology.Mapper{}, err
		}
	}
	return wk, m, nil
}

// Format is a file's RDF syntax.
type Format int

const (
	Turtle Format = iota
	NTriples
)

// Prefixes are declared in Turtle output; instance IRIs stay full.
var Prefixes = []rdfenc.Prefix{
	{Name: "gr", IRI: ontology.NS},
	{Name: "rdf", IRI: rdf.RDFNS},
	{Name: "rdfs", IRI: rdf.RDFSNS},
	{Name: "xsd", IRI: rdf.XSDNS},
}

// ToFile writes the input to path ("-": to stdout) in format. A file
// appears only when the whole graph was written: on error nothing is
// left behind.
func ToFile(ctx context.Context, path string, stdout io.Writer, format Format, o Options) (Result, error) {
	wk, m, err := o.open(ctx)
	if err != nil {
		return Result{}, err
	}
	defer wk.Close()
	res := Result{Dataset: wk.Dataset()}
	res.Stats, err = writeFile(ctx, path, stdout, func(w io.Writer) (ontology.Stats, error) {
		if format == NTriples {
			enc := rdfenc.NewNTriples(w)
			st, err := o.write(ctx, wk, m, enc, func(s *ontology.Stream, co convert.Options) (ontology.Stats, error) {
				return convert.NTriples(ctx, wk, s, enc, co)
			})
			if err != nil {
				return st, err
			}
			return st, enc.Flush()
		}
		if o.WithOntology {
			if _, err := w.Write(ontology.Turtle); err != nil {
				return ontology.Stats{}, err
			}
		}
		enc := rdfenc.NewTurtle(w, Prefixes)
		st, err := o.write(ctx, wk, m, enc, func(s *ontology.Stream, co convert.Options) (ontology.Stats, error) {
			return convert.Turtle(ctx, wk, s, enc, co)
		})
		if err != nil {
			return st, err
		}
		return st, enc.Close()
	})
	return res, inputError(err)
}

// concurrent says whether a file is written by internal/convert, on every
// core: unless Serial, or a single core (GOMAXPROCS=1), where the
// goroutines would only take turns.
func (o Options) concurrent() bool { return !o.Serial && runtime.GOMAXPROCS(0) > 1 }

// concurrentGCPercent is the GOGC of a concurrent load (see write).
const concurrentGCPercent = 75

// write maps the tables of wk into enc: with conv, one of
// internal/convert's writers, when the load is concurrent, else on this
// goroutine.
func (o Options) write(ctx context.Context, wk *graphrag.Walker, m ontology.Mapper, enc rdf.Writer,
	conv func(*ontology.Stream, convert.Options) (ontology.Stats, error)) (ontology.Stats, error) {
	if !o.concurrent() {
		pw := &progressWriter{w: enc, progress: o.Progress}
		st, err := mapWalk(ctx, wk, m, pw)
		pw.flush()
		return st, err
	}
	if os.Getenv("GOGC") == "" {
		// Goroutines that go on allocating on every core while the
		// collector marks push the heap past its goal: with the default
		// 100 the peak RSS of the 100k synthetic set was ~5-10% above the
		// serial path's, with 75 it is below it, for no measurable time.
		defer debug.SetGCPercent(debug.SetGCPercent(concurrentGCPercent))
	}
	s, err := m.Stream(nil)
	if err != nil {
		return ontology.Stats{}, err
	}
	return conv(s, convert.Options{Progress: o.Progress})
}

// mapWalk maps the tables wk hands over to w, one at a time.
func mapWalk(ctx context.Context, wk *graphrag.Walker, m ontology.Mapper, w rdf.Writer) (ontology.Stats, error) {
	s, err := m.Stream(w)
	if err != nil {
		return ontology.Stats{}, err
	}
	err = wk.Walk(ctx, s.Visitor())
	return s.Stats(), err
}

// writeFile runs write into path, or into stdout for "-".
func writeFile(ctx context.Context, path string, stdout io.Writer, write func(io.Writer) (ontology.Stats, error)) (ontology.Stats, error) {
	if path == "-" {
		bw := bufio.NewWriterSize(stdout, 1<<20)
		st, err := write(bw)
		if err == nil {
			err = bw.Flush()
		}
		if err != nil {
			return st, fmt.Errorf("write to stdout: %w", err)
		}
		return st, nil
	}
	f, err := atomicfile.Create(path)
	if err != nil {
		return ontology.Stats{}, err
	}
	defer f.Abort()
	st, err := write(f)
	if err != nil {
		return st, fmt.Errorf("write %s: %w", path, err)
	}
	if err := ctx.Err(); err != nil {
		return st, err
	}
	return st, f.Commit()
}

// inputError returns the *graphrag.Error inside err when reading the input
// failed while the output was being written, so that a bad table is
// reported as it was when the whole input was read before writing, not as
// a write error.
func inputError(err error) error {
	if ge, ok := errors.AsType[*graphrag.Error](err); ok {
		return ge
	}
	return err
}

// progressStep is how many triples go by between progress calls: a call
// per triple would cost more than writing it.
const progressStep = 1024

// progressWriter counts triples into a Progress function.
type progressWriter struct {
	w        rdf.Writer
	progress func(int64)
	n        int64
}

func (pw *progressWriter) WriteTriple(t rdf.Triple) error {
	pw.n++
	if pw.progress != nil && pw.n%progressStep == 0 {
		pw.progress(progressStep)
	}
	return pw.w.WriteTriple(t)
}

// flush reports the last, partial step.
func (pw *progressWriter) flush() {
	if pw.progress != nil {
		pw.progress(pw.n % progressStep)
	}
}

// StoreMode is how a store load writes the graph.
type StoreMode int

const (
	// Replace fills a temporary graph and swaps it in with one update:
	// readers see the old graph or the new one.
	Replace StoreMode = iota
	// InPlace loads straight into the graph through the store's bulk
	// path: fast, not atomic.
	InPlace
	// Diff sends the difference from what the graph holds as one update,
	// or replaces it whole when it cannot be sure (loader.LoadDiff).
	Diff
)

// StoreOptions say where a store load goes.
type StoreOptions struct {
	Graph string
	Mode  StoreMode
	// DiffMax is, with Diff, the largest change sent as a difference
	// (a fraction of the graph).
	DiffMax float64
	// OntologyGraph receives the ontology with Options.WithOntology.
	OntologyGraph string
}

// ToStore replaces so.Graph in st with the input, mapped table by table as
// it is uploaded, and with o.WithOntology so.OntologyGraph with the
// ontology. st counts progress itself (loader.Options.Counter).
func ToStore(ctx context.Context, st *loader.SPARQLStore, so StoreOptions, o Options) (Result, error) {
	wk, m, err := o.open(ctx)
	if err != nil {
		return Result{}, err
	}
	defer func() {
		if wk != nil {
			wk.Close()
		}
	}()
	res := Result{Dataset: wk.Dataset()}
	fill := func(w rdf.Writer) error {
		if wk == nil {
			// A diff load that turned into a full replacement maps the
			// input again: a Walker walks once.
			var err error
			if wk, err = graphrag.NewWalkerWith(ctx, o.Input, o.Policy); err != nil {
				return err
			}
		}
		defer func() { wk.Close(); wk = nil }()
		var err error
		res.Stats, err = mapWalk(ctx, wk, m, w)
		return err
	}
	switch so.Mode {
	case InPlace:
		_, err = st.LoadInPlace(ctx, so.Graph, fill)
	case Diff:
		res.Diff, err = st.LoadDiff(ctx, so.Graph, fill, loader.DiffOptions{MaxChange: so.DiffMax})
	default:
		_, err = st.ReplaceGraph(ctx, so.Graph, fill)
	}
	if err != nil {
		return res, inputError(err)
	}
	if o.WithOntology {
		if _, err := st.ReplaceGraph(ctx, so.OntologyGraph, ontology.Triples); err != nil {
			return res, fmt.Errorf("load ontology into <%s>: %w", so.OntologyGraph, err)
		}
	}
	return res, nil
}
