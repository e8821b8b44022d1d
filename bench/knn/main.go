// Command knn times k-nearest-neighbour search (k = 10) over synthetic
// embedding-like vectors (internal/synth.Vectors: clustered, intrinsic
// dimension 32) three ways: kgrag's exact scan, kgrag's HNSW graph (the
// flat file's approximate index) and Elasticsearch 8's kNN (its own HNSW,
// float32, m 16, ef_construction 100, num_candidates 100), on one node
// and on a three-node cluster (scripts/es-cluster.sh), with recall@10 of
// each against the exact scan. bench/run runs it in its knn
// step.
//
//	go run ./bench/knn -n 100000 -dim 768 [-es http://127.0.0.1:9200] \
//		[-es-cluster http://127.0.0.1:9211,http://127.0.0.1:9212,http://127.0.0.1:9213]
//
// Queries are stored vectors with Gaussian noise of half their norm, from
// a seed of their own, asked one at a time. It prints Markdown table rows:
// method, vectors, build time, index size, p50, p95, recall@10, notes; and
// the process's peak RSS after the kgrag build in the notes. Then it
// times opening the index file in fresh processes (itself, with -probe):
// memory-mapped (how kgrag opens it) against read whole into the heap
// with every checksum checked (Options.Read, what Open did before format
// version 3), with and without the graph, each process opening the file,
// answering one query and reporting its peak RSS. The page cache is warm
// (the file was just written); a cold cache is not controlled here.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/embedindex/elastic"
	"github.com/kgrag/kgrag/embedindex/flat"
	"github.com/kgrag/kgrag/internal/synth"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "knn bench:", err)
		os.Exit(1)
	}
}

type result struct {
	name, build, size, notes string
	lat                      []time.Duration
	recall                   float64
}

func (r result) row(n int) string {
	slices.Sort(r.lat)
	p := func(q float64) string {
		if len(r.lat) == 0 {
			return ""
		}
		return fmt.Sprintf("%.2f ms", float64(r.lat[int(q*float64(len(r.lat)-1))])/1e6)
	}
	rec := ""
	if len(r.lat) > 0 {
		rec = fmt.Sprintf("%.4f", r.recall)
	}
	return fmt.Sprintf("| %s | %d | %s | %s | %s | %s | %s | %s |", r.name, n, r.build, r.size, p(0.5), p(0.95), rec, r.notes)
}

