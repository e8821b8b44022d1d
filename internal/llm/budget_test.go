package llm_test

import (
	"testing"

	"github.com/kgrag/kgrag/internal/llm"
)

func TestAnswerReserve(t *testing.T) {
	tests := []struct {
		window, maxTokens, want int
	}{
		{0, 0, 2048},       // unknown: a bound all the same
		{2048, 0, 256},     // an eighth, at least 256
		{8192, 0, 1024},    // an eighth
		{131072, 0, 2048},  // at most 2048
		{2048, 100, 100},   // the flag wins
		{0, 5000, 5000},    // whatever the window
		{1000, 0, 256},     // at least 256 even in a tiny window
		{32768, 0, 2048},   // Gemma 3's trained length
		{16384, 0, 2048},   // an eighth is 2048
		{4096, 0, 512},     // Ollama's default
		{16385, 0, 2048},   // gpt-3.5-turbo
		{100000, 64, 64},   // the flag wins
		{3000, 0, 375},     // an eighth
		{2049, 0, 256},     // 256.1 rounds down to the floor
		{0, 0, 2048},       // again: unknown
		{6000, 0, 750},     // an eighth
		{20000, 0, 2048},   // capped
		{512, 0, 256},      // the floor even above half the window: fit refuses then
		{1 << 20, 0, 2048}, // capped
	}
	for _, tt := range tests {
		w := llm.Window{Tokens: tt.window}
		if got := llm.AnswerReserve(w, tt.maxTokens); got != tt.want {
			t.Errorf("AnswerReserve(window %d, max-tokens %d) = %d; want %d", tt.window, tt.maxTokens, got, tt.want)
		}
	}
}

func TestBudget(t *testing.T) {
	tests := []struct {
		name              string
		window            int
		ratio             float64
		maxTokens, prompt int
		room, need        int
	}{
		// (2048-256)/1.1 = 1629.1: the room rounds down, so that the
		// prompt's model tokens stay within it.
		{"llama-cpp-python 2048", 2048, 0, 0, 1000, 1629, 1100 + 256},
		{"ratio 1", 4096, 1, 0, 3000, 3584, 3512},
		{"flag's answer", 4096, 1, 96, 4000, 4000, 4096},
		{"learned ratio 1.3", 8192, 1.3, 0, 100, 5513, 130 + 1024},
		{"unknown window", 0, 0, 0, 10, -1, 11 + 2048},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := llm.NewBudget(llm.Window{Tokens: tt.window}, tt.ratio, tt.maxTokens)
			if got := b.Room(); got != tt.room {
				t.Errorf("Room = %d; want %d", got, tt.room)
			}
			if got := b.Need(tt.prompt); got != tt.need {
				t.Errorf("Need(%d) = %d; want %d", tt.prompt, got, tt.need)
			}
			if tt.window > 0 && b.Need(b.Room()) > tt.window {
				t.Errorf("Need(Room()) = %d; over the window %d", b.Need(b.Room()), tt.window)
			}
			o := b.Chat(llm.ChatOptions{}, tt.prompt)
			if o.MaxTokens != b.Reserve || o.ContextTokens != tt.need {
				t.Errorf("Chat = max_tokens %d, context %d; want %d, %d", o.MaxTokens, o.ContextTokens, b.Reserve, tt.need)
			}
			if o := b.Chat(llm.ChatOptions{MaxTokens: 7}, tt.prompt); o.MaxTokens != 7 {
				t.Errorf("Chat kept max_tokens %d; want the caller's 7", o.MaxTokens)
			}
		})
	}
}
