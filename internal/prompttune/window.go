package prompttune

import (
	"fmt"
	"strings"

	"github.com/kgrag/kgrag/internal/extraction/tuples"
	"github.com/kgrag/kgrag/prompts"
)

// fillSlack is room kept for what a step's prompt holds besides the
// sample and that is found as the tuning goes (domain, persona, entity
// types): at most a few hundred characters each.
const fillSlack = 256

// minSample is the fewest tokens of corpus text worth a question.
const minSample = 50

// WindowTooSmallError: the chat window cannot hold a tuning prompt with
// minSample tokens of sample text and the answer's reserve.
type WindowTooSmallError struct {
	Window         string
	Prompt, Answer int
}

func (e *WindowTooSmallError) Error() string {
	return fmt.Sprintf("prompttune: the chat model's window, %s, cannot hold a tuning prompt (%d tokens with what the tuning finds), %d tokens of sample text and %d for the answer: "+
		"serve the model with a longer context (--chat-context-tokens says it) or lower --max-tokens", e.Window, e.Prompt, minSample, e.Answer)
}

// fitWindow cuts the sample, the example passages and the tuned
// extraction prompt to Options.Budget's window, each cut a warning.
// Without a known window nothing changes.
func (t *tuner) fitWindow() error {
	b := t.opts.Budget
	room := b.Room()
	if room < 0 {
		return nil
	}
	// The largest prompt around the sample, with the findings it will
	// hold (the persona, the domain, the entity types) allowed for.
	var oh int
	for _, p := range []struct {
		name string
		data any
	}{
		{"tune_domain", prompts.TuneSample{}},
		{"tune_language", prompts.TuneSample{}},
		{"tune_entity_types", prompts.TuneEntityTypes{Max: t.opts.MaxEntityTypes}},
		{"tune_rating", prompts.TuneRole{}},
		{"tune_role", prompts.TuneRole{}},
	} {
		n, err := t.promptTokens(p.name, p.data)
		if err != nil {
			return err
		}
		oh = max(oh, n)
	}
	oh += fillSlack
	if free := room - oh; free < minSample {
		return &WindowTooSmallError{Window: b.Window.String(), Prompt: oh, Answer: b.Reserve}
	} else if free < t.opts.SampleTokens {
		t.warn("window: the sample sent with each question cut from %d to %d tokens to fit the chat model's window of %s", t.opts.SampleTokens, free, b.Window)
		t.opts.SampleTokens = free
	}
	d := tuples.DefaultDelimiters()
	data := prompts.TuneExample{RecordFormat: prompts.RecordFormat{Tuple: d.Tuple, Record: d.Record, Completion: d.Completion}}
	var ex int
	for _, name := range []string{"tune_example", "tune_example_list"} {
		n, err := t.promptTokens(name, data)
		if err != nil {
			return err
		}
		ex = max(ex, n)
	}
	ex += fillSlack
	if free := room - ex; free < t.opts.ExampleTokens {
		if free < minSample {
			return &WindowTooSmallError{Window: b.Window.String(), Prompt: ex, Answer: b.Reserve}
		}
		t.warn("window: example passages cut from %d to %d tokens to fit the chat model's window of %s", t.opts.ExampleTokens, free, b.Window)
		t.opts.ExampleTokens = free
	}
	// kgrag index sends each chunk inside the tuned extraction prompt:
	// half the room is left for the chunk.
	if half := room / 2; half < t.opts.MaxPromptTokens {
		t.warn("window: the extraction prompt kept within %d tokens instead of %d, half of what the chat model's window of %s leaves a prompt, so that kgrag index has room for its chunks",
			half, t.opts.MaxPromptTokens, b.Window)
		t.opts.MaxPromptTokens = half
	}
	return nil
}

// promptTokens counts the tokens of a tune_ template filled with data.
func (t *tuner) promptTokens(name string, data any) (int, error) {
	p, err := prompts.Render(name, data)
	if err != nil {
		return 0, fmt.Errorf("prompttune: %w", err)
	}
	return t.enc.Count(strings.TrimSpace(p)), nil
}
