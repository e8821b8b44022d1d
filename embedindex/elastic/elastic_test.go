package elastic_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/embedindex/elastic"
	"github.com/kgrag/kgrag/internal/test"
)

// realConfig returns a config for a fresh alias on the node in
// KGRAG_TEST_ELASTICSEARCH, deleting its indices when the test ends.
func realConfig(t *testing.T) elastic.Config {
	t.Helper()
	u := test.Service(t, "ELASTICSEARCH")
	alias := fmt.Sprintf("kgrag-test-%s-%d", strings.ToLower(t.Name()), rand.Uint32())
	return elastic.Config{URL: u, Index: alias}
}

func randomUnit(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	var n float64
	for i := range v {
		f := r.NormFloat64()
		v[i] = float32(f)
		n += f * f
	}
	n = math.Sqrt(n)
	for i := range v {
		v[i] = float32(float64(v[i]) / n)
	}
	return v
}

func randomSet(r *rand.Rand, prefix string, n, dim int) ([]string, [][]float32) {
	ids := make([]string, n)
	vecs := make([][]float32, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s%05d", prefix, i)
		vecs[i] = randomUnit(r, dim)
	}
	return ids, vecs
}

// exactTop is the brute-force cosine top k (vectors are unit length).
func exactTop(ids []string, vecs [][]float32, q []float32, k int) []string {
	type sc struct {
		id string
		s  float64
	}
	all := make([]sc, len(ids))
	for i, v := range vecs {
		var d float64
		for j := range v {
			d += float64(v[j]) * float64(q[j])
		}
		all[i] = sc{ids[i], d}
	}
	slices.SortFunc(all, func(a, b sc) int {
		if a.s != b.s {
			if a.s > b.s {
				return -1
			}
			return 1
		}
		return strings.Compare(a.id, b.id)
	})
	out := make([]string, k)
	for i := range out {
		out[i] = all[i].id
	}
	return out
}

