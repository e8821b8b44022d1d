// Command index times kgrag's indexing pipeline (internal/indexer.Run, what
// `kgrag index` runs) on A Christmas Carol against a model that takes a
// fixed time per call (500 ms by default), at several concurrencies, and
// sets the wall time against the ideal: the shortest schedule of the very
// calls the run made, with the run's concurrency. bench/run runs it
// in its index step, beside BenchmarkIndexInstant (bench_internal_test.go:
// the time kgrag adds per text unit with a model that answers at once).
//
//	go run ./bench/index -text ../shared/testdata/text/a-christmas-carol.txt
//
// The model is the project's OpenAI-compatible test server
// (internal/llm/llmtest), in this process on 127.0.0.1, scripted by
// indexertest.Script as the indexer's tests script it: extraction replies
// name the book's characters found in the passage, gleaning finds nothing
// more, summaries and reports are short and valid. kgrag talks to it over
// HTTP through the real llm.Client, with kgrag index's defaults (a cache
// of replies, in a fresh folder per run). The server's handler adds up the
// time at least one request was inside it, so kgrag's own time is the wall
// time minus that.
//
// The ideal is computed from the requests the server saw: per stage, the
// calls and what each waits for (extraction: each text unit's calls one
// after the other; summaries: each entity's or relationship's calls one
// after the other; reports: a community over the context budget after
// its sub-communities), scheduled with the run's concurrency by Hu's
// algorithm, which is optimal for such call graphs; the stages follow one
// another, so their times add up. See ideal.go.
//
// It prints a Markdown section for the bench report on stdout; progress
// goes to stderr.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kgrag/kgrag/internal/indexer/indexertest"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "index bench:", err)
		os.Exit(1)
	}
}

// config is the command line.
type config struct {
	text, work, title     string
	latency               time.Duration
	words, repeat         int
	chunkSize, overlap    int
	concurrency           []int
	concurrencyList, args string
}

func parseFlags() (config, error) {
	var c config
	flag.StringVar(&c.text, "text", "", "the book `FILE` (text/a-christmas-carol.txt of the shared test data)")
	flag.DurationVar(&c.latency, "latency", 500*time.Millisecond, "time the server takes per call")
	flag.IntVar(&c.words, "words", 4000, "first words of the book indexed; 0: all of it")
	flag.IntVar(&c.repeat, "repeat", 1, "runs at each concurrency")
	flag.IntVar(&c.chunkSize, "chunk-size", 400, "chunk size in tokens")
	flag.IntVar(&c.overlap, "chunk-overlap", 50, "chunk overlap in tokens")
	flag.StringVar(&c.concurrencyList, "concurrency", "1,4,8", "concurrencies, comma-separated")
	flag.StringVar(&c.work, "work", "", "scratch `DIR` (default: a temporary one)")
	flag.StringVar(&c.title, "title", "### Against a server taking a fixed time per call", "heading of the report section")
	flag.Parse()
	var args []string
	for _, a := range os.Args[1:] {
		if strings.ContainsAny(a, " #'\"") {
			a = strconv.Quote(a)
		}
		args = append(args, a)
	}
	c.args = strings.Join(args, " ")
	for f := range strings.SplitSeq(c.concurrencyList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return c, fmt.Errorf("-concurrency %q: want positive integers", c.concurrencyList)
		}
		c.concurrency = append(c.concurrency, n)
	}
	switch {
	case c.text == "":
		return c, errors.New("-text is required")
	case c.repeat < 1 || c.latency <= 0:
		return c, errors.New("-repeat and -latency must be > 0")
	}
	return c, nil
}

func run(ctx context.Context, stdout io.Writer) error {
	c, err := parseFlags()
	if err != nil {
		return err
	}
	b, err := os.ReadFile(c.text)
	if err != nil {
		return err
	}
	if c.work == "" {
		if c.work, err = os.MkdirTemp("", "kgrag-bench-index-"); err != nil {
			return err
		}
		defer os.RemoveAll(c.work)
	}
	m := startModel(c.latency)
	defer m.close()
	client, err := newClient(m)
	if err != nil {
		return err
	}
	text := indexertest.FirstWords(string(b), c.words)
	rep := report{cfg: c, words: len(strings.Fields(text))}
	for _, conc := range c.concurrency {
		lr := latencyRun{concurrency: conc}
		for range c.repeat {
			logf("%v per call: %d words, chunks %d/%d, concurrency %d", c.latency, rep.words, c.chunkSize, c.overlap, conc)
			s := setup{text: text, concurrency: conc, size: c.chunkSize, overlap: c.overlap, plan: true}
			r, err := index(ctx, m, client, s, filepath.Join(c.work, "run"))
			if err != nil {
				return fmt.Errorf("concurrency %d: %w", conc, err)
			}
			lr.runs = append(lr.runs, r)
		}
		rep.runs = append(rep.runs, lr)
	}
	return rep.write(stdout)
}

// latencyRun is the runs at one concurrency.
type latencyRun struct {
	concurrency int
	runs        []*indexRun
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "index bench: "+format+"\n", args...)
}
