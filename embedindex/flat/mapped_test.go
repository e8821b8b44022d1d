package flat_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/embedindex/flat"
)

// hitsEqual compares two answers exactly: ids, order and score bits.
func hitsEqual(a, b []embedindex.Hit) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func open(t *testing.T, path string, o flat.Options) *flat.Index {
	t.Helper()
	idx, err := flat.Open(t.Context(), path, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idx.Close() })
	return idx
}

// TestMappedMatchesHeap: an index served from the file's mapping answers
// exactly as the same file read into the heap, for the scan and the
// graph; the scan also agrees with the brute-force reference.
func TestMappedMatchesHeap(t *testing.T) {
	tests := []struct {
		name  string
		opts  flat.BuildOptions
		exact bool
	}{
		{"exact", flat.BuildOptions{ANN: flat.ANNOff}, true},
		{"hnsw", flat.BuildOptions{ANN: flat.ANNOn, Seed: 3}, false},
		{"hnsw searched exactly", flat.BuildOptions{ANN: flat.ANNOn, Seed: 3}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, ids, vecs := smallANN(t, 2500, 33, tt.opts)
			mapped := open(t, path, flat.Options{Exact: tt.exact})
			heap := open(t, path, flat.Options{Exact: tt.exact, Read: true})
			if mapped.Info() != heap.Info() {
				t.Fatalf("Info: mapped %+v, read %+v", mapped.Info(), heap.Info())
			}
			if want := tt.opts.ANN == flat.ANNOn && !tt.exact; (mapped.Info().ANN == flat.ANNName) != want {
				t.Fatalf("Info().ANN = %q; want the graph: %v", mapped.Info().ANN, want)
			}
			for i, q := range perturbed(8, vecs, 60) {
				a, err := mapped.Search(t.Context(), q, 10)
				if err != nil {
					t.Fatal(err)
				}
				b, err := heap.Search(t.Context(), q, 10)
				if err != nil {
					t.Fatal(err)
				}
				if !hitsEqual(a, b) {
					t.Fatalf("query %d: mapped %v, read %v", i, a, b)
				}
				if tt.exact {
					for r, h := range reference(ids, vecs, q)[:10] {
						if a[r].ID != h.ID {
							t.Fatalf("query %d rank %d: %s; brute force %s", i, r, a[r].ID, h.ID)
						}
					}
				}
			}
			if got := mapped.IDs(); fmt.Sprint(got) != fmt.Sprint(ids) {
				t.Errorf("IDs() of the mapped index differ from the ids written")
			}
		})
	}
}

