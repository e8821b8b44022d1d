package flat

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"os"
	"runtime"
	"sync"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/internal/atomicfile"
)

// File layout, little-endian:
//
//	magic   [8]byte "KGVECIDX"
//	version uint32  1, or 2 when an HNSW graph follows the ids
//	metric  uint32  1 = cosine
//	dim     uint32
//	mlen    uint32  length of model
//	count   uint64
//	model   [mlen]byte, zero-padded to a multiple of 4
//	vectors [count*dim]float32, each of unit length (or all zero)
//	ids     count x (uint32 length, bytes)
//	graph   version 2 only:
//	  gmagic   [4]byte "HNSW"
//	  m        uint32  links per row on levels 1 and up; level 0 holds 2m
//	  efBuild  uint32  candidates kept while building
//	  ef       uint32  efSearch chosen at build time to meet the target recall
//	  recall   float32 recall@10 against the exact scan, measured at ef
//	  queries  uint32  how many queries measured it
//	  maxLevel uint32
//	  entry    uint32  the row searches start from
//	  seed     uint64  of the row levels
//	  levels   [count]uint8, zero-padded to a multiple of 4
//	  links0   [count*2m]int32, each row's level-0 links, -1 after the last
//	  upper    for each row r with levels[r] > 0, in row order:
//	           [levels[r]*m]int32, its links on levels 1..levels[r]
//	crc     uint32  CRC-32C of vectors, ids and graph
//
// Vectors come before ids so a reader can load them into one slice in a
// single pass, and a writer can stream them while holding only the ids.
// An index without a graph is written as version 1, byte for byte what
// kgrag wrote before graphs existed, so older kgrag reads it too.
var (
	magic      = [8]byte{'K', 'G', 'V', 'E', 'C', 'I', 'D', 'X'}
	graphMagic = [4]byte{'H', 'N', 'S', 'W'}
)

const (
	version      = 1
	versionGraph = 2
	metricCosine = 1
	headerSize   = 32
	maxDim       = 1 << 16
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type header struct {
	Magic   [8]byte
	Version uint32
	Metric  uint32
	Dim     uint32
	MLen    uint32
	Count   uint64
}

func pad4(n int) int { return (n + 3) &^ 3 }

// Builder writes an index file: vectors stream to a temporary file next to
// the target, which replaces the target only on Commit, so a reader never
// sees a half-written index and a failed build leaves the old one. It is
// not safe for concurrent use.
type Builder struct {
	f     *atomicfile.File
	bw    *bufio.Writer
	crc   hash.Hash32
	path  string
	model string
	dim   int
	ids   []string
	seen  map[string]struct{}
	buf   []byte
	err   error
	opts  BuildOptions
	keep  []float32 // the unit vectors, for the graph; nil when it is off
}

// Create starts an index of vectors from model at path with the default
// BuildOptions. dim 0 takes the dimension of the first vector added.
func Create(path, model string, dim int) (*Builder, error) {
	return CreateWith(path, model, dim, BuildOptions{})
}

// CreateWith is Create with options for the approximate index. Unless
// opts.ANN is ANNOff the builder keeps every vector in memory until Commit,
// since the graph is built from all of them.
func CreateWith(path, model string, dim int, opts BuildOptions) (*Builder, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("flat: create %s: %w", path, err)
	}
	if dim < 0 || dim > maxDim {
		return nil, fmt.Errorf("flat: create %s: dimension %d out of range", path, dim)
	}
	if len(model) > 1<<16 {
		return nil, fmt.Errorf("flat: create %s: model name too long", path)
	}
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, fmt.Errorf("flat: %w", err)
	}
	b := &Builder{f: f, crc: crc32.New(castagnoli), path: path, model: model, dim: dim, seen: map[string]struct{}{}, opts: opts}
	// The header is written on Commit, when count and dim are known.
	if _, err := f.Seek(int64(headerSize+pad4(len(model))), io.SeekStart); err != nil {
		f.Abort()
		return nil, fmt.Errorf("flat: create %s: %w", path, err)
	}
	b.bw = bufio.NewWriterSize(io.MultiWriter(f, b.crc), 1<<20)
	return b, nil
}

