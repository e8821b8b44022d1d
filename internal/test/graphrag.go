package test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// GraphRAGPython returns the python of the venv that scripts/graphrag-py.sh
// makes (PyPI graphrag, the peer kgrag's retrieval is checked against),
// skipping or failing when KGRAG_EXTERNAL is not 1 or the venv is not
// ready.
func GraphRAGPython(t testing.TB) string {
	t.Helper()
	if os.Getenv("KGRAG_EXTERNAL") != "1" {
		SkipOrFail(t, "KGRAG_EXTERNAL is not 1: GraphRAG's own code not run")
	}
	out, err := exec.Command("bash", filepath.Join(RepoRoot(t), "scripts", "graphrag-py.sh"), "--check").Output()
	if err != nil {
		SkipOrFail(t, "PyPI graphrag venv not ready (run scripts/graphrag-py.sh): %v", err)
	}
	return strings.TrimSpace(string(out))
}

// GlobalJob is one run of GraphRAG's global search context builder
// (scripts/oracle/graphrag_global.py --jobs): a GraphRAG 2.x/3.x output
// directory, the community level and batch budget, and for dynamic
// community selection the rating the fake model gives each community
// (and those it answers with garbage).
type GlobalJob struct {
	Dir     string         `json:"dir"`
	Level   int64          `json:"community_level"`
	Budget  int            `json:"max_context_tokens"`
	Ratings map[string]int `json:"ratings,omitempty"`
	Bad     []string       `json:"bad_rating,omitempty"`
}

// GlobalBatch is one map batch GraphRAG built: its report ids in printed
// order, its text and GraphRAG's token count of it.
type GlobalBatch struct {
	IDs    []string `json:"ids"`
	Text   string   `json:"text"`
	Tokens int      `json:"tokens"`
}

// GlobalOut is GraphRAG's answer to a GlobalJob.
type GlobalOut struct {
	Batches []GlobalBatch `json:"batches"`
	Reports int           `json:"reports"`
	Seconds float64       `json:"seconds"`
	// Rated and Selected are set for dynamic selection: the communities
	// rated, in order, and those kept, by number.
	Rated    []string `json:"rated"`
	Selected []string `json:"selected"`
}

// GraphRAGGlobal runs GraphRAG's global context builder on jobs, in one
// interpreter (py, from GraphRAGPython), and returns its answers in order.
func GraphRAGGlobal(t testing.TB, py string, jobs []GlobalJob) []GlobalOut {
	t.Helper()
	return PythonJSONL[GlobalOut](t, py, []string{filepath.Join(RepoRoot(t), "scripts", "oracle", "graphrag_global.py"), "--jobs"}, jobs)
}

// PythonJSONL runs py with args, writes each job to its stdin as one JSON
// value per line, and decodes one JSON value per job from its stdout, in
// order: the protocol of the oracle scripts, which answer many jobs in one
// interpreter because importing GraphRAG takes seconds. It fails t, with
// the script's stderr, when the script fails or answers too few.
func PythonJSONL[Out, Job any](t testing.TB, py string, args []string, jobs []Job) []Out {
	t.Helper()
	var in, stderr bytes.Buffer
	enc := json.NewEncoder(&in)
	for _, j := range jobs {
		if err := enc.Encode(j); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(py, args...)
	cmd.Stdin, cmd.Stderr = &in, &stderr
	name := filepath.Base(args[0])
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, stderr.String())
	}
	res := make([]Out, len(jobs))
	dec := json.NewDecoder(bytes.NewReader(out))
	for i := range res {
		if err := dec.Decode(&res[i]); err != nil {
			t.Fatalf("%s: answer %d of %d: %v\n%s", name, i+1, len(jobs), err, stderr.String())
		}
	}
	return res
}

// PyClients returns the python of the venv that scripts/pyclients.sh
// makes (PyPI openai and mcp, the real clients kgrag serve is tested
// with), skipping or failing when it is not ready.
func PyClients(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("bash", filepath.Join(RepoRoot(t), "scripts", "pyclients.sh"), "--check").Output()
	if err != nil {
		SkipOrFail(t, "PyPI openai/mcp venv not ready (run scripts/pyclients.sh): %v", err)
	}
	return strings.TrimSpace(string(out))
}

// Chromium returns the path of a Chromium that scripts/chromium.sh found
// or installed, skipping or failing when there is none.
func Chromium(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("bash", filepath.Join(RepoRoot(t), "scripts", "chromium.sh"), "--check").Output()
	if err != nil {
		SkipOrFail(t, "no Chromium (run scripts/chromium.sh): %v", err)
	}
	return strings.TrimSpace(string(out))
}

// Artifacts returns a folder for what a test keeps for people to look at
// (screenshots): $KGRAG_ARTIFACTS/name, or .cache/artifacts/name in the
// repository. It is emptied first.
func Artifacts(t testing.TB, name string) string {
	t.Helper()
	base := os.Getenv("KGRAG_ARTIFACTS")
	if base == "" {
		base = filepath.Join(RepoRoot(t), ".cache", "artifacts")
	}
	dir := filepath.Join(base, name)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// SpacyModel returns the folder of spaCy's en_core_web_md pipeline that
// scripts/spacy-models.sh unpacked from PyPI (what GraphRAG's syntactic
// and CFG noun-phrase extractors load), skipping or failing when it is
// not there.
func SpacyModel(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("bash", filepath.Join(RepoRoot(t), "scripts", "spacy-models.sh"), "--check").Output()
	if err != nil {
		SkipOrFail(t, "spaCy models not unpacked (run scripts/spacy-models.sh): %v", err)
	}
	return strings.TrimSpace(string(out))
}
