package llmcall

import (
	"context"

	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/tokens"
)

// MessageTokens is what a chat template adds around each message (role
// markers), which a count of the contents leaves out.
const MessageTokens = 4

// PromptTokens counts msgs as a chat prompt, with enc.
func PromptTokens(enc *tokens.Encoder, msgs []llm.Message) int {
	n := 0
	for _, m := range msgs {
		n += enc.Count(m.Content) + MessageTokens
	}
	return n
}

// Fitted is chat with each call's options set by b (llm.Budget.Chat):
// the answer's reserve as max_tokens unless the call sets one, and the
// window its prompt needs, so that a server taking the window per request
// (Ollama) is asked for it and the wait for a long prompt grows with it.
// The caller has already cut its prompts to b.Room().
func Fitted(chat Chatter, b llm.Budget, enc *tokens.Encoder) Chatter {
	return fitted{next: chat, budget: b, enc: enc}
}

type fitted struct {
	next   Chatter
	budget llm.Budget
	enc    *tokens.Encoder
}

func (f fitted) Chat(ctx context.Context, msgs []llm.Message, opts llm.ChatOptions) (string, llm.Usage, error) {
	return f.next.Chat(ctx, msgs, f.budget.Chat(opts, PromptTokens(f.enc, msgs)))
}
