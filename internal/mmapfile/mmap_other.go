//go:build !unix

package mmapfile

import (
	"errors"
	"os"
)

// mapFile fails: FromFile reads the file instead where there is no mmap.
func mapFile(*os.File, int) ([]byte, error) { return nil, errors.New("no mmap on this platform") }

func unmap([]byte) error { return nil }
