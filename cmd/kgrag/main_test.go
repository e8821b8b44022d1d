package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/internal/test"
)

// TestMain lets the test binary act as kgrag, so exit codes can be tested
// by running it (KGRAG_TEST_RUN_MAIN=1).
func TestMain(m *testing.M) {
	if os.Getenv("KGRAG_TEST_RUN_MAIN") == "1" {
		main()
		return
	}
	// Windows learned from the model servers go to a file of this run's,
	// not the user's cache; the kgrag processes the tests start inherit it.
	var windows string
	if os.Getenv("KGRAG_WINDOW_CACHE") == "" {
		if dir, err := os.MkdirTemp("", "kgrag-test-windows-"); err == nil {
			windows = dir
			os.Setenv("KGRAG_WINDOW_CACHE", filepath.Join(dir, "windows.json"))
		}
	}
	code := m.Run()
	if carolIndex.dir != "" {
		os.RemoveAll(carolIndex.dir)
	}
	if windows != "" {
		os.RemoveAll(windows)
	}
	os.Exit(code)
}

// runKgrag runs the test binary as kgrag with args.
func runKgrag(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runKgragEnv(t, nil, args...)
}

// runKgragEnv is runKgrag with env ("NAME=value") added to the
// environment.
func runKgragEnv(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), "KGRAG_TEST_RUN_MAIN=1"), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func TestExitCodes(t *testing.T) {
	samples := test.GraphRAGSamples(t)
	out := filepath.Join(t.TempDir(), "g.ttl")
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"help", []string{"--help"}, 0, ""},
		{"unknown flag", []string{"load", "--bogus"}, 2, "Try: kgrag load --help"},
		{"missing input", []string{"load", "--turtle", out}, 2, "--input is required"},
		{"bad input dir", []string{"load", "--input", filepath.Join(t.TempDir(), "missing"), "--turtle", out}, 1, "missing"},
		{"inspect ok", []string{"inspect", filepath.Join(samples, "v3")}, 0, ""},
		{"store down", []string{"load", "-q", "--input", filepath.Join(samples, "v2.5.0"), "--store", "http://127.0.0.1:1/ds",
			"--store-type", "fuseki", "--graph", "http://example.org/g", "--store-retries", "0"}, 10, "127.0.0.1:1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runKgrag(t, tt.args...)
			if code != tt.code {
				t.Errorf("kgrag %s: exit %d; want %d (stderr %q)", strings.Join(tt.args, " "), code, tt.code, stderr)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("kgrag %s: stderr %q; want it to contain %q", strings.Join(tt.args, " "), stderr, tt.stderr)
			}
		})
	}
}

// TestFlags runs --help on every command: each must print its usage, its
// flags and the exit status block, and no secret default.
func TestFlags(t *testing.T) {
	app := newApp(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})
	for _, c := range app.Commands {
		t.Run(c.Name, func(t *testing.T) {
			t.Setenv("KGRAG_STORE_PASSWORD", "s3cret-from-env")
			var out bytes.Buffer
			app := newApp(strings.NewReader(""), &out, &out)
			if err := app.Run(t.Context(), []string{"kgrag", c.Name, "--help"}); err != nil {
				t.Fatal(err)
			}
			help := out.String()
			for _, want := range []string{"USAGE", c.Name, "EXIT STATUS"} {
				if !strings.Contains(help, want) {
					t.Errorf("%s --help lacks %q", c.Name, want)
				}
			}
			if strings.Contains(help, "s3cret-from-env") {
				t.Errorf("%s --help shows a secret from the environment", c.Name)
			}
		})
	}
}

// TestJSONErrors: with --json, the final error is one JSON object on
// stderr with the exit code (and the Try line of a usage error).
func TestJSONErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		try  bool
	}{
		{"usage", []string{"ask", "--json"}, exitUsage, true},
		{"model down", []string{"ask", "--json", "--input", filepath.Join(test.GraphRAGSamples(t), "v3"),
			"--llm-url", "http://127.0.0.1:1/v1", "--llm-retries", "0", "--no-context", "Who is Scrooge?"}, exitModelDown, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runKgrag(t, tt.args...)
			var got struct {
				Error    string `json:"error"`
				ExitCode int    `json:"exit_code"`
				Try      string `json:"try"`
			}
			if err := json.Unmarshal([]byte(stderr), &got); err != nil {
				t.Fatalf("kgrag %s: stderr %q is not one JSON object: %v", strings.Join(tt.args, " "), stderr, err)
			}
			if code != tt.code || got.ExitCode != code || got.Error == "" || (got.Try != "") != tt.try {
				t.Errorf("kgrag %s: exit %d, stderr %+v; want exit %d in the object, an error, try %v",
					strings.Join(tt.args, " "), code, got, tt.code, tt.try)
			}
		})
	}
	if !wantsJSON([]string{"ask", "--json", "q"}) || wantsJSON([]string{"ask", "--", "--json"}) {
		t.Errorf("wantsJSON: --json must count before -- only")
	}
}
