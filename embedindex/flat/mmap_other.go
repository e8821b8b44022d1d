//go:build !unix

package flat

import "os"

// mapFile reads the file into the heap: this platform has no mapping
// kgrag uses.
func mapFile(f *os.File, size int64) (data []byte, unmap func() error, err error) {
	return readAll(f, size)
}
