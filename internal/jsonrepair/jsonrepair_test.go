package jsonrepair_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/internal/jsonrepair"
)

// oracleMode says how json_repair's value for a case relates to ours
// (external_test.go checks it).
type oracleMode int

const (
	agree      oracleMode = iota // equal values
	oneOf                        // json_repair returns a list of every value in the reply; ours is one of them
	lastSame                     // json_repair keeps the last of several objects with the same keys (an update, to it); kgrag the first
	keepsCut                     // json_repair keeps the cut element that kgrag drops
	guesses                      // kgrag refuses; json_repair makes up an object or array
	bothRefuse                   // neither returns an object or array
	noOracle                     // json_repair's answer is not comparable; the case says why
)

type repairCase struct {
	name   string
	in     string
	want   string // the expected value as JSON; "" when an error is expected
	fixes  []jsonrepair.Fix
	err    string // for errors: a part of the message
	full   string // for truncation cases: the reply the model meant to write
	oracle oracleMode
}

const (
	fence   = jsonrepair.FixCodeFence
	prose   = jsonrepair.FixSurroundingText
	doubled = jsonrepair.FixDoubledBraces
	comment = jsonrepair.FixComments
	squote  = jsonrepair.FixSingleQuotes
	bareKey = jsonrepair.FixUnquotedKeys
	pyLit   = jsonrepair.FixPythonLiterals
	comma   = jsonrepair.FixTrailingComma
	control = jsonrepair.FixControlChars
	escape  = jsonrepair.FixInvalidEscapes
	cut     = jsonrepair.FixTruncated
)

func fixes(f ...jsonrepair.Fix) []jsonrepair.Fix { return f }

