// Package atomicfile writes a file so that readers see either the old file
// or the complete new one, never a half-written one: data goes to a
// temporary file in the same directory, which is renamed over the target
// only on Commit.
//
//	f, err := atomicfile.Create("graph.ttl")
//	if err != nil { ... }
//	defer f.Abort() // no-op after Commit
//	write(f)
//	return f.Commit()
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// File is a pending file. It is not safe for concurrent use.
type File struct {
	*os.File
	path   string
	mode   os.FileMode // of the file it replaces, else 0644
	direct bool        // writing straight into a device or pipe
	done   bool
}

// Create starts writing path. The temporary file is created next to it
// (next to the file a symbolic link names, so that the link stays), so the
// rename in Commit stays on one file system, and it gets the permissions
// of the file it replaces. A path that names a device or a pipe
// (/dev/null, /dev/stdout, a FIFO) is written directly: there is nothing
// to replace atomically, and a rename would put a regular file in the
// device's place.
func Create(path string) (*File, error) {
	target := path
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		if !st.Mode().IsRegular() {
			if st.IsDir() {
				return nil, fmt.Errorf("create %s: is a directory", path)
			}
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				return nil, fmt.Errorf("create %s: %w", path, err)
			}
			return &File{File: f, path: path, direct: true}, nil
		}
		mode = st.Mode().Perm()
		if resolved, err := filepath.EvalSymlinks(path); err == nil {
			target = resolved
		}
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	return &File{File: tmp, path: target, mode: mode}, nil
}

// Commit syncs and closes the temporary file and renames it to the target.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("commit %s: already finished", f.path)
	}
	f.done = true
	if f.direct {
		if err := f.File.Close(); err != nil {
			return fmt.Errorf("write %s: %w", f.path, err)
		}
		return nil
	}
	tmp := f.File.Name()
	if err := f.File.Sync(); err != nil {
		f.File.Close()
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	if err := f.File.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	if err := os.Chmod(tmp, f.mode); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	if err := os.Rename(tmp, f.path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	return nil
}

// Abort removes the temporary file, leaving any existing target untouched
// (a device or pipe keeps what was written to it). It is safe to call
// after Commit, when it does nothing.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.File.Close()
	if !f.direct {
		os.Remove(f.File.Name())
	}
}
