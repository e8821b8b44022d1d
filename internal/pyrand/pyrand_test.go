package pyrand_test

import (
	"encoding/json"
	"math"
	"os/exec"
	"reflect"
	"strconv"
	"testing"

	"github.com/kgrag/kgrag/internal/pyrand"
	"github.com/kgrag/kgrag/internal/test"
)

// pythonScript prints, for each seed in argv, what CPython's random module
// draws after random.seed(seed), each sequence from a fresh seed. It is
// the reference: nothing below is computed by the package under test.
const pythonScript = `
import json, random, sys
out = []
for s in map(int, sys.argv[1:]):
    def fresh():
        random.seed(s)
        return random
    r = fresh(); uint32 = [r.getrandbits(32) for _ in range(20)]
    # past the second and third twist of the state
    r = fresh(); [r.getrandbits(32) for _ in range(1240)]; late = [r.getrandbits(32) for _ in range(10)]
    r = fresh(); floats = [r.random() for _ in range(10)]
    bits = {}
    for k in (1, 7, 32, 33, 64):
        r = fresh(); bits[str(k)] = [r.getrandbits(k) for _ in range(10)]
    below = {}
    for n in (1, 2, 3, 7, 10, 97, 1000, 2**31 - 1, 2**32, 2**32 + 1, 2**62 + 1):
        r = fresh(); below[str(n)] = [r.randrange(n) for _ in range(20)]
    shuffle = {}
    for n in (0, 1, 2, 3, 10, 97, 1000):
        r = fresh(); x = list(range(n)); r.shuffle(x); shuffle[str(n)] = x
    # one generator through mixed calls: the state carries across methods
    r = fresh(); mixed = [r.random(), r.getrandbits(33), r.randrange(10), r.getrandbits(5), r.random()]
    out.append({"seed": s, "uint32": uint32, "late": late, "random": floats,
                "bits": bits, "below": below, "shuffle": shuffle, "mixed": mixed})
json.dump(out, sys.stdout)
`

// draws is one seed's record from pythonScript.
type draws struct {
	Seed    int64               `json:"seed"`
	Uint32  []uint32            `json:"uint32"`
	Late    []uint32            `json:"late"`
	Random  []float64           `json:"random"`
	Bits    map[string][]uint64 `json:"bits"`
	Below   map[string][]int    `json:"below"`
	Shuffle map[string][]int    `json:"shuffle"`
	Mixed   []float64           `json:"mixed"` // the ints are below 2^53, exact as floats
}

var seeds = []int64{0, 1, 86, 12345, -7, 1<<31 - 1, 1<<32 + 5, math.MaxInt64, math.MinInt64}

// cpython runs pythonScript with python3, skipping or failing when there
// is none.
func cpython(t *testing.T) []draws {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		test.SkipOrFail(t, "python3 not found: CPython's random module is the reference: %v", err)
	}
	args := []string{"-c", pythonScript}
	for _, s := range seeds {
		args = append(args, strconv.FormatInt(s, 10))
	}
	out, err := exec.Command(py, args...).Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	var ds []draws
	if err := json.Unmarshal(out, &ds); err != nil {
		t.Fatalf("python3 output: %v", err)
	}
	if len(ds) != len(seeds) {
		t.Fatalf("python3 printed %d seeds; want %d", len(ds), len(seeds))
	}
	return ds
}

func TestMatchesCPython(t *testing.T) {
	for _, want := range cpython(t) {
		t.Run(strconv.FormatInt(want.Seed, 10), func(t *testing.T) {
			seed := want.Seed
			check := func(what string, got, want any) {
				t.Helper()
				if !reflect.DeepEqual(got, want) {
					t.Errorf("seed %d: %s = %v; want %v", seed, what, got, want)
				}
			}
			r := pyrand.New(seed)
			check("getrandbits(32)", draw(len(want.Uint32), r.Uint32), want.Uint32)

			r = pyrand.New(seed)
			draw(1240, r.Uint32)
			check("getrandbits(32) after 1240", draw(len(want.Late), r.Uint32), want.Late)

			r = pyrand.New(seed)
			check("random()", draw(len(want.Random), r.Float64), want.Random)

			r = pyrand.New(seed)
			mixed := []float64{r.Float64(), float64(r.Getrandbits(33)), float64(r.Below(10)), float64(r.Getrandbits(5)), r.Float64()}
			check("random, getrandbits(33), randrange(10), getrandbits(5), random", mixed, want.Mixed)

			for k, w := range want.Bits {
				kk, _ := strconv.Atoi(k)
				r := pyrand.New(seed)
				check("getrandbits("+k+")", draw(len(w), func() uint64 { return r.Getrandbits(kk) }), w)
			}
			for n, w := range want.Below {
				nn, _ := strconv.Atoi(n)
				r := pyrand.New(seed)
				check("randrange("+n+")", draw(len(w), func() int { return r.Below(nn) }), w)
			}
			for n, w := range want.Shuffle {
				nn, _ := strconv.Atoi(n)
				got := make([]int, nn)
				for i := range got {
					got[i] = i
				}
				pyrand.Shuffle(pyrand.New(seed), got)
				check("shuffle(list(range("+n+")))", got, w)
			}
			if len(want.Bits) != 5 || len(want.Below) != 11 || len(want.Shuffle) != 7 {
				t.Errorf("python3 printed %d getrandbits, %d randrange, %d shuffle cases; want 5, 11, 7",
					len(want.Bits), len(want.Below), len(want.Shuffle))
			}
		})
	}
}

// draw calls f n times.
func draw[T any](n int, f func() T) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = f()
	}
	return out
}

func TestPanics(t *testing.T) {
	tests := []struct {
		name string
		f    func(r *pyrand.Rand)
	}{
		{"Getrandbits(-1)", func(r *pyrand.Rand) { r.Getrandbits(-1) }},
		{"Getrandbits(65)", func(r *pyrand.Rand) { r.Getrandbits(65) }},
		{"Below(0)", func(r *pyrand.Rand) { r.Below(0) }},
		{"Below(-3)", func(r *pyrand.Rand) { r.Below(-3) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", tt.name)
				}
			}()
			tt.f(pyrand.New(1))
		})
	}
}

func BenchmarkShuffle10k(b *testing.B) {
	s := make([]int, 10000)
	for i := range s {
		s[i] = i
	}
	for b.Loop() {
		pyrand.Shuffle(pyrand.New(86), s)
	}
}
