//go:build unix

package flat

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps the file read-only, or reads it into the heap on a
// big-endian host (its numbers must be decoded anyway) or where the
// mapping fails. kgrag replaces an index by renaming a new file over it,
// so a mapped file is never truncated under its reader; one cut by
// another program would fault (SIGBUS) on the next access past its end.
func mapFile(f *os.File, size int64) (data []byte, unmap func() error, err error) {
	if !hostLE || size == 0 || int64(int(size)) != size {
		return readAll(f, size)
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return readAll(f, size)
	}
	return b, func() error { return unix.Munmap(b) }, nil
}
