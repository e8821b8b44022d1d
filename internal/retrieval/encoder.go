package retrieval

import (
	"fmt"
	"hash/maphash"
	"strings"
	"sync"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// Encoding names accepted by NewEncoder.
const (
	EncodingCL100K = "cl100k_base"
	EncodingO200K  = "o200k_base"
)

// Encoder counts tokens as GraphRAG's num_tokens does (tiktoken, ordinary
// encoding, no special tokens), giving exactly the counts of tiktoken-go's
// EncodeOrdinary. It reads the BPE ranks embedded by tiktoken-go-loader,
// so it needs no network. Building one takes tens of milliseconds (more
// for o200k_base): build it once and reuse it. An Encoder is safe for
// concurrent use; the zero value is not usable.
type Encoder struct {
	name string
	// Exactly one of these counts: bpe (cl100k_base) splits text by hand,
	// tk (o200k_base) with tiktoken-go's regexp2 pattern.
	bpe *bpeCounter
	tk  *tiktoken.Tiktoken

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

// cl100kPattern is tiktoken's pre-tokenizer pattern of cl100k_base, which
// cl100kPiece implements by hand.
const cl100kPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// NewEncoder builds the named encoding (EncodingCL100K or EncodingO200K).
// Unlike tiktoken.GetEncoding it does not touch tiktoken-go's package-level
// loader or cache.
func NewEncoder(name string) (*Encoder, error) {
	if name != EncodingCL100K && name != EncodingO200K {
		return nil, fmt.Errorf("retrieval: encoder: unknown encoding %q (want %s or %s)", name, EncodingCL100K, EncodingO200K)
	}
	ranks, err := tiktoken_loader.NewOfflineLoader().LoadTiktokenBpe(name + ".tiktoken")
	if err != nil {
		return nil, fmt.Errorf("retrieval: encoder %s: %w", name, err)
	}
	e := &Encoder{name: name, seed: maphash.MakeSeed(), counts: make(map[countKey]int)}
	if name == EncodingCL100K {
		e.bpe = newBPECounter(ranks)
		return e, nil
	}
	if e.tk, err = newTiktoken(name, ranks); err != nil {
		return nil, err
	}
	return e, nil
}

// newTiktoken builds tiktoken-go's encoder of the named encoding.
func newTiktoken(name string, ranks map[string]int) (*tiktoken.Tiktoken, error) {
	var pat string
	var special map[string]int
	switch name {
	case EncodingCL100K:
		pat = cl100kPattern
		special = map[string]int{"<|endoftext|>": 100257, "<|fim_prefix|>": 100258,
			"<|fim_middle|>": 100259, "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}
	case EncodingO200K:
		pat = strings.Join([]string{
			`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
			`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
			`\p{N}{1,3}`,
			` ?[^\s\p{L}\p{N}]+[\r\n/]*`,
			`\s*[\r\n]+`,
			`\s+(?!\S)`,
			`\s+`,
		}, "|")
		special = map[string]int{"<|endoftext|>": 199999, "<|endofprompt|>": 200018}
	default:
		return nil, fmt.Errorf("retrieval: encoder: unknown encoding %q", name)
	}
	bpe, err := tiktoken.NewCoreBPE(ranks, special, pat)
	if err != nil {
		return nil, fmt.Errorf("retrieval: encoder %s: %w", name, err)
	}
	set := make(map[string]any, len(special))
	for k := range special {
		set[k] = true
	}
	enc := &tiktoken.Encoding{Name: name, PatStr: pat, MergeableRanks: ranks, SpecialTokens: special}
	return tiktoken.NewTiktoken(bpe, enc, set), nil
}

// Name returns the encoding name.
func (e *Encoder) Name() string { return e.name }

// Count returns the number of tokens of s.
func (e *Encoder) Count(s string) int {
	if s == "" {
		return 0
	}
	if len(s) > maxCachedLen {
		return e.count(s)
	}
	k := countKey{maphash.String(e.seed, s), len(s)}
	e.mu.Lock()
	n, ok := e.counts[k]
	e.mu.Unlock()
	if ok {
		return n
	}
	n = e.count(s)
	e.mu.Lock()
	if len(e.counts) >= maxCachedCount {
		clear(e.counts)
	}
	e.counts[k] = n
	e.mu.Unlock()
	return n
}

func (e *Encoder) count(s string) int {
	if e.bpe != nil {
		return e.bpe.count(s)
	}
	return len(e.tk.EncodeOrdinary(s))
}
