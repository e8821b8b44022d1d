package prompttune

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/kgrag/kgrag/internal/atomicfile"
	"github.com/kgrag/kgrag/internal/chunk"
	"github.com/kgrag/kgrag/internal/documents"
	"github.com/kgrag/kgrag/internal/extraction"
	"github.com/kgrag/kgrag/internal/extraction/tuples"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llmcall"
	"github.com/kgrag/kgrag/internal/tokens"
	"github.com/kgrag/kgrag/prompts"
)

// Defaults, GraphRAG 3.3.0's where it has one (prompt_tune/defaults.py:
// LIMIT 15, MAX_TOKEN_COUNT 2000; generator/entity_relationship.py:
// MAX_EXAMPLES 5, of which at least min_examples_required 2 are kept).
const (
	DefaultLimit           = 15
	DefaultSeed            = 1
	DefaultMaxEntityTypes  = 8
	DefaultExamples        = 3
	DefaultExampleTokens   = 200
	DefaultMaxPromptTokens = 2000
	DefaultSampleTokens    = 1000
	// ManifestName is the file beside the templates that says what the
	// tuning found; kgrag index reads its entity types.
	ManifestName = "prompt-tune.json"
)

// Options configure Tune. The zero value of a number means its default.
type Options struct {
	// Input is the corpus folder, read with Documents and cut into chunks
	// with Chunk (zero: kgrag index's defaults) as kgrag index reads it.
	Input     string
	Documents documents.Options
	Chunk     chunk.Options
	// Selection (SelectRandom, the default, SelectTop or SelectAll),
	// Limit and Seed pick the chunks read.
	Selection string
	Limit     int
	Seed      uint64
	// Domain, Language and EntityTypes, when set, are taken as given and
	// not asked of the model.
	Domain, Language string
	EntityTypes      []string
	MaxEntityTypes   int
	// Examples is the most worked examples the extraction prompt gets,
	// each a passage of at most ExampleTokens tokens; examples are left
	// out (down to one) while the prompt without the passage to extract
	// counts more than MaxPromptTokens tokens.
	Examples, ExampleTokens, MaxPromptTokens int
	// SampleTokens bounds the sample text sent with the questions on
	// the domain, language, entity types, rating and role.
	SampleTokens int
	// Chat goes with every call (model, temperature, max tokens).
	Chat llm.ChatOptions
	// Budget is the chat model's window: with it known, the sample, the
	// example passages and the tuned extraction prompt are cut to fit
	// (each cut a warning), and every call names the window it needs.
	Budget llm.Budget
	// Progress, when set, is told each step as it starts.
	Progress func(step, detail string)
}

func (o *Options) defaults() {
	if o.Chunk.Size == 0 {
		o.Chunk = chunk.DefaultOptions()
	}
	if o.Limit <= 0 {
		o.Limit = DefaultLimit
	}
	if o.MaxEntityTypes <= 0 {
		o.MaxEntityTypes = DefaultMaxEntityTypes
	}
	if o.Examples <= 0 {
		o.Examples = DefaultExamples
	}
	if o.ExampleTokens <= 0 {
		o.ExampleTokens = DefaultExampleTokens
	}
	if o.MaxPromptTokens <= 0 {
		o.MaxPromptTokens = DefaultMaxPromptTokens
	}
	if o.SampleTokens <= 0 {
		o.SampleTokens = DefaultSampleTokens
	}
}

// Result is what Tune found and the templates it made.
type Result struct {
	Manifest
	// Extract, Summarize and Report are the texts of index_extract.tmpl,
	// index_summarize.tmpl and index_report.tmpl.
	Extract, Summarize, Report string
}

