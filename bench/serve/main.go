// Command serve load-tests a running kgrag serve: questions per second and
// latency of /v1/chat/completions (or /api/ask with context only) at
// several numbers of concurrent clients, the 429s the server answered, and
// with -soak the server's memory and goroutines after 1,000 and after N
// requests (read from its /admin/stats, so serve must run with --admin).
// bench/run runs it in its serve step against kgrag serve backed by
// the project's test model server (kgrag-llmtest), which answers at once,
// so the latency is kgrag's own (and the loopback HTTP hops).
//
//	go run ./bench/serve -url http://127.0.0.1:8765 -data DIR -clients 1,8,64 -n 2000
//
// Questions are "What is <title>?" for entities of -data picked with a
// fixed seed. It prints Markdown table rows.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kgrag/kgrag/graphrag"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "serve bench:", err)
		os.Exit(1)
	}
}

type options struct {
	url, key, model string
	contextOnly     bool
	questions       []string
}

func run(ctx context.Context) error {
	url := flag.String("url", "http://127.0.0.1:8765", "kgrag serve's `URL`")
	data := flag.String("data", "", "the GraphRAG output `DIR` served, for the questions")
	name := flag.String("name", "", "dataset name for the report")
	clients := flag.String("clients", "1,8,64", "comma-separated numbers of concurrent clients")
	n := flag.Int("n", 2000, "requests per number of clients")
	contextOnly := flag.Bool("context-only", false, "POST /api/ask with context_only instead of chat completions")
	soak := flag.Int("soak", 0, "with N > 0: N requests at 8 clients, memory and goroutines read after 1,000 and after N")
	flag.Parse()
	if *data == "" {
		return errors.New("-data is required")
	}
	ds, err := graphrag.Open(ctx, *data)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(7, 7))
	o := options{url: strings.TrimSuffix(*url, "/"), model: "kgrag-local", contextOnly: *contextOnly}
	for range 500 {
		o.questions = append(o.questions, "What is "+ds.Entities[rng.IntN(len(ds.Entities))].Title+"?")
	}
	what := "chat (local)"
	if o.contextOnly {
		what = "context only"
	}
	if *soak > 0 {
		return soakRun(ctx, o, *name, what, *soak)
	}
	for _, c := range strings.Split(*clients, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(c))
		if err != nil || k <= 0 {
			return fmt.Errorf("-clients %q: want positive numbers", *clients)
		}
		r := load(ctx, o, k, *n)
		fmt.Printf("| %s | %s | %d | %d | %.0f | %s | %s | %s | %s | %d | %d |\n", *name, what, k, r.n, float64(r.n)/r.wall.Seconds(),
			ms(pct(r.lat, 50)), ms(pct(r.lat, 99)), ms(pct(r.own, 50)), ms(pct(r.own, 99)), r.busy, r.failed)
	}
	return nil
}

type result struct {
	n, busy, failed int
	lat, own        []time.Duration // the client's latency; kgrag's own time (Server-Timing)
	wall            time.Duration
}

func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

// load sends n requests from k clients at once, each client one request
// after another.
func load(ctx context.Context, o options, k, n int) result {
	var next atomic.Int64
	var mu sync.Mutex
	var r result
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: k}}
	start := time.Now()
	var wg sync.WaitGroup
	for range k {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				t := time.Now()
				status, own := ask(ctx, hc, o, o.questions[i%len(o.questions)])
				d := time.Since(t)
				mu.Lock()
				r.n++
				switch status {
				case http.StatusOK:
					r.lat = append(r.lat, d)
					r.own = append(r.own, own)
				case http.StatusTooManyRequests:
					r.busy++
				default:
					r.failed++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	r.wall = time.Since(start)
	hc.CloseIdleConnections()
	return r
}

// ask sends one question and reads the whole answer; it returns the
// status (0 for a transport error) and kgrag's own time from the
// Server-Timing header.
func ask(ctx context.Context, hc *http.Client, o options, q string) (int, time.Duration) {
	var body any = map[string]any{"model": o.model, "messages": []map[string]string{{"role": "user", "content": q}}}
	path := "/v1/chat/completions"
	if o.contextOnly {
		body, path = map[string]any{"question": q, "context_only": true}, "/api/ask"
	}
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.url+path, bytes.NewReader(b))
	if err != nil {
		return 0, 0
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return 0, 0
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return 0, 0
	}
	var own time.Duration
	if _, v, ok := strings.Cut(resp.Header.Get("Server-Timing"), "kgrag;dur="); ok {
		v, _, _ = strings.Cut(v, ",")
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			own = time.Duration(f * float64(time.Millisecond))
		}
	}
	return resp.StatusCode, own
}

type stats struct {
	Goroutines int    `json:"goroutines"`
	HeapInuse  uint64 `json:"heap_inuse"`
	Sys        uint64 `json:"sys"`
}

func readStats(ctx context.Context, url string) (stats, error) {
	var s stats
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/admin/stats?gc=1", nil)
	if err != nil {
		return s, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return s, fmt.Errorf("/admin/stats: %s (run kgrag serve with --admin)", resp.Status)
	}
	return s, json.NewDecoder(resp.Body).Decode(&s)
}

// soakRun sends n requests at 8 clients and compares the server's heap
// and goroutines after the first 1,000 with those at the end and after it
// went idle.
func soakRun(ctx context.Context, o options, name, what string, n int) error {
	idle, err := readStats(ctx, o.url)
	if err != nil {
		return err
	}
	r1 := load(ctx, o, 8, 1000)
	time.Sleep(500 * time.Millisecond)
	s1, err := readStats(ctx, o.url)
	if err != nil {
		return err
	}
	r2 := load(ctx, o, 8, n-1000)
	time.Sleep(2 * time.Second) // idle connections close, goroutines end
	s2, err := readStats(ctx, o.url)
	if err != nil {
		return err
	}
	fmt.Printf("| %s | %s | %d | %.1f MiB | %.1f MiB | %d | %d | %d | %d |\n", name, what, r1.n+r2.n,
		float64(s1.HeapInuse)/(1<<20), float64(s2.HeapInuse)/(1<<20), idle.Goroutines, s1.Goroutines, s2.Goroutines, r1.failed+r2.failed+r1.busy+r2.busy)
	return nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }
