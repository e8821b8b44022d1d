package atomicfile_test

import (
	"os"
	"path/filepath"
	"syscall"
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

// TestReplaceKeepsMode: a file replaced keeps its permissions; a new one
// gets 0644.
func TestReplaceKeepsMode(t *testing.T) {
	for _, mode := range []os.FileMode{0o600, 0o640, 0o755} {
		path := filepath.Join(t.TempDir(), "out.ttl")
		if err := os.WriteFile(path, []byte("old"), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil { // past the umask
			t.Fatal(err)
		}
		commit(t, path, "new")
		if st, err := os.Stat(path); err != nil || st.Mode().Perm() != mode {
			t.Errorf("replaced a %o file: mode %v (err %v); want %o", mode, st.Mode().Perm(), err, mode)
		}
	}
	path := filepath.Join(t.TempDir(), "new.ttl")
	commit(t, path, "new")
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("new file: mode %v (err %v); want 644", st.Mode().Perm(), err)
	}
}

// TestWriteThroughSpecialFiles: a device, a named pipe and a link are
// written through, not replaced by a regular file.
func TestWriteThroughSpecialFiles(t *testing.T) {
	t.Run("dev null", func(t *testing.T) {
		commit(t, os.DevNull, "discarded")
		if st, err := os.Stat(os.DevNull); err != nil || st.Mode()&os.ModeCharDevice == 0 {
			t.Fatalf("%s after the write: %v, %v; want a character device", os.DevNull, st.Mode(), err)
		}
	})
	t.Run("fifo", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "pipe")
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Fatal(err)
		}
		got := make(chan string, 1)
		go func() {
			b, _ := os.ReadFile(path) // opens the read end, so the write end can open
			got <- string(b)
		}()
		commit(t, path, "through the pipe")
		if s := <-got; s != "through the pipe" {
			t.Errorf("reader of the pipe got %q", s)
		}
		if st, err := os.Lstat(path); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
			t.Errorf("%s after the write: %v, %v; want a named pipe", path, st.Mode(), err)
		}
	})
	t.Run("symlink", func(t *testing.T) {
		dir := t.TempDir()
		target, link := filepath.Join(dir, "real.ttl"), filepath.Join(dir, "link.ttl")
		if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		commit(t, link, "new")
		if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s after the write: %v, %v; want the link kept", link, st.Mode(), err)
		}
		if b, err := os.ReadFile(target); err != nil || string(b) != "new" {
			t.Errorf("link target = %q, %v; want the new content", b, err)
		}
	})
	t.Run("directory", func(t *testing.T) {
		if _, err := atomicfile.Create(t.TempDir()); err == nil {
			t.Error("Create of a directory succeeded")
		}
	})
}

func commit(t *testing.T, path, content string) {
	t.Helper()
	f, err := atomicfile.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
}
