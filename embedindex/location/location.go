// Package location is where a dataset's vector indexes live, a folder of
// flat files (embedindex/flat) or Elasticsearch aliases
// (embedindex/elastic), and how the index of each embedded table is named
// and opened there. kgrag embed writes to a Location; kgrag ask, serve and
// doctor open from one, so that the choice between the two is made once.
package location

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/embedindex/elastic"
	"github.com/kgrag/kgrag/embedindex/flat"
	"github.com/kgrag/kgrag/internal/embedtext"
)

// Names of the flat index folder and files.
const (
	// DefaultDir is the folder kgrag embed writes under the GraphRAG
	// output when no other is given.
	DefaultDir = "kgrag-index"
	// EntitiesFile is the entities' flat index inside the folder.
	EntitiesFile = "entities.vec"
)

// Errors of Open, to test with errors.Is.
var (
	// ErrNoIndex: the table's index does not exist (no file, no alias).
	ErrNoIndex = errors.New("no vector index")
	// ErrEmpty: the index exists and holds no vector (an *EmptyError).
	ErrEmpty = errors.New("vector index is empty")
)

// EmptyError is an index that exists and holds no vector.
type EmptyError struct{ Path string }

func (e *EmptyError) Error() string { return "vector index " + e.Path + " is empty" }

// Is makes errors.Is(err, ErrEmpty) true.
func (e *EmptyError) Is(target error) bool { return target == ErrEmpty }

// Location is where a dataset's indexes are: the entities' flat file
// (Path), or, when Elastic.URL is set, the Elasticsearch alias of the
// entities (Elastic.Index). The other tables' indexes are named after the
// entities' (Table).
type Location struct {
	Path    string
	Elastic elastic.Config
}

// IsElastic reports whether the indexes are in Elasticsearch.
func (l Location) IsElastic() bool { return l.Elastic.URL != "" }

// File is the flat index file of table inside the index folder.
func File(table string) string { return table + ".vec" }

// Alias is the Elasticsearch alias of table when the entities' is
// entities: kgrag-entities gives kgrag-text_units and
// kgrag-community_reports; any other name gets the table appended
// (myset: myset-text_units), so that one name keeps a dataset's indexes
// together.
func Alias(entities, table string) string {
	if table == embedtext.Entities {
		return entities
	}
	if base, ok := strings.CutSuffix(entities, "-"+embedtext.Entities); ok {
		return base + "-" + table
	}
	return entities + "-" + table
}

// Table is the location of table's index: the flat file beside the
// entities', or the alias named after theirs.
func (l Location) Table(table string) Location {
	if table == embedtext.Entities {
		return l
	}
	if l.IsElastic() {
		l.Elastic.Index = Alias(l.Elastic.Index, table)
	} else if l.Path != "" {
		l.Path = filepath.Join(filepath.Dir(l.Path), File(table))
	}
	return l
}

// String names the index for messages: the file, or the alias (the URL
// is left to the caller, which redacts it).
func (l Location) String() string {
	if l.IsElastic() {
		return "Elasticsearch alias " + l.Elastic.Index
	}
	return l.Path
}

// Open opens the index at l (a table's: see Table). A missing one is
// ErrNoIndex, an empty one ErrEmpty, each wrapped with where it was
// looked for; Elasticsearch being down is elastic's error (see
// elastic.Unreachable). The caller closes the index.
func (l Location) Open(ctx context.Context) (embedindex.Index, error) {
	var idx embedindex.Index
	if l.IsElastic() {
		x, err := elastic.Open(ctx, l.Elastic)
		if errors.Is(err, elastic.ErrNotFound) {
			return nil, fmt.Errorf("%w (%w)", err, ErrNoIndex)
		}
		if err != nil {
			return nil, err
		}
		idx = x
	} else {
		x, err := flat.Open(ctx, l.Path, flat.Options{})
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w at %s", ErrNoIndex, l.Path)
		}
		if err != nil {
			return nil, err
		}
		idx = x
	}
	if info := idx.Info(); info.Count == 0 {
		idx.Close()
		return nil, &EmptyError{Path: info.Path}
	}
	return idx, nil
}