func TestRealRecallAndSwap(t *testing.T) {
	cfg := realConfig(t)
	ctx := context.Background()
	const n, dim, k = 2000, 48, 10
	r := rand.New(rand.NewPCG(1, 2))
	ids, vecs := randomSet(r, "a", n, dim)

	start := time.Now()
	if err := elastic.Build(ctx, cfg, "test-model", dim, ids, vecs); err != nil {
		t.Fatalf("Build: %v", err)
	}
	t.Logf("built %d x %d in %s", n, dim, time.Since(start).Round(time.Millisecond))
	idx, err := elastic.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { deleteAll(t, cfg) })
	info := idx.Info()
	if info.Model != "test-model" || info.Dim != dim || info.Count != n || info.Metric != embedindex.MetricCosine {
		t.Errorf("Info() = %+v; want model test-model, dim %d, count %d", info, dim, n)
	}

	// Recall@10 against brute force.
	const queries = 20
	found := 0
	var took []time.Duration
	for range queries {
		q := randomUnit(r, dim)
		t0 := time.Now()
		hits, err := idx.Search(ctx, q, k)
		took = append(took, time.Since(t0))
		if err != nil {
			t.Fatalf("Search: %v", err)
		}
		if len(hits) != k {
			t.Fatalf("Search gave %d hits; want %d", len(hits), k)
		}
		for i := 1; i < len(hits); i++ {
			if hits[i].Score > hits[i-1].Score {
				t.Fatalf("hits out of order: %v", hits)
			}
		}
		want := exactTop(ids, vecs, q, k)
		for _, h := range hits {
			if slices.Contains(want, h.ID) {
				found++
			}
		}
		// The best hit's score is its cosine.
		i := slices.Index(ids, hits[0].ID)
		var d float64
		for j := range q {
			d += float64(q[j]) * float64(vecs[i][j])
		}
		if math.Abs(d-float64(hits[0].Score)) > 1e-3 {
			t.Errorf("hit %s scores %v; its cosine is %v", hits[0].ID, hits[0].Score, d)
		}
	}
	recall := float64(found) / float64(queries*k)
	slices.Sort(took)
	t.Logf("recall@%d over %d queries: %.3f; search latency median %s, max %s", k, queries, recall,
		took[len(took)/2].Round(time.Microsecond), took[len(took)-1].Round(time.Microsecond))
	if recall < 0.9 {
		t.Errorf("recall@%d = %.3f; want >= 0.9", k, recall)
	}

	// Model and dimension checks.
	if err := embedindex.Check(idx.Info(), "other-model", dim); !errors.Is(err, embedindex.ErrModelMismatch) {
		t.Errorf("Check(other model) = %v; want ErrModelMismatch", err)
	}
	if err := embedindex.Check(idx.Info(), "test-model", dim+1); !errors.Is(err, embedindex.ErrDimMismatch) {
		t.Errorf("Check(other dim) = %v; want ErrDimMismatch", err)
	}
	if _, err := idx.Search(ctx, make([]float32, dim+1), k); !errors.Is(err, embedindex.ErrDimMismatch) {
		t.Errorf("Search(dim+1) = %v; want ErrDimMismatch", err)
	}

	// Rebuild with other vectors while searchers run: every answer comes
	// wholly from the old set or the new one.
	const n2 = 1500
	ids2, vecs2 := randomSet(r, "b", n2, dim)
	var (
		stop     atomic.Bool
		wg       sync.WaitGroup
		searches atomic.Int64
		sawNew   atomic.Bool
		mu       sync.Mutex
		bad      []string
	)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rr := rand.New(rand.NewPCG(uint64(w), 9))
			for !stop.Load() {
				x, err := elastic.Open(ctx, cfg)
				var msg string
				switch {
				case err != nil:
					msg = fmt.Sprintf("Open: %v", err)
				case x.Info().Count != n && x.Info().Count != n2:
					msg = fmt.Sprintf("count %d; want %d or %d", x.Info().Count, n, n2)
				default:
					hits, err := x.Search(ctx, randomUnit(rr, dim), k)
					if err != nil {
						msg = fmt.Sprintf("Search: %v", err)
						break
					}
					if len(hits) != k {
						msg = fmt.Sprintf("%d hits", len(hits))
						break
					}
					p := hits[0].ID[:1]
					for _, h := range hits {
						if h.ID[:1] != p {
							msg = fmt.Sprintf("mixed hits %v", hits)
						}
					}
					if p == "b" {
						sawNew.Store(true)
					}
				}
				searches.Add(1)
				if msg != "" {
					mu.Lock()
					bad = append(bad, msg)
					mu.Unlock()
				}
			}
		}()
	}
	time.Sleep(200 * time.Millisecond)
	start = time.Now()
	if err := elastic.Build(ctx, cfg, "test-model", dim, ids2, vecs2); err != nil {
		stop.Store(true)
		wg.Wait()
		t.Fatalf("rebuild: %v", err)
	}
	t.Logf("rebuilt %d x %d in %s", n2, dim, time.Since(start).Round(time.Millisecond))
	// Let the searchers go on until one has searched after the swap; a
	// loaded machine can take longer than a fixed pause.
	for deadline := time.Now().Add(30 * time.Second); !sawNew.Load() && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d concurrent Open+Search during the rebuild", searches.Load())
	if len(bad) > 0 {
		t.Errorf("%d of %d concurrent searches saw a half index or failed; first: %s", len(bad), searches.Load(), bad[0])
	}
	if !sawNew.Load() {
		t.Errorf("no search saw the new index")
	}
	info, err = idx.Stat(ctx)
	if err != nil || info.Count != n2 {
		t.Errorf("Stat after rebuild = %+v, %v; want count %d", info, err, n2)
	}
	// The old concrete index is gone: only one index matches alias-*.
	if got := countIndices(t, cfg); got != 1 {
		t.Errorf("%d indices named %s-*; want 1 (old one deleted)", got, cfg.Index)
	}
}

func TestRealNotFound(t *testing.T) {
	cfg := realConfig(t)
	_, err := elastic.Open(context.Background(), cfg)
	if !errors.Is(err, elastic.ErrNotFound) || elastic.Unreachable(err) {
		t.Fatalf("Open of a missing alias: %v; want ErrNotFound", err)
	}
	if !strings.Contains(err.Error(), cfg.URL) || !strings.Contains(err.Error(), cfg.Index) {
		t.Errorf("error %q: want the URL and index", err)
	}
}

// TestRealWindows: a text embedded in windows has a document per window
// (embedindex.WindowID); a search returns each text once, by its best
// window, and still k texts.
func TestRealWindows(t *testing.T) {
	cfg := realConfig(t)
	ctx := context.Background()
	vec := func(x, y float32) []float32 { return []float32{x, y, 0, 0} }
	ids := []string{"a", embedindex.WindowID("a", 1), embedindex.WindowID("a", 2), "b", "c", embedindex.WindowID("c", 1)}
	vecs := [][]float32{vec(1, 0.1), vec(1, 0.01), vec(1, 0.05), vec(1, 0.5), vec(0.1, 1), vec(1, 0.2)}
	if err := elastic.Build(ctx, cfg, "test-model", 4, ids, vecs); err != nil {
		t.Fatalf("Build: %v", err)
	}
	t.Cleanup(func() { deleteAll(t, cfg) })
	idx, err := elastic.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	hits, err := idx.Search(ctx, vec(1, 0), 3)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hits {
		got = append(got, h.ID)
	}
	if want := []string{"a", "c", "b"}; !slices.Equal(got, want) {
		t.Errorf("Search = %q; want %q (a by its window 1, c by its window 1)", got, want)
	}
}
