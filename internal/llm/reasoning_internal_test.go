package llm

import (
	"strings"
	"testing"
)

// TestThinkFilterPieces feeds replies to the stream filter in every split
// into two pieces and one byte a piece: the answer it passes on is the
// reply without its opening block, as SplitReasoning gives it, and the
// reasoning is the block.
func TestThinkFilterPieces(t *testing.T) {
	for _, reply := range []string{
		"<think>a</think>b",
		"  <think>\nplan\n</think>\n\nanswer <think> kept",
		"<thinking>x</thinking>y",
		"<reasoning>x</reasoning>\ny",
		"<th",
		"<thunk>not a tag</thunk>",
		"<think>never closed",
		"<think>a</thin",
		"plain answer",
		"\n\n",
		"<think>two</think>\n<think>blocks</think>answer",
	} {
		wantR, wantA := SplitReasoning(reply)
		splits := [][]string{}
		for i := 0; i <= len(reply); i++ {
			splits = append(splits, []string{reply[:i], reply[i:]})
		}
		bytes := []string{}
		for i := range len(reply) {
			bytes = append(bytes, reply[i:i+1])
		}
		splits = append(splits, bytes)
		for _, pieces := range splits {
			var f thinkFilter
			var a, r strings.Builder
			for _, p := range pieces {
				x, y := f.write(p)
				a.WriteString(x)
				r.WriteString(y)
			}
			x, y := f.flush()
			a.WriteString(x)
			r.WriteString(y)
			if strings.TrimSpace(a.String()) != strings.TrimSpace(wantA) || strings.TrimSpace(r.String()) != wantR {
				t.Errorf("filter of %q in pieces %q: answer %q, reasoning %q; want %q, %q", reply, pieces, a.String(), r.String(), wantA, wantR)
			}
		}
	}
}
