package test_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/kgrag/kgrag/internal/test"
)

// readVersions reads the NAME=VALUE lines of scripts/versions.env.
func readVersions(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	vs := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			vs[k] = v
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return vs
}

// TestServiceVersions checks that compose.yaml runs the releases the
// scripts test against (scripts/versions.env) and that no script pins a
// release of its own.
func TestServiceVersions(t *testing.T) {
	root := test.RepoRoot(t)
	vs := readVersions(t, filepath.Join(root, "scripts", "versions.env"))
	for _, k := range []string{"FUSEKI_VERSION", "ES_VERSION", "OXIGRAPH_VERSION"} {
		if vs[k] == "" {
			t.Fatalf("scripts/versions.env: no %s", k)
		}
	}
	data, err := os.ReadFile(filepath.Join(root, "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			Image string `yaml:"image"`
			Build struct {
				Args map[string]string `yaml:"args"`
			} `yaml:"build"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(data, &compose); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	fuseki, es := compose.Services["fuseki"], compose.Services["elasticsearch"]
	for _, tt := range []struct{ what, got, want string }{
		{"services.fuseki.build.args.FUSEKI_VERSION", fuseki.Build.Args["FUSEKI_VERSION"], vs["FUSEKI_VERSION"]},
		{"services.fuseki.image tag", imageTag(fuseki.Image), vs["FUSEKI_VERSION"]},
		{"services.elasticsearch.image tag", imageTag(es.Image), vs["ES_VERSION"]},
	} {
		if tt.got != tt.want {
			t.Errorf("compose.yaml %s = %q; want %q as in scripts/versions.env", tt.what, tt.got, tt.want)
		}
	}

	scripts, err := filepath.Glob(filepath.Join(root, "scripts", "*.sh"))
	if err != nil {
		t.Fatal(err)
	}
	pinned := regexp.MustCompile(`(?m)^\s*(?:FUSEKI|JENA|ES|OXIGRAPH|PYOXIGRAPH)_VERSION=["']?[0-9]`)
	for _, s := range scripts {
		data, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		if m := pinned.Find(data); m != nil {
			t.Errorf("%s pins %q; take it from scripts/versions.env", filepath.Base(s), strings.TrimSpace(string(m)))
		}
	}
}

// imageTag is the tag of an image reference, "" when it has none.
func imageTag(image string) string {
	i := strings.LastIndexByte(image, ':')
	if i < 0 || strings.Contains(image[i:], "/") {
		return ""
	}
	return image[i+1:]
}
