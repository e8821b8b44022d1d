package reports

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/jsonrepair"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llmcall"
	"github.com/kgrag/kgrag/internal/tokens"
	"github.com/kgrag/kgrag/prompts"
	"golang.org/x/sync/errgroup"
)

// Options tune report generation. DefaultOptions returns GraphRAG's
// defaults where it has them.
type Options struct {
	// MaxLength is the word limit the prompt asks for (GraphRAG
	// community_reports.max_length).
	MaxLength int
	// Concurrency bounds the model calls in flight.
	Concurrency int
	// Retries is how many times a community is asked again when its reply
	// cannot be read as a report (the prompt then says what was wrong).
	Retries int
	// JSONMode asks for JSON with Schema(MaxLength) (response_format). A server that
	// refuses it (HTTP 400 naming response_format) is asked again
	// without, for the rest of the run.
	JSONMode bool
	// ProseReports writes a report of a community whose every reply was
	// prose (no JSON at all): its last reply is the summary (proseReply).
	// Off, such a community gets no report, as in GraphRAG.
	ProseReports bool
	// Chat is passed to every call: model, temperature, max tokens.
	Chat llm.ChatOptions
	// Prompts holds the report template; nil is kgrag's own.
	Prompts *prompts.Set
}

// DefaultOptions returns GraphRAG's max_length (2000 words), one retry of
// an unreadable reply (GraphRAG makes none: it drops the report) and
// Concurrency 4 rather than GraphRAG's 25, which suits hosted APIs while
// a local server queues all but a few requests.
func DefaultOptions() Options {
	return Options{MaxLength: 2000, Concurrency: 4, Retries: 1, JSONMode: true, ProseReports: true}
}

// Validate reports the first option that cannot work.
func (o Options) Validate() error {
	switch {
	case o.MaxLength <= 0:
		return fmt.Errorf("reports: max length %d: must be > 0", o.MaxLength)
	case o.Concurrency <= 0:
		return fmt.Errorf("reports: concurrency %d: must be > 0", o.Concurrency)
	case o.Retries < 0:
		return fmt.Errorf("reports: retries %d: must be >= 0", o.Retries)
	}
	return nil
}

// Generator writes the community reports of one graph. It is safe for
// concurrent use, though one Run at a time is the intended use.
type Generator struct {
	b    *Builder
	chat llmcall.Chatter
	opts Options
}

// problemAllowance is the room a retry's note on what was wrong with the
// last reply (IndexReport.Problem) may take.
const problemAllowance = 128

// PromptTokens is the size of a report prompt without its context, with
// room for a retry's note: what a community's context must leave in the
// model's window. text is for the fast method's prompt (NewTextBuilder).
func (o Options) PromptTokens(enc *tokens.Encoder, text bool) (int, error) {
	name := promptGraph
	if text {
		name = promptText
	}
	p, err := o.Prompts.Render(name, prompts.IndexReport{MaxLength: o.MaxLength})
	if err != nil {
		return 0, err
	}
	return enc.Count(p) + problemAllowance, nil
}

// NewGenerator returns a Generator over the contexts of b.
func NewGenerator(b *Builder, chat llmcall.Chatter, opts Options) (*Generator, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if chat == nil {
		return nil, errors.New("reports: no model to write reports with")
	}
	return &Generator{b: b, chat: chat, opts: opts}, nil
}

// Progress is reported after each community is done.
type Progress struct {
	Done, Total int
	Community   string
	Level       int64
	// Outcome is the community's outcome (one of the Outcome constants).
	Outcome string
}

// Hooks receive what happens during a run. Progress may be nil; it is
// called from one goroutine at a time.
type Hooks struct {
	Progress func(Progress)
}

// Outcomes of a community.
const (
	OutcomeWritten  = "written"  // a report was written
	OutcomeProse    = "prose"    // every reply was prose: a report of it, with Options.ProseReports
	OutcomeUnusable = "unusable" // every reply was unreadable: no report
	OutcomeFailed   = "failed"   // the model call failed: no report
	OutcomeEmpty    = "empty"    // the context was empty: no call, no report
)

// Call is one model call.
type Call struct {
	// PromptTokens and CompletionTokens are kgrag's own counts (the
	// budget's encoding); Server is the usage the server reported.
	PromptTokens     int       `json:"prompt_tokens"`
	CompletionTokens int       `json:"completion_tokens"`
	Server           llm.Usage `json:"server_usage"`
	Millis           float64   `json:"ms"`
	// Fixes are the repairs the reply needed; Problem why it could not be
	// used ("" when it could).
	Fixes   []jsonrepair.Fix `json:"fixes,omitempty"`
	Problem string           `json:"problem,omitempty"`
	Err     string           `json:"error,omitempty"`
}

