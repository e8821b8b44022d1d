// Package ui owns what kgrag shows a person at a terminal: progress lines on
// stderr, and the decision whether to show them at all. Libraries never
// print; they report through a counter the CLI hands them.
package ui

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// IsTerminal reports whether f is a character device: progress is drawn
// only on terminals, never into files, pipes or CI logs.
func IsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Progress draws one self-updating line, "<verb> N <unit> (R <unit>/s)",
// a few times a second. A nil *Progress is valid and draws nothing, so
// callers need not check whether progress is on. Add is safe for
// concurrent use.
type Progress struct {
	w     io.Writer
	verb  string
	unit  string
	n     atomic.Int64
	start time.Time
	stop  chan struct{}
	wg    sync.WaitGroup
}

// NewProgress starts drawing to w. It returns nil when enabled is false.
func NewProgress(w io.Writer, enabled bool, verb, unit string) *Progress {
	if !enabled {
		return nil
	}
	p := &Progress{w: w, verb: verb, unit: unit, start: time.Now(), stop: make(chan struct{})}
	p.wg.Add(1)
	go p.loop()
	return p
}

// Add counts n more units done.
func (p *Progress) Add(n int64) {
	if p != nil {
		p.n.Add(n)
	}
}

func (p *Progress) loop() {
	defer p.wg.Done()
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.draw("\r")
		}
	}
}

func (p *Progress) draw(prefix string) {
	n := p.n.Load()
	secs := time.Since(p.start).Seconds()
	rate := 0.0
	if secs > 0 {
		rate = float64(n) / secs
	}
	fmt.Fprintf(p.w, "%s%s %d %s (%.0f %s/s)\x1b[K", prefix, p.verb, n, p.unit, rate, p.unit)
}

// Done stops drawing and leaves the final count on its line.
func (p *Progress) Done() {
	if p == nil {
		return
	}
	close(p.stop)
	p.wg.Wait()
	p.draw("\r")
	fmt.Fprintln(p.w)
}
