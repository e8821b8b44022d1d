package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// rssWatch samples, every 200 ms, the resident memory of a store's server
// and its children (a Java wrapper's JVM, Virtuoso's helpers), so that a
// load's figures hold the store's peak beside kgrag's own.
type rssWatch struct {
	stop chan struct{}
	done chan struct{}
	peak float64 // MB
}

// watchStore starts sampling the server whose pid scripts/STORE.sh wrote
// into dir/server.pid.
func watchStore(dir string) *rssWatch {
	w := &rssWatch{stop: make(chan struct{}), done: make(chan struct{}), peak: math.NaN()}
	b, err := os.ReadFile(filepath.Join(dir, "server.pid"))
	pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || perr != nil {
		close(w.done)
		return w
	}
	go func() {
		defer close(w.done)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			if kb, ok := treeRSS(pid); ok && (math.IsNaN(w.peak) || kb/1024 > w.peak) {
				w.peak = kb / 1024
			}
			select {
			case <-w.stop:
				return
			case <-t.C:
			}
		}
	}()
	return w
}

// Stop ends the sampling and returns the peak in MB (NaN when the server's
// pid could not be read).
func (w *rssWatch) Stop() float64 {
	select {
	case <-w.done:
	default:
		close(w.stop)
		<-w.done
	}
	return w.peak
}

// treeRSS is the resident memory, in KB, of pid and its descendants.
func treeRSS(pid int) (float64, bool) {
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, false
	}
	var kb float64
	for _, line := range bytes.Split(status, []byte{'\n'}) {
		if f := strings.Fields(string(line)); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ = strconv.ParseFloat(f[1], 64)
		}
	}
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	for _, t := range tasks {
		b, _ := os.ReadFile(t)
		for _, c := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(c); err == nil {
				if ckb, ok := treeRSS(n); ok {
					kb += ckb
				}
			}
		}
	}
	return kb, true
}