// Add appends the vector of id, normalised to unit length (a zero vector
// is stored as is and scores 0 against any query). ids must be unique,
// and every vector must have the index's dimension.
func (b *Builder) Add(id string, vec []float32) error {
	if b.err != nil {
		return b.err
	}
	if b.dim == 0 {
		if len(vec) == 0 || len(vec) > maxDim {
			return fmt.Errorf("flat: add %q to %s: dimension %d out of range", id, b.path, len(vec))
		}
		b.dim = len(vec)
	}
	if len(vec) != b.dim {
		return fmt.Errorf("flat: add %q to %s: %d dimensions, the index has %d: %w",
			id, b.path, len(vec), b.dim, embedindex.ErrDimMismatch)
	}
	if _, dup := b.seen[id]; dup {
		return fmt.Errorf("flat: add %q to %s: id added twice", id, b.path)
	}
	var sum float64
	for _, x := range vec {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("flat: add %q to %s: vector holds NaN or Inf", id, b.path)
		}
		sum += float64(x) * float64(x)
	}
	scale := float32(1)
	if sum > 0 {
		scale = float32(1 / math.Sqrt(sum))
	}
	if cap(b.buf) < 4*b.dim {
		b.buf = make([]byte, 4*b.dim)
	}
	buf := b.buf[:4*b.dim]
	for i, x := range vec {
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(x*scale))
		if b.opts.ANN != ANNOff {
			b.keep = append(b.keep, x*scale)
		}
	}
	if _, err := b.bw.Write(buf); err != nil {
		b.err = fmt.Errorf("flat: write %s: %w", b.path, err)
		return b.err
	}
	b.seen[id] = struct{}{}
	b.ids = append(b.ids, id)
	return nil
}

// Len is the number of vectors added so far.
func (b *Builder) Len() int { return len(b.ids) }

// Commit writes the ids, checksum and header and renames the file into
// place. An index with no vectors needs a dimension given to Create.
func (b *Builder) Commit() error {
	_, err := b.Finish(context.Background())
	return err
}

// Finish is Commit that builds the approximate index when the options
// call for it (which at a million vectors takes minutes: ctx stops it),
// measures its recall and reports both.
func (b *Builder) Finish(ctx context.Context) (Report, error) {
	if b.err != nil {
		b.f.Abort()
		return Report{}, b.err
	}
	fail := func(err error) (Report, error) {
		b.f.Abort()
		b.err = fmt.Errorf("flat: write %s: %w", b.path, err)
		return Report{}, b.err
	}
	if b.dim == 0 {
		return fail(errors.New("no vectors and no dimension"))
	}
	var n [4]byte
	for _, id := range b.ids {
		binary.LittleEndian.PutUint32(n[:], uint32(len(id)))
		b.bw.Write(n[:])
		b.bw.WriteString(id)
	}
	var rep Report
	ver := uint32(version)
	if b.opts.wantGraph(len(b.ids)) {
		g, r, err := b.opts.build(ctx, b.keep, b.dim, b.ids)
		if err != nil {
			b.f.Abort()
			b.err = fmt.Errorf("flat: write %s: %w", b.path, err)
			return Report{}, b.err
		}
		b.keep = nil
		if err := writeGraph(b.bw, g); err != nil {
			return fail(err)
		}
		rep, ver = r, versionGraph
	}
	if err := b.bw.Flush(); err != nil {
		return fail(err)
	}
	binary.LittleEndian.PutUint32(n[:], b.crc.Sum32())
	if _, err := b.f.Write(n[:]); err != nil {
		return fail(err)
	}
	hdr := make([]byte, headerSize+pad4(len(b.model)))
	copy(hdr, magic[:])
	binary.LittleEndian.PutUint32(hdr[8:], ver)
	binary.LittleEndian.PutUint32(hdr[12:], metricCosine)
	binary.LittleEndian.PutUint32(hdr[16:], uint32(b.dim))
	binary.LittleEndian.PutUint32(hdr[20:], uint32(len(b.model)))
	binary.LittleEndian.PutUint64(hdr[24:], uint64(len(b.ids)))
	copy(hdr[headerSize:], b.model)
	if _, err := b.f.WriteAt(hdr, 0); err != nil {
		return fail(err)
	}
	if err := b.f.Commit(); err != nil {
		b.err = fmt.Errorf("flat: %w", err)
		return Report{}, b.err
	}
	b.err = errors.New("flat: builder already committed")
	return rep, nil
}

