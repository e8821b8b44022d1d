package prompttune

import (
	"regexp"
	"strings"
	"unicode"
)

// languages are the language names kgrag takes from a reply, with the
// script each is written in.
var languages = map[string]string{
	"english": "Latin", "french": "Latin", "german": "Latin", "spanish": "Latin", "italian": "Latin",
	"portuguese": "Latin", "dutch": "Latin", "swedish": "Latin", "danish": "Latin", "norwegian": "Latin",
	"finnish": "Latin", "polish": "Latin", "czech": "Latin", "hungarian": "Latin", "romanian": "Latin",
	"turkish": "Latin", "vietnamese": "Latin", "indonesian": "Latin", "malay": "Latin", "latin": "Latin",
	"chinese": "Han", "mandarin": "Han", "japanese": "Japanese", "korean": "Hangul",
	"russian": "Cyrillic", "ukrainian": "Cyrillic", "bulgarian": "Cyrillic", "serbian": "Cyrillic",
	"greek": "Greek", "arabic": "Arabic", "persian": "Arabic", "farsi": "Arabic", "urdu": "Arabic",
	"hebrew": "Hebrew", "hindi": "Devanagari", "thai": "Thai",
}

var wordRE = regexp.MustCompile(`\p{L}+`)

// languageName is the first language name the reply holds, capitalised
// ("Mandarin" read as Chinese), or "".
func languageName(reply string) string {
	for _, w := range wordRE.FindAllString(answer(reply), 20) {
		l := strings.ToLower(w)
		if _, ok := languages[l]; ok {
			if l == "mandarin" {
				l = "chinese"
			}
			return strings.ToUpper(l[:1]) + l[1:]
		}
	}
	return ""
}

// scripts tells the writing systems apart by their Unicode tables.
var scripts = []struct {
	name  string
	table *unicode.RangeTable
}{
	{"Han", unicode.Han}, {"Japanese", unicode.Hiragana}, {"Japanese", unicode.Katakana}, {"Hangul", unicode.Hangul},
	{"Cyrillic", unicode.Cyrillic}, {"Greek", unicode.Greek}, {"Arabic", unicode.Arabic}, {"Hebrew", unicode.Hebrew},
	{"Devanagari", unicode.Devanagari}, {"Thai", unicode.Thai}, {"Latin", unicode.Latin},
}

// script is the writing system most of text's letters are in; Han text
// with any kana is Japanese.
func script(text string) string {
	count := map[string]int{}
	for _, r := range text {
		for _, s := range scripts {
			if unicode.Is(s.table, r) {
				count[s.name]++
				break
			}
		}
	}
	if count["Japanese"] > 0 && count["Han"]+count["Japanese"] > count["Latin"] {
		return "Japanese"
	}
	best := "Latin"
	for _, s := range scripts {
		if count[s.name] > count[best] {
			best = s.name
		}
	}
	return best
}

// stopwords are frequent short words of the Latin-script languages
// guessLanguage tells apart.
var stopwords = map[string][]string{
	"English":    {"the", "and", "of", "to", "is", "was", "that", "in", "it", "with", "he", "for"},
	"French":     {"le", "la", "les", "et", "des", "est", "une", "que", "dans", "il", "pas", "du"},
	"German":     {"der", "die", "und", "das", "ist", "nicht", "ein", "zu", "den", "mit", "sich", "auf"},
	"Spanish":    {"el", "los", "las", "y", "que", "es", "una", "por", "con", "del", "se", "para"},
	"Italian":    {"il", "di", "che", "e", "non", "gli", "una", "per", "con", "sono", "della", "si"},
	"Portuguese": {"o", "os", "que", "e", "não", "uma", "com", "para", "do", "da", "em", "se"},
	"Dutch":      {"de", "het", "een", "en", "van", "niet", "dat", "is", "op", "te", "zijn", "met"},
}

// guessLanguage names the language of text without a model: by its
// script, and for Latin script by the most frequent short words
// (English when none stands out).
func guessLanguage(text string) string {
	switch s := script(text); s {
	case "Han":
		return "Chinese"
	case "Japanese":
		return "Japanese"
	case "Hangul":
		return "Korean"
	case "Cyrillic":
		return "Russian"
	case "Greek":
		return "Greek"
	case "Arabic":
		return "Arabic"
	case "Hebrew":
		return "Hebrew"
	case "Devanagari":
		return "Hindi"
	case "Thai":
		return "Thai"
	}
	freq := map[string]int{}
	for _, w := range wordRE.FindAllString(strings.ToLower(text), -1) {
		freq[w]++
	}
	best, bestN := "English", 0
	for _, lang := range []string{"English", "French", "German", "Spanish", "Italian", "Portuguese", "Dutch"} {
		n := 0
		for _, w := range stopwords[lang] {
			n += freq[w]
		}
		if n > bestN {
			best, bestN = lang, n
		}
	}
	return best
}

// languageScript is the script a language name (as languageName gives
// it) is written in.
func languageScript(name string) string { return languages[strings.ToLower(name)] }
