package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// driverResult is the result of a step whose driver (a bench/* program)
// prints its own Markdown section: whether it ran, and why not.
type driverResult struct {
	OK       bool   `json:"ok"`
	Note     string `json:"note,omitempty"`
	Markdown string `json:"markdown,omitempty"` // the driver's output file
}

// driverSection is the section a driver wrote to md, or a failure line
// under title when it failed (rc != 0).
func (b *bench) driverSection(title, md, errFile string, rc int) (string, driverResult) {
	if rc == 0 {
		if data, err := os.ReadFile(md); err == nil {
			return string(data), driverResult{OK: true, Markdown: b.rel(md)}
		}
	}
	note := fmt.Sprintf("failed: %s (log: %s)", lastLine(errFile, 200), b.rel(errFile))
	return title + "\n\n" + note + "\n\n", driverResult{Note: note}
}

func (b *bench) global(ctx context.Context) (string, any, error) {
	synth, err := b.synthSet(ctx)
	if err != nil {
		return "", nil, err
	}
	bin, err := b.tool(ctx, "bench-global", "./bench/global")
	if err != nil {
		return "", nil, err
	}
	b.logf("global: GraphRAG's venv (scripts/graphrag-py.sh)")
	note := ""
	py, err := b.output(ctx, b.runFile("global-graphrag-py.err"), filepath.Join(b.repo, "scripts", "graphrag-py.sh"))
	if err != nil {
		py, note = "", "scripts/graphrag-py.sh failed: "+lastLine(b.runFile("global-graphrag-py.err"), 160)
	}
	b.logf("global: bench/global (test model servers in-process; GraphRAG's context builder)")
	const title = "## 5. Global search (map-reduce over community reports)"
	md, errf := b.runFile("global.md"), b.runFile("global.err")
	u, err := b.exec(ctx, cmdSpec{stdout: md, stderr: errf}, bin,
		"-sample", b.cfg.Sample, "-synth", synth, "-synth-label", fmt.Sprintf("synthetic (%d entities)", b.cfg.Entities),
		"-questions", strconv.Itoa(b.cfg.GlobalN), "-repeat", strconv.Itoa(b.cfg.GlobalRepeat),
		"-graphrag-python", py, "-graphrag-note", note, "-work", b.runFile("global"), "-repo", b.repo,
		"-title", title)
	if err != nil {
		return "", nil, err
	}
	section, res := b.driverSection(title, md, errf, u.RC)
	return section, res, nil
}
