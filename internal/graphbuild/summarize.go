package graphbuild

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llmcall"
	"github.com/kgrag/kgrag/internal/tokens"
	"github.com/kgrag/kgrag/prompts"
	"golang.org/x/sync/errgroup"
)

// GraphRAG 3.3.0's summarize_descriptions defaults.
const (
	// DefaultMaxLength is the word limit the prompt asks for (max_length).
	DefaultMaxLength = 500
	// DefaultMaxInputTokens bounds the prompt of one call
	// (max_input_tokens): descriptions beyond it go to further calls.
	DefaultMaxInputTokens = 4000
)

// Summarizer gives every merged entity and relationship one description,
// as GraphRAG 3.3.0's summarize_descriptions does:
//
//   - the descriptions are deduplicated and sorted (by code point);
//   - none gives "", one is taken as it is, without a call;
//   - two or more are summarised by the model, however short they are
//     (JoinUnder changes this);
//   - when they do not fit MaxInputTokens with the prompt, the first that
//     fit (plus the one that overflowed) are summarised, and the summary
//     joins the rest for the next call, until all were read. A call's
//     descriptions are listed sorted.
//
// Items are summarised Concurrency at a time, the calls of one item one
// after the other. GraphRAG also summarises the entities that Finalize
// drops (a title seen before with another type, an empty title) and throws
// the summaries away; Summarize makes no call for them.
//
// Where GraphRAG would keep an empty reply as the description, Summarize
// keeps the descriptions of that call joined by newlines (counted in
// Stats.EmptyReplies): small models do return nothing at times. Replies
// are trimmed of surrounding white space.
//
// Model and Encoder must be set; zero numbers mean the defaults above. A
// Summarizer is safe for concurrent use if Progress is.
type Summarizer struct {
	Model llmcall.Chatter
	// Chat is passed to every call: model, temperature, max tokens.
	Chat llm.ChatOptions
	// Encoder counts tokens for MaxInputTokens and JoinUnder.
	Encoder        *tokens.Encoder
	MaxLength      int
	MaxInputTokens int
	// JoinUnder, when above 0, is the NetworkX article's rule instead of
	// GraphRAG's: descriptions that together (joined by newlines) count at
	// most JoinUnder tokens are joined by newlines without a call (the NetworkX article
	// used 300).
	JoinUnder int
	// Concurrency bounds the calls in flight; below 1 means 1.
	Concurrency int
	// Progress, when set, is called with the items that needed the model
	// and how many of them are done, once with done 0 and after each item,
	// one call at a time, in order.
	Progress func(done, total int)
	// Prompts holds the summary template; nil is kgrag's own.
	Prompts *prompts.Set
}

// Stats says what Summarize did.
type Stats struct {
	// Items counts the entities and relationships given a description;
	// Summarised those that needed the model, Joined those that JoinUnder
	// let through without it.
	Items      int
	Summarised int
	Joined     int
	// Calls counts the model calls, EmptyReplies the blank replies among
	// them, and Usage adds up what the server reported.
	Calls        int
	EmptyReplies int
	Usage        llm.Usage
}

// item is one entity or relationship description to write.
type item struct {
	rel            bool
	title          string // entity
	source, target string // relationship
	descs          []string
	out            *string
}

func (it *item) String() string {
	if it.rel {
		return fmt.Sprintf("relationship %q -> %q", it.source, it.target)
	}
	return fmt.Sprintf("entity %q", it.title)
}

// Summarize sets the Description of every entity and relationship of g
// that Finalize keeps. The first failed call stops the others and is
// returned, naming the entity or relationship, with the Stats so far; the
// descriptions are then incomplete.
func (s *Summarizer) Summarize(ctx context.Context, g *Graph) (Stats, error) {
	var st Stats
	if s.Model == nil || s.Encoder == nil {
		return st, errors.New("graphbuild: summarizer needs a model and a token encoder")
	}
	overhead, err := s.PromptTokens()
	if err != nil {
		return st, err
	}
	todo := s.describe(g, &st)
	err = s.summarizeAll(ctx, todo, orDefault(s.MaxInputTokens, DefaultMaxInputTokens)-overhead, &st)
	return st, err
}

