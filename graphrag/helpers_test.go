package graphrag_test

import (
	"path/filepath"
	"testing"

	"github.com/kgrag/kgrag/internal/test"
)

// sample returns the directory of one sample release (v0.3.4, v1.0.1,
// v2.5.0, v3) in the shared test data, which is never copied into the
// repository (see SOURCES.md).
func sample(t testing.TB, name string) string {
	t.Helper()
	return filepath.Join(test.GraphRAGSamples(t), name)
}
