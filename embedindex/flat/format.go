package flat

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"unsafe"

	"github.com/kgrag/kgrag/embedindex"
)

// File layout of version 3, little-endian, which kgrag writes; versions 1
// and 2 (legacy.go) are still read. Every section starts at an offset its
// element size divides, so a reader on a little-endian host serves the
// vectors, ids and graph straight from a memory mapping of the file:
//
//	0   magic    [8]byte "KGVECIDX"
//	8   version  uint32  3
//	12  metric   uint32  1 = cosine
//	16  dim      uint32
//	20  mlen     uint32  length of model
//	24  count    uint64
//	32  flags    uint32  bit 0: a graph section follows the ids
//	36  vcrc     uint32  CRC-32C of the vectors section
//	40  zero     [24]byte
//	64  model    [mlen]byte, zero-padded to a multiple of 64
//	    vectors  [count*dim]float32, each of unit length (or all zero),
//	             zero-padded to a multiple of 8 bytes
//	    ids      offsets [count+1]uint64 into the bytes that follow, from
//	             0; row r's id is bytes[offsets[r]:offsets[r+1]]
//	             bytes   [offsets[count]]byte
//	    graph    (flags bit 0), after zero padding to a multiple of 8:
//	      header   40 bytes, as in version 2 (ann.go: writeGraphHeader)
//	      levels   [count]uint8, zero-padded to a multiple of 8
//	      upOff    [count+1]uint32, zero-padded to a multiple of 8: row r's
//	               links on levels 1.. are upper[upOff[r]:upOff[r+1]]
//	      links0   [count*2m]int32, each row's level-0 links, -1 after the last
//	      upper    [upOff[count]]int32
//	    mcrc     uint32  CRC-32C of everything from the ids to the end of
//	             the graph, then of the header and model (the bytes before
//	             the vectors)
//
// Two checksums so that opening does not read every vector: mcrc covers
// what a damaged byte could turn into a wrong offset or link and is
// checked at every Open; vcrc covers the vectors (3 GB at 1M x 768), which
// a damaged byte can only make score wrongly, and is checked by Verify,
// and by Open when they are small (verifyAtOpen).
const (
	versionMapped = 3
	header3Size   = 64
	flagGraph     = 1
	// verifyAtOpen is the size of vectors up to which Open checks vcrc,
	// about 10 ms of CRC: small indexes stay fully checked on every open.
	verifyAtOpen = 64 << 20
)

var errTruncated = errors.New("file ends early: truncated")

func align(n, to int64) int64 { return (n + to - 1) / to * to }

// hostLE is whether the host stores numbers little-endian, as the file
// does, so that its bytes can be used in place.
var hostLE = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// number is what the file holds in arrays.
type number interface {
	float32 | int32 | uint32 | uint64
}

// view returns the first n elements of b as a []T: b itself when the host
// is little-endian and b is aligned for T, else a decoded copy.
func view[T number](b []byte, n int) []T {
	var z T
	size := int(unsafe.Sizeof(z))
	b = b[:n*size]
	if n == 0 {
		return []T{}
	}
	if hostLE && uintptr(unsafe.Pointer(&b[0]))%uintptr(size) == 0 {
		return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n)
	}
	out := make([]T, n)
	binary.Read(bytes.NewReader(b), binary.LittleEndian, out) // cannot fail: b holds n elements
	return out
}

// writeSlice writes s little-endian: its own bytes on a little-endian
// host (no copy of a graph's hundreds of megabytes).
func writeSlice[T number](w io.Writer, s []T) error {
	if len(s) == 0 {
		return nil
	}
	if hostLE {
		var z T
		_, err := w.Write(unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(z))))
		return err
	}
	return binary.Write(w, binary.LittleEndian, s)
}

// idTable holds the rows' ids: row r's is blob[off[r]:off[r+1]]. It lives
// in the heap or in the mapping; strings handed out are copies, so they
// outlive Close.
type idTable struct {
	off  []uint64
	blob []byte
}

