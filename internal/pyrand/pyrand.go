package pyrand

import (
	"fmt"
	"math/bits"
)

// MT19937 parameters (Matsumoto and Nishimura, 1998).
const (
	n         = 624
	m         = 397
	matrixA   = 0x9908b0df
	upperMask = 0x80000000
	lowerMask = 0x7fffffff
)

// Rand is a Mersenne Twister in the state CPython's random.Random would
// be in after the same seed and the same calls. The zero value is not
// usable: make one with New.
type Rand struct {
	mt  [n]uint32
	idx int
}

// New returns a generator seeded as CPython's random.seed(seed) seeds
// one for an int seed: init_by_array over the 32-bit words of abs(seed),
// least significant first (0 gives the one-word key [0]). A negative seed
// therefore gives the same numbers as its absolute value, as in CPython.
func New(seed int64) *Rand {
	// abs without overflow: -MinInt64 is 1<<63 as a uint64.
	u := uint64(seed)
	if seed < 0 {
		u = -u
	}
	key := []uint32{uint32(u)}
	if hi := uint32(u >> 32); hi != 0 {
		key = append(key, hi)
	}
	r := &Rand{}
	r.initByArray(key)
	return r
}

// initGenrand fills the state from one 32-bit word (init_genrand).
func (r *Rand) initGenrand(s uint32) {
	r.mt[0] = s
	for i := 1; i < n; i++ {
		prev := r.mt[i-1]
		r.mt[i] = 1812433253*(prev^(prev>>30)) + uint32(i)
	}
	r.idx = n
}

// initByArray mixes key into the state made from 19650218
// (init_by_array); CPython seeds every int this way.
func (r *Rand) initByArray(key []uint32) {
	r.initGenrand(19650218)
	i, j := 1, 0
	for k := max(n, len(key)); k > 0; k-- {
		prev := r.mt[i-1]
		r.mt[i] = (r.mt[i] ^ ((prev ^ (prev >> 30)) * 1664525)) + key[j] + uint32(j)
		i++
		j++
		if i >= n {
			r.mt[0] = r.mt[n-1]
			i = 1
		}
		if j >= len(key) {
			j = 0
		}
	}
	for k := n - 1; k > 0; k-- {
		prev := r.mt[i-1]
		r.mt[i] = (r.mt[i] ^ ((prev ^ (prev >> 30)) * 1566083941)) - uint32(i)
		i++
		if i >= n {
			r.mt[0] = r.mt[n-1]
			i = 1
		}
	}
	r.mt[0] = 0x80000000 // the most significant bit set: the state is never all zero
}

// twist computes the next n words of the state at once.
func (r *Rand) twist() {
	for i := range n {
		y := r.mt[i]&upperMask | r.mt[(i+1)%n]&lowerMask
		v := r.mt[(i+m)%n] ^ y>>1
		if y&1 != 0 {
			v ^= matrixA
		}
		r.mt[i] = v
	}
	r.idx = 0
}

// Uint32 returns the next 32-bit output (genrand_uint32): the next state
// word, tempered.
func (r *Rand) Uint32() uint32 {
	if r.idx >= n {
		r.twist()
	}
	y := r.mt[r.idx]
	r.idx++
	y ^= y >> 11
	y ^= y << 7 & 0x9d2c5680
	y ^= y << 15 & 0xefc60000
	y ^= y >> 18
	return y
}

// Getrandbits returns random.getrandbits(k) for 0 <= k <= 64: k <= 32
// takes the top k bits of one output; more takes whole outputs as the
// low words and the top bits of the last one as the high word, as
// CPython fills its little-endian word array. k = 0 returns 0 and
// consumes nothing. It panics when k is out of range.
func (r *Rand) Getrandbits(k int) uint64 {
	switch {
	case k < 0 || k > 64:
		panic(fmt.Sprintf("pyrand: Getrandbits(%d): k must be in [0, 64]", k))
	case k == 0:
		return 0
	case k <= 32:
		return uint64(r.Uint32() >> (32 - k))
	}
	lo := uint64(r.Uint32())
	return lo | uint64(r.Uint32()>>(64-k))<<32
}

// Float64 returns random.random(): a float in [0, 1) with 53 random bits,
// the top 27 bits of one output and the top 26 of the next.
func (r *Rand) Float64() float64 {
	a := r.Uint32() >> 5
	b := r.Uint32() >> 6
	return (float64(a)*67108864.0 + float64(b)) * (1.0 / 9007199254740992.0)
}

// Below returns an int in [0, bound) as CPython's
// _randbelow_with_getrandbits does (and so randrange(bound)): draw
// bit_length(bound) bits until the value is below bound. It panics when
// bound <= 0, where CPython raises or loops.
func (r *Rand) Below(bound int) int {
	if bound <= 0 {
		panic(fmt.Sprintf("pyrand: Below(%d): bound must be positive", bound))
	}
	k := bits.Len64(uint64(bound)) // int.bit_length
	for {
		if v := r.Getrandbits(k); v < uint64(bound) {
			return int(v)
		}
	}
}

// Shuffle permutes s in place as random.shuffle does (CPython >= 3.11,
// and earlier releases without the random argument): for i from
// len(s)-1 down to 1, swap s[i] with s[Below(i+1)].
func Shuffle[T any](r *Rand, s []T) {
	for i := len(s) - 1; i > 0; i-- {
		j := r.Below(i + 1)
		s[i], s[j] = s[j], s[i]
	}
}
