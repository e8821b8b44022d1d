package tokens

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/test"
)

// The hand-written counters are checked against tiktoken-go's
// EncodeOrdinary (regexp2 running the encoding's pattern, then
// tiktoken-go's merging), which is what Encoder used before and whose
// cl100k_base counts TestEncoderCount ties to OpenAI's tiktoken.

var encodings = []string{EncodingCL100K, EncodingO200K}

// cl100kPattern is tiktoken's pre-tokenizer pattern of cl100k_base, which
// cl100kPiece implements by hand.
const cl100kPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// o200kPattern is tiktoken's pre-tokenizer pattern of o200k_base, which
// o200kPiece implements by hand.
const o200kPattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
	`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
	`|\p{N}{1,3}` +
	`| ?[^\s\p{L}\p{N}]+[\r\n/]*` +
	`|\s*[\r\n]+` +
	`|\s+(?!\S)` +
	`|\s+`

// newTiktoken builds tiktoken-go's encoder of the named encoding, which
// Encoder used before it split text by hand; the tests compare the two.
func newTiktoken(name string, ranks map[string]int) (*tiktoken.Tiktoken, error) {
	var pat string
	var special map[string]int
	switch name {
	case EncodingCL100K:
		pat = cl100kPattern
		special = map[string]int{"<|endoftext|>": 100257, "<|fim_prefix|>": 100258,
			"<|fim_middle|>": 100259, "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}
	case EncodingO200K:
		pat = o200kPattern
		special = map[string]int{"<|endoftext|>": 199999, "<|endofprompt|>": 200018}
	default:
		return nil, fmt.Errorf("tokens: encoder: unknown encoding %q", name)
	}
	bpe, err := tiktoken.NewCoreBPE(ranks, special, pat)
	if err != nil {
		return nil, fmt.Errorf("tokens: encoder %s: %w", name, err)
	}
	set := make(map[string]any, len(special))
	for k := range special {
		set[k] = true
	}
	enc := &tiktoken.Encoding{Name: name, PatStr: pat, MergeableRanks: ranks, SpecialTokens: special}
	return tiktoken.NewTiktoken(bpe, enc, set), nil
}

// pair is one encoding's Encoder and tiktoken-go's encoder of it, built
// once per test binary: building takes long.
type pair struct {
	name string
	enc  *Encoder
	ref  *tiktoken.Tiktoken
	re   *regexp2.Regexp // the pattern, to show where pieces part
}

var pairs = sync.OnceValues(func() (map[string]pair, error) {
	out := map[string]pair{}
	for _, name := range encodings {
		ranks, err := tiktoken_loader.NewOfflineLoader().LoadTiktokenBpe(name + ".tiktoken")
		if err != nil {
			return nil, err
		}
		ref, err := newTiktoken(name, ranks)
		if err != nil {
			return nil, err
		}
		enc, err := NewEncoder(name)
		if err != nil {
			return nil, err
		}
		pat := cl100kPattern
		if name == EncodingO200K {
			pat = o200kPattern
		}
		out[name] = pair{name, enc, ref, regexp2.MustCompile(pat, regexp2.None)}
	}
	return out, nil
})

func getPair(t testing.TB, name string) pair {
	t.Helper()
	ps, err := pairs()
	if err != nil {
		t.Fatal(err)
	}
	return ps[name]
}

// check fails t when the counter and tiktoken-go disagree on s, or the
// pieces of the hand-written split differ from regexp2's matches (two
// splits can give the same count by chance), or Tokens' ids differ from
// tiktoken-go's or its spans do not give each token's bytes in order.
func (p pair) check(t testing.TB, what, s string) bool {
	t.Helper()
	ref := p.ref.EncodeOrdinary(s)
	got := p.enc.bpe.count(s)
	diff := p.pieceDiff(s)
	if got == len(ref) && diff == "" {
		diff = p.tokenDiff(s, ref)
	}
	if got == len(ref) && diff == "" {
		return true
	}
	t.Errorf("%s %s: count(%.200q) = %d; tiktoken-go %d\n%s", p.name, what, s, got, len(ref), diff)
	return false
}

// tokenDiff shows the first token where Tokens(s) differs from ref,
// tiktoken-go's ids of s, in id or in bytes, or returns "".
func (p pair) tokenDiff(s string, ref []int) string {
	toks, text := p.enc.Tokens(s), ValidText(s)
	if len(toks) != len(ref) {
		return fmt.Sprintf("Tokens gives %d tokens; tiktoken-go %d", len(toks), len(ref))
	}
	at := 0
	for i, tok := range toks {
		if tok.ID != ref[i] || tok.Start != at || tok.End <= tok.Start || tok.End > len(text) {
			return fmt.Sprintf("token %d = %+v; tiktoken-go id %d, starting at %d", i, tok, ref[i], at)
		}
		if b := p.ref.Decode(ref[i : i+1]); text[tok.Start:tok.End] != b {
			return fmt.Sprintf("token %d spans %q; tiktoken-go decodes %q", i, text[tok.Start:tok.End], b)
		}
		at = tok.End
	}
	if at != len(text) {
		return fmt.Sprintf("tokens end at %d of %d bytes", at, len(text))
	}
	return ""
}

// pieceDiff shows the first piece where the hand-written split and
// regexp2's differ, or returns "".
func (p pair) pieceDiff(s string) string {
	if !utf8.ValidString(s) {
		s = string([]rune(s))
	}
	m, _ := p.re.FindStringMatch(s)
	runes := []rune(s)
	for i := 0; i < len(s); {
		end := p.enc.bpe.split(s, i)
		if m == nil {
			return fmt.Sprintf("piece %q at byte %d; regexp2 found no more", s[i:end], i)
		}
		if want := string(runes[m.Index : m.Index+m.Length]); s[i:end] != want {
			return fmt.Sprintf("piece %q at byte %d; regexp2 %q", s[i:end], i, want)
		}
		i = end
		m, _ = p.re.FindNextMatch(m)
	}
	if m != nil {
		return fmt.Sprintf("no piece left; regexp2 %q", m.String())
	}
	return ""
}

// sampleTexts returns the text fields of one GraphRAG sample.
func sampleTexts(ds *graphrag.Dataset) []string {
	var out []string
	for _, d := range ds.Documents {
		out = append(out, d.Title, d.Text, d.Metadata)
	}
	for _, u := range ds.TextUnits {
		out = append(out, u.Text)
	}
	for _, e := range ds.Entities {
		out = append(out, e.Title, e.Type, e.Description)
	}
	for _, r := range ds.Relationships {
		out = append(out, r.Source, r.Target, r.Description)
	}
	for _, c := range ds.Communities {
		out = append(out, c.Title)
		if r := c.Report; r != nil {
			out = append(out, r.Title, r.Summary, r.FullContent, r.FullContentJSON, r.RankExplanation)
			for _, f := range r.Findings {
				out = append(out, f.Summary, f.Explanation)
			}
		}
	}
	for _, c := range ds.Covariates {
		out = append(out, c.CovariateType, c.Type, c.Description, c.SubjectID, c.ObjectID,
			c.Status, c.StartDate, c.EndDate, c.SourceText)
	}
	return out
}

// TestCountMatchesTiktokenOnSamples compares every text field of the four
// GraphRAG samples: counts, tokens and Decode of token ranges.
func TestCountMatchesTiktokenOnSamples(t *testing.T) {
	for _, name := range test.Samples() {
		t.Run(name, func(t *testing.T) {
			ds, err := graphrag.Open(context.Background(), filepath.Join(test.GraphRAGSamples(t), name))
			if err != nil {
				t.Fatal(err)
			}
			texts := sampleTexts(ds)
			for _, enc := range encodings {
				p, fails, tokens := getPair(t, enc), 0, 0
				for i, s := range texts {
					what := fmt.Sprintf("text %d", i)
					if !p.check(t, what, s) {
						if fails++; fails == 5 {
							t.Fatal("giving up")
						}
					}
					tokens += p.enc.Count(s)
					p.decodeWindows(t, what, p.ref.EncodeOrdinary(s))
				}
				if len(texts) < 100 || tokens < 10000 {
					t.Errorf("only %d texts, %d %s tokens: the sample was not read", len(texts), tokens, enc)
				}
			}
		})
	}
}

// countSeeds are strings where splitting by hand could go wrong.
var countSeeds = []string{
	"", "a", "hello world", "tiktoken is great!",
	"I'm he's we'RE THEY'VE it'LL you'D don'T 'S 'Ll 'lL 're 'rx 'l ' '", "'", "''s", "x'", "'\u017f", "'\u212a",
	"  \n\n  x", " \n", "\n", "\r\n", "a\r\n\r\nb", " \t\n \tx", "x  ", "x \n ", "   ", "\t\tfoo", "\u00a0x", "a\u00a0\u00a0b",
	"\u3000\u3000漢字", "\u2028\u2029x", "\u0085x", "\v\fx", "x\x00y",
	"12345", "1234567", "x123y", "٣٤٥٦", "½¼", "①②③④", "Ⅻ", "3.14159", " 42 ", "-1,000,000",
	"Привет, мир!", "こんにちは世界", "中文文本，标点。", "مرحبا بالعالم", "שלום עולם", "नमस्ते दुनिया", "สวัสดีชาวโลก",
	"🙂👍🏽 👨‍👩‍👧‍👦", "e\u0301te\u0301", "a\u0300\u0301\u0302b", " \u0301x", "\u0301",
	"... !!! ??? ,,,\n\n", " (x) [y] {z}", "--- ***\r\n", " ->\n\n", "a/b\\c", "<|endoftext|>", "«quoted» “x”",
	"\xff", "a\xffb", "\xe2\x82", "x\xe2\x82y z", "\xed\xa0\x80", "\xc0\x80", " \xff\xfe ",
	"HTTPServer", "McDonald's", "ABCdef", "iPhone", "DON'T", "A\u0301B", "AB\u02b0CD", "X漢Y!", "\u01c5x", "\u0301abc", "x\u0301Y",
	" \u0301", "!\u0301A", "a/b\n/c", "x//\n\n/", "\u02b0A'S",
	strings.Repeat("-", 300), strings.Repeat(" ", 200) + "x", strings.Repeat("ab", 150), strings.Repeat("\n", 130),
}

// TestCountMatchesTiktokenOnSeeds runs the fuzz seeds and random mixes of
// the awkward runes.
func TestCountMatchesTiktokenOnSeeds(t *testing.T) {
	// Runes of every class of both patterns: upper, lower, title, modifier
	// and other letters, marks, numbers, spaces, newlines, others, slash.
	alphabet := []string{"a", "Z", "é", "É", "ß", "ǅ", "ʰ", "漢", "\u0301", "\u0903", "\u20dd", "7", "٣", "½",
		" ", "  ", "\t", "\n", "\r", "\u00a0", "\u3000", "'", "'s", "'LL", "'Re", "'ve", ".", "!", "-", "/",
		"🙂", "\xff", "\xe2\x82"}
	for _, enc := range encodings {
		p := getPair(t, enc)
		for _, s := range countSeeds {
			p.check(t, "seed", s)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		for i := range 5000 {
			var sb strings.Builder
			for range 1 + rng.IntN(12) {
				sb.WriteString(alphabet[rng.IntN(len(alphabet))])
			}
			if !p.check(t, fmt.Sprintf("mix %d", i), sb.String()) && t.Failed() {
				return
			}
		}
	}
}

// TestRuneClassesMatchRegexp2 checks the class of every rune against the
// sets of the pattern as regexp2 compiles them.
func TestRuneClassesMatchRegexp2(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: every rune through regexp2")
	}
	// Each lookahead's group says whether the rune is in one set of the
	// patterns, as regexp2 compiles it.
	sets := []struct {
		re   string
		flag uint8 // the flag of its members, 0 for [^\s\p{L}\p{N}]
	}{
		{`[\r\n]`, fNewline},
		{`\s`, fSpace},
		{`\p{L}`, fLetter},
		{`\p{N}`, fNumber},
		{`[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`, fUpper},
		{`[\p{Ll}\p{Lm}\p{Lo}\p{M}]`, fLower},
		{`[^\s\p{L}\p{N}]`, 0},
	}
	var pat strings.Builder
	pat.WriteString("^")
	for _, set := range sets {
		pat.WriteString("(?=(" + set.re + ")?)")
	}
	re := regexp2.MustCompile(pat.String(), regexp2.None)
	bad := 0
	for r := rune(0); r <= unicode.MaxRune; r++ {
		m, err := re.FindRunesMatch([]rune{r})
		if err != nil || m == nil {
			t.Fatalf("regexp2 did not match %U: %v", r, err)
		}
		want, other := uint8(0), m.GroupByNumber(len(sets)).Length > 0
		for g, set := range sets {
			if m.GroupByNumber(g+1).Length > 0 {
				want |= set.flag
			}
		}
		if got := runeFlags(r); got != want || (got&fWord == 0) != other {
			t.Errorf("runeFlags(%U) = %06b; regexp2 %06b, other %v", r, got, want, other)
			if bad++; bad == 10 {
				t.FailNow()
			}
		}
	}
}

// TestContractionCase checks which apostrophe pieces regexp2 takes for
// the case-insensitive contractions: contraction() folds ASCII capitals
// only, as unicode.ToLower lowers nothing else to s, t, r, e, v, m, l, d.
func TestContractionCase(t *testing.T) {
	re := regexp2.MustCompile(`^(?i:'s|'t|'re|'ve|'m|'ll|'d)$`, regexp2.None)
	matched := 0
	for r := rune(1); r < 0x3000; r++ {
		c := string(r)
		for _, s := range []string{"'" + c, "'" + c + "e", "'" + c + "E", "'l" + c, "'L" + c, "'r" + c, "'V" + c} {
			want, _ := re.MatchString(s)
			if got := contraction(s[1:]) == len(s)-1; got != want {
				t.Errorf("contraction(%q) takes it all: %v; regexp2 %v", s[1:], got, want)
			}
			if want {
				matched++
			}
		}
	}
	if matched != 24 { // 's 't 'm 'd in two cases, then 4 of each other form
		t.Errorf("regexp2 matched %d contractions; want 24", matched)
	}
	for r := rune(0x3000); r <= unicode.MaxRune; r++ {
		if l := unicode.ToLower(r); l < utf8.RuneSelf {
			t.Errorf("unicode.ToLower(%U) = %q: regexp2 would fold it", r, l)
		}
	}
}

// TestMergeCountHeap checks that the heap merge used for long pieces
// counts as the scan does.
func TestMergeCountHeap(t *testing.T) {
	enc := getPair(t, EncodingCL100K).enc
	rng := rand.New(rand.NewPCG(3, 4))
	for _, s := range append(countSeeds, strings.Repeat("=", 1000), strings.Repeat("abc", 400)) {
		for _, p := range []string{s, s + s} {
			if got, want := heapMergeCount(p, enc.bpe.ranks), scanMergeCount(p, enc.bpe.ranks); got != want {
				t.Errorf("heapMergeCount(%.100q) = %d; scan %d", p, got, want)
			}
		}
	}
	const letters = "etaoin shrdlu"
	for range 2000 {
		b := make([]byte, 1+rng.IntN(2*maxLinearMerge))
		for i := range b {
			b[i] = letters[rng.IntN(len(letters))]
		}
		if got, want := heapMergeCount(string(b), enc.bpe.ranks), scanMergeCount(string(b), enc.bpe.ranks); got != want {
			t.Fatalf("heapMergeCount(%q) = %d; scan %d", b, got, want)
		}
	}
}

// FuzzCount asserts that the counters of both encodings agree with
// tiktoken-go.
func FuzzCount(f *testing.F) {
	for _, s := range countSeeds {
		f.Add(s)
	}
	cl, o := getPair(f, EncodingCL100K), getPair(f, EncodingO200K)
	f.Fuzz(func(t *testing.T, s string) {
		cl.check(t, "fuzz", s)
		o.check(t, "fuzz", s)
	})
}

// TestLoadRanks checks kgrag's reading of the rank files against
// tiktoken-go-loader's own.
func TestLoadRanks(t *testing.T) {
	for _, name := range []string{EncodingCL100K, EncodingO200K} {
		t.Run(name, func(t *testing.T) {
			want, err := tiktoken_loader.NewOfflineLoader().LoadTiktokenBpe(name + ".tiktoken")
			if err != nil {
				t.Fatal(err)
			}
			got, err := loadRanks(name)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) || len(got) < 100000 {
				t.Fatalf("%d ranks; the loader reads %d", len(got), len(want))
			}
			for k, v := range want {
				if got[k] != v {
					t.Fatalf("rank of %q = %d; the loader reads %d", k, got[k], v)
				}
			}
		})
	}
}

func BenchmarkLoadRanks(b *testing.B) {
	for _, tt := range []struct {
		name string
		load func() (map[string]int, error)
	}{
		{"kgrag", func() (map[string]int, error) { return loadRanks(EncodingCL100K) }},
		{"tiktoken-go-loader", func() (map[string]int, error) {
			return tiktoken_loader.NewOfflineLoader().LoadTiktokenBpe(EncodingCL100K + ".tiktoken")
		}},
	} {
		b.Run(tt.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := tt.load(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
