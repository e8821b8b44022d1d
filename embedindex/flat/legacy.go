package flat

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/kgrag/kgrag/embedindex"
)

// Versions 1 and 2, which kgrag wrote before version 3, are read whole
// into the heap, as kgrag read them then: their sections are not aligned
// for a mapping, and one checksum covers everything. Their layout,
// little-endian:
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
//	  header   graphHeaderSize bytes (ann.go)
//	  levels   [count]uint8, zero-padded to a multiple of 4
//	  links0   [count*2m]int32, each row's level-0 links, -1 after the last
//	  upper    for each row r with levels[r] > 0, in row order:
//	           [levels[r]*m]int32, its links on levels 1..levels[r]
//	crc     uint32  CRC-32C of vectors, ids and graph
const (
	version      = 1
	versionGraph = 2
	headerSize   = 32
)

type header struct {
	Magic   [8]byte
	Version uint32
	Metric  uint32
	Dim     uint32
	MLen    uint32
	Count   uint64
}

func pad4(n int) int { return (n + 3) &^ 3 }

// readLegacy reads a version 1 or 2 file of size bytes from r.
func readLegacy(ctx context.Context, r io.Reader, size int64) (*Index, error) {
	var hdr header
	if err := binary.Read(r, binary.LittleEndian, &hdr); err != nil {
		return nil, short(err)
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
	ids := idTable{off: make([]uint64, count+1)}
	var n [4]byte
	for i := range count {
		if _, err := io.ReadFull(tr, n[:]); err != nil {
			return nil, short(err)
		}
		l := binary.LittleEndian.Uint32(n[:])
		if int64(l) > size {
			return nil, fmt.Errorf("id %d: implausible length %d", i, l)
		}
		at := len(ids.blob)
		ids.blob = append(ids.blob, make([]byte, l)...)
		if _, err := io.ReadFull(tr, ids.blob[at:]); err != nil {
			return nil, short(err)
		}
		ids.off[i+1] = uint64(len(ids.blob))
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
	return &Index{
		info: embedindex.Info{Model: string(model[:hdr.MLen]), Dim: dim, Count: count, Metric: embedindex.MetricCosine},
		vecs: vecs, ids: ids, g: g,
	}, nil
}

func short(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errTruncated
	}
	return err
}

// readGraph reads and checks the version 2 graph section of an index of
// n rows in a file of size bytes.
func readGraph(ctx context.Context, r io.Reader, n int, size int64) (*graph, error) {
	hdr := make([]byte, graphHeaderSize)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, short(err)
	}
	g, err := parseGraphHeader(hdr, n)
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	if int64(n)*int64(2*g.m)*4 > size {
		return nil, errors.New("file ends early: truncated (graph section)")
	}
	levels := make([]byte, pad4(n))
	if _, err := io.ReadFull(r, levels); err != nil {
		return nil, short(err)
	}
	g.levels = levels[:n]
	g.upOff = make([]uint32, n+1)
	for row, lv := range g.levels {
		if int(lv) > g.maxLevel {
			return nil, fmt.Errorf("graph section: row %d on level %d, above the top level %d", row, lv, g.maxLevel)
		}
		g.upOff[row+1] = g.upOff[row] + uint32(int(lv)*g.m)
	}
	if int64(g.upOff[n])*4 > size {
		return nil, errors.New("file ends early: truncated (graph section)")
	}
	g.l0 = make([]int32, n*2*g.m)
	g.up = make([]int32, g.upOff[n])
	const chunk = 1 << 18
	for _, links := range [][]int32{g.l0, g.up} {
		for lo := 0; lo < len(links); lo += chunk {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if err := binary.Read(r, le, links[lo:min(lo+chunk, len(links))]); err != nil {
				return nil, short(err)
			}
		}
	}
	return g, g.check(n)
}
