package test

import (
	"bufio"
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
	var in bytes.Buffer
	for _, j := range jobs {
		b, err := json.Marshal(j)
		if err != nil {
			t.Fatal(err)
		}
		in.Write(append(b, '\n'))
	}
	cmd := exec.Command(py, filepath.Join(RepoRoot(t), "scripts", "oracle", "graphrag_global.py"), "--jobs")
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("graphrag_global.py: %v\n%s", err, stderr.String())
	}
	var res []GlobalOut
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var o GlobalOut
		if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
			t.Fatalf("graphrag_global.py output: %v", err)
		}
		res = append(res, o)
	}
	if len(res) != len(jobs) {
		t.Fatalf("graphrag_global.py answered %d of %d jobs\n%s", len(res), len(jobs), stderr.String())
	}
	return res
}
