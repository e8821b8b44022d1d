//go:build !linux

package documents

import "os"

// creationDate returns the file's modification time where kgrag does not
// read st_ctime, formatted as GraphRAG formats creation_date.
func creationDate(fi os.FileInfo) string {
	return fi.ModTime().Local().Format("2006-01-02 15:04:05 -0700")
}
