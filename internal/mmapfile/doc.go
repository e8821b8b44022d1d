// Package mmapfile maps a file read-only into memory, so that a large
// index is opened without reading it: pages are read when first touched
// and shared with every other process mapping the same file. Where the
// platform has no mmap the file is read into memory instead, with the
// same API.
package mmapfile