// CommunityResult is what happened to one community.
type CommunityResult struct {
	Community     string `json:"community"`
	Level         int64  `json:"level"`
	ContextTokens int    `json:"context_tokens"`
	// SubReports are the sub-communities whose reports stood in for their
	// local context.
	SubReports []string `json:"sub_reports,omitempty"`
	Outcome    string   `json:"outcome"`
	Calls      []Call   `json:"calls,omitempty"`
	err        error    // the error of a failed call
}

// Result is a finished run.
type Result struct {
	// Reports are the reports written, deepest level first, then by
	// community number.
	Reports     []graphrag.CommunityReport
	Communities []CommunityResult
	// Calls counts model calls (not the client's HTTP retries); Retries
	// those made again after an unreadable reply. Valid, Repaired and
	// Unusable count replies by how they parsed.
	Calls, Retries            int
	Valid, Repaired, Unusable int
	// Written, Prose, Failed and Empty count communities by outcome; a
	// community whose every reply was unusable counts in NoReport too.
	Written, Prose, Failed, Empty, NoReport int
	PromptTokens, CompletionTokens          int
	Server                                  llm.Usage
}

// Run writes a report for every community of the builder, bottom-up: a
// community whose local context fits the budget is asked for at once,
// while one over it waits until its sub-communities are done, since their
// reports may stand in for their local context. Concurrency calls run at
// a time, the deepest communities first.
//
// A community with an empty context gets no report and no call (GraphRAG
// calls the model with nothing). A reply that cannot be read as a report
// is asked for again, Retries times, with the prompt saying what was
// wrong; after that the community gets no report, as in GraphRAG. A call
// that the server refuses (4xx other than those below, 5xx, unusable 2xx)
// costs that community its report. Run fails when the context is
// cancelled, when the server cannot be reached, refuses the key or the
// model, or rate-limits past the client's retries, and when every call of
// the run fails; the error then wraps the llm error.
func (g *Generator) Run(ctx context.Context, h Hooks) (*Result, error) {
	comms := g.b.comms
	res := &Result{Communities: make([]CommunityResult, len(comms))}
	index := make(map[string]int, len(comms))
	for i, c := range comms {
		index[c.num] = i
	}

	// A community over the budget waits for its sub-communities.
	waiting := make([]int, len(comms))
	parentOf := make(map[int][]int)
	for i, c := range comms {
		if !c.exceeds {
			continue
		}
		for _, ch := range c.children {
			if j, ok := index[ch]; ok && comms[j].level == c.level+1 {
				waiting[i]++
				parentOf[j] = append(parentOf[j], i)
			}
		}
	}
	ready := make(chan int, len(comms))
	for i := range comms { // comms is deepest level first
		if waiting[i] == 0 {
			ready <- i
		}
	}

	var mu sync.Mutex // guards written, waiting, done and the hook
	written := make(map[string]string, len(comms))
	done := 0
	report := func(num string) (string, bool) {
		mu.Lock()
		defer mu.Unlock()
		s, ok := written[num]
		return s, ok
	}
	reports := make([]*graphrag.CommunityReport, len(comms))

	g2, gctx := errgroup.WithContext(ctx)
	g2.SetLimit(g.opts.Concurrency)
	for range comms {
		var i int
		select {
		case i = <-ready:
		case <-gctx.Done():
		}
		if gctx.Err() != nil {
			break
		}
		g2.Go(func() error {
			c := comms[i]
			cr, rep, err := g.community(gctx, c, report)
			res.Communities[i] = cr
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			if rep != nil {
				reports[i] = rep
				written[c.num] = rep.FullContent
			}
			for _, p := range parentOf[i] {
				if waiting[p]--; waiting[p] == 0 {
					ready <- p
				}
			}
			done++
			if h.Progress != nil {
				h.Progress(Progress{Done: done, Total: len(comms), Community: c.num, Level: c.level, Outcome: cr.Outcome})
			}
			return nil
		})
	}
	if err := g2.Wait(); err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	if err := context.Cause(ctx); err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}

	var firstErr error
	for i, cr := range res.Communities {
		res.tally(cr)
		if firstErr == nil {
			firstErr = cr.err
		}
		if reports[i] != nil {
			res.Reports = append(res.Reports, *reports[i])
		}
	}
	// A failed call ends its community's calls: all calls failed when
	// every community that made one failed.
	if res.Failed > 0 && res.Failed == res.Calls {
		return nil, fmt.Errorf("reports: all %d model calls failed; the first: %w", res.Calls, firstErr)
	}
	slices.SortStableFunc(res.Reports, func(x, y graphrag.CommunityReport) int {
		if c := cmp.Compare(y.Level, x.Level); c != 0 {
			return c
		}
		return compareNum(x.Community, y.Community)
	})
	return res, nil
}

