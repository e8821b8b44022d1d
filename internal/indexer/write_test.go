package indexer

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRemoveStale checks what a run finds beside its output after one was
// killed in writeAtomic: temporary folders go, and a previous output moved
// aside comes back when the output is missing, else goes too.
func TestRemoveStale(t *testing.T) {
	tests := []struct {
		name      string
		outExists bool
		restored  bool
	}{
		{"killed between the renames", false, true},
		{"killed after them", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			out := filepath.Join(parent, "output")
			write := func(path string) {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write(filepath.Join(parent, ".output.tmp-1", "entities.parquet"))
			write(filepath.Join(parent, ".output.tmp-1.old", "old.parquet"))
			write(filepath.Join(parent, ".other.tmp-1", "keep.parquet"))
			if tt.outExists {
				write(filepath.Join(out, "current.parquet"))
			}
			removeStale(out, ".output.tmp-")
			left, _ := filepath.Glob(filepath.Join(parent, ".output.tmp-*"))
			if len(left) > 0 {
				t.Errorf("left: %v", left)
			}
			if _, err := os.Stat(filepath.Join(parent, ".other.tmp-1", "keep.parquet")); err != nil {
				t.Errorf("another output's folder was touched: %v", err)
			}
			_, err := os.Stat(filepath.Join(out, "old.parquet"))
			if restored := err == nil; restored != tt.restored {
				t.Errorf("previous output restored: %v, want %v", restored, tt.restored)
			}
			if tt.outExists {
				if _, err := os.Stat(filepath.Join(out, "current.parquet")); err != nil {
					t.Errorf("current output lost: %v", err)
				}
			}
		})
	}
}
