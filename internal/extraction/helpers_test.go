package extraction_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kgrag/kgrag/internal/extraction"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/llmcall"
	"github.com/kgrag/kgrag/internal/tokens"
)

// carolText is a passage of the Christmas Carol.
const carolText = "Marley was dead: to begin with. Scrooge and he were partners for I don't know how many years. " +
	"Scrooge was his sole executor, his sole administrator, his sole residuary legatee."

// esgText is a passage of the kind the NetworkX article reads, and esgTypes
// its entity types, spelling kept.
const esgText = "PACCAR has set a goal to reduce the CO2 emissions of its facilities worldwide by 35% by 2030, " +
	"from a 2019 baseline, announced in 2021."

var esgTypes = []string{"Scope 1 Emmission", "Scope 2 Emmission", "Scope 3 Emmission", "Energy reduction", "Co2",
	"Operational emmision", "Carbon", "Carbon Emmision reduction", "Target Announcement Year", "Target Baseline Year",
	"Target End/ Horizon Year", "Percentage Reduction (%)",
	"Percentage Reduction comprising Carbon Offsets or Carbon Removals (%)",
	"Details of Carbon Offsets or Carbon Removals to be used",
	"Target Type (Absolute, Intensity, or Other)(Please specify further detail if Other)",
	"Target Units (Relevant for 'Intensity' target type)"}

// loadEncoder loads o200k_base once for the package's tests (a fifth of
// a second each time otherwise).
var loadEncoder = sync.OnceValues(func() (*tokens.Encoder, error) { return tokens.NewEncoder(tokens.EncodingO200K) })

func encoder(t testing.TB) *tokens.Encoder {
	t.Helper()
	enc, err := loadEncoder()
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

// client talks to srv without retries, so that injected failures fail a
// call at once.
func client(t testing.TB, srv *llmtest.Server) *llm.Client {
	t.Helper()
	c, err := llm.New(llm.Config{BaseURL: srv.URL(), ChatModel: "test-chat", HTTPClient: srv.Client(),
		Retries: -1, Backoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func extractor(t testing.TB, model llmcall.Chatter, opts extraction.Options) *extraction.Extractor {
	t.Helper()
	x, err := extraction.New(model, encoder(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// extractQueued extracts carolText with up to maxGleanings rounds from a
// server that answers replies in turn.
func extractQueued(t *testing.T, maxGleanings int, replies ...string) (*extraction.Result, *llmtest.Server) {
	t.Helper()
	srv := llmtest.Start(t, llmtest.Config{})
	srv.Enqueue(replies...)
	opts := extraction.DefaultOptions()
	opts.MaxGleanings = maxGleanings
	res, err := extractor(t, client(t, srv), opts).Extract(context.Background(), extraction.Unit{ID: "u", Text: carolText})
	if err != nil {
		t.Fatal(err)
	}
	return res, srv
}

// ent and rel write well-formed records.
func ent(name, typ, desc string) string {
	return fmt.Sprintf(`("entity"<|>%s<|>%s<|>%s)`, name, typ, desc)
}

func rel(src, dst, desc string, w int) string {
	return fmt.Sprintf(`("relationship"<|>%s<|>%s<|>%s<|>%d)`, src, dst, desc, w)
}

func claim(subject, object, typ, desc string) string {
	return fmt.Sprintf("(%s<|>%s<|>%s<|>TRUE<|>NONE<|>NONE<|>%s<|>%s)", subject, object, typ, desc, desc)
}

// reply joins records as the prompt asks: "##" lines between them and the
// completion delimiter at the end.
func reply(records ...string) string {
	return strings.Join(records, "\n##\n") + "\n<|COMPLETE|>"
}

// Kinds of message in an extraction conversation, told apart by the
// prompts' wording.
const (
	msgFirst    = "first"
	msgContinue = "continue"
	msgLoop     = "loop"
)

func kindOf(content string) string {
	switch {
	case strings.Contains(content, "were left out of your answer"):
		return msgContinue
	case strings.Contains(content, "Answer Y if there are"):
		return msgLoop
	}
	return msgFirst
}

// turn is what a scripted model is asked: the stage, the unit's text (as
// the first prompt holds it), the kind of the last message and its number
// among messages of that kind (0 for the first prompt, 1 for the first
// continue prompt or loop question, ...).
type turn struct {
	stage, text, kind string
	n                 int
}

// scripted makes srv answer extraction conversations with answer.
func scripted(srv *llmtest.Server, answer func(turn) string) {
	srv.Respond(func(r llmtest.Request) (string, bool) {
		first := r.Messages[0].Content
		tu := turn{stage: extraction.StageGraph, kind: kindOf(r.Messages[len(r.Messages)-1].Content)}
		if strings.Contains(first, "find claims") {
			tu.stage = extraction.StageClaims
		}
		i := strings.LastIndex(first, "Passage:\n")
		j := strings.LastIndex(first, "\n\nOutput:")
		if i >= 0 && j > i {
			tu.text = first[i+len("Passage:\n") : j]
		}
		for _, m := range r.Messages {
			if m.Role == "user" && kindOf(m.Content) == tu.kind {
				tu.n++
			}
		}
		if tu.kind == msgFirst {
			tu.n = 0
		}
		return answer(tu), true
	})
}

// fakeModel is an in-process Chatter: it answers from a function of the
// call number (from 0) and the messages, and records the calls.
type fakeModel struct {
	mu     sync.Mutex
	calls  [][]llm.Message
	answer func(call int, msgs []llm.Message) (string, error)
}

func (f *fakeModel) Chat(_ context.Context, msgs []llm.Message, _ llm.ChatOptions) (string, llm.Usage, error) {
	f.mu.Lock()
	n := len(f.calls)
	f.calls = append(f.calls, append([]llm.Message(nil), msgs...))
	f.mu.Unlock()
	s, err := f.answer(n, msgs)
	return s, llm.Usage{}, err
}

var errModel = errors.New("model failure")
