package globalsearch

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/kgrag/kgrag/internal/jsonrepair"
	"github.com/kgrag/kgrag/internal/llmcall"
	"github.com/kgrag/kgrag/internal/retrieval"
)

// Decode repairs a model's JSON reply where that is safe and decodes it,
// saying how it parsed: llmcall.ParseValid, llmcall.ParseRepaired (with the fixes) or
// llmcall.ParseUnusable. Every mode that asks for JSON reads replies with it.
func Decode(reply string) (any, string, []string) {
	var v any
	fixes, err := jsonrepair.Unmarshal(reply, &v)
	if err != nil {
		return nil, llmcall.ParseUnusable, nil
	}
	if len(fixes) == 0 {
		return v, llmcall.ParseValid, nil
	}
	names := make([]string, len(fixes))
	for i, f := range fixes {
		names[i] = string(f)
	}
	return v, llmcall.ParseRepaired, names
}

// parsePoints reads a map reply: {"points": [{"description": ..., "score":
// ...}]}, as GraphRAG asks for it. Small models also answer with the bare
// list, or a single point, or "answer" for "description", or the score as
// a string; those are read too. A point without text or a numeric score
// is dropped and counted; scores are clamped to 0..100.
func parsePoints(reply string, batch int) (points []retrieval.KeyPoint, dropped int, parse string, fixes []string) {
	v, parse, fixes := Decode(reply)
	if parse == llmcall.ParseUnusable {
		return nil, 0, parse, nil
	}
	var items []any
	switch x := v.(type) {
	case map[string]any:
		if list, ok := x["points"].([]any); ok {
			items = list
		} else if _, ok := x["points"]; !ok && (x["description"] != nil || x["answer"] != nil) {
			items = []any{x}
		} else if x["points"] != nil {
			return nil, 0, llmcall.ParseUnusable, fixes
		}
	case []any:
		items = x
	default:
		return nil, 0, llmcall.ParseUnusable, fixes
	}
	for _, it := range items {
		m, _ := it.(map[string]any)
		text := str(m["description"])
		if text == "" {
			text = str(m["answer"])
		}
		score, ok := Number(m["score"])
		if m == nil || strings.TrimSpace(text) == "" || !ok {
			dropped++
			continue
		}
		points = append(points, retrieval.KeyPoint{Batch: batch, Description: text, Score: int(math.Round(min(max(score, 0), 100)))})
	}
	return points, dropped, parse, fixes
}

// parseRating reads a rating reply, {"rating": 3}; ok is false when it
// holds no usable rating. Ratings are clamped to 0..5.
func parseRating(reply string) (rating int, ok bool, parse string, fixes []string) {
	v, parse, fixes := Decode(reply)
	m, isObj := v.(map[string]any)
	if parse == llmcall.ParseUnusable || !isObj {
		return 0, false, llmcall.ParseUnusable, fixes
	}
	f, ok := Number(m["rating"])
	if !ok {
		return 0, false, llmcall.ParseUnusable, fixes
	}
	return int(math.Round(min(max(f, 0), 5))), true, parse, fixes
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// Number reads a JSON number, or a string holding one ("80", "80/100"),
// as small models write scores.
func Number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, !math.IsNaN(x)
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case string:
		x = strings.TrimSpace(x)
		if i := strings.IndexByte(x, '/'); i > 0 {
			x = strings.TrimSpace(x[:i])
		}
		f, err := strconv.ParseFloat(x, 64)
		return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
	}
	return 0, false
}
