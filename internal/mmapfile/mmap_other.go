//go:build !unix

package mmapfile

import (
	"io"
	"os"
)

// mapFile reads the file: the platform has no mmap here.
func mapFile(f *os.File, size int) ([]byte, bool, error) {
	data := make([]byte, size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, false, err
	}
	return data, false, nil
}

func unmap([]byte) error { return nil }
