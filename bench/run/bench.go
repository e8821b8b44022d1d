package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// graphIRI is the named graph the store steps load.
const graphIRI = "http://example.org/kgrag-bench"

// bench is one run: its settings, directories and the servers and
// processes it started, which stopServers ends. Not safe for concurrent
// use.
type bench struct {
	cfg    config
	repo   string // the repository root, where commands run
	out    string // cfg.Out, absolute
	runDir string // raw outputs and logs
	kgrag  string // absolute path of bin/kgrag
	log    io.Writer
	http   *http.Client

	synth   string // the synthetic set, once made
	servers []server
	bg      []*bgProc
}

// server is a store started by scripts/NAME.sh.
type server struct {
	name string
	port int
	dir  string
}

// step is one part of the run: it returns its report section and its
// result for STEP.json; an error is the harness's own failure.
type step struct {
	name string
	run  func(b *bench, ctx context.Context) (section string, result any, err error)
}

// steps lists every step in the order they run.
func steps() []step {
	return []step{
		{"convert", (*bench).convert},
		{"micro", (*bench).micro},
		{"stores", (*bench).stores},
		{"retrieval", (*bench).retrieval},
		{"global", (*bench).global},
		{"leiden", (*bench).leiden},
		{"index", (*bench).index},
		{"serve", (*bench).serve},
		{"update", (*bench).update},
		{"diff", (*bench).diff},
		{"fast", (*bench).fast},
		{"drift", (*bench).drift},
		{"knn", (*bench).knn},
		{"open", (*bench).open},
		{"eval", (*bench).eval},
		{"multihop", (*bench).multihop},
		{"replicas", (*bench).replicas},
	}
}

func allSteps() []string {
	var names []string
	for _, s := range steps() {
		names = append(names, s.name)
	}
	return names
}

func stepByName(name string) *step {
	for _, s := range steps() {
		if s.name == name {
			return &s
		}
	}
	return nil
}

func newBench(cfg config, log io.Writer) (*bench, error) {
	repo, err := repoRoot()
	if err != nil {
		return nil, err
	}
	out := cfg.Out
	if !filepath.IsAbs(out) {
		out = filepath.Join(repo, out)
	}
	kg := cfg.Kgrag
	if !filepath.IsAbs(kg) {
		kg = filepath.Join(repo, kg)
	}
	return &bench{
		cfg: cfg, repo: repo, out: out, runDir: filepath.Join(out, "run"), kgrag: kg,
		log: log, http: &http.Client{Timeout: 10 * time.Minute},
	}, nil
}

// repoRoot is the directory of go.mod above the working directory.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("bench: working directory: %w", err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("bench: no go.mod above %s: run from the repository", dir)
		}
	}
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.log, "bench: "+format+"\n", args...)
}

func (b *bench) runFile(name string) string { return filepath.Join(b.runDir, name) }

// rel is path relative to the repository, for the report.
func (b *bench) rel(path string) string {
	return strings.TrimPrefix(path, b.repo+string(filepath.Separator))
}