// Abort drops the temporary file; the target is untouched. It is a no-op
// after Commit.
func (b *Builder) Abort() { b.f.Abort() }

// Write builds the index file at path from ids and their vectors in one
// call with the default BuildOptions; see Builder.
func Write(ctx context.Context, path, model string, ids []string, vecs [][]float32) error {
	_, err := WriteWith(ctx, path, model, ids, vecs, BuildOptions{})
	return err
}

// WriteWith is Write with options for the approximate index; the Report
// says whether it was built and the recall it measured.
func WriteWith(ctx context.Context, path, model string, ids []string, vecs [][]float32, opts BuildOptions) (Report, error) {
	if len(ids) != len(vecs) {
		return Report{}, fmt.Errorf("flat: write %s: %d ids for %d vectors", path, len(ids), len(vecs))
	}
	dim := 0
	if len(vecs) > 0 {
		dim = len(vecs[0])
	}
	b, err := CreateWith(path, model, dim, opts)
	if err != nil {
		return Report{}, err
	}
	defer b.Abort()
	if opts.ANN != ANNOff {
		b.keep = make([]float32, 0, len(vecs)*dim)
	}
	for i, id := range ids {
		if i%4096 == 0 && ctx.Err() != nil {
			return Report{}, fmt.Errorf("flat: write %s: %w", path, ctx.Err())
		}
		if err := b.Add(id, vecs[i]); err != nil {
			return Report{}, err
		}
	}
	return b.Finish(ctx)
}

// Options tune an opened Index. The zero value is fine.
type Options struct {
	// Workers is how many goroutines scan one query; 0 picks GOMAXPROCS
	// for indexes big enough to gain from it (over 2M floats) and 1 below.
	Workers int
	// Exact ignores the file's HNSW graph and scans every vector, the
	// reference the graph's recall is measured against.
	Exact bool
	// Ef overrides the efSearch the build chose (see Info().EfSearch):
	// higher finds more of the true nearest vectors, more slowly.
	Ef int
}

// Index is a cosine index held in memory: Search scans every vector, or
// walks the HNSW graph when the file has one (Info().ANN is "hnsw"). It is
// safe for concurrent use and holds no file open.
type Index struct {
	info    embedindex.Info
	vecs    []float32
	ids     []string
	workers int
	g       *graph // nil: exact
	ef      int
}

var _ embedindex.Index = (*Index)(nil)

// ErrCorrupt matches errors from Open for a file that is not an index, or
// is truncated or damaged.
var ErrCorrupt = errors.New("not a valid kgrag vector index")

// Open reads the index at path into memory. A file that is not an index,
// was cut short or is damaged fails with an error naming it and matching
// ErrCorrupt.
func Open(ctx context.Context, path string, opts Options) (*Index, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("flat: open %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("flat: open %s: %w", path, err)
	}
	ix, err := read(ctx, bufio.NewReaderSize(f, 1<<20), st.Size())
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("flat: open %s: %w", path, ctx.Err())
		}
		return nil, fmt.Errorf("flat: open %s: %w: %w; rebuild it with kgrag embed", path, ErrCorrupt, err)
	}
	ix.info.Path = path
	if opts.Exact {
		ix.g = nil
		ix.info.ANN, ix.info.Recall, ix.info.EfSearch = "", 0, 0
	}
	if ix.g != nil {
		ix.ef = ix.g.ef
		if opts.Ef > 0 {
			ix.ef = opts.Ef
		}
	}
	ix.workers = opts.Workers
	if ix.workers <= 0 {
		ix.workers = 1
		if len(ix.vecs) > 2<<20 {
			ix.workers = runtime.GOMAXPROCS(0)
		}
	}
	return ix, nil
}

func read(ctx context.Context, r io.Reader, size int64) (*Index, error) {
	var hdr header
	if err := binary.Read(r, binary.LittleEndian, &hdr); err != nil {
		return nil, short(err)
	}
	if hdr.Magic != magic {
		return nil, errors.New("bad magic")
	}
	if hdr.Version != version && hdr.Version != versionGraph {
		return nil, fmt.Errorf("version %d, this kgrag reads %d and %d", hdr.Version, version, versionGraph)
	}
	if hdr.Metric != metricCosine {
		return nil, fmt.Errorf("unknown metric %d", hdr.Metric)
	}
	if hdr.Dim == 0 || hdr.Dim > maxDim || hdr.MLen > 1<<16 {
		return nil, fmt.Errorf("implausible header (dim %d, model name length %d)", hdr.Dim, hdr.MLen)
	}
	body := int64(headerSize+pad4(int(hdr.MLen))) + 4
	if hdr.Count > uint64(size) || int64(hdr.Count)*(int64(hdr.Dim)*4+4)+body > size {
		return nil, fmt.Errorf("file ends early: truncated (header says %d vectors of %d dimensions, file has %d bytes)",
			hdr.Count, hdr.Dim, size)
	}
	model := make([]byte, pad4(int(hdr.MLen)))
	if _, err := io.ReadFull(r, model); err != nil {
		return nil, short(err)
	}
	crc := crc32.New(castagnoli)
	tr := io.TeeReader(r, crc)
	count, dim := int(hdr.Count), int(hdr.Dim)
	vecs := make([]float32, count*dim)
	const chunk = 1 << 18
	for lo := 0; lo < len(vecs); lo += chunk {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err := binary.Read(tr, binary.LittleEndian, vecs[lo:min(lo+chunk, len(vecs))]); err != nil {
			return nil, short(err)
		}
	}
	ids := make([]string, count)
	var n [4]byte
	for i := range ids {
		if _, err := io.ReadFull(tr, n[:]); err != nil {
			return nil, short(err)
		}
		l := binary.LittleEndian.Uint32(n[:])
		if int64(l) > size {
			return nil, fmt.Errorf("id %d: implausible length %d", i, l)
		}
		b := make([]byte, l)
		if _, err := io.ReadFull(tr, b); err != nil {
			return nil, short(err)
		}
		ids[i] = string(b)
	}
	var g *graph
	if hdr.Version == versionGraph {
		var err error
		if g, err = readGraph(ctx, tr, count, size); err != nil {
			return nil, err
		}
	}
	want := crc.Sum32()
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, short(err)
	}
	if binary.LittleEndian.Uint32(n[:]) != want {
		return nil, errors.New("checksum mismatch: damaged")
	}
	if _, err := r.Read(n[:1]); err != io.EOF {
		return nil, errors.New("data after the checksum")
	}
	ix := &Index{
		info: embedindex.Info{Model: string(model[:hdr.MLen]), Dim: dim, Count: count, Metric: embedindex.MetricCosine},
		vecs: vecs, ids: ids, g: g,
	}
	if g != nil {
		ix.info.ANN, ix.info.Recall, ix.info.EfSearch = ANNName, float64(g.recall), g.ef
	}
	return ix, nil
}

func short(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("file ends early: truncated")
	}
	return err
}

// Info describes the index.
func (ix *Index) Info() embedindex.Info { return ix.info }

// IDs returns the ids in file order; the slice is shared, do not modify.
func (ix *Index) IDs() []string { return ix.ids }

// Search returns the k ids whose vectors have the highest cosine
// similarity to vec, best first, ties broken by smaller id. vec need not
// be normalised. A vec of the wrong length matches
// embedindex.ErrDimMismatch.
func (ix *Index) Search(ctx context.Context, vec []float32, k int) ([]embedindex.Hit, error) {
	if len(vec) != ix.info.Dim {
		return nil, &embedindex.MismatchError{Path: ix.info.Path, IndexModel: ix.info.Model, IndexDim: ix.info.Dim,
			QueryDim: len(vec), Kind: embedindex.ErrDimMismatch}
	}
	if k <= 0 || ix.info.Count == 0 {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("flat: search %s: %w", ix.info.Path, err)
	}
	q := normalised(vec)
	k = min(k, ix.info.Count)
	if ix.g != nil {
		return ix.searchGraph(ctx, q, k, max(ix.ef, k))
	}
	return ix.exact(q, k), nil
}

