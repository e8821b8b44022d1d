package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// diffLoad is one store's full load and --diff of the 1% change.
type diffLoad struct {
	Store    string   `json:"store"`
	Full     num      `json:"full_s"`
	FullRSS  num      `json:"full_peak_rss_mb"`
	FullSRSS storeMem `json:"full_store_peak_rss"`
	Diff     num      `json:"diff_s"`
	DiffRSS  num      `json:"diff_peak_rss_mb"`
	DiffSRSS storeMem `json:"diff_store_peak_rss"`
	Deleted  string   `json:"deleted"`
	Inserted string   `json:"inserted"`
	InStore  num      `json:"triples_in_store"`
	Percent  num      `json:"diff_percent_of_full"`
	Note     string   `json:"note,omitempty"`
}

type diffResult struct {
	Copies string     `json:"copies"`
	Want   num        `json:"triples_of_changed_copy"`
	Loads  []diffLoad `json:"loads"`
}

// countLines counts the lines name args write to stdout.
func (b *bench) countLines(ctx context.Context, name string, args ...string) (float64, error) {
	cmd, closeFn, err := b.command(ctx, cmdSpec{}, name, args...)
	if err != nil {
		return math.NaN(), err
	}
	defer closeFn()
	out, err := cmd.StdoutPipe()
	if err != nil {
		return math.NaN(), err
	}
	if err := cmd.Start(); err != nil {
		return math.NaN(), err
	}
	var n float64
	buf := make([]byte, 1<<20)
	for {
		k, err := out.Read(buf)
		n += float64(bytes.Count(buf[:k], []byte{'\n'}))
		if err == io.EOF {
			break
		}
		if err != nil {
			return math.NaN(), err
		}
	}
	return n, cmd.Wait()
}

// diffCopies writes the synthetic dataset twice with bench/diffload (once
// as it is, once with 1% of its entities and relationships changed), or
// finds the copies an earlier run wrote. note says why not when writing
// failed.
func (b *bench) diffCopies(ctx context.Context) (base, changed, note string, err error) {
	synth, err := b.synthSet(ctx)
	if err != nil {
		return "", "", "", err
	}
	base = filepath.Join(b.out, "data", filepath.Base(synth)+"-diff-base")
	changed = filepath.Join(b.out, "data", filepath.Base(synth)+"-diff-1pct")
	if _, err := os.Stat(filepath.Join(changed, ".complete")); err == nil {
		return base, changed, "", nil
	}
	os.RemoveAll(base)
	os.RemoveAll(changed)
	out, errf := b.runFile("diffload.out"), b.runFile("diffload.err")
	ok, err := b.goRun(ctx, out, errf, "./bench/diffload", "-in", synth, "-out", base, "-fraction", "0")
	if err != nil {
		return "", "", "", err
	}
	if ok {
		u, err := b.exec(ctx, cmdSpec{stdout: out, appendOut: true, stderr: errf, appendErr: true},
			"go", "run", "./bench/diffload", "-in", synth, "-out", changed, "-fraction", "0.01")
		if err != nil {
			return "", "", "", err
		}
		ok = u.RC == 0
	}
	if !ok {
		return base, changed, "failed to write the changed copy: " + lastLine(errf, 300), nil
	}
	return base, changed, "", os.WriteFile(filepath.Join(changed, ".complete"), nil, 0o644)
}

func (b *bench) diff(ctx context.Context) (string, any, error) {
	b.logf("diff: 1%% of entities and relationships changed, loaded with --diff")
	base, changed, note, err := b.diffCopies(ctx)
	if err != nil {
		return "", nil, err
	}
	var res diffResult
	var rows []string
	if note == "" {
		if note = lastLine(b.runFile("diffload.out"), 1000); note == "" {
			note = "copies reused"
		}
		want, err := b.countLines(ctx, b.kgrag, "load", "-q", "--input", changed, "--ntriples", "-")
		if err != nil && ctx.Err() != nil {
			return "", nil, ctx.Err()
		}
		res.Want = num(want)
		for _, s := range b.cfg.DiffStores {
			l, err := b.diffStore(ctx, s, base, changed, want)
			if err != nil {
				return "", nil, err
			}
			res.Loads = append(res.Loads, l)
			rows = append(rows, l.row(want))
		}
	}
	res.Copies = note
	var sb strings.Builder
	fmt.Fprintf(&sb, "## 10. Loading a small change: `kgrag load --diff`\n\n"+
		"The synthetic dataset written twice by bench/diffload: as it is, and with 1%% of its entities (description)\n"+
		"and relationships (description and weight) changed (%s). Into a fresh store: `--diff` of the base\n"+
		"(no record yet, so a full atomic replacement), then `--diff` of the changed copy. Target: the difference\n"+
		"under 5%% of the full load's time. The graph is then counted against the changed copy's N-Triples.\n\n"+
		"Peak resident memory of kgrag and of the store's server beside each time (the server's own pages, sampled every 200 ms;\n"+
		"in brackets with the pages of the files it maps, which the kernel reclaims).\n\n"+
		"| store | full atomic load | --diff of the 1%% change | triples deleted / inserted | graph after (of the changed copy's) | diff / full |\n"+
		"|---|---|---|---|---|---|\n", note)
	sb.WriteString(strings.Join(rows, "") + "\n")
	return sb.String(), res, nil
}

