package extraction

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/kgrag/kgrag/internal/extraction/tuples"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llmcall"
	"github.com/kgrag/kgrag/internal/tokens"
	"github.com/kgrag/kgrag/prompts"
)

// Extractor holds the settings and the fixed prompts of an extraction
// run. It is safe for concurrent use if its Chatter is.
type Extractor struct {
	model  llmcall.Chatter
	enc    *tokens.Encoder
	opts   Options
	delims tuples.Delimiters
	format prompts.RecordFormat
	// The gleaning prompts, the same for every unit.
	graphContinue, graphLoop   string
	claimsContinue, claimsLoop string
}

// New returns an Extractor that calls model with opts. enc counts tokens
// for Stats; nil leaves kgrag's own counts at zero (the server's usage is
// still added up).
func New(model llmcall.Chatter, enc *tokens.Encoder, opts Options) (*Extractor, error) {
	if model == nil {
		return nil, errors.New("extraction: no model")
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts.EntityTypes = slices.Clone(opts.EntityTypes)
	opts.Claims.EntitySpecs = slices.Clone(opts.Claims.EntitySpecs)
	d := tuples.DefaultDelimiters()
	x := &Extractor{model: model, enc: enc, opts: opts, delims: d,
		format: prompts.RecordFormat{Tuple: d.Tuple, Record: d.Record, Completion: d.Completion}}
	glean := prompts.IndexGlean{RecordFormat: x.format}
	for _, p := range []struct {
		name string
		out  *string
	}{
		{"index_extract_continue", &x.graphContinue},
		{"index_extract_loop", &x.graphLoop},
		{"index_claims_continue", &x.claimsContinue},
		{"index_claims_loop", &x.claimsLoop},
	} {
		s, err := opts.Prompts.Render(p.name, glean)
		if err != nil {
			return nil, err
		}
		*p.out = s
	}
	return x, nil
}

// Options returns the extractor's settings.
func (x *Extractor) Options() Options { return x.opts }

// Extract runs the graph conversation, then the claim conversation when
// claims are on, for one text unit, the way GraphRAG 3.3.0's
// GraphExtractor and ClaimExtractor do (see the package doc). A text that
// is blank costs no call and gives no records.
//
// A failed call ends the unit: the error is a *UnitError naming the unit,
// the stage and the round, and the Result (never nil) holds what was read
// before it, with Err set to the same error.
func (x *Extractor) Extract(ctx context.Context, u Unit) (*Result, error) {
	start := time.Now()
	res := &Result{TextUnitID: u.ID}
	defer func() { res.Elapsed = time.Since(start) }()
	if strings.TrimFunc(u.Text, pyIsSpace) == "" {
		return res, nil
	}

	first, err := x.graphPrompt(u)
	if err != nil {
		return res, err
	}
	graph := conversation{stage: StageGraph, first: first, cont: x.graphContinue, loop: x.graphLoop,
		maxGleanings: x.opts.MaxGleanings, stats: &res.Graph,
		parse: func(round int, reply string) {
			p := tuples.ParseGraph(reply, x.delims)
			res.Entities = append(res.Entities, p.Entities...)
			res.Relationships = append(res.Relationships, p.Relationships...)
			res.Graph.Entities += len(p.Entities)
			res.Graph.Relationships += len(p.Relationships)
			res.addParse(&res.Graph, StageGraph, round, p.Records, p.Repairs, p.Dropped)
		}}
	if err := x.converse(ctx, u.ID, graph); err != nil {
		res.Err = err
		return res, err
	}
	if !x.opts.Claims.Enabled {
		return res, nil
	}

	c := x.opts.Claims
	if first, err = x.claimsPrompt(u); err != nil {
		return res, err
	}
	claims := conversation{stage: StageClaims, first: first, cont: x.claimsContinue, loop: x.claimsLoop,
		maxGleanings: c.MaxGleanings, stats: &res.ClaimStats,
		parse: func(round int, reply string) {
			p := tuples.ParseClaims(reply, x.delims)
			res.Claims = append(res.Claims, p.Claims...)
			res.ClaimStats.Claims += len(p.Claims)
			res.addParse(&res.ClaimStats, StageClaims, round, p.Records, p.Repairs, p.Dropped)
		}}
	if err := x.converse(ctx, u.ID, claims); err != nil {
		res.Err = err
		return res, err
	}
	return res, nil
}

// addParse counts what the parser read in one reply and keeps its drops.
func (r *Result) addParse(st *Stats, stage string, round, records int, rep map[tuples.Repair]int, dropped []tuples.Dropped) {
	st.Records += records
	st.Dropped += len(dropped)
	st.addRepairs(rep)
	for _, d := range dropped {
		r.Dropped = append(r.Dropped, Dropped{Stage: stage, Round: round, Dropped: d})
	}
}

// conversation is one stage's exchange with the model.
type conversation struct {
	stage             string
	first, cont, loop string
	maxGleanings      int
	stats             *Stats
	parse             func(round int, reply string)
}

// converse runs a conversation as GraphExtractor._process_document and
// ClaimExtractor._process_document build it: the prompt; then, for each
// of up to maxGleanings rounds, the continue prompt and, unless it was
// the last round, the loop question, whose answer ends the rounds unless
// it is yes. Each reply is parsed on its own, as it comes.
//
// As in GraphRAG, the loop question stays in the history but its answer
// does not, so a further round's history has the loop question and the
// continue prompt as two user messages in a row.
func (x *Extractor) converse(ctx context.Context, unit string, c conversation) *UnitError {
	start := time.Now()
	defer func() { c.stats.Elapsed += time.Since(start) }()
	h := history{enc: x.enc}
	h.add(llm.RoleUser, c.first)
	round := 0
	fail := func(err error) *UnitError {
		return &UnitError{TextUnitID: unit, Stage: c.stage, Round: round, Err: err}
	}
	reply, err := x.call(ctx, &h, c.stats)
	if err != nil {
		return fail(err)
	}
	c.parse(round, reply)
	h.add(llm.RoleAssistant, reply)
	for round = 1; round <= c.maxGleanings; round++ {
		if !x.fits(&h, c.cont) {
			c.stats.GleaningsSkipped++
			break
		}
		h.add(llm.RoleUser, c.cont)
		reply, err := x.call(ctx, &h, c.stats)
		if err != nil {
			return fail(err)
		}
		c.stats.Gleanings++
		c.parse(round, reply)
		h.add(llm.RoleAssistant, reply)
		if round == c.maxGleanings {
			break
		}
		// The loop question leads to one more round, whose continue
		// prompt and answer must fit too.
		if !x.fits(&h, c.loop+c.cont) {
			c.stats.GleaningsSkipped++
			break
		}
		h.add(llm.RoleUser, c.loop)
		answer, err := x.call(ctx, &h, c.stats)
		if err != nil {
			return fail(err)
		}
		c.stats.LoopChecks++
		yes, clear := readAnswer(answer)
		if !clear {
			c.stats.UnclearAnswers++
		}
		if !yes {
			break
		}
	}
	return nil
}

func (x *Extractor) graphPrompt(u Unit) (string, error) {
	// GraphRAG strips the text for the graph (_run_extract_graph) but
	// not for claims.
	return x.opts.Prompts.Render("index_extract", prompts.IndexExtract{RecordFormat: x.format,
		EntityTypes: x.opts.EntityTypes, Text: strings.TrimFunc(u.Text, pyIsSpace)})
}

func (x *Extractor) claimsPrompt(u Unit) (string, error) {
	c := x.opts.Claims
	return x.opts.Prompts.Render("index_claims", prompts.IndexClaims{RecordFormat: x.format,
		EntitySpecs: c.EntitySpecs, ClaimDescription: c.Description, Text: u.Text})
}

// UnitPlan is what Extract of one unit will cost, known before any call:
// the calls' range (the model's answers to the loop question decide
// where in it), and the first call of each conversation exactly.
type UnitPlan struct {
	MinCalls, MaxCalls int
	// First holds the first request of each conversation (graph, then
	// claims when they are on), as the model will receive it, so that a
	// caller can look it up in a reply cache.
	First [][]llm.Message
	// FirstTokens counts the first requests' prompts with the
	// Extractor's encoding (0 without one).
	FirstTokens int
}

// Plan tells what Extract(u) will ask of the model, calling nothing.
func (x *Extractor) Plan(u Unit) (UnitPlan, error) {
	var p UnitPlan
	if strings.TrimFunc(u.Text, pyIsSpace) == "" {
		return p, nil
	}
	add := func(prompt string, gleanings int) {
		p.First = append(p.First, []llm.Message{{Role: llm.RoleUser, Content: prompt}})
		if x.enc != nil {
			p.FirstTokens += x.enc.Count(prompt)
		}
		lo, hi := conversationCalls(gleanings)
		p.MinCalls += lo
		p.MaxCalls += hi
	}
	first, err := x.graphPrompt(u)
	if err != nil {
		return p, err
	}
	add(first, x.opts.MaxGleanings)
	if x.opts.Claims.Enabled {
		if first, err = x.claimsPrompt(u); err != nil {
			return p, err
		}
		add(first, x.opts.Claims.MaxGleanings)
	}
	return p, nil
}

// conversationCalls is the range of calls converse makes with gleanings
// rounds: the first call, the first round's continue call always, and
// then a loop question and a continue call per further round, the model's
// first "no" ending it.
func conversationCalls(gleanings int) (lo, hi int) {
	switch {
	case gleanings <= 0:
		return 1, 1
	case gleanings == 1:
		return 2, 2
	}
	return 3, 2 * gleanings
}

// call sends the history and counts the call.
func (x *Extractor) call(ctx context.Context, h *history, st *Stats) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	st.Calls++
	st.PromptTokens += h.tokens
	// Clipped, so that a Chatter appending to the slice cannot write
	// into the history's spare capacity.
	reply, usage, err := x.model.Chat(ctx, slices.Clip(h.msgs), x.opts.Chat)
	st.Server.PromptTokens += usage.PromptTokens
	st.Server.CompletionTokens += usage.CompletionTokens
	st.Server.TotalTokens += usage.TotalTokens
	if err != nil {
		return "", err
	}
	if x.enc != nil {
		st.CompletionTokens += x.enc.Count(reply)
	}
	return reply, nil
}

