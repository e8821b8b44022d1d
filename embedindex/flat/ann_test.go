package flat_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/embedindex/flat"
	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/synth"
	"github.com/kgrag/kgrag/internal/test"
)

// perturbed returns n queries near vectors of vecs (a vector plus
// Gaussian noise of norm about 0.5 times its own), from a seed of the
// test's own, unlike the build's recall queries.
func perturbed(seed uint64, vecs [][]float32, n int) [][]float32 {
	rng := rand.New(rand.NewPCG(seed, 99))
	out := make([][]float32, n)
	for i := range out {
		v := vecs[rng.IntN(len(vecs))]
		var norm float64
		for _, x := range v {
			norm += float64(x) * float64(x)
		}
		sigma := 0.5 * math.Sqrt(norm/float64(len(v)))
		q := make([]float32, len(v))
		for j, x := range v {
			q[j] = x + float32(rng.NormFloat64()*sigma)
		}
		out[i] = q
	}
	return out
}

// recallAt10 is the share of the reference's 10 best ids that idx finds,
// over queries; ref gives the true top 10 of a query.
func recallAt10(t *testing.T, idx *flat.Index, queries [][]float32, ref func(q []float32) []embedindex.Hit) float64 {
	t.Helper()
	found, total := 0, 0
	for _, q := range queries {
		want := ref(q)[:min(10, idx.Info().Count)]
		got, err := idx.Search(context.Background(), q, 10)
		if err != nil {
			t.Fatal(err)
		}
		ids := map[string]bool{}
		for _, h := range got {
			ids[h.ID] = true
		}
		for _, h := range want {
			if ids[h.ID] {
				found++
			}
		}
		total += len(want)
	}
	return float64(found) / float64(total)
}

