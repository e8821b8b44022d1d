package main

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/internal/test"
)

// scriptNodes are the numbered nodes of a test service that a script in
// scripts/ starts, kills and restarts (es-cluster.sh, fuseki-replicas.sh):
// node N listens at urls[N-1].
type scriptNodes struct {
	urls   []string
	script string
	down   map[int]bool
}

// newScriptNodes reads the nodes' URLs from KGRAG_TEST_<env> and checks
// there are n; whatever a test does, the next finds every node up.
func newScriptNodes(t *testing.T, env, script string, n int) *scriptNodes {
	t.Helper()
	all := test.Service(t, env)
	c := &scriptNodes{urls: strings.Split(all, ","), script: filepath.Join(test.RepoRoot(t), "scripts", script), down: map[int]bool{}}
	if len(c.urls) != n {
		t.Fatalf("KGRAG_TEST_%s = %q; want %d URLs", env, all, n)
	}
	t.Cleanup(func() {
		for i := range c.down {
			c.restart(t, i)
		}
	})
	return c
}

func (c *scriptNodes) all() string { return strings.Join(c.urls, ",") }

func (c *scriptNodes) run(t testing.TB, args ...string) {
	t.Helper()
	out, err := exec.Command(c.script, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(c.script), strings.Join(args, " "), err, out)
	}
}

// kill sends node n SIGKILL, as a crash or the OOM killer would.
func (c *scriptNodes) kill(t testing.TB, n int) {
	t.Helper()
	c.run(t, "kill", strconv.Itoa(n))
	c.down[n] = true
}

func (c *scriptNodes) restart(t testing.TB, n int) {
	t.Helper()
	c.run(t, "restart", strconv.Itoa(n))
	delete(c.down, n)
}

// live is the URL of a node that is up.
func (c *scriptNodes) live() string {
	for i, u := range c.urls {
		if !c.down[i+1] {
			return u
		}
	}
	return ""
}
