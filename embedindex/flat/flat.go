package flat

import (
	"bufio"
	"bytes"
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
	"strings"
	"sync"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/internal/atomicfile"
	"github.com/kgrag/kgrag/internal/mmapfile"
)

// The file layouts are described in format.go (version 3, written) and
// legacy.go (versions 1 and 2, read).
var (
	magic      = [8]byte{'K', 'G', 'V', 'E', 'C', 'I', 'D', 'X'}
	graphMagic = [4]byte{'H', 'N', 'S', 'W'}
)

const (
	metricCosine = 1
	maxDim       = 1 << 16
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Builder writes an index file: vectors stream to a temporary file next to
// the target, which replaces the target only on Commit, so a reader never
// sees a half-written index and a failed build leaves the old one. It is
// not safe for concurrent use.
type Builder struct {
	f     *atomicfile.File
	bw    *bufio.Writer
	crc   hash.Hash32 // of the vectors
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
	if _, err := f.Seek(align(header3Size+int64(len(model)), 64), io.SeekStart); err != nil {
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
	var rep Report
	var g *graph
	if b.opts.wantGraph(len(b.ids)) {
		var err error
		if g, rep, err = b.opts.build(ctx, b.keep, b.dim, b.ids); err != nil {
			return fail(err)
		}
		if !rep.Met && b.opts.ANN == ANNAuto {
			// A graph that misses the target even at the widest search
			// would lose answers the scan finds: keep the scan.
			g, rep.ANN, rep.Exact = nil, false, true
		}
	}
	b.keep = nil
	if err := b.bw.Flush(); err != nil {
		return fail(err)
	}
	vecOff := align(header3Size+int64(len(b.model)), 64)
	vecEnd := vecOff + int64(len(b.ids))*int64(b.dim)*4
	if _, err := b.f.Write(make([]byte, align(vecEnd, 8)-vecEnd)); err != nil {
		return fail(err)
	}
	mcrc := crc32.New(castagnoli)
	w := bufio.NewWriterSize(io.MultiWriter(b.f, mcrc), 1<<20)
	ids := newIDTable(b.ids)
	writeSlice(w, ids.off)
	w.Write(ids.blob)
	flags := uint32(0)
	if g != nil {
		flags |= flagGraph
		end := align(vecEnd, 8) + 8*int64(len(ids.off)) + int64(len(ids.blob))
		w.Write(make([]byte, align(end, 8)-end))
		if err := writeGraph3(w, g); err != nil {
			return fail(err)
		}
	}
	if err := w.Flush(); err != nil {
		return fail(err)
	}
	hdr := make([]byte, vecOff)
	copy(hdr, magic[:])
	le := binary.LittleEndian
	le.PutUint32(hdr[8:], versionMapped)
	le.PutUint32(hdr[12:], metricCosine)
	le.PutUint32(hdr[16:], uint32(b.dim))
	le.PutUint32(hdr[20:], uint32(len(b.model)))
	le.PutUint64(hdr[24:], uint64(len(b.ids)))
	le.PutUint32(hdr[32:], flags)
	le.PutUint32(hdr[36:], b.crc.Sum32())
	copy(hdr[header3Size:], b.model)
	var n [4]byte
	le.PutUint32(n[:], crc32.Update(mcrc.Sum32(), castagnoli, hdr))
	if _, err := b.f.Write(n[:]); err != nil {
		return fail(err)
	}
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
	// Read reads the whole file into the heap and checks every checksum,
	// as Open does on platforms without memory mappings, instead of
	// mapping it. Searches answer the same either way.
	Read bool
}

// Index is a cosine index: Search scans every vector, or walks the HNSW
// graph when the file has one (Info().ANN is "hnsw"). A version 3 file is
// memory-mapped, so opening costs little at any size and the vectors are
// paged in as searches touch them; older versions are read into the
// heap. It is safe for concurrent use. Close releases the mapping; Search
// and Verify fail with ErrClosed after it.
type Index struct {
	info    embedindex.Info
	vecs    []float32
	ids     idTable
	workers int
	g       *graph // nil: exact
	ef      int

	mu     sync.RWMutex // held shared by searches, exclusively by Close
	closed bool
	file   *mapped      // version 3: the file's bytes; nil for older versions
	unmap  func() error // releases file.data
}

var _ embedindex.Index = (*Index)(nil)

// ErrCorrupt matches errors from Open and Verify for a file that is not
// an index, or is truncated or damaged.
var ErrCorrupt = errors.New("not a valid kgrag vector index")

// ErrClosed matches errors from Search and Verify after Close.
var ErrClosed = errors.New("vector index is closed")

// Open opens the index at path. A file that is not an index, was cut
// short or is damaged fails with an error naming it and matching
// ErrCorrupt; for a version 3 file that holds over 64 MiB of vectors
// "damaged" covers the header, ids and graph, and Verify checks the
// vectors (which Open would otherwise have to read whole). The caller
// closes the Index.
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
	corrupt := func(err error) error {
		if ctx.Err() != nil {
			return fmt.Errorf("flat: open %s: %w", path, ctx.Err())
		}
		return fmt.Errorf("flat: open %s: %w: %w; rebuild it with kgrag embed", path, ErrCorrupt, err)
	}
	var head [12]byte
	if n, _ := f.ReadAt(head[:], 0); n < len(head) {
		return nil, corrupt(errTruncated)
	}
	if [8]byte(head[:8]) != magic {
		return nil, corrupt(errors.New("bad magic"))
	}
	var ix *Index
	switch v := binary.LittleEndian.Uint32(head[8:]); v {
	case version, versionGraph:
		if ix, err = readLegacy(ctx, bufio.NewReaderSize(f, 1<<20), st.Size()); err != nil {
			return nil, corrupt(err)
		}
	case versionMapped:
		// A big-endian host decodes the numbers anyway: it reads.
		read := mmapfile.Read
		if !opts.Read && hostLE {
			read = mmapfile.FromFile
		}
		mf, err := read(f, st.Size())
		if err != nil {
			return nil, fmt.Errorf("flat: open %s: %w", path, err)
		}
		var m *mapped
		if ix, m, err = parse3(mf.Data(), opts.Read); err != nil {
			mf.Close()
			return nil, corrupt(err)
		}
		ix.file, ix.unmap = m, mf.Close
	default:
		return nil, corrupt(fmt.Errorf("version %d, this kgrag reads %d to %d", v, version, versionMapped))
	}
	ix.info.Path = path
	if ix.g != nil {
		ix.info.ANN, ix.info.Recall, ix.info.EfSearch = ANNName, float64(ix.g.recall), ix.g.ef
	}
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
	ix.info.Windows = bytes.Count(ix.ids.blob, []byte(windowMark))
	ix.workers = opts.Workers
	if ix.workers <= 0 {
		ix.workers = 1
		if len(ix.vecs) > 2<<20 {
			ix.workers = runtime.GOMAXPROCS(0)
		}
	}
	return ix, nil
}

// Close releases the file's mapping, after searches under way return.
// Search and Verify fail with ErrClosed after it; hits already returned
// stay valid. Closing again does nothing.
func (ix *Index) Close() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return nil
	}
	ix.closed = true
	ix.vecs, ix.ids, ix.g = nil, idTable{}, nil
	if ix.unmap != nil {
		if err := ix.unmap(); err != nil {
			return fmt.Errorf("flat: close %s: %w", ix.info.Path, err)
		}
	}
	return nil
}

