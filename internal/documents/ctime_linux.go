//go:build linux

package documents

import (
	"os"
	"syscall"
	"time"
)

// creationDate returns GraphRAG's creation_date of a file: st_ctime in
// local time, formatted as its get_timestamp_formatted_with_local_tz does
// (strftime "%Y-%m-%d %H:%M:%S %z").
func creationDate(fi os.FileInfo) string {
	t := fi.ModTime()
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		t = time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
	}
	return t.Local().Format("2006-01-02 15:04:05 -0700")
}
