package graphrag_test

import (
	"os"
	"path/filepath"
	"testing"
)

// testdataDir returns the shared GraphRAG samples: $KGRAG_TESTDATA, else
// ../shared/testdata/graphrag next to the module root. The samples are not
// copied into the repository (see SOURCES.md).
func testdataDir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("KGRAG_TESTDATA"); d != "" {
		return filepath.Join(d, "graphrag")
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
	d := filepath.Join(dir, "..", "shared", "testdata", "graphrag")
	if _, err := os.Stat(d); err != nil {
		if os.Getenv("KGRAG_TEST_DISALLOW_SKIP") != "" {
			t.Fatalf("GraphRAG samples not found: %v", err)
		}
		t.Skipf("GraphRAG samples not found: %v", err)
	}
	return d
}

// sample returns the directory of one sample release (v0.3.4, v1.0.1, v2.5.0, v3).
func sample(t testing.TB, name string) string {
	t.Helper()
	return filepath.Join(testdataDir(t), name)
}