// TestOlderVersions: files written by kgrag before version 3 (testdata,
// see its README) still open. The version 1 file answers as the brute
// force does; the version 2 file holds the graph that the same vectors
// and seed build today, so it answers exactly as a version 3 file built
// now does.
func TestOlderVersions(t *testing.T) {
	ids, vecs := randomVectors(rand.New(rand.NewPCG(21, 22)), 400, 12)
	now := filepath.Join(t.TempDir(), "v3.vec")
	if _, err := flat.WriteWith(t.Context(), now, "legacy-m", ids, vecs, flat.BuildOptions{ANN: flat.ANNOn, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	v3 := open(t, now, flat.Options{})
	for _, tt := range []struct {
		file    string
		version byte
		ann     string
	}{{"v1.vec", 1, ""}, {"v2.vec", 2, flat.ANNName}} {
		path := filepath.Join("testdata", tt.file)
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if raw[8] != tt.version {
			t.Fatalf("%s is version %d; want %d", path, raw[8], tt.version)
		}
		idx := open(t, path, flat.Options{})
		info := idx.Info()
		if info.Model != "legacy-m" || info.Dim != 12 || info.Count != 400 || info.ANN != tt.ann {
			t.Fatalf("%s: Info() = %+v", path, info)
		}
		if err := idx.Verify(t.Context()); err != nil {
			t.Errorf("%s: Verify = %v", path, err)
		}
		if tt.ann != "" {
			if w := v3.Info(); info.Recall != w.Recall || info.EfSearch != w.EfSearch {
				t.Errorf("%s: recall %v at ef %d; the same build today: %v at %d", path, info.Recall, info.EfSearch, w.Recall, w.EfSearch)
			}
		}
		for i, q := range perturbed(4, vecs, 40) {
			got, err := idx.Search(t.Context(), q, 10)
			if err != nil {
				t.Fatal(err)
			}
			if tt.ann == "" {
				for r, h := range reference(ids, vecs, q)[:10] {
					if got[r].ID != h.ID {
						t.Fatalf("%s query %d rank %d: %s; brute force %s", path, i, r, got[r].ID, h.ID)
					}
				}
				continue
			}
			want, _ := v3.Search(t.Context(), q, 10)
			if !hitsEqual(got, want) {
				t.Fatalf("%s query %d: %v; version 3 of the same build %v", path, i, got, want)
			}
		}
	}
}

// bigIndex writes an exact index whose vectors pass verifyAtOpen (64
// MiB), so Open leaves them to Verify.
func bigIndex(t *testing.T) (string, []byte) {
	t.Helper()
	path, _ := randomFile(t, 22_000, 768, 1) // 67.6 MB of vectors
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, raw
}

// TestDamageByWhere: a flipped byte in the ids or header is refused at
// every Open; one in the vectors of a big file only by Verify (Open
// would have to read them all), of a small file at Open; a cut file at
// Open whatever its size.
func TestDamageByWhere(t *testing.T) {
	bigPath, big := bigIndex(t)
	smallPath, _, _ := smallANN(t, 300, 16, flat.BuildOptions{ANN: flat.ANNOff})
	small, err := os.ReadFile(smallPath)
	if err != nil {
		t.Fatal(err)
	}
	flip := func(b []byte, at int) []byte {
		b = bytes.Clone(b)
		b[at] ^= 0x10
		return b
	}
	const vecAt = 64 + 64 // header and model "m", padded
	tests := []struct {
		name     string
		data     []byte
		atOpen   string // the error Open gives; "" if it opens
		atVerify string // then the one Verify gives; "" for none
	}{
		{"big, intact", big, "", ""},
		{"big, vector byte", flip(big, vecAt+1000), "", "vectors: checksum mismatch"},
		{"big, last vector byte", flip(big, vecAt+22_000*768*4-1), "", "vectors: checksum mismatch"},
		{"big, id byte", flip(big, len(big)-10), "checksum mismatch: damaged (ids, graph or header)", ""},
		{"big, model byte", flip(big, 64), "checksum mismatch", ""},
		{"big, vector checksum", flip(big, 36), "checksum mismatch", ""},
		{"big, cut in the vectors", big[:len(big)/2], "truncated", ""},
		{"big, cut in the ids", big[:len(big)-100], "truncated", ""},
		{"small, vector byte", flip(small, vecAt+10), "vectors: checksum mismatch", ""},
		{"small, id byte", flip(small, len(small)-6), "checksum mismatch", ""},
		{"flags of a newer kgrag", flip(small, 33), "unknown flags", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "entities.vec")
			if err := os.WriteFile(path, tt.data, 0o644); err != nil {
				t.Fatal(err)
			}
			idx, err := flat.Open(t.Context(), path, flat.Options{})
			if tt.atOpen != "" {
				if err == nil || !errors.Is(err, flat.ErrCorrupt) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.atOpen) {
					t.Fatalf("Open = %v; want ErrCorrupt naming the file and %q", err, tt.atOpen)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open = %v; want it to open", err)
			}
			defer idx.Close()
			err = idx.Verify(t.Context())
			if tt.atVerify == "" {
				if err != nil {
					t.Fatalf("Verify = %v; want nil", err)
				}
				return
			}
			if err == nil || !errors.Is(err, flat.ErrCorrupt) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.atVerify) {
				t.Fatalf("Verify = %v; want ErrCorrupt naming the file and %q", err, tt.atVerify)
			}
			// Read checks every checksum at open.
			if _, err := flat.Open(t.Context(), path, flat.Options{Read: true}); !errors.Is(err, flat.ErrCorrupt) {
				t.Errorf("Open with Read = %v; want ErrCorrupt", err)
			}
		})
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	idx := open(t, bigPath, flat.Options{})
	if err := idx.Verify(ctx); !errors.Is(err, context.Canceled) || errors.Is(err, flat.ErrCorrupt) {
		t.Errorf("Verify with a cancelled context = %v; want context.Canceled, not ErrCorrupt", err)
	}
}

// reseal recomputes a version 3 file's checksum of header, ids and graph
// (an implementation of its own of the layout in format.go), as a file
// written wrong but not damaged since would carry.
func reseal(b []byte, n, dim, mlen int) {
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	vecOff := (64 + mlen + 63) / 64 * 64
	idsOff := (vecOff + n*dim*4 + 7) / 8 * 8
	end := len(b) - 4
	crc := crc32.Update(crc32.Checksum(b[idsOff:end], castagnoli), castagnoli, b[:vecOff])
	binary.LittleEndian.PutUint32(b[end:], crc)
}

