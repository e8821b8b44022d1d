package flat

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kgrag/kgrag/embedindex"
)

// ANNName is Info().ANN of an index searched through its HNSW graph.
const ANNName = "hnsw"

// DefaultANNThreshold is the size from which ANNAuto builds the graph: an
// exact scan of 20,000 vectors of 768 dimensions takes 1-2 ms, below it
// the scan is fast enough and exact, and the graph's build not worth it.
const DefaultANNThreshold = 20_000

// ANNMode says when Commit builds the approximate index.
type ANNMode int

const (
	// ANNAuto builds it for indexes of Threshold vectors or more.
	ANNAuto ANNMode = iota
	// ANNOn always builds it, however small the index.
	ANNOn
	// ANNOff never does: the index is searched exactly.
	ANNOff
)

// ParseANNMode reads "auto", "on" or "off".
func ParseANNMode(s string) (ANNMode, error) {
	switch s {
	case "auto", "":
		return ANNAuto, nil
	case "on":
		return ANNOn, nil
	case "off":
		return ANNOff, nil
	}
	return 0, fmt.Errorf("flat: approximate index %q: want auto, on or off", s)
}

// BuildOptions tune the approximate index a Builder adds. The zero value
// is ANNAuto with the defaults below.
type BuildOptions struct {
	ANN ANNMode
	// Threshold is ANNAuto's size; 0 means DefaultANNThreshold.
	Threshold int
	// M is the links per vector (twice that on the bottom level); 0
	// means 16. EfConstruction is the candidates weighed for them; 0
	// means 100. Higher values give better recall for a slower build.
	M, EfConstruction int
	// Seed draws the graph's levels and the recall queries: the same
	// vectors and seed give the same file.
	Seed uint64
	// Workers build the graph and measure recall; 0 means GOMAXPROCS.
	// The result does not depend on it.
	Workers int
	// TargetRecall is the recall@10 against the exact scan that the
	// search's efSearch is raised until it meets; 0 means 0.98.
	TargetRecall float64
	// RecallQueries is how many queries measure it; 0 means 200.
	RecallQueries int
	// Counter, if set, is told of the vectors linked into the graph as
	// the build goes, then of the recall queries answered.
	Counter embedindex.Counter
}

func (o BuildOptions) validate() error {
	switch {
	case o.ANN < ANNAuto || o.ANN > ANNOff:
		return fmt.Errorf("unknown approximate index mode %d", o.ANN)
	case o.Threshold < 0, o.M < 0, o.EfConstruction < 0, o.Workers < 0, o.RecallQueries < 0:
		return errors.New("negative approximate index option")
	case o.M == 1 || o.M > 128:
		return fmt.Errorf("approximate index M %d outside 2..128", o.M)
	case o.TargetRecall < 0 || o.TargetRecall > 1:
		return fmt.Errorf("target recall %g outside 0..1", o.TargetRecall)
	}
	return nil
}

func (o BuildOptions) wantGraph(n int) bool {
	switch o.ANN {
	case ANNOn:
		return n > 0
	case ANNOff:
		return false
	}
	t := o.Threshold
	if t == 0 {
		t = DefaultANNThreshold
	}
	return n >= t
}

func (o BuildOptions) defaults() BuildOptions {
	if o.M == 0 {
		o.M = defaultM
	}
	if o.EfConstruction == 0 {
		o.EfConstruction = defaultEfBuild
	}
	if o.Workers == 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.TargetRecall == 0 {
		o.TargetRecall = defaultTarget
	}
	if o.RecallQueries == 0 {
		o.RecallQueries = defaultQueries
	}
	return o
}

// Report says what Finish built. ANN is false when the file holds no
// graph; the rest is zero too unless Exact is set.
type Report struct {
	ANN               bool
	M, EfConstruction int
	// Recall is recall@10 against the exact scan over Queries queries,
	// each a stored vector with noise of norm 0.5 added, at efSearch Ef:
	// the first of 16, 24, 32, 48 ... 1024 to meet TargetRecall, or 1024
	// when none did (Met is false then).
	Recall  float64
	Queries int
	Ef      int
	Met     bool
	// Exact is set when ANNAuto built the graph but it missed
	// TargetRecall even at the widest efSearch: the file holds no graph
	// and every search scans, and Recall and Ef say what the graph
	// reached. ANNOn keeps such a graph (Met false).
	Exact bool
	// Build is the time to link the graph, Measure the time to find Ef.
	Build, Measure time.Duration
}

