package indexer

import (
	"context"
	"errors"
	"fmt"

	"github.com/kgrag/kgrag/internal/extraction"
	"github.com/kgrag/kgrag/internal/graphbuild"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/reports"
)

// Every stage's prompt is fitted to the chat model's window
// (Options.Window), so that no server cuts one, with an error or
// silently: the chunks are made small enough for the extraction prompt
// around them (GraphRAG's 1,200 tokens do not fit a 2,048-token window
// with its prompt), a gleaning round that would overflow is not asked,
// and the summaries' and reports' inputs are cut to what is left.

// minChunk is the smallest chunk worth an extraction call: a window that
// leaves less beside the prompt is an error.
const minChunk = 100

// textSlack is the spare room beside a chunk (fitExtraction).
const textSlack = 8

// WindowTooSmallError: the window cannot hold a stage's prompt with
// minChunk tokens of text and the answer's reserve.
type WindowTooSmallError struct {
	Window         llm.Window
	Stage          string
	Prompt, Answer int
}

func (e *WindowTooSmallError) Error() string {
	return fmt.Sprintf("indexer: the chat model's window, %s, cannot hold the %s prompt (%d tokens), %d tokens of text and %d for the answer: "+
		"serve the model with a longer context (--chat-context-tokens says it), lower --max-tokens, or shorten the prompt (kgrag prompt-tune)",
		e.Window, e.Stage, e.Prompt, minChunk, e.Answer)
}

// fitWindow cuts r's options to the chat window, noting what it cut in
// r.notes. Without a known window, or a model, nothing changes.
func (r *run) fitWindow() error {
	w := r.opts.Window
	if !w.Known() || !r.callsModel() {
		return nil
	}
	b := llm.NewBudget(w, r.opts.WindowRatio, r.opts.MaxTokens)
	r.budget = &b
	room := b.Room()
	// An answer always ends: the reserve is sent as max_tokens.
	if r.opts.MaxTokens == 0 {
		r.opts.MaxTokens = b.Reserve
	}
	if r.opts.Extraction.Chat.MaxTokens == 0 {
		r.opts.Extraction.Chat.MaxTokens = b.Reserve
	}
	if r.opts.Method != MethodFast {
		if err := r.fitExtraction(b, room); err != nil {
			return err
		}
		r.summaryInput = min(graphbuild.DefaultMaxInputTokens, room)
		if room < graphbuild.DefaultMaxInputTokens {
			r.notef("summaries: each call's input (prompt and descriptions) cut from %d to %d tokens", graphbuild.DefaultMaxInputTokens, room)
		}
	}
	if r.opts.NoReports {
		return nil
	}
	ro := reports.DefaultOptions()
	ro.Prompts = r.opts.Prompts
	if r.opts.ReportMaxLength > 0 {
		ro.MaxLength = r.opts.ReportMaxLength
	}
	oh, err := ro.PromptTokens(r.enc, r.opts.Method == MethodFast)
	if err != nil {
		return fmt.Errorf("indexer: report prompt: %w", err)
	}
	if room-oh < minChunk {
		return &WindowTooSmallError{Window: w, Stage: StageReports, Prompt: oh, Answer: b.Reserve}
	}
	r.reportInput = min(reports.DefaultMaxInputTokens, room-oh)
	if r.reportInput < reports.DefaultMaxInputTokens {
		r.notef("reports: each community's context cut from %d to %d tokens", reports.DefaultMaxInputTokens, r.reportInput)
	}
	return nil
}

// fitExtraction makes the chunks fit the extraction prompt in room
// tokens, and bounds the gleaning conversations to room.
func (r *run) fitExtraction(b llm.Budget, room int) error {
	x, err := extraction.New(noChat{}, r.enc, r.opts.Extraction)
	if err != nil {
		return fmt.Errorf("indexer: extraction: %w", err)
	}
	oh, err := x.PromptTokens()
	if err != nil {
		return fmt.Errorf("indexer: extraction: %w", err)
	}
	// A few tokens spare: tokens merge differently where the text
	// meets the prompt than in the chunk alone.
	free := room - oh - textSlack
	if free < minChunk {
		return &WindowTooSmallError{Window: b.Window, Stage: StageExtraction, Prompt: oh, Answer: b.Reserve}
	}
	r.opts.Extraction.MaxPromptTokens = room
	c := &r.opts.Chunk
	if c.Size > free {
		overlap := c.Overlap * free / c.Size
		r.notef("chunks: %d tokens (overlap %d) instead of %d (overlap %d), beside the extraction prompt's %d",
			free, overlap, c.Size, c.Overlap, oh)
		c.Size, c.Overlap = free, overlap
	}
	return nil
}

// notef adds a note on what fitting the window cut, for the summary's
// Degraded list.
func (r *run) notef(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format+" to fit the chat model's window of %s", append(args, r.opts.Window)...))
}

// noChat stands for the model where only the extraction's prompts are
// wanted.
type noChat struct{}

func (noChat) Chat(context.Context, []llm.Message, llm.ChatOptions) (string, llm.Usage, error) {
	return "", llm.Usage{}, errors.New("indexer: no model")
}
