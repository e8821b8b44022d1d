package indexer

import (
	"context"
	"errors"
	"os"
	"slices"

	"github.com/kgrag/kgrag/graphrag"
)

// Changes are the documents a run added, changed and removed against the
// output it replaces, each named by its title (its path under the input
// folder). A document is changed when its title stays and its content,
// hence its id (a hash of the text), does not.
type Changes struct {
	Added, Changed, Removed []string
	// Unchanged counts the documents that are the same.
	Unchanged int
}

// errDocumentsRead stops a walk once the documents table is read.
var errDocumentsRead = errors.New("documents read")

// previousDocuments reads the documents table of the output a run
// replaces: title → id. It returns nil when there is no previous output
// or it cannot be read (it is replaced whole either way).
func previousDocuments(ctx context.Context, dir string) map[string]string {
	if _, err := os.Stat(dir); err != nil {
		return nil
	}
	prev := map[string]string{}
	_, err := graphrag.Walk(ctx, dir, graphrag.Visitor{Documents: func(_ context.Context, docs []graphrag.Document) error {
		for _, d := range docs {
			prev[d.Title] = d.ID
		}
		return errDocumentsRead
	}})
	if err != nil && !errors.Is(err, errDocumentsRead) {
		return nil
	}
	return prev
}

// previous reads the output a run replaces: whole, for the clustering to
// start from, unless fresh; its documents' title → id either way. Both
// are nil when there is no previous output or it cannot be read (it is
// replaced whole either way); a whole read that fails falls back to the
// documents alone.
func previous(ctx context.Context, dir string, fresh bool) (*graphrag.Dataset, map[string]string) {
	if !fresh {
		if _, err := os.Stat(dir); err == nil {
			if ds, err := graphrag.Open(ctx, dir); err == nil {
				docs := make(map[string]string, len(ds.Documents))
				for _, d := range ds.Documents {
					docs[d.Title] = d.ID
				}
				return ds, docs
			}
		}
	}
	return nil, previousDocuments(ctx, dir)
}

// changes compares the documents of a run with those of the output it
// replaces; nil when there was none.
func changes(prev map[string]string, docs []graphrag.Document) *Changes {
	if prev == nil {
		return nil
	}
	c := &Changes{}
	seen := make(map[string]bool, len(docs))
	for _, d := range docs {
		seen[d.Title] = true
		switch id, ok := prev[d.Title]; {
		case !ok:
			c.Added = append(c.Added, d.Title)
		case id != d.ID:
			c.Changed = append(c.Changed, d.Title)
		default:
			c.Unchanged++
		}
	}
	for title := range prev {
		if !seen[title] {
			c.Removed = append(c.Removed, title)
		}
	}
	slices.Sort(c.Added)
	slices.Sort(c.Changed)
	slices.Sort(c.Removed)
	return c
}