// Manifest is prompt-tune.json: what the tuning found and how.
type Manifest struct {
	Tool     string    `json:"tool"`
	Created  time.Time `json:"created"`
	Model    string    `json:"model,omitempty"`
	Input    string    `json:"input"`
	Selected string    `json:"selection"`
	Seed     uint64    `json:"seed"`
	// Chunks are the ids of the sampled text units.
	Chunks      []string  `json:"chunks"`
	Domain      string    `json:"domain"`
	Language    string    `json:"language"`
	Persona     string    `json:"persona"`
	EntityTypes []string  `json:"entity_types"`
	Role        string    `json:"report_role"`
	Rating      string    `json:"report_rating"`
	Examples    []Example `json:"examples"`
	// Sources says where each finding came from: "model", "given" or
	// "default" (the model's reply could not be used).
	Sources  map[string]string `json:"sources"`
	Calls    int               `json:"model_calls"`
	Warnings []string          `json:"warnings,omitempty"`
}

// tuner is one run of Tune.
type tuner struct {
	model llmcall.Chatter
	enc   *tokens.Encoder
	opts  Options
	res   *Result
}

// Tune samples the corpus and asks the model, step by step (see the
// package doc), for what the tuned prompts need. An error is returned
// for input that cannot be read or sampled and for a failed model call;
// a reply that cannot be used is not one: the step falls back to a
// default and says so in Warnings.
func Tune(ctx context.Context, model llmcall.Chatter, opts Options) (*Result, error) {
	opts.defaults()
	if opts.Input == "" {
		return nil, errors.New("prompttune: no input folder")
	}
	enc, err := tokens.NewEncoder(chunk.DefaultEncoding)
	if err != nil {
		return nil, fmt.Errorf("prompttune: %w", err)
	}
	t := &tuner{model: model, enc: enc, opts: opts, res: &Result{Manifest: Manifest{Tool: "kgrag prompt-tune",
		Created: time.Now().UTC().Truncate(time.Second), Model: opts.Chat.Model, Input: opts.Input,
		Selected: opts.Selection, Seed: opts.Seed, Sources: map[string]string{}}}}
	if t.res.Selected == "" {
		t.res.Selected = SelectRandom
	}
	if err := t.fitWindow(); err != nil {
		return nil, err
	}
	if t.opts.Budget.Window.Known() {
		t.model = llmcall.Fitted(model, t.opts.Budget, enc)
	}
	t.progress("sample", opts.Input)
	chunks, err := sample(ctx, enc, t.opts)
	if err != nil {
		return nil, err
	}
	for _, c := range chunks {
		t.res.Chunks = append(t.res.Chunks, c.ID)
	}
	text := sampleText(enc, chunks, t.opts.SampleTokens)
	steps := []func(context.Context, string) error{t.domain, t.language, t.persona, t.entityTypes}
	for _, step := range steps {
		if err := step(ctx, text); err != nil {
			return nil, err
		}
	}
	if err := t.examples(ctx, chunks); err != nil {
		return nil, err
	}
	if err := t.report(ctx, text); err != nil {
		return nil, err
	}
	if err := t.render(); err != nil {
		return nil, err
	}
	return t.res, nil
}

func (t *tuner) progress(step, detail string) {
	if t.opts.Progress != nil {
		t.opts.Progress(step, detail)
	}
}

func (t *tuner) warn(format string, args ...any) {
	t.res.Warnings = append(t.res.Warnings, fmt.Sprintf(format, args...))
}

// ask renders a tune_ template and sends it as the one user message.
func (t *tuner) ask(ctx context.Context, name string, data any) (string, error) {
	prompt, err := prompts.Render(name, data)
	if err != nil {
		return "", fmt.Errorf("prompttune: %w", err)
	}
	t.res.Calls++
	reply, _, err := t.model.Chat(ctx, []llm.Message{{Role: llm.RoleUser, Content: prompt}}, t.opts.Chat)
	if err != nil {
		return "", fmt.Errorf("prompttune: %s: %w", strings.TrimPrefix(name, "tune_"), err)
	}
	return reply, nil
}

var youRE = regexp.MustCompile(`(?i)\byou\b`)

