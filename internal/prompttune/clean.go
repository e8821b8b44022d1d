package prompttune

import (
	"encoding/json"
	"regexp"
	"strings"
	"unicode"

	"github.com/kgrag/kgrag/internal/llm"
)

// answer is a reply without a reasoning block (the client takes it out
// already; a Chatter that does not is read the same) and surrounding
// white space.
func answer(reply string) string {
	_, a := llm.SplitReasoning(reply)
	return strings.TrimSpace(a)
}

// unwrapChars are taken off both ends of a phrase: quotes, markdown
// emphasis and headings, brackets.
const unwrapChars = "\"'`*_#“”‘’«»[](){}<> \t"

// labelRE is a leading label a model writes before its answer ("Domain:",
// "**Field:**", "Answer -").
var labelRE = regexp.MustCompile(`^(?i)\**\s*(domain|field|subject|answer|response|language|persona|role|the analyst|rating|the rating measures|kinds? of entit(y|ies)|entity types?|output)\s*\**\s*[:\-–]\s*\**`)

// leadRE is a lead-in sentence start a model writes before a phrase.
var leadRE = regexp.MustCompile(`^(?i)(the\s+)?(domain|field|subject|language)(\s+of\s+(this|the)\s+(text|sample|document)s?)?\s+(is|are)\s+(the\s+(domain|field)\s+of\s+)?`)

// phrase reads a reply that should be a short phrase (a domain): its
// first line with text, without labels, lead-ins, quotes, markdown and
// final punctuation, and without what follows a colon or full stop when
// that makes it short enough. ok is false when no phrase of at most
// maxWords words is left.
func phrase(reply string, maxWords int) (string, bool) {
	for _, line := range strings.Split(answer(reply), "\n") {
		s := listMarkerRE.ReplaceAllString(strings.TrimSpace(line), "")
		s = labelRE.ReplaceAllString(s, "")
		s = strings.Trim(s, unwrapChars)
		s = leadRE.ReplaceAllString(s, "")
		s = strings.Trim(s, unwrapChars+".,;:!")
		if s == "" {
			continue
		}
		if len(strings.Fields(s)) > maxWords {
			// "Victorian fiction. The text tells ..." or "Victorian
			// fiction, namely ...": keep the first clause.
			if i := strings.IndexAny(s, ".,;:("); i > 0 {
				s = strings.Trim(s[:i], unwrapChars)
			}
		}
		if n := len(strings.Fields(s)); n == 0 || n > maxWords || !hasLetter(s) {
			return "", false
		}
		return strings.Join(strings.Fields(s), " "), true
	}
	return "", false
}