func run(ctx context.Context) error {
	probe := flag.String("probe", "", "open the index `FILE`, answer one query, print the timings and exit (what the open rows run)")
	probeRead := flag.Bool("probe-read", false, "with -probe: read the file into the heap instead of mapping it")
	probeExact := flag.Bool("probe-exact", false, "with -probe: ignore the graph")
	opens := flag.Int("opens", 5, "processes timed for each way of opening")
	n := flag.Int("n", 100_000, "vectors")
	dim := flag.Int("dim", 768, "dimensions")
	nq := flag.Int("queries", 500, "queries")
	esURL := flag.String("es", "", "Elasticsearch `URL` (none: not run)")
	esMax := flag.Int("es-max", 100_000, "largest -n loaded into Elasticsearch")
	escURL := flag.String("es-cluster", "", "comma-separated node `URLS` of an Elasticsearch cluster to time too (none: not run)")
	escShards := flag.Int("es-cluster-shards", 3, "primary shards of the cluster's index")
	escReplicas := flag.Int("es-cluster-replicas", 1, "replicas of the cluster's index")
	dir := flag.String("dir", "", "`DIR` for the index file (default: a temporary one, removed)")
	flag.Parse()
	if *probe != "" {
		return probeOpen(ctx, *probe, flat.Options{Read: *probeRead, Exact: *probeExact})
	}
	if *dir == "" {
		d, err := os.MkdirTemp("", "kgrag-knn-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		*dir = d
	}
	log("%d x %d synthetic vectors", *n, *dim)
	vecs := synth.Vectors(1, *n, *dim)
	ids := make([]string, *n)
	for i := range ids {
		ids[i] = fmt.Sprintf("entity-%07d", i)
	}
	rng := rand.New(rand.NewPCG(2, 3))
	queries := make([][]float32, *nq)
	for i := range queries {
		v := vecs[rng.IntN(*n)]
		var norm float64
		for _, x := range v {
			norm += float64(x) * float64(x)
		}
		sigma := 0.5 * math.Sqrt(norm/float64(*dim))
		q := make([]float32, *dim)
		for j, x := range v {
			q[j] = x + float32(rng.NormFloat64()*sigma)
		}
		queries[i] = q
	}

	es, esIdx := loadES(ctx, "Elasticsearch 8 kNN (HNSW, num_candidates 100)", *esURL, *n, *esMax,
		elastic.Config{URL: *esURL, Index: fmt.Sprintf("kgrag-bench-knn-%d", *n), NumCandidates: 100}, *dim, ids, vecs)
	esc, escIdx := loadES(ctx, fmt.Sprintf("Elasticsearch 8 kNN, 3-node cluster (%d shards, %d replica)", *escShards, *escReplicas), *escURL, *n, *esMax,
		elastic.Config{URL: *escURL, Index: fmt.Sprintf("kgrag-bench-knn-%d", *n), NumCandidates: 100, Shards: *escShards, Replicas: *escReplicas},
		*dim, ids, vecs)
	if *escURL != "" {
		esc.notes += "; its nodes share this machine's cores with the client, so this row shows the index works distributed, not that it is faster"
	}

	path := filepath.Join(*dir, "knn.vec")
	log("building the kgrag index with its HNSW graph")
	t0 := time.Now()
	rep, err := flat.WriteWith(ctx, path, "synthetic", ids, vecs, flat.BuildOptions{ANN: flat.ANNOn})
	if err != nil {
		return err
	}
	buildWall := time.Since(t0)
	rssBuild := peakRSS()
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	vecs = nil
	runtime.GC()
	debug.FreeOSMemory()

	exact, err := flat.Open(ctx, path, flat.Options{Exact: true})
	if err != nil {
		return err
	}
	ann, err := flat.Open(ctx, path, flat.Options{})
	if err != nil {
		return err
	}
	vecBytes := int64(*n) * int64(*dim) * 4
	ex := result{name: "kgrag exact scan", build: "", size: fmt.Sprintf("%.0f MB", float64(vecBytes)/1e6), notes: "the reference; GOMAXPROCS workers"}
	hn := result{name: fmt.Sprintf("kgrag HNSW (M %d, efConstruction %d, efSearch %d)", rep.M, rep.EfConstruction, rep.Ef),
		build: fmt.Sprintf("%s (graph %s, recall tuning %s)", buildWall.Round(time.Second), rep.Build.Round(time.Second), rep.Measure.Round(time.Second)),
		size:  fmt.Sprintf("%.0f MB (graph %.0f MB)", float64(st.Size())/1e6, float64(st.Size()-vecBytes)/1e6),
		notes: fmt.Sprintf("recall@10 at build: %.4f on %d queries; peak RSS of the build %.1f GB; %d cores", rep.Recall, rep.Queries, float64(rssBuild)/1e9, runtime.GOMAXPROCS(0))}

	log("searching %d queries", *nq)
	truth := make([][]embedindex.Hit, len(queries))
	for i, q := range queries {
		t := time.Now()
		truth[i], err = exact.Search(ctx, q, 10)
		ex.lat = append(ex.lat, time.Since(t))
		if err != nil {
			return err
		}
	}
	ex.recall = 1
	measure := func(r *result, idx embedindex.Index) error {
		found := 0
		for i, q := range queries {
			t := time.Now()
			hits, err := idx.Search(ctx, q, 10)
			r.lat = append(r.lat, time.Since(t))
			if err != nil {
				return err
			}
			found += overlap(truth[i], hits)
		}
		r.recall = float64(found) / float64(10*len(queries))
		return nil
	}
	if err := measure(&hn, ann); err != nil {
		return err
	}
	for _, e := range []struct {
		r   *result
		idx *elastic.Index
	}{{&es, esIdx}, {&esc, escIdx}} {
		if e.idx == nil {
			continue
		}
		// One warm-up pass loads the graph into Elasticsearch's page cache.
		for _, q := range queries[:min(50, len(queries))] {
			e.idx.Search(ctx, q, 10)
		}
		if err := measure(e.r, e.idx); err != nil {
			e.r.notes, e.r.lat = "failed: "+err.Error(), nil
		}
	}
	rows := []result{ex, hn, es}
	if *escURL != "" {
		rows = append(rows, esc)
	}
	for _, r := range rows {
		fmt.Println(r.row(*n))
	}
	exact.Close()
	ann.Close()
	log("timing %d processes for each way of opening", *opens)
	for _, how := range []struct {
		name        string
		read, exact bool
	}{
		{"mmap, HNSW graph", false, false},
		{"read whole + all checksums, HNSW graph", true, false},
		{"mmap, exact scan", false, true},
		{"read whole + all checksums, exact scan", true, true},
	} {
		row, err := openRow(ctx, path, *opens, how.read, how.exact)
		if err != nil {
			row = "failed: " + strings.ReplaceAll(err.Error(), "|", "/")
		}
		fmt.Printf("| kgrag open (%s) | %d | | | %s |\n", how.name, *n, row)
	}
	return nil
}

// probeOpen is one timed process: open path, answer one query, print
// "open_ns first_query_ns peak_rss_bytes".
func probeOpen(ctx context.Context, path string, o flat.Options) error {
	t0 := time.Now()
	idx, err := flat.Open(ctx, path, o)
	if err != nil {
		return err
	}
	opened := time.Since(t0)
	rng := rand.New(rand.NewPCG(4, 4))
	q := make([]float32, idx.Info().Dim)
	for i := range q {
		q[i] = float32(rng.NormFloat64())
	}
	t1 := time.Now()
	if _, err := idx.Search(ctx, q, 10); err != nil {
		return err
	}
	first := time.Since(t1)
	fmt.Println(opened.Nanoseconds(), first.Nanoseconds(), peakRSS())
	return idx.Close()
}

// openRow runs procs probe processes and returns the row's cells from p50
// on: median open time, median first query time, the largest peak RSS.
func openRow(ctx context.Context, path string, procs int, read, exact bool) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	var open, first []time.Duration
	var rss int64
	var wall []time.Duration
	for range procs {
		t0 := time.Now()
		cmd := exec.CommandContext(ctx, self, "-probe", path, fmt.Sprintf("-probe-read=%v", read), fmt.Sprintf("-probe-exact=%v", exact))
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("probe: %w", err)
		}
		wall = append(wall, time.Since(t0))
		var o, f, r int64
		if _, err := fmt.Sscan(string(out), &o, &f, &r); err != nil {
			return "", fmt.Errorf("probe said %q: %w", out, err)
		}
		open, first, rss = append(open, time.Duration(o)), append(first, time.Duration(f)), max(rss, r)
	}
	med := func(d []time.Duration) string {
		slices.Sort(d)
		return fmt.Sprintf("%.1f ms", float64(d[len(d)/2])/1e6)
	}
	return fmt.Sprintf("open %s | | | first query %s, whole process %s (%d processes, median), peak RSS %.0f MB; warm page cache",
		med(open), med(first), med(wall), procs, float64(rss)/1e6), nil
}

