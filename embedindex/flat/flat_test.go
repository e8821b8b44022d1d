package flat_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/embedindex/flat"
)

func randomVectors(rng *rand.Rand, n, dim int) ([]string, [][]float32) {
	ids := make([]string, n)
	vecs := make([][]float32, n)
	for i := range vecs {
		ids[i] = fmt.Sprintf("e%05d", rng.IntN(1<<30)) + fmt.Sprint(i)
		vecs[i] = make([]float32, dim)
		for j := range vecs[i] {
			vecs[i][j] = float32(rng.NormFloat64())
		}
	}
	return ids, vecs
}

// reference is the brute-force answer: float64 cosine of every vector,
// sorted by score, then id.
func reference(ids []string, vecs [][]float32, q []float32) []embedindex.Hit {
	norm := func(v []float32) float64 {
		var s float64
		for _, x := range v {
			s += float64(x) * float64(x)
		}
		return math.Sqrt(s)
	}
	qn := norm(q)
	out := make([]embedindex.Hit, len(ids))
	for i, v := range vecs {
		var d float64
		for j := range v {
			d += float64(v[j]) * float64(q[j])
		}
		s := 0.0
		if n := norm(v); n > 0 && qn > 0 {
			s = d / (n * qn)
		}
		out[i] = embedindex.Hit{ID: ids[i], Score: float32(s)}
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Score != out[b].Score {
			return out[a].Score > out[b].Score
		}
		return out[a].ID < out[b].ID
	})
	return out
}