// build links the graph over the unit vectors v and chooses its efSearch.
func (o BuildOptions) build(ctx context.Context, v []float32, dim int, ids []string) (*graph, Report, error) {
	o = o.defaults()
	t0 := time.Now()
	var progress func(int)
	if o.Counter != nil {
		progress = func(n int) { o.Counter.Add(int64(n)) }
	}
	g, err := buildGraph(ctx, vecs{v, dim}, graphConfig{m: o.M, efBuild: o.EfConstruction, workers: o.Workers, seed: o.Seed, progress: progress})
	if err != nil {
		return nil, Report{}, fmt.Errorf("build the approximate index: %w", err)
	}
	rep := Report{ANN: true, M: o.M, EfConstruction: o.EfConstruction, Build: time.Since(t0)}
	t1 := time.Now()
	ix := &Index{info: embedindex.Info{Dim: dim, Count: len(ids)}, vecs: v, ids: newIDTable(ids), workers: 1, g: g}
	ef, recall, queries, err := ix.tuneEf(ctx, o)
	if err != nil {
		return nil, Report{}, fmt.Errorf("measure the approximate index's recall: %w", err)
	}
	g.ef, g.recall, g.queries = ef, float32(recall), queries
	rep.Recall, rep.Queries, rep.Ef, rep.Met, rep.Measure = float64(g.recall), queries, ef, recall >= o.TargetRecall, time.Since(t1)
	return g, rep, nil
}

// tuneEf measures recall@10 of the graph against the exact scan and
// returns the smallest efSearch of efLadder that meets the target.
func (ix *Index) tuneEf(ctx context.Context, o BuildOptions) (ef int, recall float64, queries int, err error) {
	n, dim := ix.info.Count, ix.info.Dim
	k := min(recallK, n)
	rng := rand.New(rand.NewPCG(o.Seed, 0x726563616c6c))
	qs := make([][]float32, o.RecallQueries)
	sigma := perturbation / math.Sqrt(float64(dim))
	for i := range qs {
		q := make([]float32, dim)
		copy(q, ix.vecs[rng.IntN(n)*dim:])
		for j := range q {
			q[j] += float32(rng.NormFloat64() * sigma)
		}
		qs[i] = normalised(q)
	}
	truth := make([]map[string]bool, len(qs))
	if err := eachQuery(ctx, o, len(qs), func(i int) error {
		truth[i] = map[string]bool{}
		for _, h := range ix.exact(qs[i], k) {
			truth[i][h.ID] = true
		}
		return nil
	}); err != nil {
		return 0, 0, 0, err
	}
	for _, ef = range efLadder {
		var found atomic.Int64
		if err := eachQuery(ctx, o, len(qs), func(i int) error {
			hits, err := ix.searchGraph(ctx, qs[i], k, max(ef, k))
			for _, h := range hits {
				if truth[i][h.ID] {
					found.Add(1)
				}
			}
			return err
		}); err != nil {
			return 0, 0, 0, err
		}
		recall = float64(found.Load()) / float64(len(qs)*k)
		if recall >= o.TargetRecall || ef >= n {
			break
		}
	}
	return ef, recall, len(qs), nil
}

// eachQuery runs f(0..n-1) on o.Workers goroutines, telling o.Counter.
func eachQuery(ctx context.Context, o BuildOptions, n int, f func(i int) error) error {
	var next atomic.Int64
	var mu sync.Mutex
	var first error
	parallel(min(o.Workers, n), func(int) {
		for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
			err := ctx.Err()
			if err == nil {
				err = f(int(i))
			}
			if err != nil {
				mu.Lock()
				first = cmpErr(first, err)
				mu.Unlock()
				return
			}
			if o.Counter != nil {
				o.Counter.Add(1)
			}
		}
	})
	return first
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// searchGraph answers a unit query q from the graph with beam width ef.
func (ix *Index) searchGraph(ctx context.Context, q []float32, k, ef int) ([]embedindex.Hit, error) {
	cs, err := ix.g.search(ctx, vecs{ix.vecs, ix.info.Dim}, q, ef)
	if err != nil {
		return nil, fmt.Errorf("flat: search %s: %w", ix.info.Path, err)
	}
	// Equal scores are ordered by id, as the exact scan orders them.
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].score != cs[j].score {
			return cs[i].score > cs[j].score
		}
		return ix.ids.less(cs[i].row, cs[j].row)
	})
	hits := make([]embedindex.Hit, min(k, len(cs)))
	for i := range hits {
		hits[i] = embedindex.Hit{ID: ix.ids.str(cs[i].row), Score: cs[i].score}
	}
	return hits, nil
}

