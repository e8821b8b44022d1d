package synth

import (
	"math"
	"math/rand/v2"
)

// VectorLatentDim is the intrinsic dimension of Vectors' output.
const VectorLatentDim = 32

// Vectors returns n embedding-like vectors of dim dimensions, the same
// for the same seed. Uniform random vectors would be the wrong test of a
// nearest-neighbour index: in hundreds of dimensions all their distances
// are nearly equal, which real embeddings are not. These are clustered
// and of low intrinsic dimension, as text embeddings are: a point of one
// of n/500 (at least 16) Gaussian clusters in VectorLatentDim dimensions,
// mapped into dim by one fixed random linear map, plus isotropic noise
// of a fifth of the signal's norm. They are not normalised.
func Vectors(seed uint64, n, dim int) [][]float32 {
	rng := rand.New(rand.NewPCG(seed, 0x766563746f7273))
	const lat = VectorLatentDim
	basis := make([]float32, dim*lat)
	for i := range basis {
		basis[i] = float32(rng.NormFloat64() / math.Sqrt(lat))
	}
	clusters := max(16, n/500)
	centres := make([]float64, clusters*lat)
	for i := range centres {
		centres[i] = rng.NormFloat64()
	}
	noise := 0.2 * math.Sqrt(1.25) // the signal's variance per dimension is |z|²/lat, about 1.25
	out := make([][]float32, n)
	backing := make([]float32, n*dim)
	z := make([]float32, lat)
	for i := range out {
		c := centres[rng.IntN(clusters)*lat:]
		for j := range z {
			z[j] = float32(c[j] + 0.5*rng.NormFloat64())
		}
		v := backing[i*dim : (i+1)*dim : (i+1)*dim]
		for d := range v {
			row := basis[d*lat : (d+1)*lat]
			var s float32
			for j, x := range z {
				s += row[j] * x
			}
			v[d] = s + float32(noise*rng.NormFloat64())
		}
		out[i] = v
	}
	return out
}