func newIDTable(ids []string) idTable {
	t := idTable{off: make([]uint64, len(ids)+1)}
	n := 0
	for _, id := range ids {
		n += len(id)
	}
	t.blob = make([]byte, 0, n)
	for i, id := range ids {
		t.blob = append(t.blob, id...)
		t.off[i+1] = uint64(len(t.blob))
	}
	return t
}

func (t idTable) bytes(r int32) []byte { return t.blob[t.off[r]:t.off[r+1]] }
func (t idTable) str(r int32) string   { return string(t.bytes(r)) }

// less orders rows by id.
func (t idTable) less(a, b int32) bool { return bytes.Compare(t.bytes(a), t.bytes(b)) < 0 }

// mapped is a version 3 file's bytes, mapped or read, and where its
// sections are.
type mapped struct {
	data    []byte
	vecOff  int64
	vecEnd  int64
	vcrc    uint32
	checked bool // vcrc was checked
}

// parse3 reads the version 3 file in data: the header, the sizes of every
// section (a cut file is "truncated"), mcrc, then the structure (offsets
// in order, links within range, the entry point on the top level), so
// that no search can index out of range later. It checks the vectors
// against vcrc when they are small, or always when all is set: the
// checksum costs a read of every vector, paid at open only where it is
// cheap, or where the file was read whole anyway.
func parse3(data []byte, all bool) (*Index, *mapped, error) {
	size := int64(len(data))
	if size < header3Size {
		return nil, nil, errTruncated
	}
	le := binary.LittleEndian
	metric, dim, mlen := le.Uint32(data[12:]), int64(le.Uint32(data[16:])), int64(le.Uint32(data[20:]))
	count, flags, vcrc := le.Uint64(data[24:]), le.Uint32(data[32:]), le.Uint32(data[36:])
	switch {
	case metric != metricCosine:
		return nil, nil, fmt.Errorf("unknown metric %d", metric)
	case dim == 0 || dim > maxDim || mlen > 1<<16:
		return nil, nil, fmt.Errorf("implausible header (dim %d, model name length %d)", dim, mlen)
	case flags&^flagGraph != 0:
		return nil, nil, fmt.Errorf("unknown flags %#x (written by a newer kgrag?)", flags)
	case !bytes.Equal(data[40:header3Size], make([]byte, header3Size-40)):
		return nil, nil, errors.New("header: reserved bytes are not zero")
	}
	vecOff := align(header3Size+mlen, 64)
	if count > math.MaxInt32 || vecOff+int64(count)*(dim*4+8)+12 > size {
		return nil, nil, fmt.Errorf("file ends early: truncated (header says %d vectors of %d dimensions, file has %d bytes)",
			count, dim, size)
	}
	n := int64(count)
	vecEnd := vecOff + n*dim*4
	idsOff := align(vecEnd, 8)
	blobOff := idsOff + 8*(n+1)
	if blobOff+4 > size {
		return nil, nil, errTruncated
	}
	off := view[uint64](data[idsOff:blobOff], int(n)+1)
	if off[0] != 0 {
		return nil, nil, fmt.Errorf("ids: first offset %d, not 0", off[0])
	}
	if off[n] > uint64(size-blobOff-4) {
		return nil, nil, fmt.Errorf("file ends early: truncated (ids of %d bytes, %d left)", off[n], size-blobOff-4)
	}
	blobEnd := blobOff + int64(off[n])
	end := blobEnd
	var g *graph
	if flags&flagGraph != 0 {
		var err error
		if g, end, err = graphSection(data, align(blobEnd, 8), int(n)); err != nil {
			return nil, nil, err
		}
	}
	switch {
	case end+4 > size:
		return nil, nil, errTruncated
	case end+4 < size:
		return nil, nil, errors.New("data after the checksum")
	}
	crc := crc32.Update(crc32.Checksum(data[idsOff:end], castagnoli), castagnoli, data[:vecOff])
	if crc != le.Uint32(data[end:]) {
		return nil, nil, errors.New("checksum mismatch: damaged (ids, graph or header)")
	}
	// The bytes are as written; what follows catches a file written wrong.
	for r := range n {
		if off[r] > off[r+1] {
			return nil, nil, fmt.Errorf("ids: offsets out of order at row %d", r)
		}
	}
	if g != nil {
		if err := g.check(int(n)); err != nil {
			return nil, nil, err
		}
	}
	m := &mapped{data: data, vecOff: vecOff, vecEnd: vecEnd, vcrc: vcrc}
	if all || vecEnd-vecOff <= verifyAtOpen {
		if err := m.verify(nil); err != nil {
			return nil, nil, err
		}
	}
	ix := &Index{
		info: embedindex.Info{Model: string(data[header3Size : header3Size+mlen]), Dim: int(dim), Count: int(n),
			Metric: embedindex.MetricCosine},
		vecs: view[float32](data[vecOff:vecEnd], int(n*dim)),
		ids:  idTable{off: off, blob: data[blobOff:blobEnd]},
		g:    g,
	}
	return ix, m, nil
}