// graphHeaderSize is the length of the graph section's header, in
// versions 2 and 3 alike:
//
//	gmagic   [4]byte "HNSW"
//	m        uint32  links per row on levels 1 and up; level 0 holds 2m
//	efBuild  uint32  candidates kept while building
//	ef       uint32  efSearch chosen at build time to meet the target recall
//	recall   float32 recall@10 against the exact scan, measured at ef
//	queries  uint32  how many queries measured it
//	maxLevel uint32
//	entry    uint32  the row searches start from
//	seed     uint64  of the row levels
const graphHeaderSize = 40

func writeGraphHeader(w io.Writer, g *graph) error {
	var hdr [graphHeaderSize]byte
	copy(hdr[:], graphMagic[:])
	le := binary.LittleEndian
	le.PutUint32(hdr[4:], uint32(g.m))
	le.PutUint32(hdr[8:], uint32(g.efBuild))
	le.PutUint32(hdr[12:], uint32(g.ef))
	le.PutUint32(hdr[16:], math.Float32bits(g.recall))
	le.PutUint32(hdr[20:], uint32(g.queries))
	le.PutUint32(hdr[24:], uint32(g.maxLevel))
	le.PutUint32(hdr[28:], uint32(g.entry))
	le.PutUint64(hdr[32:], g.seed)
	_, err := w.Write(hdr[:])
	return err
}

// parseGraphHeader reads the graph header of an index of n rows.
func parseGraphHeader(hdr []byte, n int) (*graph, error) {
	if [4]byte(hdr[:4]) != graphMagic {
		return nil, errors.New("graph section: bad magic")
	}
	le := binary.LittleEndian
	g := &graph{
		m: int(le.Uint32(hdr[4:])), efBuild: int(le.Uint32(hdr[8:])), ef: int(le.Uint32(hdr[12:])),
		recall: math.Float32frombits(le.Uint32(hdr[16:])), queries: int(le.Uint32(hdr[20:])),
		maxLevel: int(le.Uint32(hdr[24:])), entry: int32(le.Uint32(hdr[28:])), seed: le.Uint64(hdr[32:]),
	}
	if g.m < 2 || g.m > 128 || g.ef < 1 || g.ef > 1<<20 || g.maxLevel > maxGraphLevel || g.entry < 0 || int(g.entry) >= n {
		return nil, fmt.Errorf("graph section: implausible header (m %d, ef %d, top level %d, entry %d of %d rows)",
			g.m, g.ef, g.maxLevel, g.entry, n)
	}
	return g, nil
}

// check refuses a graph of n rows whose levels, offsets or links would
// send a search out of range: every link is -1 or a row, every row's
// upper links are levels[r]*m long, and search starts on the top level.
func (g *graph) check(n int) error {
	if len(g.levels) != n || len(g.upOff) != n+1 || g.upOff[0] != 0 || len(g.l0) != n*2*g.m || len(g.up) != int(g.upOff[n]) {
		return errors.New("graph section: sizes do not match the rows")
	}
	if int(g.levels[g.entry]) != g.maxLevel {
		return fmt.Errorf("graph section: entry row %d is on level %d, not the top level %d", g.entry, g.levels[g.entry], g.maxLevel)
	}
	for row, lv := range g.levels {
		if int(lv) > g.maxLevel {
			return fmt.Errorf("graph section: row %d on level %d, above the top level %d", row, lv, g.maxLevel)
		}
		if uint64(g.upOff[row+1]) != uint64(g.upOff[row])+uint64(lv)*uint64(g.m) {
			return fmt.Errorf("graph section: row %d's upper links do not match its level %d", row, lv)
		}
	}
	// A link out of range would index past the vectors. Unsigned, -1 is
	// the largest value, so one comparison per link finds both ends.
	for _, links := range [][]int32{g.l0, g.up} {
		for _, x := range links {
			if uint32(x) >= uint32(n) && x != -1 {
				return fmt.Errorf("graph section: link to row %d of %d", x, n)
			}
		}
	}
	return nil
}