// short is a reply cut for a warning.
func short(reply string) string {
	r := []rune(strings.Join(strings.Fields(reply), " "))
	if len(r) > 80 {
		return string(r[:80]) + "..."
	}
	return string(r)
}

func (t *tuner) domain(ctx context.Context, text string) error {
	if d := strings.TrimSpace(t.opts.Domain); d != "" {
		t.res.Domain, t.res.Sources["domain"] = d, "given"
		return nil
	}
	t.progress("domain", "")
	reply, err := t.ask(ctx, "tune_domain", prompts.TuneSample{Text: text})
	if err != nil {
		return err
	}
	if d, ok := phrase(reply, 6); ok {
		t.res.Domain, t.res.Sources["domain"] = d, "model"
		return nil
	}
	t.res.Domain, t.res.Sources["domain"] = "general text", "default"
	t.warn("domain: the model's reply %q is not a short phrase; using %q (give --domain to set it)", short(reply), t.res.Domain)
	return nil
}

func (t *tuner) language(ctx context.Context, text string) error {
	if l := strings.TrimSpace(t.opts.Language); l != "" {
		t.res.Language, t.res.Sources["language"] = l, "given"
		return nil
	}
	t.progress("language", "")
	reply, err := t.ask(ctx, "tune_language", prompts.TuneSample{Text: text})
	if err != nil {
		return err
	}
	guess := guessLanguage(text)
	name := languageName(reply)
	switch {
	case name == "":
		t.warn("language: the model's reply %q names no language; %s from the text's words (give --language to set it)", short(reply), guess)
	case languageScript(name) != script(text):
		t.warn("language: the model said %s, but the text is in %s script; %s from the text's words (give --language to set it)", name, script(text), guess)
	default:
		t.res.Language, t.res.Sources["language"] = name, "model"
		return nil
	}
	t.res.Language, t.res.Sources["language"] = guess, "text"
	return nil
}

func (t *tuner) persona(ctx context.Context, _ string) error {
	t.progress("persona", t.res.Domain)
	reply, err := t.ask(ctx, "tune_persona", prompts.TunePersona{Domain: t.res.Domain})
	if err != nil {
		return err
	}
	// The persona speaks to the model: a reply that never says "you" is
	// about something else.
	if p, ok := prose(reply, 6, 600); ok && youRE.MatchString(p) {
		t.res.Persona, t.res.Sources["persona"] = p, "model"
		return nil
	}
	t.res.Persona, t.res.Sources["persona"] = fmt.Sprintf("You are an expert in %s. You read texts of this kind closely and tell "+
		"which people, places, groups, things and ideas they name and how these are linked.", t.res.Domain), "default"
	t.warn("persona: the model's reply %q is not a description; using kgrag's", short(reply))
	return nil
}

func (t *tuner) entityTypes(ctx context.Context, text string) error {
	if len(t.opts.EntityTypes) > 0 {
		t.res.EntityTypes, t.res.Sources["entity_types"] = t.opts.EntityTypes, "given"
		return nil
	}
	t.progress("entity types", "")
	reply, err := t.ask(ctx, "tune_entity_types", prompts.TuneEntityTypes{Domain: t.res.Domain, Text: text, Max: t.opts.MaxEntityTypes})
	if err != nil {
		return err
	}
	if types := entityTypes(reply, t.opts.MaxEntityTypes); len(types) > 0 {
		t.res.EntityTypes, t.res.Sources["entity_types"] = types, "model"
		if len(types) < minEntityTypes {
			// Two kinds miss most of a text; GraphRAG's defaults fill up.
			for _, d := range extraction.DefaultEntityTypes() {
				if len(t.res.EntityTypes) < max(minEntityTypes, min(t.opts.MaxEntityTypes, len(types)+2)) && !sameType(t.res.EntityTypes, d) {
					t.res.EntityTypes = append(t.res.EntityTypes, d)
				}
			}
			t.warn("entity types: the model gave only %s; GraphRAG's defaults added: %s", strings.Join(types, ", "), strings.Join(t.res.EntityTypes, ", "))
		}
		return nil
	}
	t.res.EntityTypes, t.res.Sources["entity_types"] = extraction.DefaultEntityTypes(), "default"
	t.warn("entity types: no type could be read from the model's reply %q; using GraphRAG's %s (give --entity-types to set them)",
		short(reply), strings.Join(t.res.EntityTypes, ", "))
	return nil
}