// prose reads a reply that should be a few sentences (a persona, a role,
// a rating criterion): without labels and markdown, on one line, cut at
// a sentence end to at most maxChars. ok is false for fewer than minWords
// words, or text that is records or JSON rather than prose.
func prose(reply string, minWords, maxChars int) (string, bool) {
	a := htmlTagRE.ReplaceAllString(answer(reply), "")
	a = strings.ReplaceAll(a, "**", "")
	var lines []string
	for _, line := range strings.Split(a, "\n") {
		line = strings.TrimSpace(labelRE.ReplaceAllString(strings.TrimSpace(line), ""))
		line = strings.TrimLeft(line, "#>-* ")
		if line != "" {
			lines = append(lines, line)
		}
	}
	s := strings.Join(strings.Fields(strings.Join(lines, " ")), " ")
	s = strings.Trim(s, "\"“”' ")
	if strings.Contains(s, "<|>") || strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[") ||
		len(numberedRE.FindAllString(s, 3)) >= 2 || repetitive(s) {
		return "", false
	}
	if len(s) > maxChars {
		cut := s[:maxChars]
		if end := lastSentenceEnd(cut); end > maxChars/3 {
			s = cut[:end]
		} else if i := strings.LastIndexByte(cut, ' '); i > 0 {
			s = cut[:i] + "."
		}
	}
	if len(strings.Fields(s)) < minWords {
		return "", false
	}
	if r := []rune(s); !strings.ContainsAny(string(r[len(r)-1]), ".!?。！？") {
		s += "."
	}
	return s, true
}

// htmlTagRE is an HTML tag, which small models write around words.
var htmlTagRE = regexp.MustCompile(`</?[a-zA-Z][a-zA-Z0-9]*\s*/?>`)

// numberedRE is an item number inside a text: a reply that numbers its
// points is a list, not the sentences asked for.
var numberedRE = regexp.MustCompile(`(^|\s)\d{1,2}[.)]\s`)

// repetitive reports a text in which a run of three words comes back
// three times or more, or of two words four times: a model looping, not
// describing.
func repetitive(s string) bool {
	w := strings.Fields(strings.ToLower(s))
	for n, limit := range map[int]int{2: 4, 3: 3} {
		seen := map[string]int{}
		for i := 0; i+n <= len(w); i++ {
			k := strings.Join(w[i:i+n], " ")
			if seen[k]++; seen[k] >= limit {
				return true
			}
		}
	}
	return false
}

// genericTypes are entity types too vague to extract by.
var genericTypes = map[string]bool{"other": true, "others": true, "unknown": true, "misc": true, "miscellaneous": true,
	"entity": true, "entities": true, "thing": true, "things": true, "none": true, "n/a": true, "na": true, "item": true,
	"kind": true, "kinds": true, "type": true, "types": true, "etc": true, "and so on": true, "so on": true}

// listMarkerRE is a list item's marker: "-", "*", "•", "1.", "2)".
var listMarkerRE = regexp.MustCompile(`^\s*([-*•·]+|\d+[.)])\s*`)

// entityTypes reads a list of entity types leniently: JSON (an array, or
// an object holding one), comma- or semicolon-separated, one to a line, a
// bulleted or numbered list; labels, quotes and markdown off, lower case,
// duplicates and vague or sentence-long items out, at most max.
func entityTypes(reply string, max int) []string {
	a := answer(reply)
	var items []string
	if list, ok := jsonList(a); ok {
		items = list
	} else {
		for _, line := range strings.Split(a, "\n") {
			line = listMarkerRE.ReplaceAllString(strings.TrimSpace(line), "")
			line = labelRE.ReplaceAllString(line, "")
			// "Here are the kinds: person, place": the list is after the
			// colon.
			if i := strings.LastIndex(line, ":"); i >= 0 && len(strings.Fields(line[:i])) > 1 {
				line = line[i+1:]
			}
			items = append(items, strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ';' || r == '、' || r == '，' || r == '|' })...)
		}
	}
	var out []string
	seen := map[string]bool{}
	for _, it := range items {
		t := strings.ToLower(strings.Trim(strings.TrimSpace(it), unwrapChars+".:!"))
		t = strings.TrimPrefix(t, "and ")
		t = strings.Join(strings.Fields(t), " ")
		if t == "" || seen[t] || genericTypes[t] || len(strings.Fields(t)) > 3 || len([]rune(t)) > 30 || !hasLetter(t) ||
			strings.Contains(" "+t+" ", " or ") {
			continue
		}
		seen[t] = true
		out = append(out, t)
		if len(out) == max {
			break
		}
	}
	return out
}

// jsonList finds a JSON array of strings in s, alone or as the value of
// an object's key.
func jsonList(s string) ([]string, bool) {
	start := strings.IndexAny(s, "[{")
	if start < 0 {
		return nil, false
	}
	body := s[start:]
	var list []string
	if json.Unmarshal([]byte(body), &list) == nil {
		return list, true
	}
	var obj map[string]any
	if json.Unmarshal([]byte(body), &obj) == nil {
		for _, v := range obj {
			if arr, ok := v.([]any); ok {
				for _, x := range arr {
					if str, ok := x.(string); ok {
						list = append(list, str)
					}
				}
				return list, len(list) > 0
			}
		}
	}
	// A list whose items are not quoted: [person, place].
	if end := strings.IndexByte(body, ']'); body[0] == '[' && end > 0 {
		return strings.Split(body[1:end], ","), true
	}
	return nil, false
}

func hasLetter(s string) bool {
	return strings.IndexFunc(s, unicode.IsLetter) >= 0
}
