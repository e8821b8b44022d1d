package retrieval

import "strings"

// SectionHistory heads the earlier turns of a conversation in a local
// context, as GraphRAG heads them.
const SectionHistory = "Conversation History"

// Roles of a Turn, as GraphRAG's ConversationRole prints them.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Turn is one earlier message of a conversation: the user's question or
// the assistant's answer.
type Turn struct {
	Role    string
	Content string
}

// SearchText is the text local search embeds for a question asked after
// history: the question, then the last n user turns, latest first, one per
// line (GraphRAG's mixed_context.build_context with
// conversation_history.get_user_turns). With no user turn it is the
// question itself.
func SearchText(question string, history []Turn, n int) string {
	var b strings.Builder
	b.WriteString(question)
	added := 0
	for i := len(history) - 1; i >= 0 && added < n; i-- {
		if history[i].Role == RoleUser {
			b.WriteString("\n" + history[i].Content)
			added++
		}
	}
	return b.String()
}

// qaTurn is a question and the answers that followed it.
type qaTurn struct {
	question string
	answers  []string
}

// qaTurns groups history as GraphRAG's to_qa_turns does: an assistant
// turn before the first user turn belongs to no question and is dropped.
func qaTurns(history []Turn) []qaTurn {
	var out []qaTurn
	for _, t := range history {
		if t.Role == RoleUser {
			out = append(out, qaTurn{question: t.Content})
		} else if len(out) > 0 {
			out[len(out)-1].answers = append(out[len(out)-1].answers, t.Content)
		}
	}
	return out
}

// historyTable prints the Conversation History table as GraphRAG's local
// search does (ConversationHistory.build_context with recency_bias off):
// the first HistoryTurns question turns in conversation order, with their
// answers if HistoryAnswers, as many as keep the table within budget
// tokens, and how many questions it holds. The table is empty when there
// is no history or no turn fits.
func (b *Builder) historyTable(history []Turn, budget int) (table, int) {
	p := b.params
	qa := qaTurns(history)
	if p.HistoryTurns == 0 || len(qa) == 0 {
		return table{exact: true}, 0
	}
	if len(qa) > p.HistoryTurns {
		qa = qa[:p.HistoryTurns]
	}
	header := "-----" + SectionHistory + "-----\n" + "turn" + p.ColumnDelimiter + "content\n"
	var rows strings.Builder
	kept, n := "", 0
	for _, t := range qa {
		rows.WriteString(CSVRow([]string{RoleUser, t.question}, p.ColumnDelimiter))
		if p.HistoryAnswers && len(t.answers) > 0 {
			rows.WriteString(CSVRow([]string{RoleAssistant, strings.Join(t.answers, "\n")}, p.ColumnDelimiter))
		}
		if b.enc.Count(header+rows.String()) > budget {
			break
		}
		kept, n = rows.String(), n+1
	}
	if n == 0 {
		return table{exact: true}, 0
	}
	text := header + kept
	return table{text: text, tokens: b.enc.Count(text), exact: true, last: lastLine(text)}, n
}

// lastLine is the last line of text, its newline included.
func lastLine(text string) string {
	i := strings.LastIndexByte(strings.TrimSuffix(text, "\n"), '\n')
	return text[i+1:]
}
