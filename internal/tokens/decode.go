package tokens

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// specialTokens returns the special tokens of the named encoding, which
// tiktoken's decode turns back into their text although encode_ordinary
// never makes them.
func specialTokens(name string) map[string]int {
	if name == EncodingO200K {
		return map[string]int{"<|endoftext|>": 199999, "<|endofprompt|>": 200018}
	}
	return map[string]int{"<|endoftext|>": 100257, "<|fim_prefix|>": 100258,
		"<|fim_middle|>": 100259, "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}
}

// newDecoder returns the bytes of each token by id ("" where no token has
// that id): the ranks inverted, with the special tokens.
func newDecoder(name string, ranks map[string]int) []string {
	special := specialTokens(name)
	n := 0
	for _, m := range []map[string]int{ranks, special} {
		for _, id := range m {
			n = max(n, id+1)
		}
	}
	dec := make([]string, n)
	for _, m := range []map[string]int{ranks, special} {
		for tok, id := range m {
			dec[id] = tok
		}
	}
	return dec
}

// Decode returns the text of ids as tiktoken's decode does by default
// (errors="replace", which GraphRAG's tokenizer.decode keeps): the bytes
// of the tokens joined, then decoded as UTF-8 by ReplaceInvalid, so a cut
// through a character leaves U+FFFD where tiktoken-go's Decode would
// return the raw bytes. Special tokens decode to their text. An id that is
// no token is an error, as in tiktoken. The first call builds the table
// of tokens (a few milliseconds).
func (e *Encoder) Decode(ids []int) (string, error) {
	dec := e.decoder()
	n := 0
	for i, id := range ids {
		if id < 0 || id >= len(dec) || dec[id] == "" {
			return "", fmt.Errorf("tokens: decode %s: token %d (at %d) is not in the encoding", e.name, id, i)
		}
		n += len(dec[id])
	}
	var sb strings.Builder
	sb.Grow(n)
	for _, id := range ids {
		sb.WriteString(dec[id])
	}
	return ReplaceInvalid(sb.String()), nil
}

// ReplaceInvalid returns s decoded as UTF-8 the way Python's
// bytes.decode("utf-8", errors="replace") does: each maximal subpart of an
// ill-formed sequence (a lead byte and the continuation bytes it allows,
// cut short) becomes one U+FFFD, and any other invalid byte one U+FFFD
// each. strings.ToValidUTF8 would merge a run into one, and ranging over
// the string would replace byte by byte, which differ on a character cut
// after its second byte.
func ReplaceInvalid(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var sb strings.Builder
	sb.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		if r != utf8.RuneError || w > 1 {
			sb.WriteString(s[i : i+w])
			i += w
			continue
		}
		sb.WriteRune(utf8.RuneError)
		i += maximalSubpart(s[i:])
	}
	return sb.String()
}

// utf8Leads are the lead bytes of multi-byte UTF-8 (RFC 3629): how many
// continuation bytes follow each and the range of the first, which is
// narrower after E0, ED, F0 and F4 (no overlong forms, surrogates or runes
// past U+10FFFF); the later ones are 80-BF.
var utf8Leads = [...]struct{ from, to, need, lo, hi byte }{
	{0xC2, 0xDF, 1, 0x80, 0xBF},
	{0xE0, 0xE0, 2, 0xA0, 0xBF},
	{0xE1, 0xEC, 2, 0x80, 0xBF},
	{0xED, 0xED, 2, 0x80, 0x9F},
	{0xEE, 0xEF, 2, 0x80, 0xBF},
	{0xF0, 0xF0, 3, 0x90, 0xBF},
	{0xF1, 0xF3, 3, 0x80, 0xBF},
	{0xF4, 0xF4, 3, 0x80, 0x8F},
}

// maximalSubpart returns the length of the ill-formed sequence at the
// start of s, which is not valid UTF-8 there: a lead byte and the
// continuation bytes that could still have followed it, or 1.
func maximalSubpart(s string) int {
	for _, l := range utf8Leads {
		if s[0] < l.from || s[0] > l.to {
			continue
		}
		n, lo, hi := 1, l.lo, l.hi
		for ; n <= int(l.need) && n < len(s) && lo <= s[n] && s[n] <= hi; n++ {
			lo, hi = 0x80, 0xBF
		}
		return n
	}
	return 1
}
