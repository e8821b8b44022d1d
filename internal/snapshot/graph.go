package snapshot

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/atomicfile"
	"github.com/kgrag/kgrag/internal/mmapfile"
)

// File is the snapshot's name in kgrag embed's index folder.
const File = "graph.snap"

// Graph is a snapshot, mapped from a file (Open) or built in memory
// (Build). Lookups decode records on each call and return copies, so
// nothing returned refers to the file. It is safe for concurrent use;
// after Close every lookup fails with mmapfile.ErrClosed.
type Graph struct {
	path   string
	m      *mmapfile.Map // nil when built in memory
	closed atomic.Bool
	sec    [numSections][]byte
	meta   Meta
}

// ErrCorrupt matches errors for a file that is not a snapshot or is
// damaged.
var ErrCorrupt = errors.New("not a valid kgrag graph snapshot")

// Build lays out ds as a snapshot in memory. Each section stays the slice
// it was made in (no file image is assembled), so the tables cost their
// size once; ds is not referred to afterwards.
func Build(ds *graphrag.Dataset) *Graph {
	g := &Graph{path: "(memory)"}
	encode(ds, Meta{}, func(sec int, b []byte) error {
		g.sec[sec] = b
		return nil
	})
	if err := g.load(); err != nil {
		panic(fmt.Sprintf("snapshot: built a snapshot that does not read back: %v", err))
	}
	return g
}

// WriteFile writes the snapshot of ds, which was read from dir, to path;
// the file replaces path only when it is complete. The files of dir are
// recorded as they were when ds was read, which the caller asserts by
// passing them (Stat before reading ds): a table rewritten while ds was
// being read then makes the snapshot stale, not wrong.
func WriteFile(ctx context.Context, path string, ds *graphrag.Dataset, files []FileStat) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f, err := atomicfile.Create(path)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if err := encodeTo(f, ds, Meta{Files: files}); err != nil {
		f.Abort()
		return fmt.Errorf("snapshot: write %s: %w", path, err)
	}
	if err := f.Commit(); err != nil {
		return fmt.Errorf("snapshot: write %s: %w", path, err)
	}
	return nil
}

// Open maps the snapshot at path. Only the header and the meta section
// are read; a file that is not a snapshot, or whose header or section
// table is damaged, fails with an error matching ErrCorrupt.
func Open(path string) (*Graph, error) {
	m, err := mmapfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("snapshot: open: %w", err)
	}
	g, err := parse(m.Data(), path)
	if err != nil {
		m.Close()
		return nil, err
	}
	g.m = m
	return g, nil
}

// Close unmaps the file.
func (g *Graph) Close() error {
	if g.closed.Swap(true) || g.m == nil {
		return nil
	}
	return g.m.Close()
}

// Meta says what the snapshot holds and was built from.
func (g *Graph) Meta() Meta { return g.meta }

// Path is the file, or "(memory)".
func (g *Graph) Path() string { return g.path }

func parse(data []byte, path string) (*Graph, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("snapshot: %s: %w: %s; rebuild it with kgrag embed", path, ErrCorrupt, fmt.Sprintf(format, args...))
	}
	if len(data) < headerSize || !bytes.Equal(data[:8], magic[:]) {
		return nil, bad("no snapshot header")
	}
	if v := binary.LittleEndian.Uint32(data[8:]); v != version {
		return nil, bad("version %d, this kgrag reads %d", v, version)
	}
	if n := binary.LittleEndian.Uint32(data[12:]); n != numSections {
		return nil, bad("%d sections, version %d has %d", n, version, numSections)
	}
	g := &Graph{path: path}
	for i := range g.sec {
		off := binary.LittleEndian.Uint64(data[16+16*i:])
		n := binary.LittleEndian.Uint64(data[24+16*i:])
		if off < headerSize || off > uint64(len(data)) || n > uint64(len(data))-off || off%8 != 0 {
			return nil, bad("section %d (%d bytes at %d) lies outside the file of %d bytes: truncated?", i, n, off, len(data))
		}
		g.sec[i] = data[off : off+n : off+n]
	}
	if crc := binary.LittleEndian.Uint32(data[headerSize-8:]); crc != headerCRC(data[:headerSize-8], g.sec[secMeta]) {
		return nil, bad("header checksum mismatch")
	}
	if err := g.load(); err != nil {
		return nil, err
	}
	return g, nil
}

// load reads the meta section and checks every section's size against
// the counts it gives.
func (g *Graph) load() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("snapshot: %s: %w: %s; rebuild it with kgrag embed", g.path, ErrCorrupt, fmt.Sprintf(format, args...))
	}
	if err := json.Unmarshal(g.sec[secMeta], &g.meta); err != nil {
		return bad("meta: %v", err)
	}
	m := g.meta
	sizes := []struct {
		sec, want int
	}{
		{secEntOff, 8 * (m.Entities + 1)}, {secUnitOff, 8 * (m.TextUnits + 1)},
		{secRelOff, 8 * (m.Relationships + 1)}, {secCommOff, 8 * (m.Communities + 1)},
		{secRelPos, 4 * m.Relationships}, {secCommKept, 8 * m.Communities},
		{secKeyOff, 8 * (m.Keys + 1)}, {secKeyEntity, 4 * m.Keys},
		{secKeyRelOff, 8 * (m.Keys + 1)}, {secKeyCommOff, 8 * (m.Keys + 1)}, {secKeyUnitOff, 8 * (m.Keys + 1)},
	}
	for _, s := range sizes {
		if m.Entities < 0 || m.TextUnits < 0 || m.Relationships < 0 || m.Communities < 0 || m.Keys < 0 || len(g.sec[s.sec]) != s.want {
			return bad("section %d holds %d bytes where the counts need %d", s.sec, len(g.sec[s.sec]), s.want)
		}
	}
	for _, s := range []int{secKeyHash, secUnitHash, secTitleHash, secCommHash} {
		if n := len(g.sec[s]) / 4; len(g.sec[s])%4 != 0 || n < 8 || n&(n-1) != 0 {
			return bad("hash table %d has %d bytes", s, len(g.sec[s]))
		}
	}
	return nil
}
