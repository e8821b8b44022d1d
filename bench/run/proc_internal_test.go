package main

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseStatTicks(t *testing.T) {
	for _, tt := range []struct {
		name, stat string
		want       int64
		ok         bool
	}{
		{"plain", "1234 (java) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 30 0 0 20 0 40 0 100 0 0", 280, true},
		{"spaces in the name", "77 (my (odd) server) R 1 77 77 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 1 0 0", 10, true},
		{"cut short", "77 (x) R 1 2", 0, false},
		{"no name", "garbage", 0, false},
	} {
		got, ok := parseStatTicks(tt.stat)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: parseStatTicks = %d, %v; want %d, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParseCountCSV(t *testing.T) {
	for _, tt := range []struct {
		body string
		want float64
		ok   bool
	}{
		{"n\r\n5250000\r\n", 5250000, true},
		{"n\n\"42\"\n", 42, true},
		{"n\n", 0, false},
	} {
		got, err := parseCountCSV(tt.body)
		if (err == nil) != tt.ok || (tt.ok && got != tt.want) {
			t.Errorf("parseCountCSV(%q) = %v, %v; want %v (ok %v)", tt.body, got, err, tt.want, tt.ok)
		}
	}
}

// TestExecUsage runs a real process: its exit status, wall time and peak
// RSS come from the rusage, and its output goes to the files.
func TestExecUsage(t *testing.T) {
	dir := t.TempDir()
	b := &bench{repo: dir, runDir: dir, log: &strings.Builder{}}
	ctx := context.Background()
	u, err := b.measure(ctx, "ok", []string{"BENCH_TEST_WORD=hello"}, "sh", "-c", `echo "$BENCH_TEST_WORD"; echo oops >&2; sleep 0.1`)
	if err != nil {
		t.Fatal(err)
	}
	if u.RC != 0 || u.Wall < 0.1 || u.RSSMB <= 0 {
		t.Errorf("measure = %+v; want exit 0, wall >= 0.1 s, some RSS", u)
	}
	if out, _ := os.ReadFile(filepath.Join(dir, "ok.out")); string(out) != "hello\n" {
		t.Errorf("ok.out = %q; want %q", out, "hello\n")
	}
	u, err = b.measure(ctx, "fail", nil, "sh", "-c", "echo first >&2; echo last words >&2; exit 3")
	if err != nil {
		t.Fatal(err)
	}
	if u.RC != 3 {
		t.Errorf("exit status = %d; want 3", u.RC)
	}
	if got, want := b.why("fail", u.RC), "exit 3: last words (log: fail.err)"; !strings.HasPrefix(got, "exit 3: last words") {
		t.Errorf("why = %q; want %q", got, want)
	}
	u, err = b.measure(ctx, "missing", nil, filepath.Join(dir, "no-such-program"))
	if err != nil || u.RC != 127 {
		t.Errorf("missing program: %+v, %v; want exit 127 and no error", u, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := b.measure(ctx, "slow", nil, "sleep", "5"); err == nil {
		t.Errorf("measure of a cancelled command: no error")
	}
}

// TestWatchStore samples this test's own process as a server, and a
// directory with no pid file as a server that did not start.
func TestWatchStore(t *testing.T) {
	dir := t.TempDir()
	if a, tt := watchStore(dir).Stop(); !math.IsNaN(a) || !math.IsNaN(tt) {
		t.Error("peak without a pid file is a number; want NaN")
	}
	if err := os.WriteFile(filepath.Join(dir, "server.pid"), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	anon, total, ok := treeRSS(os.Getpid())
	if !ok || anon <= 0 || total < anon {
		t.Fatalf("treeRSS(self) = %v, %v, %v; want 0 < anon <= total", anon, total, ok)
	}
	w := watchStore(dir)
	time.Sleep(300 * time.Millisecond)
	// VmHWM bounds what any sample can have seen.
	status, _ := os.ReadFile("/proc/self/status")
	var hwm float64
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			hwm, _ = strconv.ParseFloat(f[1], 64)
		}
	}
	if a, tt := w.Stop(); a <= 0 || a > tt || tt > hwm/1024+1 {
		t.Errorf("peaks = %.1f, %.1f MB; want 0 < anon <= total <= the process's high-water mark %.1f MB", a, tt, hwm/1024)
	}
}
