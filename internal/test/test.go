// Package test holds helpers shared by kgrag's tests: where the GraphRAG
// samples are, which real services the test run has, and the rule that a
// missing service skips a test locally but fails it in CI.
package test

import (
	"os"
	"path/filepath"
	"testing"
)

// DisallowSkip reports whether missing services and tools must fail tests
// rather than skip them; CI sets KGRAG_TEST_DISALLOW_SKIP=1.
func DisallowSkip() bool { return os.Getenv("KGRAG_TEST_DISALLOW_SKIP") == "1" }

// SkipOrFail skips the test, or fails it when DisallowSkip.
func SkipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	if DisallowSkip() {
		t.Fatalf(format+" (KGRAG_TEST_DISALLOW_SKIP=1: failing instead of skipping)", args...)
	}
	t.Skipf(format, args...)
}

// RepoRoot returns the directory holding go.mod, found by walking up from
// the test's working directory.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("test: no go.mod above the working directory")
		}
		dir = parent
	}
}

// GraphRAGSamples returns the folder of real GraphRAG outputs
// (../shared/testdata/graphrag beside the repository, or
// $KGRAG_TESTDATA/graphrag), skipping or failing when it is missing.
func GraphRAGSamples(t testing.TB) string {
	t.Helper()
	base := os.Getenv("KGRAG_TESTDATA")
	if base == "" {
		base = filepath.Join(RepoRoot(t), "..", "shared", "testdata")
	}
	dir := filepath.Join(base, "graphrag")
	if _, err := os.Stat(dir); err != nil {
		SkipOrFail(t, "GraphRAG samples not found at %s: %v", dir, err)
	}
	return dir
}

// SourceText returns the folder of the text the GraphRAG samples were
// indexed from (../shared/testdata/text, beside GraphRAGSamples).
func SourceText(t testing.TB) string {
	t.Helper()
	return filepath.Join(filepath.Dir(GraphRAGSamples(t)), "text")
}

// ChristmasCarolFile is the book under SourceText.
const ChristmasCarolFile = "a-christmas-carol.txt"

// ChristmasCarol returns the text of A Christmas Carol as it is on disk (a
// BOM, CRLF line ends), skipping or failing when it is missing.
func ChristmasCarol(t testing.TB) string {
	t.Helper()
	path := filepath.Join(SourceText(t), ChristmasCarolFile)
	b, err := os.ReadFile(path)
	if err != nil {
		SkipOrFail(t, "Christmas Carol text: %v", err)
	}
	return string(b)
}

// Samples lists the sample folders under GraphRAGSamples, one per release.
func Samples() []string { return []string{"v0.3.4", "v1.0.1", "v2.5.0", "v3"} }

// Service returns the URL of a real service started by scripts/services.sh
// (env KGRAG_TEST_<NAME>, e.g. KGRAG_TEST_OXIGRAPH), skipping or failing
// when it is not set.
func Service(t testing.TB, name string) string {
	t.Helper()
	env := "KGRAG_TEST_" + name
	u := os.Getenv(env)
	if u == "" {
		SkipOrFail(t, "%s is not set: start the service with scripts/services.sh up", env)
	}
	return u
}

// HotpotQA100 returns the folder of the HotpotQA dev set
// (../shared/testdata/multihop/hotpotqa-100: questions.json and
// corpus.json), skipping or failing when it is missing.
func HotpotQA100(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(filepath.Dir(GraphRAGSamples(t)), "multihop", "hotpotqa-100")
	if _, err := os.Stat(filepath.Join(dir, "questions.json")); err != nil {
		SkipOrFail(t, "the HotpotQA questions are not at %s: %v", dir, err)
	}
	return dir
}
