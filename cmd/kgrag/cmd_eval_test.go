package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/internal/embedtext"
	"github.com/kgrag/kgrag/internal/eval"
)

// TestEval runs kgrag eval over the v3 sample with every table embedded
// by the test model server: a question that is an entity's own embedded
// text finds that entity first (the test embedder's vectors of equal
// texts are equal), so its entity evidence is held in every mode that
// starts from the nearest entities; a title no entity has is not.
func TestEval(t *testing.T) {
	f := newAllTablesFixture(t)
	e := f.entity(t, "EBENEZER SCROOGE")
	qfile := filepath.Join(t.TempDir(), "q.jsonl")
	lines := []string{
		fmt.Sprintf(`{"id": "self", "kind": "fact", "question": %q, "evidence": {"entities": [%q]}}`, embedtext.Entity(e), e.Title),
		fmt.Sprintf(`{"id": "none", "kind": "fact", "question": %q, "evidence": {"entities": ["NOBODY AT ALL"]}}`, embedtext.Entity(e)),
		`{"id": "absent", "kind": "absent", "question": "What is Scrooge's favourite colour?"}`,
	}
	if err := os.WriteFile(qfile, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runKgrag(t, "eval", "-q", "--input", f.input, "--index", f.index, "--llm-url", f.srv.URL(),
		"--embed-model", askEmbedModel, "--questions", qfile, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Modes   []eval.ModeReport `json:"modes"`
		Skipped map[string]string `json:"skipped"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range rep.Modes {
		names = append(names, m.Mode)
		if len(m.Results) != 3 || m.Summary.Failed != 0 {
			t.Errorf("%s: %d results, %d failed; want 3 and none", m.Mode, len(m.Results), m.Summary.Failed)
			continue
		}
		switch m.Mode {
		case modeLocal, modeSPARQL, modeSubgraph:
			self, none := m.Results[0].Recall, m.Results[1].Recall
			if self.Found != 1 || none.Found != 0 || m.Summary.Recall != 0.5 {
				t.Errorf("%s: self %+v, none %+v, mean %g; want the entity found, the unknown title not, 0.5", m.Mode, self, none, m.Summary.Recall)
			}
		}
		if m.Results[0].Tokens == 0 {
			t.Errorf("%s: no context tokens", m.Mode)
		}
	}
	if strings.Join(names, ",") != defaultEvalModes || len(rep.Skipped) != 0 {
		t.Errorf("modes %q, skipped %v; want %s, none skipped", names, rep.Skipped, defaultEvalModes)
	}
	srv := f.srv.Requests()
	for _, r := range srv {
		if strings.HasSuffix(r.Path, "/chat/completions") {
			t.Fatalf("a chat request was made without --answer")
		}
	}
}

// TestEvalBadInput: a bad line of the question file is named, and so are
// the valid modes for an unknown one.
func TestEvalBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte("{\"question\": \"Who?\"}\n{\"question\": \"Why?\", \"evidence\": \"none\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "output")
	_, stderr, code := runKgrag(t, "eval", "--input", in, "--questions", bad)
	if code == 0 || !strings.Contains(stderr, "bad.jsonl:2:") {
		t.Errorf("bad line: exit %d, %q; want an error naming bad.jsonl:2", code, stderr)
	}
	_, stderr, code = runKgrag(t, "eval", "--input", in, "--questions", bad, "--modes", "local,deep")
	if code != exitUsage || !strings.Contains(stderr, `unknown mode "deep"`) || !strings.Contains(stderr, "sparql-templates") {
		t.Errorf("unknown mode: exit %d, %q; want a usage error naming the modes", code, stderr)
	}
}
