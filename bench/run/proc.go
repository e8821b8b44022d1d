package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// usage is what a finished process cost: its exit status, wall time, CPU
// time (user + system, its waited-for children included) and peak RSS.
type usage struct {
	RC    int     `json:"exit_status"`
	Wall  float64 `json:"wall_s"`
	CPU   float64 `json:"cpu_s"`
	RSSMB float64 `json:"peak_rss_mb"`
}

// usageOf reads ps, the state of a process that ran for wall. Maxrss is
// in KiB on Linux, as /usr/bin/time -v reports it.
func usageOf(ps *os.ProcessState, wall time.Duration) usage {
	u := usage{RC: -1, Wall: wall.Seconds()}
	if ps == nil {
		return u
	}
	u.RC = ps.ExitCode()
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok && ru != nil {
		u.CPU = tvSeconds(ru.Utime) + tvSeconds(ru.Stime)
		u.RSSMB = float64(ru.Maxrss) / 1024
	}
	return u
}

func tvSeconds(tv syscall.Timeval) float64 {
	return float64(tv.Sec) + float64(tv.Usec)/1e6
}

// cmdSpec is one external command: its environment additions, stdin and
// where its output goes.
type cmdSpec struct {
	env       []string // VAR=VALUE added to the environment
	stdin     string
	stdout    string // file; "" discards
	stderr    string // file; "" discards
	appendOut bool   // append to stdout rather than truncate it
	appendErr bool   // append to stderr rather than truncate it
}

// command builds the exec.Cmd of name args under spec; close releases
// its files.
func (b *bench) command(ctx context.Context, spec cmdSpec, name string, args ...string) (cmd *exec.Cmd, closeFn func(), err error) {
	cmd = exec.CommandContext(ctx, name, args...)
	cmd.Dir = b.repo
	cmd.Env = append(os.Environ(), spec.env...)
	cmd.WaitDelay = 5 * time.Second
	if spec.stdin != "" {
		cmd.Stdin = strings.NewReader(spec.stdin)
	}
	var files []*os.File
	closeFn = func() {
		for _, f := range files {
			f.Close()
		}
	}
	open := func(path string, appending bool) (*os.File, error) {
		flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
		if appending {
			flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
		}
		f, err := os.OpenFile(path, flags, 0o644)
		if err == nil {
			files = append(files, f)
		}
		return f, err
	}
	if spec.stdout != "" {
		if cmd.Stdout, err = open(spec.stdout, spec.appendOut); err != nil {
			closeFn()
			return nil, nil, fmt.Errorf("open output: %w", err)
		}
	}
	if spec.stderr != "" {
		if spec.stderr == spec.stdout {
			cmd.Stderr = cmd.Stdout
		} else if cmd.Stderr, err = open(spec.stderr, spec.appendErr); err != nil {
			closeFn()
			return nil, nil, fmt.Errorf("open output: %w", err)
		}
	}
	return cmd, closeFn, nil
}

// exec runs name args under spec and reports what it cost; a non-zero
// exit is in usage.RC, not an error. The error is for a command that could
// not start or a cancelled context.
func (b *bench) exec(ctx context.Context, spec cmdSpec, name string, args ...string) (usage, error) {
	cmd, closeFn, err := b.command(ctx, spec, name, args...)
	if err != nil {
		return usage{RC: -1}, err
	}
	defer closeFn()
	t0 := time.Now()
	err = cmd.Run()
	u := usageOf(cmd.ProcessState, time.Since(t0))
	if ctx.Err() != nil {
		return u, ctx.Err()
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		if spec.stderr != "" {
			// Like a shell: the reason goes where the command's own
			// complaints would, for why to find.
			_ = os.WriteFile(spec.stderr, []byte(err.Error()+"\n"), 0o644)
		}
		u.RC = 127
	}
	return u, nil
}

// measure runs name args with stdout and stderr in RUN/TAG.out and
// RUN/TAG.err, logging what it cost.
func (b *bench) measure(ctx context.Context, tag string, env []string, name string, args ...string) (usage, error) {
	b.logf("run %s: %s", tag, strings.Join(append(slices.Clone(env), append([]string{name}, args...)...), " "))
	u, err := b.exec(ctx, cmdSpec{env: env, stdout: b.runFile(tag + ".out"), stderr: b.runFile(tag + ".err")}, name, args...)
	if err != nil {
		return u, fmt.Errorf("run %s: %w", tag, err)
	}
	b.logf("  rc=%d wall=%.2fs cpu=%.1fs rss=%.0fMB", u.RC, u.Wall, u.CPU, u.RSSMB)
	return u, nil
}

// output runs name args and returns its trimmed stdout; stderr goes to
// errFile.
func (b *bench) output(ctx context.Context, errFile string, name string, args ...string) (string, error) {
	cmd, closeFn, err := b.command(ctx, cmdSpec{stderr: errFile}, name, args...)
	if err != nil {
		return "", err
	}
	defer closeFn()
	out, err := cmd.Output()
	if err != nil {
		return strings.TrimSpace(string(out)), fmt.Errorf("%s: %w", filepath.Base(name), err)
	}
	return strings.TrimSpace(string(out)), nil
}

// why says in one line why run TAG failed: the last line of its stderr,
// or of its stdout for tools that log there (tdb2.tdbloader).
func (b *bench) why(tag string, rc int) string {
	f := b.runFile(tag + ".err")
	line := lastLine(f, 160)
	if line == "" {
		if l := lastLine(b.runFile(tag+".out"), 160); l != "" {
			f, line = b.runFile(tag+".out"), l
		}
	}
	if line == "" {
		line = "no message"
	}
	return fmt.Sprintf("exit %d: %s (log: %s)", rc, line, b.rel(f))
}

// lastLine is the last non-blank line of file, cut to max bytes; "" when
// there is none.
func lastLine(file string, max int) string {
	lines := tailLines(file, 1)
	if len(lines) == 0 {
		return ""
	}
	return cut(lines[0], max)
}

// tailLines is the last n non-blank lines of file.
func tailLines(file string, n int) []string {
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "" {
			lines = append(lines, sc.Text())
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// tail is the last n non-blank lines of the files joined by sep, cut to
// max bytes.
func tail(n int, sep string, max int, files ...string) string {
	var all []string
	for _, f := range files {
		all = append(all, tailLines(f, n)...)
	}
	return cut(strings.Join(all, sep), max)
}

func cut(s string, max int) string {
	if len(s) > max {
		return s[:max]
	}
	return s
}
