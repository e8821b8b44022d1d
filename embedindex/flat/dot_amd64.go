package flat

import "golang.org/x/sys/cpu"

// hasFMA says dotFMA may run. Without AVX2 and FMA, dot is the portable
// loop: results then differ from an AVX2 machine's in the last bits, and
// so may a graph built there.
var hasFMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func dotFMA(a, b *float32, n int) float32

// dot is the inner product of two vectors of equal length. With AVX2 it
// runs 8-wide with four fused multiply-add chains, 4-5 times the portable
// loop on vectors in cache; a scan of 100k x 768 floats stays bound by
// memory bandwidth, but graph searches, which score few vectors often
// already cached, gain the whole factor.
func dot(a, b []float32) float32 {
	if hasFMA && len(a) > 0 {
		b = b[:len(a)]
		return dotFMA(&a[0], &b[0], len(a))
	}
	return dotGo(a, b)
}