// minEntityTypes is the fewest entity types kept from the model before
// GraphRAG's defaults fill up the list.
const minEntityTypes = 3

// sameType reports whether list holds t, British and American spellings
// ("organisation") alike.
func sameType(list []string, t string) bool {
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "isation", "ization") }
	for _, l := range list {
		if norm(l) == norm(t) {
			return true
		}
	}
	return false
}

// examples asks for the records of short passages of the sampled chunks,
// the first passage of each chunk, then the second, until Examples are
// usable or 2*Examples+1 calls are made.
func (t *tuner) examples(ctx context.Context, chunks []Chunk) error {
	var passages []string
	for round := range 2 {
		for _, c := range chunks {
			p := excerpt(t.enc, c.Text, round*t.opts.ExampleTokens, t.opts.ExampleTokens)
			if len(strings.Fields(p)) >= 8 {
				passages = append(passages, p)
			}
		}
	}
	d := tuples.DefaultDelimiters()
	format := prompts.RecordFormat{Tuple: d.Tuple, Record: d.Record, Completion: d.Completion}
	calls, unusable, lists, untyped := 0, 0, 0, 0
	maxCalls := 3*t.opts.Examples + 1
	var reasons []string
	for _, p := range passages {
		if len(t.res.Examples) == t.opts.Examples || calls >= maxCalls {
			break
		}
		calls++
		t.progress("examples", fmt.Sprintf("%d of %d kept, call %d", len(t.res.Examples), t.opts.Examples, calls))
		reply, err := t.ask(ctx, "tune_example", prompts.TuneExample{RecordFormat: format, EntityTypes: t.res.EntityTypes,
			Language: t.res.Language, Text: p})
		if err != nil {
			return err
		}
		ex, dropped := readExample(p, reply, t.res.EntityTypes)
		reasons = append(reasons, dropped...)
		if len(ex.Entities) == 0 && calls < maxCalls {
			// A small model that cannot write records can often list
			// names: kgrag writes the records.
			calls++
			t.progress("examples", fmt.Sprintf("%d of %d kept, call %d (as a list)", len(t.res.Examples), t.opts.Examples, calls))
			reply, err := t.ask(ctx, "tune_example_list", prompts.TuneExample{RecordFormat: format, EntityTypes: t.res.EntityTypes,
				Language: t.res.Language, Text: p})
			if err != nil {
				return err
			}
			var n int
			ex, n = readList(p, reply, t.res.EntityTypes, t.res.EntityTypes[0])
			if len(ex.Entities) > 0 {
				lists++
				untyped += n
			}
		}
		if len(ex.Entities) == 0 {
			unusable++
			continue
		}
		if err := ex.checkRoundTrip(); err != nil {
			unusable++
			reasons = append(reasons, "does not read back")
			continue
		}
		t.res.Examples = append(t.res.Examples, ex)
	}
	if unusable > 0 {
		detail := ""
		if len(reasons) > 0 {
			detail = " (records left out: " + summarizeDrops(reasons) + ")"
		}
		t.warn("examples: %d of %d replies gave no usable record%s", unusable, calls, detail)
	}
	if lists > 0 {
		t.warn("examples: %d written by kgrag from the model's list of names, with no relationships (its records could not be used); "+
			"%d of their entities had no listed type and were given %q", lists, untyped, t.res.EntityTypes[0])
	}
	t.res.Sources["examples"] = "model"
	if len(t.res.Examples) == 0 {
		t.res.Sources["examples"] = "default"
		t.warn("examples: no passage of the corpus gave a usable example; the extraction prompt shows kgrag's own " +
			"(a model this weak may not follow the record format: try a larger one)")
	}
	return nil
}