// repairCases are replies of the kinds small models write; each expected
// value is written by hand.
var repairCases = []repairCase{
	// Valid already.
	{name: "valid with space", in: "  {\"rating\": 3, \"reason\": \"it's {fine}\"}\n",
		want: `{"rating": 3, "reason": "it's {fine}"}`},
	{name: "valid array", in: `[{"description": "a", "score": 10}]`, want: `[{"description": "a", "score": 10}]`},

	// Code fences.
	{name: "fence json", in: "```json\n{\"rating\": 3, \"reason\": \"covers the corpus\"}\n```",
		want: `{"rating": 3, "reason": "covers the corpus"}`, fixes: fixes(fence)},
	{name: "fence bare", in: "```\n[{\"description\": \"a\", \"score\": 10}]\n```",
		want: `[{"description": "a", "score": 10}]`, fixes: fixes(fence)},
	{name: "fence with prose",
		in:   "Sure! Here are the points:\n\n```json\n{\"points\": [{\"description\": \"Alice founded Acme\", \"score\": 90}]}\n```\n\nLet me know if you need more.",
		want: `{"points": [{"description": "Alice founded Acme", "score": 90}]}`, fixes: fixes(fence, prose)},
	{name: "fence unclosed", in: "```json\n{\"rating\": 1, \"reason\": \"none\"}",
		want: `{"rating": 1, "reason": "none"}`, fixes: fixes(fence)},
	{name: "brackets in prose before fence", in: "Answer [draft 1]:\n```JSON\n{\"rating\": 5, \"reason\": \"x\"}\n```",
		want: `{"rating": 5, "reason": "x"}`, fixes: fixes(fence, prose), oracle: oneOf},

	{name: "closing fence only", in: "{\"a\": 1,}\n```", want: `{"a": 1}`, fixes: fixes(fence, comma)},

	// Prose around the JSON.
	{name: "prose around", in: `Here is the JSON: {"rating": 2, "reason": "ok"} Hope this helps`,
		want: `{"rating": 2, "reason": "ok"}`, fixes: fixes(prose)},
	{name: "brackets inside strings",
		in:   `The answer is {"reason": "use {braces}, [brackets] and \"quotes\" }", "rating": 4} -- done }`,
		want: `{"reason": "use {braces}, [brackets] and \"quotes\" }", "rating": 4}`, fixes: fixes(prose)},
	{name: "two objects", in: "{\"rating\": 1, \"reason\": \"a\"}\n{\"note\": \"b\"}",
		want: `{"rating": 1, "reason": "a"}`, fixes: fixes(prose), oracle: oneOf},
	{name: "two objects with the same keys", in: `{"rating": 1, "reason": "a"} {"rating": 2, "reason": "b"}`,
		want: `{"rating": 1, "reason": "a"}`, fixes: fixes(prose), oracle: lastSame},
	{name: "array in prose", in: `Points: [{"description": "x", "score": 1}]. Done.`,
		want: `[{"description": "x", "score": 1}]`, fixes: fixes(prose)},
	{name: "bracketed word before json", in: `Here is [the] JSON: {"a": 1}`,
		want: `{"a": 1}`, fixes: fixes(prose), oracle: oneOf},

	// Single quotes.
	{name: "python repr", in: `{'points': [{'description': 'He said "hi"', 'score': 80}]}`,
		want: `{"points": [{"description": "He said \"hi\"", "score": 80}]}`, fixes: fixes(squote)},
	{name: "apostrophes in double quotes", in: `{'reason': "it's Bob's", 'rating': 2}`,
		want: `{"reason": "it's Bob's", "rating": 2}`, fixes: fixes(squote)},
	{name: "escaped apostrophe", in: `{'reason': 'it\'s fine'}`,
		want: `{"reason": "it's fine"}`, fixes: fixes(squote)},

	// Trailing commas.
	{name: "trailing commas", in: `{"points": [{"description": "a", "score": 1,},],}`,
		want: `{"points": [{"description": "a", "score": 1}]}`, fixes: fixes(comma)},
	{name: "trailing comma in array", in: `[1, 2, ]`, want: `[1, 2]`, fixes: fixes(comma)},

	// Python literals.
	{name: "python literals", in: `{'ok': True, 'bad': False, 'x': None}`,
		want: `{"ok": true, "bad": false, "x": null}`, fixes: fixes(squote, pyLit)},
	{name: "python literals not in strings", in: `{"reason": "True story, None left", "ok": True}`,
		want: `{"reason": "True story, None left", "ok": true}`, fixes: fixes(pyLit)},

	// Unquoted keys.
	{name: "unquoted keys", in: `{points: [{description: "x", score: 5}]}`,
		want: `{"points": [{"description": "x", "score": 5}]}`, fixes: fixes(bareKey)},
	{name: "unquoted key with underscore", in: `{rating: 3, reason_text: "ok"}`,
		want: `{"rating": 3, "reason_text": "ok"}`, fixes: fixes(bareKey)},

	// Comments.
	{name: "comments", in: "{\n  // the points\n  \"points\": [ /* first */ {\"description\": \"x\", \"score\": 5}]\n}",
		want: `{"points": [{"description": "x", "score": 5}]}`, fixes: fixes(comment)},
	{name: "comment markers in strings", in: "{\"url\": \"http://x.org/*y*/\", // c\n \"n\": 1}",
		want: `{"url": "http://x.org/*y*/", "n": 1}`, fixes: fixes(comment)},

	// Raw control characters and bad escapes in strings.
	{name: "raw newline and tab", in: "{\"reason\": \"line one\nline two\tend\"}",
		want: `{"reason": "line one\nline two\tend"}`, fixes: fixes(control)},
	{name: "invalid escape", in: `{"path": "C:\data"}`,
		want: `{"path": "C:\\data"}`, fixes: fixes(escape)},

	// Doubled braces.
	{name: "doubled braces", in: `{{"rating": 3, "reason": "ok"}}`,
		want: `{"rating": 3, "reason": "ok"}`, fixes: fixes(doubled)},
	{name: "doubled braces nested", in: `{{"points": [{{"description": "x", "score": 5}}]}}`,
		want: `{"points": [{"description": "x", "score": 5}]}`, fixes: fixes(doubled)},

	// All at once.
	{name: "combined", in: "Sure:\n```json\n{'points': [ // key points\n {description: 'a', score: 80,},\n],}\n```",
		want: `{"points": [{"description": "a", "score": 80}]}`, fixes: fixes(fence, prose, comment, squote, bareKey, comma)},

	// Truncation (max_tokens).
	{name: "cut in description", in: `{"points": [{"description": "abc", "score": 80}, {"description": "de`,
		full: `{"points": [{"description": "abc", "score": 80}, {"description": "def", "score": 10}]}`,
		want: `{"points": [{"description": "abc", "score": 80}]}`, fixes: fixes(cut), oracle: keepsCut},
	{name: "cut in score", in: `{"points": [{"description": "abc", "score": 8`,
		full: `{"points": [{"description": "abc", "score": 80}]}`,
		want: `{"points": []}`, fixes: fixes(cut), oracle: keepsCut},
	{name: "cut after comma", in: `{"points": [{"description": "abc", "score": 80},`,
		want: `{"points": [{"description": "abc", "score": 80}]}`, fixes: fixes(cut)},
	{name: "cut at open array", in: `{"points": [`, want: `{"points": []}`, fixes: fixes(cut)},
	{name: "cut in reason", in: `{"rating": 3, "reason": "The report is ab`,
		full: `{"rating": 3, "reason": "The report is about Acme."}`,
		want: `{"rating": 3}`, fixes: fixes(cut), oracle: keepsCut},
	{name: "cut after key", in: `{"rating": 3, "reason"`, want: `{"rating": 3}`, fixes: fixes(cut)},
	{name: "cut in second object", in: `[{"a": 1}, {"a": 2`, full: `[{"a": 1}, {"a": 23}]`,
		want: `[{"a": 1}]`, fixes: fixes(cut), oracle: keepsCut},
	{name: "cut closers only", in: `{"points": [{"description": "abc", "score": 80}]`,
		want: `{"points": [{"description": "abc", "score": 80}]}`, fixes: fixes(cut)},
	{name: "cut in escape", in: `{"a": "x", "b": "y\`, full: `{"a": "x", "b": "y\n"}`,
		want: `{"a": "x"}`, fixes: fixes(cut), oracle: noOracle}, // json_repair keeps the lone backslash as text
	{name: "cut in key in fence", in: "```json\n{\"points\": [{\"description\": \"abc\", \"score\": 80}, {\"desc",
		want: `{"points": [{"description": "abc", "score": 80}]}`, fixes: fixes(fence, cut),
		oracle: noOracle}, // json_repair makes the cut key an array element: [..., ["desc"]]
	{name: "cut in literal", in: `{"ok": tru`, want: `{}`, fixes: fixes(cut),
		oracle: noOracle}, // json_repair keeps "tru" as a string

	// Not repairable.
	{name: "no json", in: "I could not find any relevant information.", err: "no JSON object or array", oracle: bothRefuse},
	{name: "empty", in: "", err: "no JSON object or array", oracle: bothRefuse},
	{name: "bare string", in: `"just a string"`, err: "bare JSON string", oracle: bothRefuse},
	{name: "unquoted value", in: `{"reason": good}`, err: `unquoted value "good"`, oracle: guesses},
	{name: "apostrophe in single quotes", in: `{'reason': 'it's good'}`, err: "expected ',' or '}'", oracle: guesses},
	{name: "missing colon", in: `{"a" 1}`, err: "expected ':'", oracle: guesses},
	{name: "bad value inside points", in: `{"points": [{"description": "x", "score": high}]}`,
		err: `unquoted value "high"`, oracle: guesses},
	{name: "broken json in fence, brackets before", in: "See [1]:\n```json\n{'reason': 'it's bad'}\n```",
		err: "expected ',' or '}'", oracle: guesses},
	{name: "missing comma", in: `[1 2]`, err: "expected ',' or ']'", oracle: guesses},
	{name: "NaN", in: `{"a": NaN}`, err: `unquoted value "NaN"`,
		oracle: noOracle}, // json_repair returns float('nan'), which is no JSON
	{name: "leading zero", in: `{"a": 01}`, err: "malformed number", oracle: guesses},
}

func TestRepair(t *testing.T) {
	for _, tt := range repairCases {
		t.Run(tt.name, func(t *testing.T) {
			out, got, err := jsonrepair.Repair(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Repair(%q) = %q, %v, %v; want error containing %q", tt.in, out, got, err, tt.err)
				}
				var se *jsonrepair.SyntaxError
				if !errors.Is(err, jsonrepair.ErrNoJSON) && !errors.As(err, &se) {
					t.Errorf("Repair(%q) error %v is neither ErrNoJSON nor *SyntaxError", tt.in, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Repair(%q) error: %v", tt.in, err)
			}
			if !sameValue(t, out, tt.want) {
				t.Errorf("Repair(%q) = %s; want %s", tt.in, out, tt.want)
			}
			if !slices.Equal(got, tt.fixes) {
				t.Errorf("Repair(%q) fixes = %v; want %v", tt.in, got, tt.fixes)
			}
			if len(tt.fixes) == 0 && out != strings.TrimSpace(tt.in) {
				t.Errorf("Repair(%q) = %q; valid JSON should come back trimmed", tt.in, out)
			}
			if tt.full != "" && !isPrefix(decodeNode(t, out), decodeNode(t, tt.full)) {
				t.Errorf("Repair(%q) = %s; not a prefix of %s", tt.in, out, tt.full)
			}
		})
	}
}

func TestUnmarshal(t *testing.T) {
	var reply struct {
		Points []struct {
			Description string `json:"description"`
			Score       int    `json:"score"`
		} `json:"points"`
	}
	got, err := jsonrepair.Unmarshal("```json\n{'points': [{'description': 'a', 'score': 80},]}\n```", &reply)
	if err != nil {
		t.Fatal(err)
	}
	if want := fixes(fence, squote, comma); !slices.Equal(got, want) {
		t.Errorf("Unmarshal fixes = %v; want %v", got, want)
	}
	if len(reply.Points) != 1 || reply.Points[0].Description != "a" || reply.Points[0].Score != 80 {
		t.Errorf("Unmarshal decoded %+v", reply)
	}
	if _, err := jsonrepair.Unmarshal("no json", &reply); !errors.Is(err, jsonrepair.ErrNoJSON) {
		t.Errorf("Unmarshal(no json) error = %v; want ErrNoJSON", err)
	}
	var n int
	if _, err := jsonrepair.Unmarshal(`{"a": 1}`, &n); err == nil {
		t.Error("Unmarshal of an object into an int: no error")
	}
}

// TestDepth checks that the nesting limit is encoding/json's.
func TestDepth(t *testing.T) {
	for _, n := range []int{10000, 10001} {
		doc := strings.Repeat("[", n) + strings.Repeat("]", n)
		valid := json.Valid([]byte(doc))
		// A trailing comma sends the document through the parser.
		out, _, err := jsonrepair.Repair(strings.Repeat("[", n) + "1," + strings.Repeat("]", n))
		if valid != (err == nil) {
			t.Errorf("depth %d: json.Valid = %v, Repair error = %v", n, valid, err)
		}
		if err == nil && !json.Valid([]byte(out)) {
			t.Errorf("depth %d: output not valid", n)
		}
	}
}

// TestValidUnchanged: any valid JSON object or array comes back as it
// came, trimmed, with no fixes.
func TestValidUnchanged(t *testing.T) {
	for i, doc := range randomDocs(300) {
		in := "\n " + doc + "\t\n"
		out, got, err := jsonrepair.Repair(in)
		if err != nil || out != doc || got != nil {
			t.Fatalf("doc %d: Repair(%q) = %q, %v, %v; want it unchanged", i, in, out, got, err)
		}
	}
}

// TestWrapped: valid documents in fences and prose come back as the same
// value.
func TestWrapped(t *testing.T) {
	wrappers := []struct {
		before, after string
		fixes         []jsonrepair.Fix
	}{
		{"```json\n", "\n```", fixes(fence)},
		{"```\n", "\n```\n", fixes(fence)},
		{"Here is the JSON you asked for:\n", "\nHope this helps!", fixes(prose)},
		{"Sure.\n```json\n", "\n```\nAnything else? {\"not\": \"this\"}", fixes(fence, prose)},
		{"See [1] and [2] below.\n```JSON\n", "\n```", fixes(fence, prose)},
		{"", "\n\nNote: scores are estimates [1].", fixes(prose)},
		{"\ufeff", "", fixes(prose)},
	}
	for i, doc := range randomDocs(300) {
		for _, w := range wrappers {
			in := w.before + doc + w.after
			out, got, err := jsonrepair.Repair(in)
			if err != nil {
				t.Fatalf("doc %d: Repair(%q): %v", i, in, err)
			}
			if !sameValue(t, out, doc) {
				t.Fatalf("doc %d: Repair(%q) = %s; want the value of %s", i, in, out, doc)
			}
			if !slices.Equal(got, w.fixes) {
				t.Fatalf("doc %d: Repair(%q) fixes = %v; want %v", i, in, got, w.fixes)
			}
		}
	}
}

// TestTruncated cuts documents at every byte: the result is an error only
// when nothing but space is left, and otherwise valid JSON whose value is a
// prefix of the document's.
func TestTruncated(t *testing.T) {
	for i, doc := range randomDocs(300) {
		full := decodeNode(t, doc)
		for n := range len(doc) + 1 {
			in := doc[:n]
			out, got, err := jsonrepair.Repair(in)
			if strings.TrimSpace(in) == "" {
				if !errors.Is(err, jsonrepair.ErrNoJSON) {
					t.Fatalf("doc %d cut at %d: Repair(%q) error = %v; want ErrNoJSON", i, n, in, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("doc %d cut at %d: Repair(%q): %v", i, n, in, err)
			}
			if want := fixes(cut); json.Valid([]byte(in)) {
				want = nil
				if got != nil {
					t.Fatalf("doc %d cut at %d: Repair(%q) fixes = %v; want none", i, n, in, got)
				}
			} else if !slices.Equal(got, want) {
				t.Fatalf("doc %d cut at %d: Repair(%q) fixes = %v; want %v", i, n, in, got, want)
			}
			if !isPrefix(decodeNode(t, out), full) {
				t.Fatalf("doc %d cut at %d: Repair(%q) = %s; not a prefix of %s", i, n, in, out, doc)
			}
		}
	}
}

func FuzzRepair(f *testing.F) {
	for _, tt := range repairCases {
		f.Add(tt.in)
	}
	for _, doc := range randomDocs(20) {
		f.Add(doc)
		f.Add(doc[:len(doc)/2])
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, got, err := jsonrepair.Repair(s)
		if err != nil {
			if strings.Contains(err.Error(), "internal error") {
				t.Fatalf("Repair(%q): %v", s, err)
			}
			return
		}
		if !json.Valid([]byte(out)) || out[0] != '{' && out[0] != '[' {
			t.Fatalf("Repair(%q) = %q: not a JSON object or array", s, out)
		}
		if len(got) == 0 && out != strings.TrimSpace(s) {
			t.Fatalf("Repair(%q) = %q with no fixes, but the input was changed", s, out)
		}
		if tr := strings.TrimSpace(s); json.Valid([]byte(tr)) && (out != tr || got != nil) {
			t.Fatalf("Repair(%q) = %q, %v; valid JSON should come back trimmed, with no fixes", s, out, got)
		}
		if again, g2, err := jsonrepair.Repair(out); err != nil || again != out || g2 != nil {
			t.Fatalf("Repair(Repair(%q)) = %q, %v, %v; want %q unchanged", s, again, g2, err, out)
		}
	})
}

func BenchmarkRepair(b *testing.B) {
	var pts []string
	for i := 0; len(strings.Join(pts, ",\n")) < 4000; i++ {
		pts = append(pts, fmt.Sprintf(`    {"description": "Community %d: Acme Corp's founder Alice Smith [Data: Reports (%d, %d)] leads the \"green\" initiative.", "score": %d}`, i, i, i+7, 100-i))
	}
	valid := "{\n  \"points\": [\n" + strings.Join(pts, ",\n") + "\n  ]\n}"
	fenced := "Here are the key points from the reports:\n\n```json\n" + valid + "\n```\n\nThese points are ranked by importance."
	for _, bc := range []struct{ name, in string }{{"valid", valid}, {"fenced", fenced}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.in)))
			for b.Loop() {
				if _, _, err := jsonrepair.Repair(bc.in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// sameValue reports whether two JSON texts decode to equal values.
func sameValue(t *testing.T, a, b string) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal([]byte(a), &va); err != nil {
		t.Fatalf("decode %q: %v", a, err)
	}
	if err := json.Unmarshal([]byte(b), &vb); err != nil {
		t.Fatalf("decode %q: %v", b, err)
	}
	return reflect.DeepEqual(va, vb)
}

// node is a decoded JSON value that keeps object members in order, which
// the prefix check needs.
type node struct {
	kind  byte     // '{', '[', or 's' string, 'n' number, 'l' true/false/null
	keys  []string // object keys, one per elem
	elems []node
	text  string // a string's value; a number's or literal's text
}

func decodeNode(t testing.TB, s string) node {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	n, err := readNode(d)
	if err != nil {
		t.Fatalf("decode %q: %v", s, err)
	}
	if _, err := d.Token(); err != io.EOF {
		t.Fatalf("decode %q: trailing data", s)
	}
	return n
}

func readNode(d *json.Decoder) (node, error) {
	tok, err := d.Token()
	if err != nil {
		return node{}, err
	}
	switch v := tok.(type) {
	case json.Delim:
		n := node{kind: byte(v)}
		for d.More() {
			if n.kind == '{' {
				k, err := d.Token()
				if err != nil {
					return node{}, err
				}
				n.keys = append(n.keys, k.(string))
			}
			e, err := readNode(d)
			if err != nil {
				return node{}, err
			}
			n.elems = append(n.elems, e)
		}
		_, err := d.Token() // the closing delimiter
		return n, err
	case string:
		return node{kind: 's', text: v}, nil
	case json.Number:
		return node{kind: 'n', text: string(v)}, nil
	default:
		return node{kind: 'l', text: fmt.Sprint(v)}, nil
	}
}

func equalNode(a, b node) bool {
	if a.kind != b.kind || a.text != b.text || len(a.elems) != len(b.elems) || !slices.Equal(a.keys, b.keys) {
		return false
	}
	for i := range a.elems {
		if !equalNode(a.elems[i], b.elems[i]) {
			return false
		}
	}
	return true
}

// isPrefix reports whether got is what remains of full after cutting:
// the same kind; for a container, the first elements (and keys) of full,
// all equal to full's but the last, which may itself be a prefix. Scalars
// must be equal: no half strings or numbers.
func isPrefix(got, full node) bool {
	return prefixWith(got, full, equalNode)
}

// prefixWith is isPrefix with the given test for scalars.
func prefixWith(got, full node, scalar func(got, full node) bool) bool {
	if got.kind != full.kind {
		return false
	}
	if got.kind != '{' && got.kind != '[' {
		return scalar(got, full)
	}
	n := len(got.elems)
	if n > len(full.elems) || !slices.Equal(got.keys, full.keys[:min(n, len(full.keys))]) {
		return false
	}
	for i := range n {
		if i < n-1 && !equalNode(got.elems[i], full.elems[i]) ||
			i == n-1 && !prefixWith(got.elems[i], full.elems[i], scalar) {
			return false
		}
	}
	return true
}

// randomDocs returns n valid JSON documents (objects and arrays, nested,
// with strings full of quotes, apostrophes, brackets, comment markers,
// fences, escapes and non-ASCII text), the same ones every run.
func randomDocs(n int) []string {
	g := docGen{r: rand.New(rand.NewPCG(4, 2026))}
	docs := make([]string, n)
	for i := range docs {
		var b strings.Builder
		if g.r.IntN(2) == 0 {
			g.object(&b, 0)
		} else {
			g.array(&b, 0)
		}
		docs[i] = b.String()
	}
	return docs
}

type docGen struct{ r *rand.Rand }

func (g docGen) space(b *strings.Builder) {
	b.WriteString([]string{"", "", " ", "\n  ", "\t", "\r\n"}[g.r.IntN(6)])
}

func (g docGen) value(b *strings.Builder, depth int) {
	k := g.r.IntN(10)
	if depth >= 4 {
		k = 4 + g.r.IntN(6)
	}
	switch {
	case k < 2:
		g.object(b, depth+1)
	case k < 4:
		g.array(b, depth+1)
	case k < 7:
		g.str(b)
	case k < 9:
		b.WriteString(g.number())
	default:
		b.WriteString([]string{"true", "false", "null"}[g.r.IntN(3)])
	}
}

func (g docGen) object(b *strings.Builder, depth int) {
	b.WriteByte('{')
	seen := map[string]bool{}
	for range g.r.IntN(5) {
		var k strings.Builder
		g.str(&k)
		var key string
		if err := json.Unmarshal([]byte(k.String()), &key); err != nil {
			panic(err) // the generator writes only valid strings
		}
		if seen[key] { // duplicate keys would not survive decoding to a map
			continue
		}
		if len(seen) > 0 {
			b.WriteByte(',')
		}
		seen[key] = true
		g.space(b)
		b.WriteString(k.String())
		g.space(b)
		b.WriteByte(':')
		g.space(b)
		g.value(b, depth)
		g.space(b)
	}
	b.WriteByte('}')
}

func (g docGen) array(b *strings.Builder, depth int) {
	b.WriteByte('[')
	for i := range g.r.IntN(5) {
		if i > 0 {
			b.WriteByte(',')
		}
		g.space(b)
		g.value(b, depth)
		g.space(b)
	}
	b.WriteByte(']')
}

func (g docGen) str(b *strings.Builder) {
	pieces := []string{"a", "Z", "0", " ", "'", `\"`, `\\`, `\/`, "{", "}", "[", "]", ",", ":",
		"//", "/*", "*/", "é", "日本", "😀", `\n`, `\t`, `\r`, `\b`, `\f`, `\u0041`, `\u00e9`,
		`\ud83d\ude00`, `\u0000`, "```", "True", "None", "#", "\x7f", "it's", "{{", "}}"}
	b.WriteByte('"')
	for range g.r.IntN(10) {
		b.WriteString(pieces[g.r.IntN(len(pieces))])
	}
	b.WriteByte('"')
}

func (g docGen) number() string {
	n := g.r.IntN(2001) - 1000
	switch g.r.IntN(4) {
	case 0:
		return strconv.Itoa(n)
	case 1:
		return fmt.Sprintf("%d.%d", n, g.r.IntN(1000))
	case 2:
		return fmt.Sprintf("%de%d", n, g.r.IntN(20)-10)
	default:
		return fmt.Sprintf("%d.%dE+%d", n, g.r.IntN(100), g.r.IntN(5))
	}
}