// verify checks the vectors against vcrc, checking a non-nil done
// between 16 MiB chunks.
func (m *mapped) verify(done func() error) error {
	const chunk = 16 << 20
	var crc uint32
	for lo := m.vecOff; lo < m.vecEnd; lo += chunk {
		if done != nil {
			if err := done(); err != nil {
				return err
			}
		}
		crc = crc32.Update(crc, castagnoli, m.data[lo:min(lo+chunk, m.vecEnd)])
	}
	if crc != m.vcrc {
		return errors.New("vectors: checksum mismatch: damaged")
	}
	m.checked = true
	return nil
}

// graphSection locates the graph section at off in a file of n rows and
// returns it (its slices over data) and where it ends. Sizes are checked;
// links and levels are left to graph.check, after the checksum.
func graphSection(data []byte, off int64, n int) (*graph, int64, error) {
	size := int64(len(data)) - 4 // the checksum follows
	need := func(at, k int64) error {
		if at+k > size {
			return errors.New("file ends early: truncated (graph section)")
		}
		return nil
	}
	if err := need(off, graphHeaderSize); err != nil {
		return nil, 0, err
	}
	g, err := parseGraphHeader(data[off:off+graphHeaderSize], n)
	if err != nil {
		return nil, 0, err
	}
	at := off + graphHeaderSize
	n64 := int64(n)
	upAt := align(at+n64, 8)
	l0At := align(upAt+4*(n64+1), 8)
	l0Len := n64 * int64(2*g.m) * 4
	if err := need(at, l0At-at+l0Len); err != nil {
		return nil, 0, err
	}
	g.levels = data[at : at+n64]
	g.upOff = view[uint32](data[upAt:], n+1)
	g.l0 = view[int32](data[l0At:], n*2*g.m)
	upperAt := l0At + l0Len
	upLen := int64(g.upOff[n]) * 4
	if err := need(upperAt, upLen); err != nil {
		return nil, 0, err
	}
	g.up = view[int32](data[upperAt:], int(g.upOff[n]))
	return g, upperAt + upLen, nil
}

// writeGraph3 writes the graph section of version 3 at a multiple of 8.
func writeGraph3(w io.Writer, g *graph) error {
	n := len(g.levels)
	if err := writeGraphHeader(w, g); err != nil {
		return err
	}
	levels := make([]byte, align(int64(n), 8))
	copy(levels, g.levels)
	if _, err := w.Write(levels); err != nil {
		return err
	}
	if err := writeSlice(w, g.upOff); err != nil {
		return err
	}
	if (n+1)%2 == 1 {
		if _, err := w.Write(make([]byte, 4)); err != nil {
			return err
		}
	}
	if err := writeSlice(w, g.l0); err != nil {
		return err
	}
	return writeSlice(w, g.up)
}
