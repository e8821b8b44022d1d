// Package jsonrepair turns an LLM's almost-JSON reply into valid JSON where
// that is safe, and says what it changed.
//
// Global search asks a local, often tiny, model (Gemma 3 270M and the like)
// for JSON such as {"points": [{"description": "...", "score": 80}]}. Small
// models wrap it in Markdown code fences or prose, write Python dict reprs
// (single quotes, True/None), leave trailing commas and comments, put raw
// newlines in strings, echo a prompt's doubled braces, or stop at
// max_tokens in the middle of a string. GraphRAG copes with the same
// replies in try_parse_json_object (a regexp and string replacements, then
// PyPI json_repair); this package does the job for kgrag, with one rule
// json_repair does not follow: it never invents or keeps a half value. A
// string, number or key cut by truncation is dropped with the element that
// holds it, so what remains is a prefix of what the model meant to say.
//
// Repair and Unmarshal are pure functions, safe for concurrent use. Valid
// JSON costs one json.Valid call and is returned as it came (trimmed);
// anything else is re-emitted compactly. A reply that cannot be repaired
// safely gives an error: ErrNoJSON when there is no object or array at
// all, else a *SyntaxError naming the first offending offset. Callers count
// such replies and skip them.
//
// Not repaired, on purpose (each would mean guessing): bare words as
// values, NaN, missing commas, unescaped double quotes inside "...", an
// apostrophe inside '...'. A value that fails to parse is skipped whole,
// never mined for fragments. Outside a code fence, the first object or
// array that parses wins, so an aside such as "see [1]" before an unfenced
// reply is taken for the JSON; the caller's decode then sees no points.
//
// Usage:
//
//	var reply struct {
//		Points []struct {
//			Description string `json:"description"`
//			Score       any    `json:"score"`
//		} `json:"points"`
//	}
//	fixes, err := jsonrepair.Unmarshal(text, &reply)
//	if err != nil {
//		malformed++ // skip this reply
//	} else if len(fixes) > 0 {
//		repaired++
//	}
package jsonrepair
