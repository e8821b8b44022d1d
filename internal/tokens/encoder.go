package tokens

import (
	"fmt"
	"hash/maphash"
	"sync"
)

// Encoding names accepted by NewEncoder.
const (
	EncodingCL100K = "cl100k_base"
	EncodingO200K  = "o200k_base"
)

// Encoder counts tokens as GraphRAG's num_tokens does (tiktoken, ordinary
// encoding, no special tokens), giving exactly the counts of tiktoken-go's
// EncodeOrdinary; Tokens and Encode give the tokens themselves and Decode
// turns ids back into text. It reads the BPE ranks embedded by tiktoken-go-loader,
// so it needs no network. Building one takes tens of milliseconds (more
// for o200k_base): build it once and reuse it. An Encoder is safe for
// concurrent use; the zero value is not usable.
type Encoder struct {
	name string
	bpe  *bpeCounter
	// decoder maps ids to token bytes for Decode, built on first use:
	// counting needs no such table.
	decoder func() []string

	// counts memoises Count of short strings (table rows), which local
	// search counts again and again: every relationship row once per
	// entity prefix, the same text units question after question. Keys
	// are 64-bit hashes plus length; it is emptied when full.
	mu     sync.Mutex
	seed   maphash.Seed
	counts map[countKey]int
}

type countKey struct {
	h uint64
	n int
}

const (
	maxCachedLen   = 16 << 10 // longer strings are counted every time
	maxCachedCount = 1 << 20  // entries before the cache is emptied
)

// NewEncoder builds the named encoding (EncodingCL100K or EncodingO200K).
// Unlike tiktoken.GetEncoding it does not touch tiktoken-go's package-level
// loader or cache.
func NewEncoder(name string) (*Encoder, error) {
	if name != EncodingCL100K && name != EncodingO200K {
		return nil, fmt.Errorf("tokens: encoder: unknown encoding %q (want %s or %s)", name, EncodingCL100K, EncodingO200K)
	}
	ranks, err := loadRanks(name)
	if err != nil {
		return nil, fmt.Errorf("tokens: encoder %s: %w", name, err)
	}
	split := cl100kPiece
	if name == EncodingO200K {
		split = o200kPiece
	}
	return &Encoder{name: name, bpe: newBPECounter(ranks, split),
		decoder: sync.OnceValue(func() []string { return newDecoder(name, ranks) }),
		seed:    maphash.MakeSeed(), counts: make(map[countKey]int)}, nil
}

// Name returns the encoding name.
func (e *Encoder) Name() string { return e.name }

// Count returns the number of tokens of s.
func (e *Encoder) Count(s string) int {
	if s == "" {
		return 0
	}
	if len(s) > maxCachedLen {
		return e.bpe.count(s)
	}
	k := countKey{maphash.String(e.seed, s), len(s)}
	e.mu.Lock()
	n, ok := e.counts[k]
	e.mu.Unlock()
	if ok {
		return n
	}
	n = e.bpe.count(s)
	e.mu.Lock()
	if len(e.counts) >= maxCachedCount {
		clear(e.counts)
	}
	e.counts[k] = n
	e.mu.Unlock()
	return n
}
