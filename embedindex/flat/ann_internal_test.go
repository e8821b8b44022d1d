package flat

import (
	"context"
	"math"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/kgrag/kgrag/internal/synth"
)

func TestANNExperiment(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("ANN_N"))
	dim, _ := strconv.Atoi(os.Getenv("ANN_DIM"))
	if n == 0 {
		t.Skip()
	}
	vs := synth.Vectors(1, n, dim)
	flatv := make([]float32, 0, n*dim)
	ids := make([]string, n)
	for i, v := range vs {
		flatv = append(flatv, normalised(v)...)
		ids[i] = strconv.Itoa(i)
	}
	t0 := time.Now()
	o := BuildOptions{ANN: ANNOn}
	g, rep, err := o.build(context.Background(), flatv, dim, ids)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("n %d dim %d: build %v measure %v recall %.4f ef %d total %v maxlevel %d", n, dim, rep.Build, rep.Measure, rep.Recall, rep.Ef, time.Since(t0), g.maxLevel)
	ix := &Index{vecs: flatv, ids: ids, g: g, ef: g.ef, workers: 1}
	ix.info.Dim, ix.info.Count = dim, n
	t1 := time.Now()
	for i := range 1000 {
		ix.Search(context.Background(), vs[i*7%n], 10)
	}
	t.Logf("search avg %v", time.Since(t1)/1000)
}

func TestDotMatchesPortable(t *testing.T) {
	for _, n := range []int{1, 7, 8, 31, 32, 33, 384, 768, 1536, 1001} {
		vs := synth.Vectors(uint64(n), 2, n)
		var ref float64
		for i := range vs[0] {
			ref += float64(vs[0][i]) * float64(vs[1][i])
		}
		for name, got := range map[string]float32{"dot": dot(vs[0], vs[1]), "dotGo": dotGo(vs[0], vs[1])} {
			if d := math.Abs(float64(got) - ref); d > 1e-4*math.Max(1, math.Abs(ref)) {
				t.Errorf("%s(n=%d) = %g; float64 reference %g", name, n, got, ref)
			}
		}
	}
}
