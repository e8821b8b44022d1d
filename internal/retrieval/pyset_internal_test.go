package retrieval

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os/exec"
	"slices"
	"testing"

	"github.com/kgrag/kgrag/internal/test"
)

// TestPySetOrder checks pySetOrder against python3 itself: random lists of
// community numbers (small and large sets, repeats, numbers that collide
// in the table) give the same iteration order as set(map(float, keys)).
func TestPySetOrder(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		test.SkipOrFail(t, "python3: %v", err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	var cases [][]int64
	for range 300 {
		n := 1 + r.IntN(40)
		top := int64(8 + r.IntN(400))
		var ks []int64
		for range n {
			ks = append(ks, r.Int64N(top))
		}
		cases = append(cases, ks)
	}
	cases = append(cases, []int64{0, 8, 16, 24, 32}, []int64{33, 1, 9, 17, 25, 41, 49}, []int64{-1}, []int64{5, -1, 3})
	in, _ := json.Marshal(cases)
	cmd := exec.Command(py, "-c", `import json,sys
for ks in json.load(sys.stdin):
    print(json.dumps([int(x) for x in set(float(k) for k in ks)]))`)
	cmd.Stdin = bytesReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytesReader(out))
	for i, ks := range cases {
		var want []int64
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		if got := pySetOrder(ks); !slices.Equal(got, want) {
			t.Errorf("pySetOrder(%v) = %v; python3 iterates %v", ks, got, want)
		}
		if i > 0 && t.Failed() {
			break
		}
	}
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
