package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
)

// goRun runs `go run PKG ARGS` with stdout in out and stderr in errFile;
// it reports whether the program succeeded.
func (b *bench) goRun(ctx context.Context, out, errFile, pkg string, args ...string) (bool, error) {
	u, err := b.exec(ctx, cmdSpec{stdout: out, stderr: errFile}, "go", append([]string{"run", pkg}, args...)...)
	return err == nil && u.RC == 0, err
}

type updateResult struct {
	ChunkBy map[string]driverResult `json:"chunk_by"`
}

func (b *bench) update(ctx context.Context) (string, any, error) {
	b.logf("update: staves of A Christmas Carol added, edited, deleted")
	text := filepath.Join(b.cfg.TestData, "text", "a-christmas-carol.txt")
	res := updateResult{ChunkBy: map[string]driverResult{}}
	var sb strings.Builder
	sb.WriteString(`## 9. Re-indexing after a change

A Christmas Carol's five staves as five documents, the scripted test model taking 500 ms per call (eight characters, so a small
graph), kgrag index run again over the same output and cache of replies after each change. Calls made are
paid for; the cache answers the rest. Communities start from the previous output's (warm Leiden), and
those that keep their members keep their number and id.

`)
	for _, by := range []string{"tokens", "paragraphs"} {
		md, errf := b.runFile("update-"+by+".md"), b.runFile("update-"+by+".err")
		ok, err := b.goRun(ctx, md, errf, "./bench/update", "-text", text, "-chunk-by", by, "-latency", "500ms")
		if err != nil {
			return "", nil, err
		}
		data, _ := os.ReadFile(md)
		if ok {
			sb.WriteString("With --chunk-by " + by + ":\n\n" + strings.TrimRight(string(data), "\n") + "\n\n")
			res.ChunkBy[by] = driverResult{OK: true, Markdown: b.rel(md)}
		} else {
			note := "failed: " + tail(2, "\n", 1000, errf)
			sb.WriteString("With --chunk-by " + by + ": " + note + "\n\n")
			res.ChunkBy[by] = driverResult{Note: note}
		}
	}
	sb.WriteString("\n")
	return sb.String(), res, nil
}

func (b *bench) drift(ctx context.Context) (string, any, error) {
	sample := filepath.Join(b.cfg.TestData, "graphrag", "v3")
	b.logf("drift: bench/drift on %s", sample)
	md, errf := b.runFile("drift.md"), b.runFile("drift.err")
	ok, err := b.goRun(ctx, md, errf, "./bench/drift", "-sample", sample, "-questions", "10")
	if err != nil {
		return "", nil, err
	}
	if !ok {
		note := "failed: " + tail(3, " ", 200, errf)
		return "## 12. DRIFT and basic search: " + note + "\n", driverResult{Note: note}, nil
	}
	data, _ := os.ReadFile(md)
	section := strings.Replace(string(data), "## DRIFT and basic search (bench/drift)", "## 12. DRIFT and basic search (bench/drift)", 1)
	return section, driverResult{OK: true, Markdown: b.rel(md)}, nil
}
