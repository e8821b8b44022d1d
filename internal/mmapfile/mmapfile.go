package mmapfile

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Map is a read-only view of a whole file. Data must not be written to,
// and must not be used after Close.
//
// A mapped file is shared with every process mapping it, and kgrag
// replaces its files by renaming a new one over them, so a mapping never
// sees a file change; one truncated by another program would fault
// (SIGBUS) on the next access past its end.
type Map struct {
	data   []byte
	mapped bool
}

// ErrClosed is returned by users of a Map that was closed.
var ErrClosed = errors.New("mmapfile: closed")

// Open maps path. An empty file gives an empty Map.
func Open(path string) (*Map, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("mmapfile: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("mmapfile: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("mmapfile: %s: not a regular file", path)
	}
	m, err := FromFile(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("mmapfile: %s: %w", path, err)
	}
	return m, nil
}

// FromFile maps the first size bytes of f, or reads them into memory
// where the platform cannot map them. f may be closed afterwards.
func FromFile(f *os.File, size int64) (*Map, error) {
	if int64(int(size)) != size || size < 0 {
		return nil, fmt.Errorf("%d bytes do not fit in memory", size)
	}
	if size == 0 {
		return &Map{}, nil
	}
	if data, err := mapFile(f, int(size)); err == nil {
		return &Map{data: data, mapped: true}, nil
	}
	return Read(f, size)
}

// Read reads the first size bytes of f into memory: a Map that maps
// nothing, for callers that must not map (or verify every byte anyway).
func Read(f *os.File, size int64) (*Map, error) {
	if int64(int(size)) != size || size < 0 {
		return nil, fmt.Errorf("%d bytes do not fit in memory", size)
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, size), data); err != nil {
		return nil, err
	}
	return &Map{data: data}, nil
}

// Data is the file's bytes.
func (m *Map) Data() []byte { return m.data }

// Mapped says whether Data is a mapping rather than a copy in memory.
func (m *Map) Mapped() bool { return m.mapped }

// Close unmaps the file. Slices of Data are invalid afterwards.
func (m *Map) Close() error {
	if m.data == nil {
		return nil
	}
	data := m.data
	m.data = nil
	if !m.mapped {
		return nil
	}
	if err := unmap(data); err != nil {
		return fmt.Errorf("mmapfile: unmap: %w", err)
	}
	return nil
}