// TestANNRecallRealEmbeddings builds the graph (forced: the sample is
// small) over GraphRAG 0.3.4's own description_embedding vectors and
// checks recall@10 against a float64 brute force computed here.
func TestANNRecallRealEmbeddings(t *testing.T) {
	ds, err := graphrag.Open(t.Context(), filepath.Join(test.GraphRAGSamples(t), "v0.3.4"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	var vecs [][]float32
	for _, e := range ds.Entities {
		if len(e.DescriptionEmbedding) == 0 {
			continue
		}
		v := make([]float32, len(e.DescriptionEmbedding))
		for j, x := range e.DescriptionEmbedding {
			v[j] = float32(x)
		}
		ids, vecs = append(ids, e.ID), append(vecs, v)
	}
	if len(vecs) < 100 || len(vecs[0]) != 1536 {
		t.Fatalf("sample has %d embeddings of %d dimensions; want at least 100 of 1536", len(vecs), len(vecs[0]))
	}
	path := filepath.Join(t.TempDir(), "entities.vec")
	// A small M keeps the graph sparse enough that a search does not
	// simply visit every vector of a few hundred.
	rep, err := flat.WriteWith(t.Context(), path, "text-embedding-3-small", ids, vecs, flat.BuildOptions{ANN: flat.ANNOn, M: 4, EfConstruction: 16})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.ANN || !rep.Met || rep.Recall < 0.98 {
		t.Fatalf("build report %+v; want a graph meeting recall 0.98", rep)
	}
	idx, err := flat.Open(t.Context(), path, flat.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if info := idx.Info(); info.ANN != flat.ANNName || info.Recall != rep.Recall || info.EfSearch != rep.Ef {
		t.Fatalf("Info() = %+v; want ANN %q, recall %g, ef %d as built", info, flat.ANNName, rep.Recall, rep.Ef)
	}
	ref := func(q []float32) []embedindex.Hit { return reference(ids, vecs, q) }
	queries := append(perturbed(7, vecs, 200), vecs...)
	if r := recallAt10(t, idx, queries, ref); r < 0.98 {
		t.Errorf("recall@10 on %d queries = %.4f; want >= 0.98", len(queries), r)
	}
}

// TestANNRecallSynthetic100k is the scale test: 100,000 clustered
// 384-dimensional vectors (synth.Vectors), the graph chosen automatically
// by size, its recall checked on queries of the test's own against the
// exact scan (itself checked against float64 in TestRoundTripExactTopK).
func TestANNRecallSynthetic100k(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 100k-vector graph (about 15 s on 2 cores)")
	}
	const n, dim = 100_000, 384
	vecs := synth.Vectors(3, n, dim)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("entity-%06d", i)
	}
	path := filepath.Join(t.TempDir(), "entities.vec")
	rep, err := flat.WriteWith(t.Context(), path, "m", ids, vecs, flat.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("build: %+v", rep)
	if !rep.ANN || !rep.Met {
		t.Fatalf("report %+v; want the graph built automatically at %d vectors and the target met", rep, n)
	}
	idx, err := flat.Open(t.Context(), path, flat.Options{})
	if err != nil {
		t.Fatal(err)
	}
	exact, err := flat.Open(t.Context(), path, flat.Options{Exact: true})
	if err != nil {
		t.Fatal(err)
	}
	if exact.Info().ANN != "" {
		t.Fatalf("Options.Exact: Info().ANN = %q; want exact", exact.Info().ANN)
	}
	ref := func(q []float32) []embedindex.Hit {
		h, err := exact.Search(context.Background(), q, 10)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	if r := recallAt10(t, idx, perturbed(11, vecs, 300), ref); r < 0.98 {
		t.Errorf("recall@10 = %.4f; want >= 0.98", r)
	}
}

func smallANN(t *testing.T, n, dim int, o flat.BuildOptions) (string, []string, [][]float32) {
	t.Helper()
	vecs := synth.Vectors(5, n, dim)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("e%05d", i)
	}
	path := filepath.Join(t.TempDir(), "entities.vec")
	if _, err := flat.WriteWith(t.Context(), path, "m", ids, vecs, o); err != nil {
		t.Fatal(err)
	}
	return path, ids, vecs
}

// TestANNDeterministicAndReopened: the same vectors and seed give the same
// file whatever the number of workers, a reopened file answers as the
// first opening did, and another seed gives another graph.
func TestANNDeterministicAndReopened(t *testing.T) {
	const n, dim = 4000, 48
	files := map[string][]byte{}
	for _, w := range []int{1, 2, 5} {
		path, _, _ := smallANN(t, n, dim, flat.BuildOptions{ANN: flat.ANNOn, Workers: w, Seed: 9})
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files[fmt.Sprint(w)] = b
	}
	if !bytes.Equal(files["1"], files["2"]) || !bytes.Equal(files["1"], files["5"]) {
		t.Fatal("the same vectors and seed gave different files with 1, 2 and 5 workers")
	}
	other, _, _ := smallANN(t, n, dim, flat.BuildOptions{ANN: flat.ANNOn, Workers: 2, Seed: 10})
	if b, _ := os.ReadFile(other); bytes.Equal(b, files["1"]) {
		t.Error("seeds 9 and 10 gave the same file")
	}
	path, _, vecs := smallANN(t, n, dim, flat.BuildOptions{ANN: flat.ANNOn, Seed: 9})
	a, err := flat.Open(t.Context(), path, flat.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := flat.Open(t.Context(), path, flat.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range perturbed(3, vecs, 100) {
		ha, err := a.Search(t.Context(), q, 10)
		if err != nil {
			t.Fatal(err)
		}
		hb, _ := b.Search(t.Context(), q, 10)
		if fmt.Sprint(ha) != fmt.Sprint(hb) {
			t.Fatalf("query %d: first opening %v, reopened %v", i, ha, hb)
		}
	}
}

// TestANNSwitchPoint: below the threshold the index is exact (no graph
// section, identical answers to the exact scan by construction), at it the graph
// is built; ANNOff and ANNOn override the size.
func TestANNSwitchPoint(t *testing.T) {
	const threshold, dim = 1000, 16
	tests := []struct {
		n     int
		mode  flat.ANNMode
		graph bool
	}{
		{threshold - 1, flat.ANNAuto, false},
		{threshold, flat.ANNAuto, true},
		{threshold + 500, flat.ANNOff, false},
		{50, flat.ANNOn, true},
	}
	for _, tt := range tests {
		path, ids, vecs := smallANN(t, tt.n, dim, flat.BuildOptions{ANN: tt.mode, Threshold: threshold})
		idx, err := flat.Open(t.Context(), path, flat.Options{})
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := os.ReadFile(path)
		wantFlags, wantANN := byte(0), ""
		if tt.graph {
			wantFlags, wantANN = 1, flat.ANNName
		}
		if raw[8] != 3 || raw[32] != wantFlags || idx.Info().ANN != wantANN {
			t.Errorf("n %d mode %d: file version %d, flags %d, Info().ANN %q; want 3, %d, %q", tt.n, tt.mode, raw[8], raw[32], idx.Info().ANN, wantFlags, wantANN)
		}
		if tt.graph {
			continue
		}
		for _, q := range perturbed(1, vecs, 20) {
			got, err := idx.Search(t.Context(), q, 10)
			if err != nil {
				t.Fatal(err)
			}
			want := reference(ids, vecs, q)[:10]
			for r := range want {
				if got[r].ID != want[r].ID {
					t.Fatalf("n %d below the threshold: rank %d = %s; exact reference %s", tt.n, r, got[r].ID, want[r].ID)
				}
			}
		}
	}
}

// TestANNBadFiles: a graph file cut anywhere or with a byte flipped is
// refused with an error naming it.
func TestANNBadFiles(t *testing.T) {
	path, _, _ := smallANN(t, 600, 8, flat.BuildOptions{ANN: flat.ANNOn})
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Version 3: the graph follows 64 bytes of header and model (padded
	// to 128), 600*8*4 of vectors, 601*8 of id offsets and 600*6 of id
	// bytes.
	graphAt := 128 + 600*8*4 + 601*8 + 600*6
	if string(good[graphAt:graphAt+4]) != "HNSW" {
		t.Fatalf("no graph section at byte %d", graphAt)
	}
	flip := func(at int) []byte {
		b := bytes.Clone(good)
		b[at] ^= 0x40
		return b
	}
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"cut before the graph", good[:graphAt], "truncated"},
		{"cut in the graph header", good[:graphAt+20], "truncated"},
		{"cut in the links", good[:len(good)-100], "truncated"},
		{"graph magic", flip(graphAt), "bad magic"},
		{"a link flipped", flip(len(good) - 200), ""},
		{"a level flipped", flip(graphAt + 40 + 3), ""},
		{"data after", append(bytes.Clone(good), 0), "after the checksum"},
	}
	for _, tt := range tests {
		p := filepath.Join(t.TempDir(), "entities.vec")
		if err := os.WriteFile(p, tt.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := flat.Open(t.Context(), p, flat.Options{})
		if err == nil || !errors.Is(err, flat.ErrCorrupt) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Open(%s) error = %v; want ErrCorrupt naming the file and %q", tt.name, err, tt.want)
		}
	}
}

func TestANNContext(t *testing.T) {
	path, _, vecs := smallANN(t, 2000, 16, flat.BuildOptions{ANN: flat.ANNOn})
	idx, err := flat.Open(t.Context(), path, flat.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := idx.Search(ctx, vecs[0], 10); !errors.Is(err, context.Canceled) {
		t.Errorf("Search with a cancelled context: %v; want context.Canceled", err)
	}
	ids := make([]string, len(vecs))
	for i := range ids {
		ids[i] = fmt.Sprint(i)
	}
	target := filepath.Join(t.TempDir(), "x.vec")
	if _, err := flat.WriteWith(ctx, target, "m", ids, vecs, flat.BuildOptions{ANN: flat.ANNOn}); !errors.Is(err, context.Canceled) {
		t.Errorf("WriteWith with a cancelled context: %v; want context.Canceled", err)
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a cancelled build left %s: %v", target, err)
	}
}

// TestANNConcurrentSearch runs searches from several goroutines (for the
// race detector) and checks they agree with one goroutine's answers.
func TestANNConcurrentSearch(t *testing.T) {
	path, _, vecs := smallANN(t, 3000, 24, flat.BuildOptions{ANN: flat.ANNOn})
	idx, err := flat.Open(t.Context(), path, flat.Options{})
	if err != nil {
		t.Fatal(err)
	}
	qs := perturbed(2, vecs, 64)
	want := make([]string, len(qs))
	for i, q := range qs {
		h, _ := idx.Search(t.Context(), q, 5)
		want[i] = fmt.Sprint(h)
	}
	errs := make(chan error, 4)
	for g := range 4 {
		go func() {
			for i := range qs {
				j := (i + g*7) % len(qs)
				h, err := idx.Search(context.Background(), qs[j], 5)
				if err == nil && fmt.Sprint(h) != want[j] {
					err = fmt.Errorf("query %d: %v concurrently, %v alone", j, h, want[j])
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
