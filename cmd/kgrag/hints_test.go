package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"
)

// flagMention finds "--name" in a string, not "---" or "a--b".
var flagMention = regexp.MustCompile(`(?:^|[^\w-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)`)

// TestMessagesNameRealFlags: every "--flag" that a string in the kgrag
// binary's own code mentions (hints, usage errors, help text) is a flag of
// some kgrag command, so that no hint sends a user to a flag that does not
// exist. The packages are those cmd/kgrag links (go list -deps), so the
// helper binaries and test code, which have flags of their own, are left
// out.
func TestMessagesNameRealFlags(t *testing.T) {
	known := map[string]bool{"help": true} // urfave/cli's own
	var walk func(*cli.Command)
	walk = func(c *cli.Command) {
		for _, f := range c.Flags {
			for _, n := range f.Names() {
				known[n] = true
			}
		}
		for _, sub := range c.Commands {
			walk(sub)
		}
	}
	walk(newApp(strings.NewReader(""), io.Discard, io.Discard))

	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{join .GoFiles \"\\t\"}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	files, mentions := 0, 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Split(line, "\t")
		if !strings.HasPrefix(fields[0], "github.com/kgrag/kgrag") {
			continue
		}
		for _, name := range fields[2:] {
			path := filepath.Join(fields[1], name)
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files++
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatalf("%s: %v", fset.Position(lit.Pos()), err)
				}
				for _, m := range flagMention.FindAllStringSubmatch(s, -1) {
					mentions++
					if !known[m[1]] {
						t.Errorf("%s: %q names --%s, which no kgrag command has", fset.Position(lit.Pos()), s, m[1])
					}
				}
				return true
			})
		}
	}
	// The scan itself must have seen the code: the hints of internal/llm
	// and loader alone name a dozen flags.
	if files < 50 || mentions < 100 {
		t.Fatalf("scanned %d files with %d flag mentions; want the whole binary", files, mentions)
	}
}
