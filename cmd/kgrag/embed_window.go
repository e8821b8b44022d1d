package main

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/tokens"
)

// embedEncoding counts the tokens of the windows texts are split into.
const embedEncoding = tokens.EncodingCL100K

// embedRatio turns a window in the model's tokens (a flag's, a server's)
// into tiktoken's, as it does for chat models.
const embedRatio = llm.DefaultTokenRatio

// embedSize is the size, in tokens of enc, of the windows longer texts
// are embedded in, and the window it comes from (for messages); 0 splits
// nothing. The window is --embed-max-tokens, else one measured before for
// this server and model (kept in the window cache), else measured now by
// embedindex.ProbeWindow on the longest text of each table (probes holds
// them): where a model cuts depends on how many of its tokens a text
// makes, so the densest table sets the window. A model that read every
// probe whole needs no split for texts up to that length.
func embedSize(ctx context.Context, client *llm.Client, e embedindex.Embedder, enc *tokens.Encoder, probes []string) (int, llm.Window, error) {
	w, err := client.Window(ctx, llm.WindowEmbed, e.Model())
	if err != nil {
		return 0, w, err
	}
	fromModelTokens := func(w llm.Window) int {
		return max(int(math.Floor(float64(w.Tokens)/embedRatio))-2, 16)
	}
	if w.Source == "--embed-max-tokens" {
		return fromModelTokens(w), w, nil
	}
	n := 0
	for _, p := range probes {
		n = max(n, enc.Count(p))
	}
	if m, ok := client.Measured(llm.WindowEmbed, e.Model()); ok && m.Encoding == enc.Name() && (!m.AtLeast || m.Tokens >= n) {
		return measuredSize(m, n), m, nil
	}
	var best *embedindex.Probe
	calls := 0
	for _, text := range probes {
		if best != nil && !best.AtLeast && enc.Count(text) <= best.Tokens {
			continue // read whole where the window is already known to end
		}
		p, err := embedindex.ProbeWindow(ctx, e, enc, text, refusedForLength)
		calls += p.Calls
		if err != nil {
			if ctx.Err() != nil {
				return 0, w, ctx.Err()
			}
			if w.Known() {
				w.Source += fmt.Sprintf("; measuring it failed (%v)", err)
				return fromModelTokens(w), w, nil
			}
			return 0, w, fmt.Errorf("embed: measure the embedding model's window: %w", err)
		}
		switch {
		case best == nil, best.AtLeast && (!p.AtLeast || p.Tokens > best.Tokens), !p.AtLeast && p.Tokens < best.Tokens:
			best = &p
		}
	}
	if best == nil {
		return 0, w, nil
	}
	m := llm.Window{Model: e.Model(), Kind: llm.WindowEmbed, Tokens: best.Tokens, Trained: w.Trained, Server: w.Server,
		Encoding: enc.Name(), AtLeast: best.AtLeast}
	switch {
	case best.AtLeast:
		m.Source = fmt.Sprintf("measured: the model read a text of %d tokens whole", best.Tokens)
	case best.Refuses:
		m.Source = fmt.Sprintf("measured: the server refuses longer texts (%d calls)", calls)
	default:
		m.Source = fmt.Sprintf("measured: the model cuts longer texts, giving every longer prefix the same vector (%d calls)", calls)
	}
	if w.Known() {
		m.Source += "; the server says " + fmt.Sprint(w.Tokens) + " of its own tokens"
	}
	// A cache that cannot be written only means measuring again.
	_ = client.Remember(m)
	return measuredSize(m, n), m, nil
}

// measuredSize is the split size for a measured window: a twentieth off
// (the cut falls between the model's tokens, not tiktoken's), nothing
// when the model read texts as long as any to embed.
func measuredSize(m llm.Window, longest int) int {
	if m.AtLeast && m.Tokens >= longest {
		return 0
	}
	return max(m.Tokens*19/20, 16)
}

// refusedForLength says err is a server's refusal of a text too long for
// its window.
func refusedForLength(err error) bool {
	var we *llm.WindowError
	return errors.As(err, &we)
}

// longestTexts are the longest text of each table to embed, by bytes:
// the probes of the embedding window.
func longestTexts(tables ...[]string) []string {
	var out []string
	for _, ts := range tables {
		longest := ""
		for _, t := range ts {
			if len(t) > len(longest) {
				longest = t
			}
		}
		out = append(out, longest)
	}
	return out
}
