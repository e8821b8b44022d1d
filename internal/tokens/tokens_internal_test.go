package tokens

import (
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kgrag/kgrag/internal/chunk/oracle"
	"github.com/kgrag/kgrag/internal/test"
)

// Tokens and Decode are checked against tiktoken-go (ids, the bytes of
// each token, Decode of ranges that cut no character) and against
// GraphRAG's own tokenizer, Python tiktoken, for what tiktoken-go cannot
// say: its Decode returns the raw bytes of a range that cuts a character,
// where Python's decode (errors="replace", which GraphRAG's
// tokenizer.decode keeps) makes U+FFFD.

// multiByteTexts are texts whose tokens cut characters: CJK, emoji, marks
// and symbols that BPE splits into byte tokens.
var multiByteTexts = []string{
	"こんにちは世界、漢字仮名交じり文。中文文本，标点。한국어 텍스트",
	"🙂👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 emoji in text 🦄🧬",
	"e\u0301te\u0301 a\u0300\u0301\u0302b ǅ ʰ ᚠᛇᚻ ⅫⅩ ①②③ ∮ E⋅da = Q ≈ ™ “quoted” ‘x’ — …",
	"Ελληνικά, Русский текст, עברית, العربية, हिन्दी, ไทย, ქართული",
}

// decodeWindows checks Decode of the ranges of ids (tiktoken-go's ids of
// one text) that chunking makes and that cut characters: every [i, i+k)
// for k up to 3, and the windows of chunk size 300 with overlap 50 and
// 1200 with 100. A range whose bytes are valid UTF-8 must decode to
// exactly tiktoken-go's Decode; the others must decode as ReplaceInvalid
// of those bytes and are returned, for Python to check.
func (p pair) decodeWindows(t testing.TB, what string, ids []int) (cuts [][]int) {
	t.Helper()
	check := func(a, b int) {
		raw := p.ref.Decode(ids[a:b])
		got, err := p.enc.Decode(ids[a:b])
		if err != nil {
			t.Fatalf("%s %s: Decode(ids[%d:%d]): %v", p.name, what, a, b, err)
		}
		want := raw
		if !utf8.ValidString(raw) {
			want = ReplaceInvalid(raw)
			cuts = append(cuts, ids[a:b])
		}
		if got != want {
			t.Errorf("%s %s: Decode(ids[%d:%d]) = %q; want %q", p.name, what, a, b, got, want)
		}
	}
	for i := range ids {
		for k := 1; k <= 3 && i+k <= len(ids); k++ {
			check(i, i+k)
		}
	}
	for _, w := range [][2]int{{300, 50}, {1200, 100}} {
		for i := 0; i < len(ids); i += w[0] - w[1] {
			check(i, min(i+w[0], len(ids)))
		}
	}
	return cuts
}

// TestTokensMatchTiktoken checks Tokens and Decode against tiktoken-go on
// the Christmas Carol (as on disk, and with the line ends GraphRAG's
// loader reads), the multi-byte texts and the fuzz seeds.
func TestTokensMatchTiktoken(t *testing.T) {
	carol := test.ChristmasCarol(t)
	texts := append([]string{carol, strings.ReplaceAll(carol, "\r\n", "\n")}, multiByteTexts...)
	texts = append(texts, countSeeds...)
	for _, enc := range encodings {
		p, cuts, n := getPair(t, enc), 0, 0
		for i, s := range texts {
			if !p.check(t, fmt.Sprintf("text %d", i), s) {
				t.FailNow()
			}
			ids := p.ref.EncodeOrdinary(s)
			n += len(ids)
			cuts += len(p.decodeWindows(t, fmt.Sprintf("text %d", i), ids))
		}
		// The Christmas Carol alone is over 40,000 tokens; the
		// multi-byte texts must cut characters, or Python checks nothing.
		if n < 80000 || cuts < 50 {
			t.Errorf("%s: %d tokens, %d ranges cutting characters: too few to test", enc, n, cuts)
		}
		t.Logf("%s: %d tokens, %d ranges cut characters", enc, n, cuts)
	}
}

// TestDecodeErrors checks that ids outside the encoding are errors and
// that special tokens decode to their text, as in tiktoken.
func TestDecodeErrors(t *testing.T) {
	for _, enc := range encodings {
		e := getPair(t, enc).enc
		for _, ids := range [][]int{{-1}, {1, 2, 1 << 30}, {len(e.decoder())}} {
			if s, err := e.Decode(ids); err == nil {
				t.Errorf("%s: Decode(%v) = %q; want an error", enc, ids, s)
			}
		}
		for tok, id := range specialTokens(enc) {
			if s, err := e.Decode([]int{id}); err != nil || s != tok {
				t.Errorf("%s: Decode([%d]) = %q, %v; want %q", enc, id, s, err, tok)
			}
		}
		if s, err := e.Decode(nil); err != nil || s != "" {
			t.Errorf("%s: Decode(nil) = %q, %v", enc, s, err)
		}
	}
}

