package mmapfile

import (
	"errors"
	"fmt"
	"os"
)

// Map is a read-only view of a whole file. Data must not be written to,
// and must not be used after Close.
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
	if st.Size() == 0 {
		return &Map{}, nil
	}
	if int64(int(st.Size())) != st.Size() {
		return nil, fmt.Errorf("mmapfile: %s: %d bytes do not fit in memory", path, st.Size())
	}
	data, mapped, err := mapFile(f, int(st.Size()))
	if err != nil {
		return nil, fmt.Errorf("mmapfile: %s: %w", path, err)
	}
	return &Map{data: data, mapped: mapped}, nil
}

// Data is the file's bytes.
func (m *Map) Data() []byte { return m.data }

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
