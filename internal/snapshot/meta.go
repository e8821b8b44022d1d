package snapshot

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kgrag/kgrag/graphrag"
)

// Meta says what a snapshot was built from.
type Meta struct {
	// Files are the files GraphRAG's reader looks at in the output folder
	// (graphrag.Files), by base name, as they were when the snapshot was
	// built; empty for a snapshot built in memory.
	Files         []FileStat `json:"files,omitempty"`
	Entities      int        `json:"entities"`
	TextUnits     int        `json:"text_units"`
	Relationships int        `json:"relationships"`
	Communities   int        `json:"communities"`
	Keys          int        `json:"keys"` // distinct entity ids named anywhere
	// LeftOut is what the reader left out of the output (malformed rows,
	// what named them) and TableRows the rows of each table it read, so
	// that a reader of the snapshot can judge them under its own
	// graphrag.Policy, as a reader of the tables would.
	LeftOut   []graphrag.LeftOut `json:"left_out,omitempty"`
	TableRows map[string]int64   `json:"table_rows,omitempty"`
}

// FileStat is one file as it was: Size -1 when it was absent.
type FileStat struct {
	Name    string `json:"name"`
	Size    int64  `json:"size"`
	ModTime int64  `json:"mtime_ns"`
}

func (m Meta) json() []byte {
	b, err := json.Marshal(m)
	if err != nil {
		panic(err) // plain fields: cannot fail
	}
	return b
}

// Stat records the files GraphRAG's reader would read in dir now.
func Stat(dir string) ([]FileStat, error) {
	_, files, err := graphrag.Files(dir)
	if err != nil {
		return nil, err
	}
	out := make([]FileStat, 0, len(files))
	for _, f := range files {
		st := FileStat{Name: filepath.Base(f), Size: -1}
		fi, err := os.Stat(f)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("snapshot: %w", err)
		default:
			st.Size, st.ModTime = fi.Size(), fi.ModTime().UnixNano()
		}
		out = append(out, st)
	}
	return out, nil
}

// ErrStale matches errors from Check for a snapshot of an output that
// has changed since it was built.
var ErrStale = errors.New("snapshot is out of date")

// Check reports whether the snapshot was built from the output in dir as
// it is now: the same table files, of the same sizes and modification
// times. A snapshot built in memory is never current.
func (g *Graph) Check(dir string) error {
	now, err := Stat(dir)
	if err != nil {
		return err
	}
	if len(g.meta.Files) == 0 {
		return fmt.Errorf("snapshot %s: %w: it records no files", g.path, ErrStale)
	}
	was := map[string]FileStat{}
	for _, f := range g.meta.Files {
		was[f.Name] = f
	}
	var changed []string
	for _, f := range now {
		if w, ok := was[f.Name]; !ok || w != f {
			if f.Size >= 0 || (ok && w.Size >= 0) {
				changed = append(changed, f.Name)
			}
		}
	}
	if len(changed) > 0 {
		return fmt.Errorf("snapshot %s: %w: %s changed since it was built", g.path, ErrStale, strings.Join(changed, ", "))
	}
	return nil
}
