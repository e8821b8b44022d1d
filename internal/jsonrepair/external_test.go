package jsonrepair_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/internal/jsonrepair"
	"github.com/kgrag/kgrag/internal/test"
)

// This file runs repairCases through PyPI json_repair (json-repair 0.64.6,
// what GraphRAG falls back to; scripts/oracle/jsonrepair_py.py in the venv of
// scripts/graphrag-py.sh) and checks how its values relate to kgrag's:
// equal where both repair the same way, and the documented difference
// where kgrag is stricter on purpose: json_repair keeps cut strings and
// numbers, returns every value of a reply as a list (or, for objects with
// the same keys, the last), and makes up values (bare words become
// strings) where kgrag refuses.

// jsonRepair returns json_repair's answers for replies, one JSON text per
// reply, or "" where it gave none that is JSON.
func jsonRepair(t *testing.T, replies []string) []string {
	t.Helper()
	if os.Getenv("KGRAG_EXTERNAL") != "1" {
		test.SkipOrFail(t, "KGRAG_EXTERNAL is not 1: PyPI json_repair not run")
	}
	root := test.RepoRoot(t)
	py, err := exec.Command("bash", filepath.Join(root, "scripts", "graphrag-py.sh"), "--check").Output()
	if err != nil {
		test.SkipOrFail(t, "PyPI graphrag venv not ready (run scripts/graphrag-py.sh): %v", err)
	}
	script := filepath.Join(root, "scripts", "oracle", "jsonrepair_py.py")
	python := strings.TrimSpace(string(py))
	version, err := exec.Command(python, script, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", script, err)
	}
	t.Logf("json-repair %s", strings.TrimSpace(string(version)))

	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	for _, r := range replies {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(python, script)
	cmd.Stdin = &in
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(replies) {
		t.Fatalf("%s: %d answers for %d replies", script, len(lines), len(replies))
	}
	values := make([]string, len(lines))
	for i, l := range lines {
		var a struct {
			Value json.RawMessage `json:"value"`
			Error string          `json:"error"`
		}
		if err := json.Unmarshal([]byte(l), &a); err != nil {
			t.Fatalf("%s: answer %d %q: %v", script, i, l, err)
		}
		values[i] = string(a.Value)
	}
	return values
}

func TestJSONRepairDifferential(t *testing.T) {
	replies := make([]string, len(repairCases))
	for i, tt := range repairCases {
		replies[i] = tt.in
	}
	jr := jsonRepair(t, replies)
	for i, tt := range repairCases {
		if tt.oracle == noOracle {
			continue
		}
		t.Run(tt.name, func(t *testing.T) {
			theirs := jr[i]
			ours, _, err := jsonrepair.Repair(tt.in)
			isContainer := theirs != "" && (theirs[0] == '{' || theirs[0] == '[')
			switch tt.oracle {
			case agree:
				if err != nil || theirs == "" || !sameValue(t, ours, theirs) {
					t.Errorf("reply %q: kgrag %s (%v), json_repair %s; want equal values", tt.in, ours, err, theirs)
				}
			case oneOf:
				if err != nil || !isContainer || theirs[0] != '[' || !hasElement(t, decodeNode(t, theirs), decodeNode(t, ours)) {
					t.Errorf("reply %q: kgrag %s (%v), json_repair %s; want a list holding kgrag's value", tt.in, ours, err, theirs)
				}
			case lastSame:
				last, _, lerr := jsonrepair.Repair(tt.in[strings.LastIndexByte(tt.in, '{'):])
				if err != nil || lerr != nil || !isContainer || !sameValue(t, last, theirs) || sameValue(t, ours, theirs) {
					t.Errorf("reply %q: kgrag %s (%v), json_repair %s; want json_repair to keep the last object", tt.in, ours, err, theirs)
				}
			case keepsCut:
				if err != nil || !isContainer || !keptCut(decodeNode(t, ours), decodeNode(t, theirs), decodeNode(t, tt.full)) {
					t.Errorf("reply %q (meant %s): kgrag %s (%v), json_repair %s; want json_repair's value to be kgrag's plus the cut element",
						tt.in, tt.full, ours, err, theirs)
				}
			case guesses:
				if err == nil || !isContainer {
					t.Errorf("reply %q: kgrag %s (%v), json_repair %s; want kgrag to refuse and json_repair to guess", tt.in, ours, err, theirs)
				}
			case bothRefuse:
				if err == nil || isContainer {
					t.Errorf("reply %q: kgrag %s (%v), json_repair %s; want neither to give an object or array", tt.in, ours, err, theirs)
				}
			}
		})
	}
}

func hasElement(t *testing.T, list, v node) bool {
	t.Helper()
	for _, e := range list.elems {
		if equalNode(e, v) {
			return true
		}
	}
	return false
}

// keptCut reports whether theirs is ours plus the element cut by
// truncation, which kgrag drops: at the innermost container where they
// differ, theirs has one more element, and that element is a prefix of
// the corresponding element of full in which strings and numbers may be
// cut short.
func keptCut(ours, theirs, full node) bool {
	if ours.kind != theirs.kind || ours.kind != '{' && ours.kind != '[' || !isPrefix(ours, full) {
		return false
	}
	n := len(ours.elems)
	switch len(theirs.elems) {
	case n + 1:
		return equalNode(node{kind: ours.kind, keys: theirs.keys[:min(n, len(theirs.keys))], elems: theirs.elems[:n]}, ours) &&
			n < len(full.elems) && (ours.kind == '[' || theirs.keys[n] == full.keys[n]) &&
			prefixWith(theirs.elems[n], full.elems[n], cutScalar)
	case n:
		return n > 0 &&
			equalNode(node{kind: ours.kind, keys: theirs.keys, elems: theirs.elems[:n-1]},
				node{kind: ours.kind, keys: ours.keys, elems: ours.elems[:n-1]}) &&
			(ours.kind == '[' || theirs.keys[n-1] == ours.keys[n-1]) &&
			keptCut(ours.elems[n-1], theirs.elems[n-1], full.elems[n-1])
	}
	return false
}

// cutScalar: got is full's string or number text, or a start of it.
func cutScalar(got, full node) bool {
	return got.kind == full.kind && strings.HasPrefix(full.text, got.text)
}