// Attach sets the Report of each community of ds that r has a report
// for (matched by community number and level) and returns how many it
// set. ds is the dataset the Builder was made from; others are left as
// they are.
func (r *Result) Attach(ds *graphrag.Dataset) int {
	type key struct {
		num   string
		level int64
	}
	byKey := make(map[key]*graphrag.CommunityReport, len(r.Reports))
	for i := range r.Reports {
		byKey[key{r.Reports[i].Community, r.Reports[i].Level}] = &r.Reports[i]
	}
	n := 0
	for i := range ds.Communities {
		c := &ds.Communities[i]
		if rep := byKey[key{c.Community, c.Level}]; rep != nil {
			c.Report = rep
			n++
		}
	}
	return n
}

func (r *Result) tally(cr CommunityResult) {
	switch cr.Outcome {
	case OutcomeWritten:
		r.Written++
	case OutcomeProse:
		r.Prose++
	case OutcomeFailed:
		r.Failed++
	case OutcomeEmpty:
		r.Empty++
	case OutcomeUnusable:
		r.NoReport++
	}
	for i, c := range cr.Calls {
		r.Calls++
		if i > 0 {
			r.Retries++
		}
		r.PromptTokens += c.PromptTokens
		r.CompletionTokens += c.CompletionTokens
		r.Server.PromptTokens += c.Server.PromptTokens
		r.Server.CompletionTokens += c.Server.CompletionTokens
		r.Server.TotalTokens += c.Server.TotalTokens
		switch {
		case c.Err != "":
		case c.Problem != "":
			r.Unusable++
		case len(c.Fixes) > 0:
			r.Repaired++
		default:
			r.Valid++
		}
	}
}

// community writes one community's report: nil when it gets none. The
// error is one that must stop the run.
func (g *Generator) community(ctx context.Context, c *community, report func(string) (string, bool)) (CommunityResult, *graphrag.CommunityReport, error) {
	cc, _ := g.b.Context(c.num, report)
	cr := CommunityResult{Community: c.num, Level: c.level, ContextTokens: cc.Tokens, SubReports: cc.Reports}
	if strings.TrimSpace(cc.Text) == "" {
		cr.Outcome = OutcomeEmpty
		return cr, nil, nil
	}
	problem, prose := "", ""
	for attempt := 0; attempt <= g.opts.Retries; attempt++ {
		name := promptGraph
		if g.b.text {
			name = promptText
		}
		prompt, err := g.opts.Prompts.Render(name, prompts.IndexReport{Context: cc.Text, MaxLength: g.opts.MaxLength, Problem: problem})
		if err != nil {
			return cr, nil, err
		}
		reply, call, err := g.call(ctx, prompt)
		if err != nil {
			call.Err = err.Error()
			cr.Calls = append(cr.Calls, call)
			if llmcall.Fatal(err) || ctx.Err() != nil {
				return cr, nil, fmt.Errorf("community %s: %w", c.num, err)
			}
			cr.Outcome, cr.err = OutcomeFailed, err
			return cr, nil, nil
		}
		r, fixes, err := ParseReply(reply)
		call.Fixes = fixes
		if err != nil {
			var pe *ParseError
			errors.As(err, &pe)
			call.Problem = pe.Msg
			problem = pe.Msg
			cr.Calls = append(cr.Calls, call)
			if text := strings.TrimSpace(reply); text != "" && errors.Is(err, jsonrepair.ErrNoJSON) {
				prose = text
			}
			continue
		}
		cr.Calls = append(cr.Calls, call)
		cr.Outcome = OutcomeWritten
		rep := r.Report(c.src)
		return cr, &rep, nil
	}
	if prose != "" && g.opts.ProseReports {
		cr.Outcome = OutcomeProse
		rep := proseReply(c.src, prose).Report(c.src)
		return cr, &rep, nil
	}
	cr.Outcome = OutcomeUnusable
	return cr, nil, nil
}

// proseReply is the report of a community whose model answered in prose
// only: a small model's words about the community are still its best
// summary. The title is the community's, the rating 0 (so that global
// search ranks it below every report that was rated), no findings.
func proseReply(c *graphrag.Community, text string) Reply {
	title := c.Title
	if title == "" {
		title = "Community " + c.Community
	}
	return Reply{Title: title, Summary: text, Findings: []graphrag.Finding{},
		RatingExplanation: "Not rated: the model's reply was prose, not the JSON report asked for; it is the summary."}
}

// call makes one model call with prompt as the user message.
func (g *Generator) call(ctx context.Context, prompt string) (string, Call, error) {
	opts := g.opts.Chat
	opts.JSON = g.opts.JSONMode
	if opts.JSON {
		opts.JSONSchema = Schema(g.opts.MaxLength)
	}
	msgs := []llm.Message{{Role: llm.RoleUser, Content: prompt}}
	enc := g.b.enc
	c := Call{PromptTokens: enc.Count(prompt)}
	t := time.Now()
	reply, usage, err := g.chat.Chat(ctx, msgs, opts)
	c.Millis = float64(time.Since(t).Microseconds()) / 1000
	if err != nil {
		return "", c, err
	}
	c.CompletionTokens, c.Server = enc.Count(reply), usage
	return reply, c, nil
}