// TestStructureChecked: a file whose checksum is right but whose offsets
// or links point out of range is refused at Open, not by a panic at the
// first search.
func TestStructureChecked(t *testing.T) {
	const n, dim = 600, 8
	path, _, _ := smallANN(t, n, dim, flat.BuildOptions{ANN: flat.ANNOn})
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	idsAt := 128 + n*dim*4
	graphAt := idsAt + (n+1)*8 + n*6
	levelsAt := graphAt + 40
	upOffAt := levelsAt + n // 600 is a multiple of 8
	l0At := upOffAt + (n+1)*4 + 4
	lowRow := bytes.IndexByte(good[levelsAt:levelsAt+n], 0)
	tests := []struct {
		name string
		edit func(b []byte)
		want string
	}{
		{"resealed intact", func([]byte) {}, ""},
		{"link past the rows", func(b []byte) { le.PutUint32(b[l0At+8:], n) }, "link to row 600 of 600"},
		{"negative link", func(b []byte) { le.PutUint32(b[l0At:], uint32(0xfffffffe)) }, "link to row -2"},
		{"entry below the top", func(b []byte) { le.PutUint32(b[graphAt+28:], uint32(lowRow)) }, "not the top level"},
		{"entry past the rows", func(b []byte) { le.PutUint32(b[graphAt+28:], n+5) }, "implausible header"},
		{"id offsets out of order", func(b []byte) { le.PutUint64(b[idsAt+8*5:], 1000) }, "offsets out of order"},
		{"upper links not the level's", func(b []byte) { le.PutUint32(b[upOffAt+4*3:], le.Uint32(b[upOffAt+4*3:])+1) }, "upper links"},
	}
	for _, tt := range tests {
		b := bytes.Clone(good)
		tt.edit(b)
		reseal(b, n, dim, 1)
		p := filepath.Join(t.TempDir(), "entities.vec")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		idx, err := flat.Open(t.Context(), p, flat.Options{})
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: Open = %v; want it to open (the test's checksum is wrong?)", tt.name, err)
			} else {
				idx.Close()
			}
			continue
		}
		if err == nil || !errors.Is(err, flat.ErrCorrupt) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Open = %v; want ErrCorrupt naming the file and %q", tt.name, err, tt.want)
		}
	}
}

// TestClose: Search and Verify after Close fail with ErrClosed, hits
// returned before stay readable, Close twice is harmless, and searches
// racing Close either answer or fail with ErrClosed.
func TestClose(t *testing.T) {
	for _, o := range []flat.BuildOptions{{ANN: flat.ANNOff}, {ANN: flat.ANNOn}} {
		path, _, vecs := smallANN(t, 1500, 16, o)
		idx, err := flat.Open(t.Context(), path, flat.Options{})
		if err != nil {
			t.Fatal(err)
		}
		hits, err := idx.Search(t.Context(), vecs[3], 5)
		if err != nil {
			t.Fatal(err)
		}
		before := fmt.Sprint(hits)
		if err := idx.Close(); err != nil {
			t.Fatal(err)
		}
		if err := idx.Close(); err != nil {
			t.Errorf("second Close = %v; want nil", err)
		}
		if got := fmt.Sprint(hits); got != before || hits[0].ID != "e00003" {
			t.Errorf("hits after Close = %s; before %s", got, before)
		}
		if _, err := idx.Search(t.Context(), vecs[3], 5); !errors.Is(err, flat.ErrClosed) || !strings.Contains(err.Error(), path) {
			t.Errorf("Search after Close = %v; want ErrClosed naming the file", err)
		}
		if err := idx.Verify(t.Context()); !errors.Is(err, flat.ErrClosed) {
			t.Errorf("Verify after Close = %v; want ErrClosed", err)
		}

		idx, err = flat.Open(t.Context(), path, flat.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for g := range 4 {
			wg.Go(func() {
				for i := range 200 {
					_, err := idx.Search(context.Background(), vecs[(g*200+i)%len(vecs)], 10)
					if err != nil && !errors.Is(err, flat.ErrClosed) {
						errs <- err
						return
					}
				}
			})
		}
		idx.Close()
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("search racing Close: %v; want hits or ErrClosed", err)
		}
	}
}

