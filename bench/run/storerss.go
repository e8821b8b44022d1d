package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// rssWatch samples, every 200 ms, the resident memory of a store's server
// and its children (a Java wrapper's JVM, Virtuoso's helpers), so that a
// load's figures hold the store's peak beside kgrag's own. It keeps the
// anonymous part apart: TDB2 maps its files, and the pages of those count
// in the RSS (Fuseki at 20 GB of RSS with 0.5 GB of its own) but are the
// kernel's page cache, given back when memory is short.
type rssWatch struct {
	stop      chan struct{}
	done      chan struct{}
	peak      float64 // MB, anonymous
	peakTotal float64 // MB, with mapped files
}

// watchStore starts sampling the server whose pid scripts/STORE.sh wrote
// into dir/server.pid.
func watchStore(dir string) *rssWatch {
	w := &rssWatch{stop: make(chan struct{}), done: make(chan struct{}), peak: math.NaN(), peakTotal: math.NaN()}
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
			if anon, total, ok := treeRSS(pid); ok {
				w.peak = nanMax(w.peak, anon/1024)
				w.peakTotal = nanMax(w.peakTotal, total/1024)
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

// Stop ends the sampling and returns the peaks in MB, anonymous and with
// mapped files (NaN when the server's pid could not be read).
func (w *rssWatch) Stop() (anon, total float64) {
	select {
	case <-w.done:
	default:
		close(w.stop)
		<-w.done
	}
	return w.peak, w.peakTotal
}

// storeMem is a store server's peak memory during a load, in MB.
type storeMem struct {
	Anon  num `json:"anon_mb"`  // its own (anonymous) pages
	Total num `json:"total_mb"` // with the pages of files it maps
}

// noMem is a storeMem not measured.
func noMem() storeMem { return storeMem{num(math.NaN()), num(math.NaN())} }

// mem stops w and returns its peaks.
func (w *rssWatch) mem() storeMem {
	a, t := w.Stop()
	return storeMem{num(a), num(t)}
}

// String is "ANON" or "ANON (TOTAL with mapped files)" when the files add
// more than a tenth.
func (m storeMem) String() string {
	a, t := float64(m.Anon), float64(m.Total)
	if math.IsNaN(a) {
		return "n/a"
	}
	if t > 1.1*a {
		return fmt.Sprintf("%s (%s with mapped files)", f(a, 0), f(t, 0))
	}
	return f(a, 0)
}

func nanMax(a, b float64) float64 {
	if math.IsNaN(a) || b > a {
		return b
	}
	return a
}

// treeRSS is the resident memory, in KB, of pid and its descendants:
// anonymous, and in all (VmRSS).
func treeRSS(pid int) (anon, total float64, ok bool) {
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0, false
	}
	for _, line := range bytes.Split(status, []byte{'\n'}) {
		f := strings.Fields(string(line))
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "VmRSS:":
			total, _ = strconv.ParseFloat(f[1], 64)
		case "RssAnon:":
			anon, _ = strconv.ParseFloat(f[1], 64)
		}
	}
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	for _, t := range tasks {
		b, _ := os.ReadFile(t)
		for _, c := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(c); err == nil {
				if a, tt, ok := treeRSS(n); ok {
					anon += a
					total += tt
				}
			}
		}
	}
	return anon, total, true
}
