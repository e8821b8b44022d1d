package retrieval

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

// The hand-written cl100k counter is checked against tiktoken-go's
// EncodeOrdinary (regexp2 running the cl100k pattern, then tiktoken-go's
// merging), which is what Encoder used before and whose counts
// TestEncoderCount ties to OpenAI's tiktoken.

var cl100kRef = sync.OnceValues(func() (*tiktoken.Tiktoken, error) {
	ranks, err := tiktoken_loader.NewOfflineLoader().LoadTiktokenBpe(EncodingCL100K + ".tiktoken")
	if err != nil {
		return nil, err
	}
	return newTiktoken(EncodingCL100K, ranks)
})

var cl100kEnc = sync.OnceValues(func() (*Encoder, error) { return NewEncoder(EncodingCL100K) })

// checkCount fails t when the counter and tiktoken-go disagree on s, and
// then shows where their pieces part.
func checkCount(t testing.TB, enc *Encoder, ref *tiktoken.Tiktoken, what, s string) bool {
	t.Helper()
	want := len(ref.EncodeOrdinary(s))
	got := enc.bpe.count(s)
	if got == want {
		return true
	}
	t.Errorf("%s: count(%.200q) = %d; tiktoken-go %d\n%s", what, s, got, want, pieceDiff(s))
	return false
}

// pieceDiff shows the first piece where the hand-written split and
// regexp2's differ.
func pieceDiff(s string) string {
	if !utf8.ValidString(s) {
		s = string([]rune(s))
	}
	re := regexp2.MustCompile(cl100kPattern, regexp2.None)
	m, _ := re.FindStringMatch(s)
	runes := []rune(s)
	for i := 0; i < len(s); {
		end := cl100kPiece(s, i)
		if m == nil {
			return fmt.Sprintf("piece %q at byte %d; regexp2 found no more", s[i:end], i)
		}
		want := string(runes[m.Index : m.Index+m.Length])
		if s[i:end] != want {
			return fmt.Sprintf("piece %q at byte %d; regexp2 %q", s[i:end], i, want)
		}
		i = end
		m, _ = re.FindNextMatch(m)
	}
	return "same pieces: the merging differs"
}

func refAndEnc(t testing.TB) (*Encoder, *tiktoken.Tiktoken) {
	t.Helper()
	ref, err := cl100kRef()
	if err != nil {
		t.Fatal(err)
	}
	enc, err := cl100kEnc()
	if err != nil {
		t.Fatal(err)
	}
	return enc, ref
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
// GraphRAG samples.
func TestCountMatchesTiktokenOnSamples(t *testing.T) {
	enc, ref := refAndEnc(t)
	for _, name := range test.Samples() {
		t.Run(name, func(t *testing.T) {
			ds, err := graphrag.Open(context.Background(), filepath.Join(test.GraphRAGSamples(t), name))
			if err != nil {
				t.Fatal(err)
			}
			texts, fails, tokens := sampleTexts(ds), 0, 0
			for i, s := range texts {
				if !checkCount(t, enc, ref, fmt.Sprintf("text %d", i), s) {
					if fails++; fails == 5 {
						t.Fatal("giving up")
					}
				}
				tokens += enc.Count(s)
			}
			if len(texts) < 100 || tokens < 10000 {
				t.Errorf("only %d texts, %d tokens: the sample was not read", len(texts), tokens)
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
	strings.Repeat("-", 300), strings.Repeat(" ", 200) + "x", strings.Repeat("ab", 150), strings.Repeat("\n", 130),
}

// TestCountMatchesTiktokenOnSeeds runs the fuzz seeds and random mixes of
// the awkward runes.
func TestCountMatchesTiktokenOnSeeds(t *testing.T) {
	enc, ref := refAndEnc(t)
	for _, s := range countSeeds {
		checkCount(t, enc, ref, "seed", s)
	}
	alphabet := []string{"a", "Z", "é", "ß", "漢", "7", "٣", "½", " ", "  ", "\t", "\n", "\r", "\u00a0", "\u3000",
		"'", "'s", "'LL", "'Re", ".", "!", "-", "🙂", "\u0301", "\xff", "\xe2\x82"}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		var sb strings.Builder
		for range 1 + rng.IntN(12) {
			sb.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		if !checkCount(t, enc, ref, fmt.Sprintf("mix %d", i), sb.String()) && t.Failed() {
			return
		}
	}
}

// TestRuneClassesMatchRegexp2 checks the class of every rune against the
// sets of the pattern as regexp2 compiles them.
func TestRuneClassesMatchRegexp2(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: every rune through regexp2")
	}
	re := regexp2.MustCompile(`^(?:([\r\n])|(\s)|(\p{L})|(\p{N})|([^\s\p{L}\p{N}]))$`, regexp2.None)
	bad := 0
	for r := rune(0); r <= unicode.MaxRune; r++ {
		m, err := re.FindRunesMatch([]rune{r})
		if err != nil || m == nil {
			t.Fatalf("regexp2 did not classify %U: %v", r, err)
		}
		var want uint8
		for g, cl := range []uint8{clNewline, clSpace, clLetter, clNumber, clOther} {
			if m.GroupByNumber(g+1).Length > 0 {
				want = cl
				break
			}
		}
		if got := runeClass(r); got != want {
			t.Errorf("runeClass(%U) = %d; regexp2 %d", r, got, want)
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
	enc, _ := refAndEnc(t)
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

// FuzzCount asserts that the counter agrees with tiktoken-go.
func FuzzCount(f *testing.F) {
	for _, s := range countSeeds {
		f.Add(s)
	}
	enc, ref := refAndEnc(f)
	f.Fuzz(func(t *testing.T, s string) {
		checkCount(t, enc, ref, "fuzz", s)
	})
}