// TestConcurrentExactMapped runs scans of a mapped index from several
// goroutines, each split over workers (for the race detector), against
// one goroutine's answers. TestANNConcurrentSearch does the graph.
func TestConcurrentExactMapped(t *testing.T) {
	path, _, vecs := smallANN(t, 5000, 24, flat.BuildOptions{ANN: flat.ANNOff})
	idx := open(t, path, flat.Options{Workers: 2})
	qs := perturbed(6, vecs, 32)
	want := make([][]embedindex.Hit, len(qs))
	for i, q := range qs {
		want[i], _ = idx.Search(t.Context(), q, 7)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range qs {
				j := (i + 5*g) % len(qs)
				got, err := idx.Search(context.Background(), qs[j], 7)
				if err != nil || !hitsEqual(got, want[j]) {
					t.Errorf("query %d concurrently: %v, %v; alone %v", j, got, err, want[j])
					return
				}
			}
		})
	}
	wg.Wait()
}

// sparseVectors are near-orthogonal: each the sum of three random
// coordinate directions of 256, as a hashed bag of a few words is. Most
// pairs score 0, which leaves an HNSW graph little to navigate by: its
// recall@10 stays under 0.98 at every efSearch.
func sparseVectors(n int) ([]string, [][]float32) {
	rng := rand.New(rand.NewPCG(3, 3))
	ids := make([]string, n)
	vecs := make([][]float32, n)
	for i := range vecs {
		ids[i] = fmt.Sprintf("w%05d", i)
		vecs[i] = make([]float32, 256)
		for range 3 {
			vecs[i][rng.IntN(256)] += float32(rng.NormFloat64())
		}
	}
	return ids, vecs
}

// TestANNAutoFallsBackToExact: under ANNAuto a graph that misses the
// target recall is not written and the index searches exactly; ANNOn
// keeps it.
func TestANNAutoFallsBackToExact(t *testing.T) {
	ids, vecs := sparseVectors(2000)
	for _, tt := range []struct {
		mode  flat.ANNMode
		graph bool
	}{{flat.ANNAuto, false}, {flat.ANNOn, true}} {
		path := filepath.Join(t.TempDir(), "entities.vec")
		rep, err := flat.WriteWith(t.Context(), path, "m", ids, vecs, flat.BuildOptions{ANN: tt.mode, Threshold: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Met || rep.Recall >= 0.98 || rep.Ef != 1024 || rep.Queries != 200 {
			t.Fatalf("mode %d: report %+v; want recall under 0.98 at efSearch 1024 (is the set no longer hard?)", tt.mode, rep)
		}
		if rep.ANN != tt.graph || rep.Exact == tt.graph {
			t.Errorf("mode %d: report ANN %v, Exact %v; want ANN %v", tt.mode, rep.ANN, rep.Exact, tt.graph)
		}
		idx := open(t, path, flat.Options{})
		if got := idx.Info().ANN == flat.ANNName; got != tt.graph {
			t.Fatalf("mode %d: Info().ANN = %q; want the graph: %v", tt.mode, idx.Info().ANN, tt.graph)
		}
		if tt.graph {
			continue
		}
		for i, q := range perturbed(2, vecs, 50) {
			got, err := idx.Search(t.Context(), q, 10)
			if err != nil {
				t.Fatal(err)
			}
			// Ranks agree with the brute force up to float32 rounding:
			// the hit's true score is the reference score at its rank.
			ref := reference(ids, vecs, q)
			score := map[string]float32{}
			for _, h := range ref {
				score[h.ID] = h.Score
			}
			for r, h := range got {
				if d := math.Abs(float64(score[h.ID] - ref[r].Score)); d > 1e-5 {
					t.Fatalf("query %d rank %d: %v; brute force %v", i, r, h, ref[r])
				}
			}
		}
	}
}

// FuzzOpen: no bytes make Open panic or read out of range, and an index
// that opens answers a search without either.
func FuzzOpen(f *testing.F) {
	for _, o := range []flat.BuildOptions{{ANN: flat.ANNOff}, {ANN: flat.ANNOn}} {
		ids, vecs := randomVectors(rand.New(rand.NewPCG(1, 1)), 40, 4)
		path := filepath.Join(f.TempDir(), "seed.vec")
		if _, err := flat.WriteWith(context.Background(), path, "m", ids, vecs, o); err != nil {
			f.Fatal(err)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "x.vec")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		idx, err := flat.Open(context.Background(), path, flat.Options{})
		if err != nil {
			if !errors.Is(err, flat.ErrCorrupt) {
				t.Fatalf("Open = %v; want ErrCorrupt", err)
			}
			return
		}
		defer idx.Close()
		q := make([]float32, idx.Info().Dim)
		q[0] = 1
		if _, err := idx.Search(context.Background(), q, 5); err != nil {
			t.Fatal(err)
		}
	})
}