func overlap(want, got []embedindex.Hit) int {
	ids := map[string]bool{}
	for _, h := range want {
		ids[h.ID] = true
	}
	n := 0
	for _, h := range got {
		if ids[h.ID] {
			n++
		}
	}
	return n
}

// peakRSS is the process's peak resident set (VmHWM), 0 when unknown.
func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(v), "%d", &kb)
			return kb * 1024
		}
	}
	return 0
}

func log(f string, a ...any) { fmt.Fprintf(os.Stderr, "knn: "+f+"\n", a...) }

// loadES builds the index of cfg in Elasticsearch at url and opens it;
// the result row says why when it was not run or failed (then the index
// is nil).
func loadES(ctx context.Context, name, url string, n, max int, cfg elastic.Config, dim int, ids []string, vecs [][]float32) (result, *elastic.Index) {
	switch {
	case url == "":
		return result{name: name, notes: "not run: no URL"}, nil
	case n > max:
		return result{name: name, notes: fmt.Sprintf("not run: %d vectors is above -es-max %d", n, max)}, nil
	}
	log("loading Elasticsearch %s at %s", cfg.Index, url)
	t0 := time.Now()
	err := elastic.Build(ctx, cfg, "synthetic", dim, ids, vecs)
	var idx *elastic.Index
	if err == nil {
		idx, err = elastic.Open(ctx, cfg)
	}
	r := result{name: name, build: time.Since(t0).Round(time.Second).String(),
		notes: "bulk load and refresh; segments as loaded (no force merge)"}
	if err != nil {
		r.notes = "failed: " + strings.ReplaceAll(err.Error(), "|", "/")
		return r, nil
	}
	return r, idx
}