// Verify checks the vectors against their checksum: Open checks the
// rest, and the vectors too when they are small or the file is of an
// older version, so Verify then returns at once. On a million vectors of
// 768 dimensions it reads 3 GB. A damaged file fails with an error
// naming it and matching ErrCorrupt; ctx stops it between 16 MiB chunks.
func (ix *Index) Verify(ctx context.Context) error {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return fmt.Errorf("flat: verify %s: %w", ix.info.Path, ErrClosed)
	}
	if ix.file == nil || ix.file.checked {
		return nil
	}
	if err := ix.file.verify(ctx.Err); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("flat: verify %s: %w", ix.info.Path, err)
		}
		return fmt.Errorf("flat: verify %s: %w: %w; rebuild it with kgrag embed", ix.info.Path, ErrCorrupt, err)
	}
	return nil
}

// Info describes the index.
func (ix *Index) Info() embedindex.Info { return ix.info }

// IDs returns the ids in file order, a new slice on each call (nil after
// Close).
func (ix *Index) IDs() []string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return nil
	}
	out := make([]string, ix.info.Count)
	for r := range out {
		out[r] = ix.ids.str(int32(r))
	}
	return out
}

// Search returns the k ids whose vectors have the highest cosine
// similarity to vec, best first, ties broken by smaller id. vec need not
// be normalised. A vec of the wrong length matches
// embedindex.ErrDimMismatch; after Close, Search fails with ErrClosed.
func (ix *Index) Search(ctx context.Context, vec []float32, k int) ([]embedindex.Hit, error) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return nil, fmt.Errorf("flat: search %s: %w", ix.info.Path, ErrClosed)
	}
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
	search := func(ctx context.Context, k int) ([]embedindex.Hit, error) {
		k = min(k, ix.info.Count)
		if ix.g != nil {
			return ix.searchGraph(ctx, q, k, max(ix.ef, k))
		}
		return ix.exact(q, k), nil
	}
	if ix.info.Windows > 0 {
		return embedindex.Distinct(ctx, k, search)
	}
	return search(ctx, k)
}

// windowMark is what every window id after a text's first holds
// (embedindex.WindowID), to count them at Open.
var windowMark = strings.TrimSuffix(embedindex.WindowID("", 1), "1")

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
	ids    idTable
	k      int
	rows   []int32
	scores []float32
}

func (t *topK) worse(i, j int) bool {
	if t.scores[i] != t.scores[j] {
		return t.scores[i] < t.scores[j]
	}
	return t.ids.less(t.rows[j], t.rows[i])
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
	if s < t.scores[0] || (s == t.scores[0] && !t.ids.less(row, t.rows[0])) {
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
		out[n] = embedindex.Hit{ID: t.ids.str(t.rows[0]), Score: t.scores[0]}
		last := len(t.rows) - 1
		t.swap(0, last)
		t.rows, t.scores = t.rows[:last], t.scores[:last]
		t.siftDown()
	}
	return out
}
