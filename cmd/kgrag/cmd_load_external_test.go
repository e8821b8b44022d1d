package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/internal/test"
)

// externalTools skips the test unless KGRAG_EXTERNAL=1 (scripts/test.sh sets
// it): these tests download Jena and pyoxigraph on first use.
func externalTools(t *testing.T) {
	t.Helper()
	if os.Getenv("KGRAG_EXTERNAL") != "1" {
		test.SkipOrFail(t, "KGRAG_EXTERNAL is not 1: Jena and Oxigraph checks not run")
	}
}

// TestLoadOutputExternal writes every sample as Turtle (with the ontology)
// and N-Triples and has Jena riot and Oxigraph parse each with zero errors
// and warnings, and Jena's SHACL engine validate the data against the
// shapes in gr.ttl.
func TestLoadOutputExternal(t *testing.T) {
	externalTools(t)
	samples := test.GraphRAGSamples(t)
	root := test.RepoRoot(t)
	dir := t.TempDir()
	var files []string
	for _, v := range test.Samples() {
		for _, ext := range []string{"ttl", "nt"} {
			out := filepath.Join(dir, v+"."+ext)
			opts := loadOptions{input: filepath.Join(samples, v), base: "http://kgrag.test/" + v + "/", quiet: true}
			if ext == "ttl" {
				opts.turtle, opts.withOntology = out, true
			} else {
				opts.ntriples = out
			}
			term, _, _ := testTerminal()
			if err := runLoad(context.Background(), opts, term); err != nil {
				t.Fatal(err)
			}
			files = append(files, out)
		}
	}
	cmd := exec.Command("bash", append([]string{filepath.Join(root, "scripts", "validate-rdf.sh")}, files...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("validate-rdf.sh: %v\n%s", err, out)
	}

	shapes := filepath.Join(root, "ontology", "gr.ttl")
	for _, f := range files {
		if !strings.HasSuffix(f, ".nt") {
			continue
		}
		t.Run("shacl/"+filepath.Base(f), func(t *testing.T) {
			out, err := exec.Command("bash", filepath.Join(root, "scripts", "jena.sh"), "shacl", "validate",
				"--shapes", shapes, "--data", f).CombinedOutput()
			if err != nil {
				t.Fatalf("jena shacl: %v\n%s", err, out)
			}
			if !strings.Contains(string(out), "sh:conforms  true") {
				report := string(out)
				if len(report) > 4000 {
					report = report[:4000]
				}
				t.Errorf("%s does not conform to the gr: shapes:\n%s", filepath.Base(f), report)
			}
		})
	}
}

// TestOntologyTriples checks that gr.nt, which kgrag uploads with
// --with-ontology, is the graph of gr.ttl as Oxigraph reads it.
func TestOntologyTriples(t *testing.T) {
	externalTools(t)
	root := test.RepoRoot(t)
	fresh := filepath.Join(t.TempDir(), "gr.nt")
	if out, err := exec.Command("bash", filepath.Join(root, "scripts", "gen-ontology.sh"),
		filepath.Join(root, "ontology", "gr.ttl"), fresh).CombinedOutput(); err != nil {
		t.Fatalf("gen-ontology.sh: %v\n%s", err, out)
	}
	want, err := os.ReadFile(fresh)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, "ontology", "gr.nt"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("ontology/gr.nt is stale: run go generate ./ontology")
	}
}