// fits reports whether h with one more message of text still leaves the
// extraction's reply its room under MaxPromptTokens; always, without a
// bound or an encoder.
func (x *Extractor) fits(h *history, text string) bool {
	if x.opts.MaxPromptTokens <= 0 || x.enc == nil {
		return true
	}
	// The history's own replies show what a next one may take.
	return h.tokens+x.enc.Count(text)+llmcall.MessageTokens*(len(h.msgs)+2) <= x.opts.MaxPromptTokens
}

// PromptTokens is the size of the longest first prompt without the text
// unit's text (graph, or claims when they are on): what a chunk must
// leave room for in the model's window. It needs an encoder.
func (x *Extractor) PromptTokens() (int, error) {
	if x.enc == nil {
		return 0, errors.New("extraction: PromptTokens needs an encoder")
	}
	u := Unit{ID: "-", Text: "-"}
	p, err := x.graphPrompt(u)
	if err != nil {
		return 0, err
	}
	n := x.enc.Count(p)
	if x.opts.Claims.Enabled {
		if p, err = x.claimsPrompt(u); err != nil {
			return 0, err
		}
		n = max(n, x.enc.Count(p))
	}
	return n + llmcall.MessageTokens, nil
}

// history is a conversation's messages and their token count, each
// message counted once however many calls resend it.
type history struct {
	enc    *tokens.Encoder
	msgs   []llm.Message
	tokens int
}

func (h *history) add(role, content string) {
	h.msgs = append(h.msgs, llm.Message{Role: role, Content: content})
	if h.enc != nil {
		h.tokens += h.enc.Count(content)
	}
}

// readAnswer reads the answer to a loop question. GraphRAG goes on only
// when the answer is exactly "Y"; small models write "Yes.", "y" or
// "**Y**", so case, blanks, quotes, emphasis and final punctuation are
// ignored here, and "yes" counts as "Y". clear is false for an answer that
// is neither yes nor no, which ends the rounds as a no does.
func readAnswer(s string) (yes, clear bool) {
	t := strings.Trim(strings.TrimSpace(s), " \t\r\n.!\"'`*_")
	switch strings.ToUpper(t) {
	case "Y", "YES":
		return true, true
	case "N", "NO":
		return false, true
	}
	return false, false
}

// pyIsSpace is Python's str.isspace for one character, which str.strip
// trims: Go's unicode.IsSpace and the separators U+001C to U+001F.
func pyIsSpace(r rune) bool {
	return unicode.IsSpace(r) || 0x1c <= r && r <= 0x1f
}
