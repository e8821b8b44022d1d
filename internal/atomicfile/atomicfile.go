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
	path string
	done bool
}

// Create starts writing path. The temporary file is created next to it, so
// the rename in Commit stays on one file system.
func Create(path string) (*File, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	return &File{File: tmp, path: path}, nil
}

// Commit syncs and closes the temporary file and renames it to the target.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("commit %s: already finished", f.path)
	}
	f.done = true
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
	if err := os.Chmod(tmp, 0o644); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	if err := os.Rename(tmp, f.path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	return nil
}

// Abort removes the temporary file, leaving any existing target untouched.
// It is safe to call after Commit, when it does nothing.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.File.Close()
	os.Remove(f.File.Name())
}
