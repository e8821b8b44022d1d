package reports

import (
	"bytes"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/jsonrepair"
)

// Reply is a community report as the model writes it: GraphRAG's
// CommunityReportResponse.
type Reply struct {
	Title             string
	Summary           string
	Findings          []graphrag.Finding
	Rating            float64
	RatingExplanation string
}

// Schema is the JSON schema of a Reply for a report of about maxLength
// words (Options.MaxLength), sent with JSON mode so that servers that
// constrain decoding to a schema (llama.cpp) keep small models to the
// shape. The keys are in GraphRAG's order. Its length limits share out
// about six characters a word, at least 100 to a text, and GraphRAG's five
// to ten findings become one per 200 words, one to ten: a server that
// enforces them stops a small model that would otherwise write findings
// until the reply is cut, and a cut reply is no report.
func Schema(maxLength int) json.RawMessage {
	budget := 6 * maxLength
	items := min(max(maxLength/200, 1), 10)
	atLeast := func(n int) int { return max(n, 100) }
	return json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{`+
		`"title":{"type":"string","minLength":1,"maxLength":200},`+
		`"summary":{"type":"string","minLength":1,"maxLength":%d},`+
		`"findings":{"type":"array","minItems":1,"maxItems":%d,"items":{"type":"object","properties":{`+
		`"summary":{"type":"string","minLength":1,"maxLength":200},"explanation":{"type":"string","minLength":1,"maxLength":%d}},`+
		`"required":["summary","explanation"]}},`+
		`"rating":{"type":"number","minimum":0,"maximum":10},`+
		`"rating_explanation":{"type":"string","maxLength":%d}},`+
		`"required":["title","summary","findings","rating","rating_explanation"]}`,
		atLeast(budget/4), items, atLeast(budget/(2*items)), atLeast(budget/8)))
}

// ParseError says why a reply is not a usable report.
type ParseError struct {
	Msg string
	Err error // the jsonrepair error, when the reply held no JSON
}

func (e *ParseError) Error() string { return "reports: reply: " + e.Msg }
func (e *ParseError) Unwrap() error { return e.Err }

// ParseReply reads a model reply as a report, repairing almost-JSON with
// internal/jsonrepair (the fixes say what was repaired). It accepts what
// GraphRAG's CommunityReportResponse (pydantic, lax mode) accepts once
// the JSON is read: all five keys present and not null, text fields as
// strings, findings as a list of objects with a summary and an
// explanation string (other keys ignored), and the rating as a number or
// a string holding one (see number for what pydantic would accept beyond
// that). The rating is not clamped to 0-10, as GraphRAG does not clamp
// it. Anything else is a *ParseError.
func ParseReply(reply string) (Reply, []jsonrepair.Fix, error) {
	fixed, fixes, err := jsonrepair.Repair(reply)
	if err != nil {
		return Reply{}, fixes, &ParseError{Msg: "no readable JSON object", Err: err}
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(fixed), &top); err != nil {
		return Reply{}, fixes, &ParseError{Msg: "not a JSON object"}
	}
	var r Reply
	// The keys in GraphRAG's order, so the first problem named is the
	// first a reader of the reply would meet.
	if err := text(top, "title", &r.Title); err != nil {
		return Reply{}, fixes, err
	}
	if err := text(top, "summary", &r.Summary); err != nil {
		return Reply{}, fixes, err
	}
	if r.Findings, err = findings(top); err != nil {
		return Reply{}, fixes, err
	}
	raw, ok := present(top, "rating")
	if !ok {
		return Reply{}, fixes, &ParseError{Msg: `no "rating"`}
	}
	if r.Rating, ok = number(raw); !ok {
		return Reply{}, fixes, &ParseError{Msg: fmt.Sprintf(`"rating" %s is not a number`, clip(string(raw)))}
	}
	if err := text(top, "rating_explanation", &r.RatingExplanation); err != nil {
		return Reply{}, fixes, err
	}
	return r, fixes, nil
}

func findings(top map[string]json.RawMessage) ([]graphrag.Finding, error) {
	raw, ok := present(top, "findings")
	if !ok {
		return nil, &ParseError{Msg: `no "findings"`}
	}
	var items []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, &ParseError{Msg: `"findings" is not a list of objects`}
	}
	out := make([]graphrag.Finding, 0, len(items))
	for i, it := range items {
		var f graphrag.Finding
		for _, field := range []struct {
			key string
			dst *string
		}{{"summary", &f.Summary}, {"explanation", &f.Explanation}} {
			if err := text(it, field.key, field.dst); err != nil {
				return nil, &ParseError{Msg: fmt.Sprintf("finding %d: %s", i, err.(*ParseError).Msg)}
			}
		}
		out = append(out, f)
	}
	return out, nil
}

func present(obj map[string]json.RawMessage, key string) (json.RawMessage, bool) {
	raw, ok := obj[key]
	return raw, ok && string(raw) != "null"
}

func text(obj map[string]json.RawMessage, key string, dst *string) error {
	raw, ok := present(obj, key)
	if !ok {
		return &ParseError{Msg: fmt.Sprintf("no %q", key)}
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return &ParseError{Msg: fmt.Sprintf("%q %s is not a string", key, clip(string(raw)))}
	}
	return nil
}

// decimal is a number written out in a string ("7", " 7.5 ", "1e1").
var decimal = regexp.MustCompile(`^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$`)

// number reads a JSON number, or a string holding a decimal one, as
// pydantic's lax float does; unlike pydantic it refuses true and false,
// "nan", "inf" and digits grouped with underscores, which no sensible
// rating is.
func number(raw json.RawMessage) (float64, bool) {
	var f float64
	if json.Unmarshal(raw, &f) == nil {
		return f, true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil || !decimal.MatchString(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// FullContent renders r as GraphRAG's CommunityReportsExtractor does
// (_get_text_output): the title as a heading, the summary, and each
// finding as a second-level heading over its explanation.
func (r Reply) FullContent() string {
	var s strings.Builder
	s.WriteString("# " + r.Title + "\n\n" + r.Summary + "\n\n")
	for i, f := range r.Findings {
		if i > 0 {
			s.WriteString("\n\n")
		}
		s.WriteString("## " + f.Summary + "\n\n" + f.Explanation)
	}
	return s.String()
}

// JSON renders r as GraphRAG's full_content_json: pydantic's
// model_dump_json(indent=4) of the CommunityReportResponse, keys in its
// order, non-ASCII text as is.
func (r Reply) JSON() string {
	var b bytes.Buffer
	b.WriteString("{\n    \"title\": ")
	jsonString(&b, r.Title)
	b.WriteString(",\n    \"summary\": ")
	jsonString(&b, r.Summary)
	b.WriteString(",\n    \"findings\": [")
	for i, f := range r.Findings {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n        {\n            \"summary\": ")
		jsonString(&b, f.Summary)
		b.WriteString(",\n            \"explanation\": ")
		jsonString(&b, f.Explanation)
		b.WriteString("\n        }")
	}
	if len(r.Findings) > 0 {
		b.WriteString("\n    ")
	}
	b.WriteString("],\n    \"rating\": ")
	b.WriteString(pyFloat(r.Rating))
	b.WriteString(",\n    \"rating_explanation\": ")
	jsonString(&b, r.RatingExplanation)
	b.WriteString("\n}")
	return b.String()
}

// jsonString writes s as pydantic-core (serde_json) does: only the quote,
// the backslash and control characters are escaped, the common ones by
// letter and the rest as \u00XX (lower-case hex). Invalid UTF-8, which
// Python strings cannot hold, becomes U+FFFD.
func jsonString(b *bytes.Buffer, s string) {
	const hexDigits = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				b.WriteRune(utf8.RuneError)
			} else {
				b.WriteString(s[i : i+n])
			}
			i += n
			continue
		}
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if c < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hexDigits[c>>4])
				b.WriteByte(hexDigits[c&0xf])
			} else {
				b.WriteByte(c)
			}
		}
		i++
	}
	b.WriteByte('"')
}

// pyFloat formats f as pydantic-core's JSON does for the ratings a
// report has: the shortest round-trip digits, with ".0" on whole
// numbers; exponent form from 1e16 up and below 1e-5 (1e+16, 1e-6).
func pyFloat(f float64) string {
	a := math.Abs(f)
	if a != 0 && (a >= 1e16 || a < 1e-5) {
		s := strconv.FormatFloat(f, 'e', -1, 64)
		mant, exp, _ := strings.Cut(s, "e")
		e, _ := strconv.Atoi(exp)
		if e >= 0 {
			return mant + "e+" + strconv.Itoa(e)
		}
		return mant + "e" + strconv.Itoa(e)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// Report is r as the community_reports row of community c: GraphRAG's
// finalize_community_reports (id the SHA-512 of full_content,
// human_readable_id the community number, size and period from the
// community).
func (r Reply) Report(c *graphrag.Community) graphrag.CommunityReport {
	full := r.FullContent()
	sum := sha512.Sum512([]byte(full))
	return graphrag.CommunityReport{
		ID:              hex.EncodeToString(sum[:]),
		HumanReadableID: c.Community,
		Community:       c.Community,
		Level:           c.Level,
		Title:           r.Title,
		Summary:         r.Summary,
		FullContent:     full,
		FullContentJSON: r.JSON(),
		Rank:            r.Rating,
		HasRank:         true,
		RankExplanation: r.RatingExplanation,
		Findings:        append([]graphrag.Finding(nil), r.Findings...),
		Period:          c.Period,
		Size:            c.Size,
		HasSize:         c.HasSize,
	}
}
