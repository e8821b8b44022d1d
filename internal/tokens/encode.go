package tokens

import "unicode/utf8"

// Token is one token of a text: its id in the encoding and the bytes of
// the text it stands for, text[Start:End]. Byte-pair encoding works on
// bytes, so a token may hold part of a multi-byte character; its
// neighbours hold the rest.
type Token struct {
	ID         int
	Start, End int
}

// Tokens returns the tokens of s in order, those of tiktoken's
// encode_ordinary (and tiktoken-go's EncodeOrdinary): the pieces and
// merges that Count counts, so len(Tokens(s)) == Count(s). The spans
// cover s from 0 to len(s) without gaps. When s is not valid UTF-8,
// tiktoken-go encodes string([]rune(s)), each invalid byte made U+FFFD,
// and so does Tokens: the spans then index that string (ValidText(s)).
func (e *Encoder) Tokens(s string) []Token {
	return e.AppendTokens(nil, s)
}

// AppendTokens appends the tokens of s to dst and returns it, as Tokens
// does; a caller encoding many texts reuses one slice.
func (e *Encoder) AppendTokens(dst []Token, s string) []Token {
	return e.bpe.appendTokens(dst, ValidText(s))
}

// Encode returns the token ids of s, those of tiktoken's encode_ordinary.
func (e *Encoder) Encode(s string) []int {
	toks := e.Tokens(s)
	ids := make([]int, len(toks))
	for i, t := range toks {
		ids[i] = t.ID
	}
	return ids
}

// ValidText returns s when it is valid UTF-8, else string([]rune(s)): each
// invalid byte becomes U+FFFD, as tiktoken-go does before encoding (its
// regexp runs on runes). Tokens' spans index this text.
func ValidText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return string([]rune(s))
}

// Head returns the longest start of s that holds at most n tokens, cut
// on a character boundary (a token may end inside a character), and
// whether it cut anything. Like Tokens, it works on ValidText(s).
func (e *Encoder) Head(s string, n int) (string, bool) {
	s = ValidText(s)
	toks := e.Tokens(s)
	if len(toks) <= n {
		return s, false
	}
	if n <= 0 {
		return "", true
	}
	cut := toks[n-1].End
	for cut > 0 && cut < len(s) && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], true
}