func (t *tuner) report(ctx context.Context, text string) error {
	data := prompts.TuneRole{Persona: t.res.Persona, Domain: t.res.Domain, Text: text}
	t.progress("report rating", "")
	reply, err := t.ask(ctx, "tune_rating", data)
	if err != nil {
		return err
	}
	if r, ok := prose(reply, 6, 400); ok {
		t.res.Rating, t.res.Sources["report_rating"] = r, "model"
	} else {
		t.res.Rating, t.res.Sources["report_rating"] = fmt.Sprintf("how much the community matters for understanding these documents of %s: "+
			"10 for one central to them, 0 for one of no consequence.", t.res.Domain), "default"
		t.warn("report rating: the model's reply %q is not a description; using kgrag's", short(reply))
	}
	t.progress("report role", "")
	if reply, err = t.ask(ctx, "tune_role", data); err != nil {
		return err
	}
	if r, ok := prose(reply, 5, 400); ok {
		t.res.Role, t.res.Sources["report_role"] = r, "model"
	} else {
		t.res.Role, t.res.Sources["report_role"] = fmt.Sprintf("an analyst of %s who studies the groups of people, places and things "+
			"the documents name and how they are linked, for readers who want the key facts of each group.", t.res.Domain), "default"
		t.warn("report role: the model's reply %q is not a description; using kgrag's", short(reply))
	}
	return nil
}

// fallbackExample is kgrag's own worked example (tune_example's), shown
// when no passage of the corpus gave one.
var fallbackExample = Example{
	Passage: "Anna Berg sailed from Bergen to meet her brother Olaf.",
	Entities: []tuples.Entity{
		{Title: "ANNA BERG", Type: "person", Description: "Anna Berg sailed from Bergen to meet her brother."},
		{Title: "OLAF", Type: "person", Description: "Olaf is Anna Berg's brother."},
		{Title: "BERGEN", Type: "place", Description: "Bergen is the town Anna Berg sailed from."},
	},
	Relationships: []tuples.Relationship{{Source: "ANNA BERG", Target: "OLAF", Description: "Anna Berg and Olaf are sister and brother.", Weight: 8}},
}

// render fills the three skeletons, keeping as many examples as the
// token budget allows (at least one), and checks each result as kgrag
// index will.
func (t *tuner) render() error {
	lit := prompts.Literal
	r := t.res
	var all []prompts.TunedExample
	for i, ex := range r.Examples {
		all = append(all, prompts.TunedExample{N: i + 1, Text: lit(ex.Passage), Output: ex.templateOutput()})
	}
	if len(all) == 0 {
		all = []prompts.TunedExample{{N: 1, Text: lit(fallbackExample.Passage), Output: fallbackExample.templateOutput(), Types: "person, place"}}
	}
	d := tuples.DefaultDelimiters()
	probe := prompts.IndexExtract{RecordFormat: prompts.RecordFormat{Tuple: d.Tuple, Record: d.Record, Completion: d.Completion},
		EntityTypes: r.EntityTypes}
	for n := len(all); n >= 1; n-- {
		src, err := prompts.Render("tuned_extract", prompts.TunedExtract{Persona: lit(r.Persona), Domain: lit(r.Domain),
			Language: lit(r.Language), Examples: all[:n]})
		if err != nil {
			return fmt.Errorf("prompttune: %w", err)
		}
		filled, err := prompts.RenderText("index_extract", src, probe)
		if err != nil {
			return fmt.Errorf("prompttune: the extraction template made is not valid (a bug): %w", err)
		}
		tok := t.enc.Count(filled)
		if tok <= t.opts.MaxPromptTokens || n == 1 {
			if tok > t.opts.MaxPromptTokens {
				t.warn("examples: the extraction prompt counts %d tokens with one example, more than the %d allowed (--max-prompt-tokens, or half the chat window's room)", tok, t.opts.MaxPromptTokens)
			}
			if n < len(all) {
				t.warn("examples: %d of %d left out to keep the extraction prompt within %d tokens", len(all)-n, len(all), t.opts.MaxPromptTokens)
				if len(r.Examples) > 0 {
					r.Examples = r.Examples[:n]
				}
			}
			r.Extract = src
			break
		}
	}
	var err error
	if r.Summarize, err = prompts.Render("tuned_summarize", prompts.TunedSummary{Persona: lit(r.Persona), Domain: lit(r.Domain), Language: lit(r.Language)}); err != nil {
		return fmt.Errorf("prompttune: %w", err)
	}
	if r.Report, err = prompts.Render("tuned_report", prompts.TunedReport{Persona: lit(r.Persona), Domain: lit(r.Domain),
		Language: lit(r.Language), Role: lit(r.Role), Rating: lit(r.Rating)}); err != nil {
		return fmt.Errorf("prompttune: %w", err)
	}
	for name, src := range map[string]string{"index_summarize": r.Summarize, "index_report": r.Report} {
		if err := prompts.Check(name, src); err != nil {
			return fmt.Errorf("prompttune: the %s template made is not valid (a bug): %w", name, err)
		}
	}
	return nil
}