func write(t *testing.T, ids []string, vecs [][]float32) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "entities.vec")
	if err := flat.Write(context.Background(), path, "embed-m", ids, vecs); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRoundTripExactTopK(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, dim = 3000, 37 // an odd dimension exercises the unrolled loop's tail
	ids, vecs := randomVectors(rng, n, dim)
	vecs[7] = make([]float32, dim) // a zero vector scores 0
	path := write(t, ids, vecs)
	for _, workers := range []int{1, 3} {
		idx, err := flat.Open(context.Background(), path, flat.Options{Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		want := embedindex.Info{Model: "embed-m", Dim: dim, Count: n, Metric: embedindex.MetricCosine, Path: path}
		if got := idx.Info(); got != want {
			t.Fatalf("Info() = %+v; want %+v", got, want)
		}
		for qi := range 20 {
			q := vecs[rng.IntN(n)]
			if qi%2 == 1 {
				_, qs := randomVectors(rng, 1, dim)
				q = qs[0]
			}
			ref := reference(ids, vecs, q)
			refScore := map[string]float32{}
			for _, h := range ref {
				refScore[h.ID] = h.Score
			}
			for _, k := range []int{1, 10, 100, n + 5} {
				got, err := idx.Search(context.Background(), q, k)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != min(k, n) {
					t.Fatalf("Search(k=%d) gave %d hits; want %d", k, len(got), min(k, n))
				}
				for r, h := range got {
					// Ranks must agree with the reference up to float32
					// rounding: the hit's true score equals the reference
					// score at that rank.
					if d := math.Abs(float64(refScore[h.ID] - ref[r].Score)); d > 1e-5 {
						t.Fatalf("workers %d query %d k=%d rank %d: got %s (%.6f), reference %s (%.6f)",
							workers, qi, k, r, h.ID, refScore[h.ID], ref[r].ID, ref[r].Score)
					}
					if d := math.Abs(float64(h.Score - refScore[h.ID])); d > 1e-5 {
						t.Fatalf("score of %s = %.6f; reference %.6f", h.ID, h.Score, refScore[h.ID])
					}
					if r > 0 && (got[r-1].Score < h.Score || (got[r-1].Score == h.Score && got[r-1].ID > h.ID)) {
						t.Fatalf("hits not ordered at rank %d: %+v then %+v", r, got[r-1], h)
					}
				}
			}
		}
	}
}

func TestTiesBrokenByID(t *testing.T) {
	v := []float32{1, 2, 3}
	ids := []string{"d", "b", "a", "c", "x"}
	vecs := [][]float32{v, v, v, v, {-1, -2, -3}}
	for _, workers := range []int{1, 2} {
		idx, err := flat.Open(context.Background(), write(t, ids, vecs), flat.Options{Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		got, err := idx.Search(context.Background(), []float32{2, 4, 6}, 3)
		if err != nil {
			t.Fatal(err)
		}
		var gotIDs []string
		for _, h := range got {
			gotIDs = append(gotIDs, h.ID)
		}
		if strings.Join(gotIDs, ",") != "a,b,c" {
			t.Errorf("Search over equal vectors = %v; want [a b c]", gotIDs)
		}
	}
}

func TestSearchDimMismatch(t *testing.T) {
	idx, err := flat.Open(context.Background(), write(t, []string{"a"}, [][]float32{{1, 0, 0}}), flat.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = idx.Search(context.Background(), []float32{1, 0}, 1)
	if !errors.Is(err, embedindex.ErrDimMismatch) || !strings.Contains(err.Error(), "3-dimensional") ||
		!strings.Contains(err.Error(), "gave 2 dimensions") || !strings.Contains(err.Error(), "entities.vec") {
		t.Errorf("Search with 2 dims in a 3-dim index: %v; want ErrDimMismatch naming both and the file", err)
	}
}

func TestBadFiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ids, vecs := randomVectors(rng, 50, 8)
	good, err := os.ReadFile(write(t, ids, vecs))
	if err != nil {
		t.Fatal(err)
	}
	flip := func(off int) []byte {
		b := append([]byte(nil), good...)
		b[off] ^= 0x40
		return b
	}
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "truncated"},
		{"not an index", []byte("hello, this is a turtle file, not an index at all"), "bad magic"},
		{"header only", good[:40], "truncated"},
		{"cut in vectors", good[:len(good)/2], "truncated"},
		{"cut in ids", good[:len(good)-10], "truncated"},
		{"no checksum", good[:len(good)-4], "truncated"},
		{"vector byte flipped", flip(100), "checksum mismatch"},
		{"id byte flipped", flip(len(good) - 6), "checksum mismatch"},
		{"trailing data", append(append([]byte(nil), good...), 0), "after the checksum"},
		{"bad version", func() []byte { b := append([]byte(nil), good...); b[8] = 9; return b }(), "version 9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "broken.vec")
			if err := os.WriteFile(path, tt.data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := flat.Open(context.Background(), path, flat.Options{})
			if err == nil || !errors.Is(err, flat.ErrCorrupt) || !strings.Contains(err.Error(), path) ||
				!strings.Contains(err.Error(), tt.want) {
				t.Errorf("Open(%s) error = %v; want ErrCorrupt naming the file and %q", tt.name, err, tt.want)
			}
		})
	}
	_, err = flat.Open(context.Background(), filepath.Join(t.TempDir(), "missing.vec"), flat.Options{})
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "missing.vec") {
		t.Errorf("Open of a missing file: %v; want ErrNotExist naming it", err)
	}
}

func TestBuilder(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.vec")
	old := []byte("old index")
	os.WriteFile(path, old, 0o644)

	b, err := flat.Create(path, "m", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Add("a", []float32{1, 2}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		id   string
		vec  []float32
		want string
	}{
		{"a", []float32{1, 1}, "added twice"},
		{"b", []float32{1, 1, 1}, "3 dimensions, the index has 2"},
		{"c", []float32{float32(math.NaN()), 1}, "NaN"},
	} {
		if err := b.Add(tt.id, tt.vec); err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("Add(%q, %v) = %v; want an error naming the file and %q", tt.id, tt.vec, err, tt.want)
		}
	}
	b.Abort()
	if got, _ := os.ReadFile(path); string(got) != string(old) {
		t.Errorf("after Abort the file holds %q; want the old content", got)
	}
	if err := flat.Write(context.Background(), path, "m", nil, nil); err == nil {
		t.Error("Write of no vectors without a dimension succeeded; want an error")
	}
	b, _ = flat.Create(path, "m", 4)
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	idx, err := flat.Open(context.Background(), path, flat.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if hits, err := idx.Search(context.Background(), []float32{1, 0, 0, 0}, 3); err != nil || len(hits) != 0 || idx.Info().Dim != 4 {
		t.Errorf("empty index: Search = %v, %v, dim %d; want no hits, dim 4", hits, err, idx.Info().Dim)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d files after commit; want only the index (no temporary files)", len(entries))
	}
}

// BenchmarkFlatOpen opens a 100k x 768 index file (300 MB of vectors)
// and answers one query: "mmap" maps it as Open does (the checksum of the
// ids and header only), "read" reads it whole into the heap and checks
// every checksum (Options.Read, as Open did before format version 3).
func BenchmarkFlatOpen(b *testing.B) {
	path, v := randomFile(b, 100_000, 768, 5)
	for _, tt := range []struct {
		name string
		read bool
	}{{"mmap", false}, {"read", true}} {
		b.Run(tt.name, func(b *testing.B) {
			for b.Loop() {
				idx, err := flat.Open(context.Background(), path, flat.Options{Read: tt.read})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := idx.Search(context.Background(), v, 10); err != nil {
					b.Fatal(err)
				}
				idx.Close()
			}
		})
	}
}

// randomFile writes an exact index of n Gaussian vectors of dim
// dimensions, ids "entity-%07d", and returns its path and the last vector.
func randomFile(tb testing.TB, n, dim int, seed uint64) (string, []float32) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "big.vec")
	bld, err := flat.CreateWith(path, "m", dim, flat.BuildOptions{ANN: flat.ANNOff})
	if err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 6))
	v := make([]float32, dim)
	for i := range n {
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		if err := bld.Add(fmt.Sprintf("entity-%07d", i), v); err != nil {
			tb.Fatal(err)
		}
	}
	if err := bld.Commit(); err != nil {
		tb.Fatal(err)
	}
	return path, v
}
