package graphrag_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/graphrag"
)

type entityNoTitle struct {
	ID          string `parquet:"id"`
	Type        string `parquet:"type"`
	Description string `parquet:"description"`
}

type entityIntTitle struct {
	ID    string `parquet:"id"`
	Title int64  `parquet:"title"`
}

type relationshipMinimal struct {
	ID     string `parquet:"id"`
	Source string `parquet:"source"`
	Target string `parquet:"target"`
}

func TestOpenErrors(t *testing.T) {
	root := t.TempDir()
	empty := filepath.Join(root, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}

	// A real sample cut in half: the footer is gone.
	truncated := filepath.Join(root, "truncated")
	data, err := os.ReadFile(filepath.Join(sample(t, "v3"), "entities.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(truncated, "entities.parquet"), data[:len(data)/2])

	// A sample whose middle is overwritten: the footer reads, a page does not.
	corrupt := filepath.Join(root, "corrupt")
	bad := append([]byte(nil), data...)
	for i := 16; i < len(bad)/2; i++ {
		bad[i] = 0xff
	}
	writeFile(t, filepath.Join(corrupt, "entities.parquet"), bad)

	noTitle := filepath.Join(root, "notitle")
	writeParquet(t, filepath.Join(noTitle, "entities.parquet"), []entityNoTitle{{ID: "e1", Type: "PERSON"}})

	intTitle := filepath.Join(root, "inttitle")
	writeParquet(t, filepath.Join(intTitle, "entities.parquet"), []entityIntTitle{{ID: "e1", Title: 7}})

	noTarget := filepath.Join(root, "notarget")
	writeParquet(t, filepath.Join(noTarget, "entities.parquet"), []entity05{{ID: "e1", Title: "A"}})
	writeParquet(t, filepath.Join(noTarget, "relationships.parquet"), []entityNoTitle{{ID: "r1"}})

	tests := []struct {
		name  string
		dir   string
		is    error
		path  string // suffix of Error.Path
		field string
		msg   []string // substrings of the message
	}{
		{"missing dir", filepath.Join(root, "nope"), fs.ErrNotExist, "nope", "", []string{"nope"}},
		{"no tables", empty, graphrag.ErrNoTables, "empty", "", []string{"entities.parquet", "create_final_entities.parquet", "output/<timestamp>/artifacts"}},
		{"truncated", truncated, nil, "truncated/entities.parquet", "", []string{"entities.parquet", "parquet"}},
		{"missing title", noTitle, graphrag.ErrMissingColumn, "notitle/entities.parquet", "title", []string{`column "title"`, "missing required column"}},
		{"int title", intTitle, graphrag.ErrColumnType, "inttitle/entities.parquet", "title", []string{`column "title"`, "wrong column type"}},
		{"missing source", noTarget, graphrag.ErrMissingColumn, "notarget/relationships.parquet", "source", []string{`column "source"`}},
	}
	for _, o := range openers {
		for _, tt := range tests {
			t.Run(o.name+"/"+tt.name, func(t *testing.T) {
				ds, err := o.open(context.Background(), tt.dir)
				if err == nil {
					t.Fatalf("Open(%s) = %v, nil; want an error", tt.name, ds)
				}
				var e *graphrag.Error
				if !errors.As(err, &e) {
					t.Fatalf("Open error %T %v; want *graphrag.Error", err, err)
				}
				if tt.is != nil && !errors.Is(err, tt.is) {
					t.Errorf("errors.Is(%v, %v) = false; want true", err, tt.is)
				}
				if !strings.HasSuffix(e.Path, tt.path) {
					t.Errorf("Path = %q; want suffix %q", e.Path, tt.path)
				}
				if e.Field != tt.field {
					t.Errorf("Field = %q; want %q", e.Field, tt.field)
				}
				for _, m := range tt.msg {
					if !strings.Contains(err.Error(), m) {
						t.Errorf("message %q; want it to contain %q", err, m)
					}
				}
			})
		}
	}

	// Damage inside the data must fail with an *Error naming the file, not
	// panic or return garbage silently.
	for _, o := range openers {
		t.Run(o.name+"/corrupt page", func(t *testing.T) {
			ds, err := o.open(context.Background(), corrupt)
			var e *graphrag.Error
			if err == nil {
				t.Fatalf("Open(corrupt) = %d entities, nil; want an error", len(ds.Entities))
			}
			if !errors.As(err, &e) || !strings.HasSuffix(e.Path, "entities.parquet") {
				t.Errorf("Open(corrupt) error = %v; want *Error naming entities.parquet", err)
			}
		})
	}

	t.Run("canceled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := graphrag.Open(ctx, sample(t, "v3")); !errors.Is(err, context.Canceled) {
			t.Errorf("Open(canceled) error = %v; want context.Canceled", err)
		}
	})
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