// runSteps prepares the run, runs cfg.Steps in order and writes the report.
func (b *bench) runSteps(ctx context.Context, stdout io.Writer) error {
	start := time.Now()
	// A kept store serves only the run that made it.
	kept, _ := filepath.Glob(filepath.Join(b.out, "stores", "*-bulk-kept"))
	for _, p := range append(kept, b.runDir) {
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("bench: clean %s: %w", p, err)
		}
	}
	if err := os.MkdirAll(filepath.Join(b.out, "data"), 0o755); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if err := os.MkdirAll(b.runDir, 0o755); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if _, err := os.Stat(b.kgrag); err != nil {
		b.logf("building %s", b.kgrag)
		if err := b.goBuild(ctx, b.kgrag, "./cmd/kgrag"); err != nil {
			return err
		}
	}
	var report strings.Builder
	report.WriteString("# kgrag benchmark report\n\n")
	report.WriteString(b.environment(ctx))
	for _, name := range b.cfg.Steps {
		s := stepByName(name)
		b.logf("step %s", name)
		t0 := time.Now()
		section, result, err := s.run(b, ctx)
		if err != nil {
			return fmt.Errorf("bench: %s: %w", name, err)
		}
		// Each section ends with one blank line, whatever its driver wrote.
		report.WriteString(strings.TrimRight(section, "\n") + "\n\n")
		if err := b.writeResult(name, time.Since(t0), result); err != nil {
			return err
		}
	}
	fmt.Fprintf(&report, "Total bench time: %d s. Raw outputs and logs: %s/\n", int(time.Since(start).Seconds()), b.rel(b.runDir))
	path := filepath.Join(b.out, "report.md")
	if err := os.WriteFile(path+".tmp", []byte(report.String()), 0o644); err != nil {
		return fmt.Errorf("bench: write report: %w", err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		return fmt.Errorf("bench: write report: %w", err)
	}
	_, err := io.WriteString(stdout, report.String())
	return err
}

// writeResult writes OUT/STEP.json.
func (b *bench) writeResult(name string, took time.Duration, result any) error {
	data, err := json.MarshalIndent(struct {
		Step    string    `json:"step"`
		Date    time.Time `json:"date"`
		Seconds float64   `json:"seconds"`
		Result  any       `json:"result"`
	}{name, time.Now().UTC().Truncate(time.Second), took.Seconds(), result}, "", "  ")
	if err != nil {
		return fmt.Errorf("bench: %s result: %w", name, err)
	}
	if err := os.WriteFile(filepath.Join(b.out, name+".json"), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("bench: %s result: %w", name, err)
	}
	return nil
}

// environment is the report's first section: machine, versions, data.
func (b *bench) environment(ctx context.Context) string {
	sh := func(name string, args ...string) string {
		out, err := b.output(ctx, "", name, args...)
		if err != nil && out == "" {
			return "unknown"
		}
		return out
	}
	commit := sh("git", "rev-parse", "--short", "HEAD")
	if _, err := b.output(ctx, "", "git", "diff", "--quiet", "HEAD", "--"); err != nil {
		commit += " (worktree has uncommitted changes)"
	}
	cpu, mem := "unknown", "unknown"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb float64
		if _, err := fmt.Sscanf(string(data), "MemTotal: %f kB", &kb); err == nil {
			mem = fmt.Sprintf("%.1f GB", kb/1048576)
		}
	}
	load := "unknown"
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		load = strings.Join(strings.Fields(string(data))[:3], " ")
	}
	py := b.cfg.Python
	pyVer, _ := b.combined(ctx, py, "--version")
	pyLibs, err := b.output(ctx, "", py, "-c", `import pyarrow, rdflib; print("pyarrow", pyarrow.__version__ + ", rdflib", rdflib.__version__)`)
	if err != nil {
		pyLibs = "pyarrow/rdflib missing"
	}
	quick := ""
	if b.cfg.Quick {
		quick = " (BENCH_QUICK=1)"
	}
	c := b.cfg
	return fmt.Sprintf(`## Environment

- date: %s; kgrag commit %s
- machine: %d CPUs (%s), %s RAM; load average at start: %s (shared with other work: figures are noisy)
- %s; %s; %s
- synthetic dataset: %d entities, %d relationships, %d text units, %d communities, seed %d%s
- real sample: %s

`, time.Now().UTC().Format("2006-01-02 15:04 UTC"), commit, runtime.NumCPU(), cpu, mem, load,
		strings.TrimPrefix(sh("go", "version"), "go version "), strings.TrimSpace(pyVer), pyLibs,
		c.Entities, c.Relationships, c.TextUnits, c.Communities, c.Seed, quick, c.Sample)
}

