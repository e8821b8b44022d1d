package tuples

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// upper upper-cases s as Python's str.upper does, which GraphRAG applies
// to names: Go's simple case mapping plus Unicode's unconditional special
// casings, where one letter becomes several ("ß" -> "SS", "ﬁ" -> "FI").
// The differential test checks it against Python on every letter.
func upper(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToUpper(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if u := specialUpper(r); u != "" {
			b.WriteString(u)
			continue
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

// specialUpper returns the upper case of r when it is more than one rune
// (SpecialCasing.txt, unconditional mappings), else "".
func specialUpper(r rune) string {
	switch r {
	case 0x00DF:
		return "SS"
	case 0x0149:
		return "\u02BCN"
	case 0x01F0:
		return "J\u030C"
	case 0x0390, 0x1FD3:
		return "\u0399\u0308\u0301"
	case 0x03B0, 0x1FE3:
		return "\u03A5\u0308\u0301"
	case 0x0587:
		return "\u0535\u0552"
	case 0x1E96:
		return "H\u0331"
	case 0x1E97:
		return "T\u0308"
	case 0x1E98:
		return "W\u030A"
	case 0x1E99:
		return "Y\u030A"
	case 0x1E9A:
		return "A\u02BE"
	case 0x1F50:
		return "\u03A5\u0313"
	case 0x1F52:
		return "\u03A5\u0313\u0300"
	case 0x1F54:
		return "\u03A5\u0313\u0301"
	case 0x1F56:
		return "\u03A5\u0313\u0342"
	case 0x1F80, 0x1F88:
		return "\u1F08\u0399"
	case 0x1F81, 0x1F89:
		return "\u1F09\u0399"
	case 0x1F82, 0x1F8A:
		return "\u1F0A\u0399"
	case 0x1F83, 0x1F8B:
		return "\u1F0B\u0399"
	case 0x1F84, 0x1F8C:
		return "\u1F0C\u0399"
	case 0x1F85, 0x1F8D:
		return "\u1F0D\u0399"
	case 0x1F86, 0x1F8E:
		return "\u1F0E\u0399"
	case 0x1F87, 0x1F8F:
		return "\u1F0F\u0399"
	case 0x1F90, 0x1F98:
		return "\u1F28\u0399"
	case 0x1F91, 0x1F99:
		return "\u1F29\u0399"
	case 0x1F92, 0x1F9A:
		return "\u1F2A\u0399"
	case 0x1F93, 0x1F9B:
		return "\u1F2B\u0399"
	case 0x1F94, 0x1F9C:
		return "\u1F2C\u0399"
	case 0x1F95, 0x1F9D:
		return "\u1F2D\u0399"
	case 0x1F96, 0x1F9E:
		return "\u1F2E\u0399"
	case 0x1F97, 0x1F9F:
		return "\u1F2F\u0399"
	case 0x1FA0, 0x1FA8:
		return "\u1F68\u0399"
	case 0x1FA1, 0x1FA9:
		return "\u1F69\u0399"
	case 0x1FA2, 0x1FAA:
		return "\u1F6A\u0399"
	case 0x1FA3, 0x1FAB:
		return "\u1F6B\u0399"
	case 0x1FA4, 0x1FAC:
		return "\u1F6C\u0399"
	case 0x1FA5, 0x1FAD:
		return "\u1F6D\u0399"
	case 0x1FA6, 0x1FAE:
		return "\u1F6E\u0399"
	case 0x1FA7, 0x1FAF:
		return "\u1F6F\u0399"
	case 0x1FB2:
		return "\u1FBA\u0399"
	case 0x1FB3, 0x1FBC:
		return "\u0391\u0399"
	case 0x1FB4:
		return "\u0386\u0399"
	case 0x1FB6:
		return "\u0391\u0342"
	case 0x1FB7:
		return "\u0391\u0342\u0399"
	case 0x1FC2:
		return "\u1FCA\u0399"
	case 0x1FC3, 0x1FCC:
		return "\u0397\u0399"
	case 0x1FC4:
		return "\u0389\u0399"
	case 0x1FC6:
		return "\u0397\u0342"
	case 0x1FC7:
		return "\u0397\u0342\u0399"
	case 0x1FD2:
		return "\u0399\u0308\u0300"
	case 0x1FD6:
		return "\u0399\u0342"
	case 0x1FD7:
		return "\u0399\u0308\u0342"
	case 0x1FE2:
		return "\u03A5\u0308\u0300"
	case 0x1FE4:
		return "\u03A1\u0313"
	case 0x1FE6:
		return "\u03A5\u0342"
	case 0x1FE7:
		return "\u03A5\u0308\u0342"
	case 0x1FF2:
		return "\u1FFA\u0399"
	case 0x1FF3, 0x1FFC:
		return "\u03A9\u0399"
	case 0x1FF4:
		return "\u038F\u0399"
	case 0x1FF6:
		return "\u03A9\u0342"
	case 0x1FF7:
		return "\u03A9\u0342\u0399"
	case 0xFB00:
		return "FF"
	case 0xFB01:
		return "FI"
	case 0xFB02:
		return "FL"
	case 0xFB03:
		return "FFI"
	case 0xFB04:
		return "FFL"
	case 0xFB05, 0xFB06:
		return "ST"
	case 0xFB13:
		return "\u0544\u0546"
	case 0xFB14:
		return "\u0544\u0535"
	case 0xFB15:
		return "\u0544\u053B"
	case 0xFB16:
		return "\u054E\u0546"
	case 0xFB17:
		return "\u0544\u053D"
	}
	return ""
}
