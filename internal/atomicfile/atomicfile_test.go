package atomicfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kgrag/kgrag/internal/atomicfile"
)

func TestCommitAndAbort(t *testing.T) {
	tests := []struct {
		name   string
		old    string // "" for no existing file
		commit bool
		want   string // content after; "" means the file must not exist
	}{
		{"commit new", "", true, "new"},
		{"commit over old", "old", true, "new"},
		{"abort keeps old", "old", false, "old"},
		{"abort leaves nothing", "", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out.ttl")
			if tt.old != "" {
				if err := os.WriteFile(path, []byte(tt.old), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			f, err := atomicfile.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString("new"); err != nil {
				t.Fatal(err)
			}
			if tt.commit {
				if err := f.Commit(); err != nil {
					t.Fatal(err)
				}
			}
			f.Abort()
			got, err := os.ReadFile(path)
			switch {
			case tt.want == "" && !os.IsNotExist(err):
				t.Errorf("after abort: file exists (err %v); want none", err)
			case tt.want != "" && string(got) != tt.want:
				t.Errorf("content = %q (err %v); want %q", got, err, tt.want)
			}
			entries, _ := os.ReadDir(dir)
			wantEntries := 0
			if tt.want != "" {
				wantEntries = 1
			}
			if len(entries) != wantEntries {
				t.Errorf("directory holds %d entries; want %d (temporary file left behind?)", len(entries), wantEntries)
			}
		})
	}
}