// combined runs name args and returns stdout and stderr together.
func (b *bench) combined(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = b.repo
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// synthSet returns the synthetic dataset, made by kgrag-synth once and
// cached under OUT/data.
func (b *bench) synthSet(ctx context.Context) (string, error) {
	if b.synth != "" {
		return b.synth, nil
	}
	c := b.cfg
	dir, err := b.makeSynth(ctx, c.Entities, c.Relationships, c.TextUnits, c.Communities)
	if err != nil {
		return "", err
	}
	b.synth = dir
	return dir, nil
}

// makeSynth makes (or reuses) the synthetic set of these sizes.
func (b *bench) makeSynth(ctx context.Context, ent, rel, tu, com int) (string, error) {
	dir := synthDir(b.out, ent, rel, tu, com, b.cfg.Seed)
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		b.logf("reusing the synthetic dataset %s", dir)
		return dir, nil
	}
	b.logf("generating the synthetic dataset into %s", dir)
	if err := os.RemoveAll(dir); err != nil {
		return "", fmt.Errorf("kgrag-synth: %w", err)
	}
	cmd := exec.CommandContext(ctx, "go", "run", "./cmd/kgrag-synth", "-out", dir, "-seed", strconv.Itoa(b.cfg.Seed),
		"-entities", strconv.Itoa(ent), "-relationships", strconv.Itoa(rel),
		"-text-units", strconv.Itoa(tu), "-communities", strconv.Itoa(com))
	cmd.Dir, cmd.Stdout, cmd.Stderr = b.repo, b.log, b.log
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("kgrag-synth failed: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".complete"), nil, 0o644); err != nil {
		return "", fmt.Errorf("kgrag-synth: %w", err)
	}
	return dir, nil
}

// synthTTL writes kgrag's Turtle of the synthetic set, which the bulk
// loaders read, unless an earlier step did.
func (b *bench) synthTTL(ctx context.Context) (string, error) {
	ttl := b.runFile("synth.kgrag.ttl")
	if fileSize(ttl) > 0 {
		return ttl, nil
	}
	synth, err := b.synthSet(ctx)
	if err != nil {
		return "", err
	}
	b.logf("writing %s for the bulk loaders", ttl)
	u, err := b.exec(ctx, cmdSpec{stderr: b.runFile("synth-ttl.err")}, b.kgrag, "load", "--input", synth, "--turtle", ttl)
	if err != nil {
		return "", err
	}
	if u.RC != 0 {
		return "", fmt.Errorf("kgrag load --turtle failed (log: %s)", b.rel(b.runFile("synth-ttl.err")))
	}
	return ttl, nil
}

// goBuild builds pkg into out.
func (b *bench) goBuild(ctx context.Context, out, pkg string) error {
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return fmt.Errorf("building %s: %w", pkg, err)
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir, cmd.Stderr = b.repo, b.log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building %s failed: %w", pkg, err)
	}
	return nil
}

// tool builds pkg into OUT/bin/NAME and returns its path.
func (b *bench) tool(ctx context.Context, name, pkg string) (string, error) {
	path := filepath.Join(b.out, "bin", name)
	return path, b.goBuild(ctx, path, pkg)
}

// benchstat finds benchstat, installing it when missing.
func (b *bench) benchstat(ctx context.Context) (string, error) {
	gopath, _ := b.output(ctx, "", "go", "env", "GOPATH")
	p := filepath.Join(gopath, "bin", "benchstat")
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	if p, err := exec.LookPath("benchstat"); err == nil {
		return p, nil
	}
	b.logf("installing benchstat")
	cmd := exec.CommandContext(ctx, "go", "install", "golang.org/x/perf/cmd/benchstat@latest")
	cmd.Dir, cmd.Stdout, cmd.Stderr = b.repo, b.log, b.log
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("install benchstat: %w", err)
	}
	return p, nil
}

// benchstatOf is benchstat's summary of files (args first), or its error.
func (b *bench) benchstatOf(ctx context.Context, bs string, args ...string) string {
	out, _ := b.combined(ctx, bs, args...)
	return strings.TrimRight(out, "\n")
}
