package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// leidenRun is one implementation's figures: seconds, and modularity per
// level (hierarchical) or of the partition (flat).
type leidenRun struct {
	Seconds    float64       `json:"seconds"`
	Modularity float64       `json:"modularity,omitempty"`
	Levels     []leidenLevel `json:"levels,omitempty"`
}

// leidenLevel is one level of a hierarchical run.
type leidenLevel struct {
	Modularity float64 `json:"modularity"`
}

// leidenKgrag is bench/leiden's output.
type leidenKgrag struct {
	Nodes        int       `json:"nodes"`
	Edges        int       `json:"edges"`
	Hierarchical leidenRun `json:"hierarchical"`
	Leiden       leidenRun `json:"leiden"`
}

// leidenPeers is scripts/oracle/leiden.py's output; a peer that did not
// run is nil.
type leidenPeers struct {
	Graspologic struct {
		Hierarchical *leidenRun `json:"hierarchical"`
		Leiden       *leidenRun `json:"leiden"`
	} `json:"graspologic"`
	Leidenalg *leidenRun `json:"leidenalg"`
}

// leidenGraph is the result of one graph: kgrag's and the peers' runs.
type leidenGraph struct {
	Graph string       `json:"graph"`
	Kgrag *leidenKgrag `json:"kgrag,omitempty"`
	Peers *leidenPeers `json:"peers,omitempty"`
	Note  string       `json:"note,omitempty"`
}

func (b *bench) leiden(ctx context.Context) (string, any, error) {
	repeat := strconv.Itoa(b.cfg.LeidenRepeat)
	bin, err := b.tool(ctx, "kgrag-leiden", "./bench/leiden")
	if err != nil {
		return "", nil, err
	}
	b.logf("leiden: the peers' venv (scripts/leiden-py.sh)")
	py, pyErr := b.output(ctx, b.runFile("leiden-py.err"), filepath.Join(b.repo, "scripts", "leiden-py.sh"))
	var rows []string
	var results []leidenGraph
	for _, d := range []string{"sample", "synthetic"} {
		tag := "leiden-" + d
		src, label := []string{"-planted"}, "planted 100k"
		if d == "sample" {
			src, label = []string{"-graphrag", b.cfg.Sample}, "sample "+filepath.Base(b.cfg.Sample)
		}
		g := leidenGraph{Graph: label}
		b.logf("leiden: kgrag on %s", label)
		var k leidenKgrag
		ok, err := b.runJSON(ctx, tag, &k, bin, append(src, "-edges-out", b.runFile(tag+".jsonl"), "-repeat", repeat)...)
		if err != nil {
			return "", nil, err
		}
		if !ok {
			g.Note = "kgrag failed: " + lastLine(b.runFile(tag+".err"), 120)
			rows = append(rows, row(label, g.Note))
			results = append(results, g)
			continue
		}
		g.Kgrag = &k
		if pyErr != nil {
			g.Note = "peers not run: scripts/leiden-py.sh failed: " + lastLine(b.runFile("leiden-py.err"), 120)
			rows = append(rows, row(label, g.Note))
		} else {
			b.logf("leiden: graspologic_native and leidenalg on %s", label)
			var p leidenPeers
			ok, err := b.runJSON(ctx, tag+"-py", &p, py, filepath.Join(b.repo, "scripts", "oracle", "leiden.py"),
				"--repeat", repeat, "--leidenalg-iterations", "2", b.runFile(tag+".jsonl"))
			if err != nil {
				return "", nil, err
			}
			if !ok {
				g.Note = "peers failed: " + lastLine(b.runFile(tag+"-py.err"), 120)
				rows = append(rows, row(label, g.Note))
			} else {
				g.Peers = &p
			}
		}
		rows = append(rows, leidenRow(label, k, g.Peers))
		results = append(results, g)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, `## 6. Leiden (community detection)

Best of %d runs, seed 0xDEADBEEF. Hierarchical: kgrag's Hierarchical and graspologic_native's
hierarchical_leiden with GraphRAG's parameters (max cluster size 10, randomness 0.001, 1 iteration; the
peer's time includes handing the edge list from Python to Rust, as GraphRAG does). Flat: kgrag's Leiden
(2 iterations), graspologic_native's leiden (1 iteration), leidenalg's ModularityVertexPartition (2
iterations, igraph graph built beforehand). Targets: hierarchical at most 2x graspologic's time; flat
faster than leidenalg. Modularity per level is of the whole-graph partition at that level (igraph's for
the peers); one seed, so the deeper levels of the small sample vary by a few percent between seeds.

`, b.cfg.LeidenRepeat)
	sb.WriteString("| graph | nodes / edges | kgrag hierarchical | graspologic hierarchical | ratio | kgrag flat | graspologic flat | leidenalg | kgrag modularity per level | graspologic per level | flat modularity kgrag / graspologic / leidenalg |\n")
	sb.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	sb.WriteString(strings.Join(rows, "") + "\n")
	return sb.String(), results, nil
}

// leidenRow is the table row of one graph; p is nil when the peers did
// not run.
func leidenRow(label string, k leidenKgrag, p *leidenPeers) string {
	if p == nil {
		p = &leidenPeers{}
	}
	gh, gl, la := p.Graspologic.Hierarchical, p.Graspologic.Leiden, p.Leidenalg
	ms := func(r *leidenRun) string {
		if r == nil {
			return "n/a"
		}
		return fmt.Sprintf("%.1f ms", 1000*r.Seconds)
	}
	mod := func(r *leidenRun) string {
		if r == nil {
			return "nan"
		}
		return fmt.Sprintf("%.4f", r.Modularity)
	}
	levels := func(r *leidenRun) string {
		if r == nil || len(r.Levels) == 0 {
			return "n/a"
		}
		var qs []string
		for _, l := range r.Levels {
			qs = append(qs, fmt.Sprintf("%.4f", l.Modularity))
		}
		return strings.Join(qs, " / ")
	}
	kh, kl := &k.Hierarchical, &k.Leiden
	hier := "n/a"
	if gh != nil {
		hier = strings.Replace(f(ratio(kh.Seconds, gh.Seconds), 2), "?", "n/a", 1) +
			" (" + metMissed(kh.Seconds <= 2*gh.Seconds) + ")"
	}
	alg := ms(la)
	if la != nil {
		alg += " (" + metMissed(kl.Seconds < la.Seconds) + ")"
	}
	return row(label, fmt.Sprintf("%d / %d", k.Nodes, k.Edges),
		ms(kh), ms(gh), hier, ms(kl), ms(gl), alg,
		levels(kh), levels(gh), mod(kl)+" / "+mod(gl)+" / "+mod(la))
}

// metMissed is "met" when ok, else "MISSED".
func metMissed(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

// runJSON runs name args with stdout in RUN/TAG.json and stderr in
// RUN/TAG.err and decodes the output into v; it reports whether both
// succeeded.
func (b *bench) runJSON(ctx context.Context, tag string, v any, name string, args ...string) (bool, error) {
	u, err := b.exec(ctx, cmdSpec{stdout: b.runFile(tag + ".json"), stderr: b.runFile(tag + ".err")}, name, args...)
	if err != nil || u.RC != 0 {
		return false, err
	}
	return readJSON(b.runFile(tag+".json"), v) == nil, nil
}

// readJSON decodes file into v.
func readJSON(file string, v any) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(file), err)
	}
	return nil
}
