package llm

import "math"

// A chat window holds the prompt and the answer together, in the model's
// tokens; kgrag counts its prompts with tiktoken. A Budget converts
// between the two and keeps the answer's share, so that every caller that
// fills a prompt (the search modes, the indexer's stages) cuts it alike.

// DefaultTokenRatio is the ratio of a model whose tokenizer kgrag has not
// measured: a tenth more tokens than tiktoken counts. Gemma 3's tokenizer
// counts 2% more than cl100k_base on English prose, BERT's WordPiece (the
// MiniLM embedders) fewer; other scripts and languages differ more, and a
// refusal teaches the real one.
const DefaultTokenRatio = 1.1

// Answer reserves: the answer's share of a window when --max-tokens does
// not set it.
const (
	minReserve = 256
	maxReserve = 2048
)

// AnswerReserve is the answer's share of window w: maxTokens when the
// user set it, else an eighth of the window, at least 256 and at most
// 2048 tokens; 2048 when the window is unknown. It is sent as max_tokens,
// so that a model that never stops cannot run on.
func AnswerReserve(w Window, maxTokens int) int {
	if maxTokens > 0 {
		return maxTokens
	}
	if !w.Known() {
		return maxReserve
	}
	return min(max(w.Tokens/8, minReserve), maxReserve)
}

// Budget is a chat window seen from a caller that counts its prompts with
// its own encoder.
type Budget struct {
	Window Window
	// Ratio is the model's tokens per counted token; 0 means
	// DefaultTokenRatio.
	Ratio float64
	// Reserve is the answer's share, in the model's tokens.
	Reserve int
}

// NewBudget is w's budget with the answer's reserve for maxTokens
// (AnswerReserve).
func NewBudget(w Window, ratio float64, maxTokens int) Budget {
	return Budget{Window: w, Ratio: ratio, Reserve: AnswerReserve(w, maxTokens)}
}

func (b Budget) ratio() float64 {
	if b.Ratio <= 0 {
		return DefaultTokenRatio
	}
	return b.Ratio
}

// Room is how many counted tokens a prompt may hold, the answer's
// reserve kept; -1 when the window is unknown.
func (b Budget) Room() int {
	if !b.Window.Known() {
		return -1
	}
	return int(math.Floor(float64(b.Window.Tokens-b.Reserve) / b.ratio()))
}

// Need is the window, in the model's tokens, that a prompt of prompt
// counted tokens and the answer's reserve take.
func (b Budget) Need(prompt int) int {
	return int(math.Ceil(float64(prompt)*b.ratio())) + b.Reserve
}

// Chat is o for a call whose prompt counts prompt tokens: the reserve as
// max_tokens unless o sets its own, and the window the call needs, so
// that a server taking the window per request (Ollama) is asked for it.
func (b Budget) Chat(o ChatOptions, prompt int) ChatOptions {
	if o.MaxTokens == 0 {
		o.MaxTokens = b.Reserve
	}
	if prompt > 0 {
		o.ContextTokens = b.Need(prompt)
	}
	return o
}
