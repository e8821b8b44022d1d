package llm

import (
	"strings"
)

// Reasoning models (Qwen3, DeepSeek-R1, QwQ, gpt-oss and others, served by
// Ollama, llama.cpp, vLLM or LM Studio) think before they answer. Servers
// that parse the thinking send it apart from the answer
// (reasoning_content, or reasoning); others leave it in the answer as a
// block that opens it:
//
//	<think>The user asks ... so the answer is 4.</think>
//
//	4
//
// and some chat templates open the block in the prompt, so that the reply
// starts inside it and only closes it. Whatever reads a reply (extraction
// records, JSON of global search and reports, ratings, summaries, the
// answer a user reads) must see the answer alone: the draft holds records,
// JSON and ratings of its own. The client takes the block out of every
// reply, gives it to ChatOptions.OnReasoning, and counts it in Usage.

// thinkTags are the opening and closing tags of a reasoning block.
var thinkTags = [][2]string{{"<think>", "</think>"}, {"<thinking>", "</thinking>"}, {"<reasoning>", "</reasoning>"}}

// SplitReasoning splits a whole reply into its reasoning and its answer:
// a block that opens the reply (after white space) in one of the tags
// <think>, <thinking> or <reasoning> is the reasoning, as is everything
// before a closing </think> that no opening tag precedes (the block a
// chat template opened). The answer loses the white space that followed
// the block. A block that is never closed makes the whole reply
// reasoning, with no answer.
func SplitReasoning(reply string) (reasoning, answer string) {
	trimmed := strings.TrimLeft(reply, " \t\r\n")
	for _, tag := range thinkTags {
		if !strings.HasPrefix(trimmed, tag[0]) {
			continue
		}
		body := trimmed[len(tag[0]):]
		end := strings.Index(body, tag[1])
		if end < 0 {
			return strings.TrimSpace(body), ""
		}
		return strings.TrimSpace(body[:end]), strings.TrimLeft(body[end+len(tag[1]):], " \t\r\n")
	}
	if end := strings.Index(reply, "</think>"); end >= 0 && !strings.Contains(reply[:end], "<think>") {
		return strings.TrimSpace(reply[:end]), strings.TrimLeft(reply[end+len("</think>"):], " \t\r\n")
	}
	return "", reply
}

// thinkFilter takes a reasoning block out of a streamed reply as the
// pieces arrive: it holds back what could still be the start of an
// opening tag, passes the answer on, and sends the block to reasoning.
// Only a block that opens the reply is taken out; the closing-tag-only
// form SplitReasoning knows cannot be told from an answer until the
// stream ends, so ChatStream's returned answer, not its pieces, handles
// it. The zero value is ready; it is not safe for concurrent use.
type thinkFilter struct {
	state   int
	pending strings.Builder
	close   string // the closing tag of the open block
}

const (
	thinkDeciding = iota // before the answer: is it a block?
	thinkInside          // in the block
	thinkAfter           // after the block: white space is dropped
	thinkAnswer          // the answer: passed on as it comes
)

// write takes the next piece and returns what of it is answer and what is
// reasoning so far.
func (f *thinkFilter) write(piece string) (answer, reasoning string) {
	switch f.state {
	case thinkAnswer:
		return piece, ""
	case thinkAfter:
		rest := strings.TrimLeft(piece, " \t\r\n")
		if rest != "" {
			f.state = thinkAnswer
		}
		return rest, ""
	case thinkDeciding:
		f.pending.WriteString(piece)
		head := strings.TrimLeft(f.pending.String(), " \t\r\n")
		if head == "" {
			return "", ""
		}
		for _, tag := range thinkTags {
			if strings.HasPrefix(head, tag[0]) {
				f.state, f.close = thinkInside, tag[1]
				f.pending.Reset()
				return f.write(head[len(tag[0]):])
			}
			if strings.HasPrefix(tag[0], head) {
				return "", "" // could still become this tag
			}
		}
		f.state = thinkAnswer
		all := f.pending.String()
		f.pending.Reset()
		return all, ""
	default: // thinkInside
		f.pending.WriteString(piece)
		buf := f.pending.String()
		if end := strings.Index(buf, f.close); end >= 0 {
			f.state = thinkAfter
			f.pending.Reset()
			rest, _ := f.write(buf[end+len(f.close):])
			return rest, buf[:end]
		}
		// Keep back what could be the start of the closing tag.
		keep := 0
		for k := min(len(f.close)-1, len(buf)); k > 0; k-- {
			if strings.HasSuffix(buf, f.close[:k]) {
				keep = k
				break
			}
		}
		f.pending.Reset()
		f.pending.WriteString(buf[len(buf)-keep:])
		return "", buf[:len(buf)-keep]
	}
}

// flush returns what the filter still holds when the stream ends: held
// answer text, or the rest of a block that was never closed.
func (f *thinkFilter) flush() (answer, reasoning string) {
	rest := f.pending.String()
	f.pending.Reset()
	if f.state == thinkInside {
		return "", rest
	}
	return rest, ""
}