// invalidUTF8Corpus returns byte strings that exercise every branch of
// UTF-8 validation: all strings of up to three bytes from the bytes that
// bound the ranges of RFC 3629, and random longer ones.
func invalidUTF8Corpus() []string {
	edges := []byte{0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF,
		0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF}
	var out []string
	var gen func(prefix []byte, depth int)
	gen = func(prefix []byte, depth int) {
		if len(prefix) > 0 {
			out = append(out, string(prefix))
		}
		if depth == 0 {
			return
		}
		for _, b := range edges {
			gen(append(slices.Clip(prefix), b), depth-1)
		}
	}
	gen(nil, 3)
	rng := rand.New(rand.NewPCG(5, 6))
	for range 3000 {
		b := make([]byte, 4+rng.IntN(8))
		for i := range b {
			if rng.IntN(3) == 0 {
				b[i] = byte(rng.IntN(256))
			} else {
				b[i] = edges[rng.IntN(len(edges))]
			}
		}
		out = append(out, string(b))
	}
	return out
}

// TestMatchesGraphRAGTokenizer compares with GraphRAG's own tokenizer
// (graphrag.tokenizer.get_tokenizer, Python tiktoken): the ids of the
// Christmas Carol, the multi-byte texts, the seeds and random mixes;
// Decode of every range of the Christmas Carol and the multi-byte texts
// that cuts a character; and ReplaceInvalid against Python's
// bytes.decode("utf-8", errors="replace") on invalidUTF8Corpus.
func TestMatchesGraphRAGTokenizer(t *testing.T) {
	carol := test.ChristmasCarol(t)
	texts := append([]string{carol, strings.ReplaceAll(carol, "\r\n", "\n")}, multiByteTexts...)
	for _, s := range countSeeds {
		// Python's encode refuses special tokens in text; invalid
		// UTF-8 does not survive JSON.
		if utf8.ValidString(s) && !strings.Contains(s, "<|") {
			texts = append(texts, s)
		}
	}
	rng := rand.New(rand.NewPCG(7, 8))
	alphabet := []string{"a", "Z", "é", "漢", "\u0301", "7", " ", "  ", "\t", "\n", "\r", "\r\n", "\u00a0", "'s", "'LL", ".", "!", "/", "🙂"}
	for range 3000 {
		var sb strings.Builder
		for range 1 + rng.IntN(12) {
			sb.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		texts = append(texts, sb.String())
	}
	corpus := invalidUTF8Corpus()
	hexes := make([]string, len(corpus))
	for i, s := range corpus {
		hexes[i] = hex.EncodeToString([]byte(s))
	}

	var jobs []oracle.Job
	cuts := map[string][][]int{}
	for _, enc := range encodings {
		p := getPair(t, enc)
		for i, s := range texts[:2+len(multiByteTexts)] {
			cuts[enc] = append(cuts[enc], p.decodeWindows(t, fmt.Sprintf("text %d", i), p.ref.EncodeOrdinary(s))...)
		}
		jobs = append(jobs, oracle.Job{Op: "encode", Encoding: enc, Texts: texts},
			oracle.Job{Op: "decode", Encoding: enc, IDs: cuts[enc]})
	}
	jobs = append(jobs, oracle.Job{Op: "replace", Hex: hexes})
	res := oracle.Run(t, jobs...)
	for _, r := range res {
		if r.Error != "" {
			t.Fatalf("graphrag_chunks.py: %s", r.Error)
		}
	}

	for k, enc := range encodings {
		e := getPair(t, enc).enc
		want, bad := res[2*k].IDs, 0
		for i, s := range texts {
			if got := e.Encode(s); !slices.Equal(got, want[i]) {
				t.Errorf("%s: Encode(%.80q) = %v; GraphRAG's tokenizer %v", e.Name(), s, head(got), head(want[i]))
				if bad++; bad == 5 {
					t.FailNow()
				}
			}
		}
		dec := res[2*k+1].Texts
		for i, ids := range cuts[e.Name()] {
			if got, _ := e.Decode(ids); got != dec[i] {
				t.Errorf("%s: Decode(%v) = %q; GraphRAG's tokenizer %q", e.Name(), ids, got, dec[i])
			}
		}
		t.Logf("%s: %d texts encoded alike, %d ranges cutting characters decoded alike", e.Name(), len(texts), len(dec))
	}
	for i, s := range corpus {
		if got, want := ReplaceInvalid(s), res[len(res)-1].Texts[i]; got != want {
			t.Errorf("ReplaceInvalid(%q) = %q; Python %q", s, got, want)
		}
	}
}

// head returns at most the first 20 ids, for messages.
func head(ids []int) []int { return ids[:min(len(ids), 20)] }

// FuzzDecode checks Decode of every range of up to four tokens of the
// fuzz text against tiktoken-go's bytes (FuzzCount checks the tokens).
func FuzzDecode(f *testing.F) {
	for _, s := range append(countSeeds, multiByteTexts...) {
		f.Add(s)
	}
	cl, o := getPair(f, EncodingCL100K), getPair(f, EncodingO200K)
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range []pair{cl, o} {
			ids := p.ref.EncodeOrdinary(s)
			for i := range ids {
				for k := 1; k <= 4 && i+k <= len(ids); k++ {
					raw := p.ref.Decode(ids[i : i+k])
					if got, err := p.enc.Decode(ids[i : i+k]); err != nil || got != ReplaceInvalid(raw) {
						t.Errorf("%s: Decode(%v) = %q, %v; tiktoken-go's bytes %q", p.name, ids[i:i+k], got, err, raw)
					}
				}
			}
		}
	})
}