// Files are the templates Write writes, by file name.
func (r *Result) Files() map[string]string {
	return map[string]string{"index_extract.tmpl": r.Extract, "index_summarize.tmpl": r.Summarize, "index_report.tmpl": r.Report}
}

// CheckOutput tells, before any model call, whether Write can write dir:
// it must not exist, be empty, or force must be set; and it must be a
// folder that can be written.
func CheckOutput(dir string, force bool) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// Made by Write; its parent must take it.
		parent := filepath.Dir(filepath.Clean(dir))
		if st, err := os.Stat(parent); err != nil || !st.IsDir() {
			if err == nil {
				err = errors.New("not a folder")
			}
			return fmt.Errorf("prompttune: output %s: cannot be made in %s: %w", dir, parent, err)
		}
		return writable(parent, dir)
	case err != nil:
		return fmt.Errorf("prompttune: output %s: %w", dir, err)
	case len(entries) > 0 && !force:
		return fmt.Errorf("prompttune: output %s is not empty: give --force to replace its prompts, or name another folder", dir)
	}
	return writable(dir, dir)
}

// writable creates and removes a file in dir.
func writable(dir, output string) error {
	f, err := os.CreateTemp(dir, ".kgrag-prompt-tune-*")
	if err != nil {
		return fmt.Errorf("prompttune: output %s cannot be written: %w", output, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// Write writes the templates and the manifest into dir (made if need
// be), each file whole or not at all, and opens the folder as kgrag index
// will (prompts.Open) to check it.
func (r *Result) Write(dir string, force bool) error {
	if err := CheckOutput(dir, force); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("prompttune: %w", err)
	}
	man, err := json.MarshalIndent(r.Manifest, "", "  ")
	if err != nil {
		return fmt.Errorf("prompttune: %w", err)
	}
	files := r.Files()
	files[ManifestName] = string(man) + "\n"
	for name, text := range files {
		f, err := atomicfile.Create(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("prompttune: %w", err)
		}
		if _, err := f.WriteString(text); err != nil {
			f.Abort()
			return fmt.Errorf("prompttune: write %s: %w", f.Name(), err)
		}
		if err := f.Commit(); err != nil {
			return fmt.Errorf("prompttune: %w", err)
		}
	}
	if _, err := prompts.Open(dir); err != nil {
		return fmt.Errorf("prompttune: the prompts written do not open: %w", err)
	}
	return nil
}

// ReadManifest reads dir's prompt-tune.json; nil and no error when the
// folder has none (prompts written by hand).
func ReadManifest(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("prompttune: %w", err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("prompttune: %s: %w", filepath.Join(dir, ManifestName), err)
	}
	return &m, nil
}