// exact is the full scan for a unit query q.
func (ix *Index) exact(q []float32, k int) []embedindex.Hit {
	workers := min(ix.workers, max(1, ix.info.Count/1024))
	var top *topK
	if workers == 1 {
		top = ix.scan(q, 0, ix.info.Count, k)
	} else {
		parts := make([]*topK, workers)
		var wg sync.WaitGroup
		per := (ix.info.Count + workers - 1) / workers
		for w := range workers {
			wg.Go(func() {
				lo := w * per
				parts[w] = ix.scan(q, lo, min(lo+per, ix.info.Count), k)
			})
		}
		wg.Wait()
		top = parts[0]
		for _, p := range parts[1:] {
			for i := range p.rows {
				top.offer(p.scores[i], p.rows[i])
			}
		}
	}
	return top.sorted()
}

func normalised(vec []float32) []float32 {
	var sum float64
	for _, x := range vec {
		sum += float64(x) * float64(x)
	}
	q := make([]float32, len(vec))
	if sum == 0 {
		return q
	}
	s := 1 / math.Sqrt(sum)
	for i, x := range vec {
		q[i] = float32(float64(x) * s)
	}
	return q
}

// scan scores rows [lo, hi) and keeps the best k.
func (ix *Index) scan(q []float32, lo, hi, k int) *topK {
	t := &topK{ids: ix.ids, k: k, rows: make([]int32, 0, k), scores: make([]float32, 0, k)}
	dim := len(q)
	for r := lo; r < hi; r++ {
		s := dot(q, ix.vecs[r*dim:(r+1)*dim])
		if len(t.rows) == k && s < t.scores[0] {
			continue // the common case: worse than the worst kept
		}
		t.offer(s, int32(r))
	}
	return t
}

// dotGo is the inner product of two vectors of equal length, unrolled by 8
// with four accumulators so the adds do not wait on one another: dot on
// machines without AVX2 and FMA, and its reference in tests. It runs
// at about one multiply-add a cycle, the bound of scalar code that loads
// two floats per multiply-add. Scoring four rows per pass to share the
// query's loads was 1.5x faster on cached data but 1.7-2x slower over a
// 100k-row scan, so rows go one at a time.
func dotGo(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		aa := a[i : i+8 : i+8]
		bb := b[i : i+8 : i+8]
		s0 += aa[0]*bb[0] + aa[4]*bb[4]
		s1 += aa[1]*bb[1] + aa[5]*bb[5]
		s2 += aa[2]*bb[2] + aa[6]*bb[6]
		s3 += aa[3]*bb[3] + aa[7]*bb[7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// topK is a bounded min-heap of the best k rows seen, the worst at the
// root; "worse" is a lower score, or an equal score and a larger id.
type topK struct {
	ids    []string
	k      int
	rows   []int32
	scores []float32
}

func (t *topK) worse(i, j int) bool {
	if t.scores[i] != t.scores[j] {
		return t.scores[i] < t.scores[j]
	}
	return t.ids[t.rows[i]] > t.ids[t.rows[j]]
}

func (t *topK) swap(i, j int) {
	t.rows[i], t.rows[j] = t.rows[j], t.rows[i]
	t.scores[i], t.scores[j] = t.scores[j], t.scores[i]
}

func (t *topK) offer(s float32, row int32) {
	if len(t.rows) < t.k {
		t.rows = append(t.rows, row)
		t.scores = append(t.scores, s)
		for i := len(t.rows) - 1; i > 0; {
			p := (i - 1) / 2
			if !t.worse(i, p) {
				break
			}
			t.swap(i, p)
			i = p
		}
		return
	}
	if s < t.scores[0] || (s == t.scores[0] && t.ids[row] >= t.ids[t.rows[0]]) {
		return
	}
	t.rows[0], t.scores[0] = row, s
	t.siftDown()
}

// siftDown restores the heap order after the root was replaced.
func (t *topK) siftDown() {
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(t.rows) && t.worse(l, m) {
			m = l
		}
		if r < len(t.rows) && t.worse(r, m) {
			m = r
		}
		if m == i {
			return
		}
		t.swap(i, m)
		i = m
	}
}

// sorted empties the heap into hits, best first.
func (t *topK) sorted() []embedindex.Hit {
	out := make([]embedindex.Hit, len(t.rows))
	for n := len(t.rows) - 1; n >= 0; n-- {
		out[n] = embedindex.Hit{ID: t.ids[t.rows[0]], Score: t.scores[0]}
		last := len(t.rows) - 1
		t.swap(0, last)
		t.rows, t.scores = t.rows[:last], t.scores[:last]
		t.siftDown()
	}
	return out
}