// describe sets the descriptions that need no call and returns the items
// that need the model.
func (s *Summarizer) describe(g *Graph, st *Stats) []*item {
	var todo []*item
	add := func(it *item) {
		st.Items++
		it.descs = distinctSorted(it.descs)
		switch {
		case len(it.descs) == 0:
			*it.out = ""
		case len(it.descs) == 1:
			*it.out = it.descs[0]
		case s.JoinUnder > 0 && s.Encoder.Count(strings.Join(it.descs, "\n")) <= s.JoinUnder:
			*it.out = strings.Join(it.descs, "\n")
			st.Joined++
		default:
			todo = append(todo, it)
		}
	}
	seen := make(map[string]struct{}, len(g.Entities))
	for i := range g.Entities {
		e := &g.Entities[i]
		if _, dup := seen[e.Title]; dup || e.Title == "" {
			continue
		}
		seen[e.Title] = struct{}{}
		add(&item{title: e.Title, descs: e.Descriptions, out: &e.Description})
	}
	for i := range g.Relationships {
		r := &g.Relationships[i]
		add(&item{rel: true, source: r.Source, target: r.Target, descs: r.Descriptions, out: &r.Description})
	}
	st.Summarised = len(todo)
	return todo
}

// summarizeAll summarises the items, Concurrency at a time, each call
// with budget tokens for descriptions.
func (s *Summarizer) summarizeAll(ctx context.Context, todo []*item, budget int, st *Stats) error {
	maxLength := orDefault(s.MaxLength, DefaultMaxLength)
	var mu sync.Mutex // guards st and done, orders Progress
	done := 0
	if s.Progress != nil {
		s.Progress(0, len(todo))
	}
	call := func(ctx context.Context, it *item, descs []string) (string, error) {
		prompt, err := s.Prompts.Render("index_summarize", prompts.IndexSummarize{Title: it.title,
			Source: it.source, Target: it.target, Descriptions: descs, MaxLength: maxLength})
		if err != nil {
			return "", err
		}
		reply, usage, err := s.Model.Chat(ctx, []llm.Message{{Role: llm.RoleUser, Content: prompt}}, s.Chat)
		mu.Lock()
		defer mu.Unlock()
		st.Calls++
		st.Usage.PromptTokens += usage.PromptTokens
		st.Usage.CompletionTokens += usage.CompletionTokens
		st.Usage.TotalTokens += usage.TotalTokens
		if err != nil {
			return "", err
		}
		reply = strings.TrimSpace(reply)
		if reply == "" {
			st.EmptyReplies++
			reply = strings.Join(descs, "\n")
		}
		return reply, nil
	}

	eg, egctx := errgroup.WithContext(ctx)
	eg.SetLimit(max(s.Concurrency, 1))
	for _, it := range todo {
		if egctx.Err() != nil {
			break
		}
		eg.Go(func() error {
			if egctx.Err() != nil { // another item failed while this one waited
				return nil
			}
			out, err := s.rounds(egctx, it, budget, call)
			if err != nil {
				return fmt.Errorf("graphbuild: summarize %s: %w", it, err)
			}
			*it.out = out
			if s.Progress != nil {
				mu.Lock()
				done++
				s.Progress(done, len(todo))
				mu.Unlock()
			}
			return nil
		})
	}
	if err := eg.Wait(); err != nil {
		return err
	}
	if err := context.Cause(ctx); err != nil {
		return fmt.Errorf("graphbuild: summarize: %w", err)
	}
	return nil
}

// PromptTokens is the token count of the summary prompt without a name
// and without descriptions: what the budget of a call (MaxInputTokens)
// holds besides the descriptions, as GraphRAG subtracts the count of its
// prompt template with the placeholders unfilled. It needs Encoder.
func (s *Summarizer) PromptTokens() (int, error) {
	empty, err := s.Prompts.Render("index_summarize", prompts.IndexSummarize{MaxLength: orDefault(s.MaxLength, DefaultMaxLength)})
	if err != nil {
		return 0, fmt.Errorf("graphbuild: %w", err)
	}
	return s.Encoder.Count(empty), nil
}

// rounds summarises it.descs (sorted, at least two) in as many calls as
// the budget (tokens for descriptions in one prompt) needs, in GraphRAG's
// order: descriptions are added until one overflows the budget, and that
// batch (overflowing one included, and always at least two) is summarised;
// its summary starts the next batch.
func (s *Summarizer) rounds(ctx context.Context, it *item, budget int,
	call func(context.Context, *item, []string) (string, error)) (string, error) {
	left := budget
	var batch []string
	var result string
	for i, d := range it.descs {
		left -= s.Encoder.Count(d)
		batch = append(batch, d)
		last := i == len(it.descs)-1
		if !(left < 0 && len(batch) > 1 || last) {
			continue
		}
		slices.Sort(batch) // a summary joins the others in sorted place
		var err error
		if result, err = call(ctx, it, batch); err != nil {
			return "", err
		}
		if !last {
			batch = []string{result}
			left = budget - s.Encoder.Count(result)
		}
	}
	return result, nil
}

// distinctSorted returns the distinct strings of ss in byte order (which
// for UTF-8 is code point order, Python's), in a new slice.
func distinctSorted(ss []string) []string {
	out := slices.Clone(ss)
	slices.Sort(out)
	return slices.Compact(out)
}

func orDefault(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}