// row is the load's table row; want is the changed copy's triples.
func (l diffLoad) row(want float64) string {
	switch {
	case l.Note != "" && math.IsNaN(float64(l.Full)):
		return row(l.Store, l.Note, "", "", "", "")
	case l.Note != "":
		return row(l.Store, f(float64(l.Full), 2)+" s", l.Note, "", "", "")
	}
	del, ins := l.Deleted, l.Inserted
	if n, err := strconv.ParseFloat(del, 64); err == nil {
		del = fmtInt(n)
	}
	if n, err := strconv.ParseFloat(ins, 64); err == nil {
		ins = fmtInt(n)
	}
	p := float64(l.Percent)
	return row(l.Store, fmt.Sprintf("%s s (kgrag %s MB, store %s MB)", f(float64(l.Full), 2), f(float64(l.FullRSS), 0), l.FullSRSS),
		fmt.Sprintf("%s s (kgrag %s MB, store %s MB)", f(float64(l.Diff), 2), f(float64(l.DiffRSS), 0), l.DiffSRSS),
		del+" / "+ins, fmtInt(float64(l.InStore))+" of "+fmtInt(want), fmt.Sprintf("%s%% (%s)", f(p, 1), verdict(p, lt, 5)))
}

// diffStore loads the base copy with --diff into a fresh store (no record
// yet: a full atomic replacement, which records the digest), then the
// changed copy with --diff, and counts the graph.
func (b *bench) diffStore(ctx context.Context, s, base, changed string, want float64) (diffLoad, error) {
	nan := num(math.NaN())
	l := diffLoad{Store: s, Full: nan, FullRSS: nan, FullSRSS: noMem(), Diff: nan, DiffRSS: nan, DiffSRSS: noMem()}
	port, done, err := b.freshStore(ctx, s, s+"-diff")
	defer done()
	if err != nil {
		l.Note = "not run: " + s + " did not start"
		return l, ctx.Err()
	}
	url := storeURL(s, port)
	args := []string{"load", "--store", url, "--store-type", s, "--graph", graphIRI, "--diff"}
	load := func(tag, input string) (usage, storeMem, error) {
		w := watchStore(b.storeDir(s + "-diff"))
		u, err := b.measure(ctx, tag, nil, b.kgrag, append(slices.Clone(args), "--input", input)...)
		return u, w.mem(), err
	}
	u, peak, err := load("diff-"+s+"-full", base)
	if err != nil || u.RC != 0 {
		l.Note = "failed: " + b.why("diff-"+s+"-full", u.RC)
		return l, err
	}
	l.Full, l.FullRSS, l.FullSRSS = num(u.Wall), num(u.RSSMB), peak
	tag := "diff-" + s + "-diff"
	u, peak, err = load(tag, changed)
	if err != nil || u.RC != 0 {
		l.Note = "failed: " + b.why(tag, u.RC)
		return l, err
	}
	l.Diff, l.DiffRSS, l.DiffSRSS = num(u.Wall), num(u.RSSMB), peak
	errText, _ := os.ReadFile(b.runFile(tag + ".err"))
	if m := regexp.MustCompile(`difference of ([0-9]+) triples deleted and ([0-9]+) inserted`).FindSubmatch(errText); m != nil {
		l.Deleted, l.Inserted = string(m[1]), string(m[2])
	} else {
		l.Inserted = "?"
		l.Deleted = "none sent: "
		for _, line := range strings.Split(string(errText), "\n") {
			if strings.Contains(line, "--diff:") {
				l.Deleted += cut(line, 160)
				break
			}
		}
	}
	n, _ := b.sparqlCount(ctx, queryURL(s, port), graphIRI)
	l.InStore = num(n)
	l.Percent = num(100 * ratio(u.Wall, float64(l.Full)))
	return l, nil
}
