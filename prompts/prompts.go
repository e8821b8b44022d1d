package prompts

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"
	"text/template"
)

//go:embed templates/*.tmpl
var files embed.FS

// parsed holds every template, parsed once on first use: Render runs for
// every map call of global search and every extraction prompt. Like files,
// it never changes after that, and a parsed template may be executed
// concurrently.
var parsed = sync.OnceValues(func() (map[string]*template.Template, error) {
	out := map[string]*template.Template{}
	for _, name := range Names() {
		src, err := files.ReadFile("templates/" + name + ".tmpl")
		if err != nil {
			return nil, fmt.Errorf("prompts: read %s: %w", name, err)
		}
		t := template.New(name).Option("missingkey=error")
		if strings.HasPrefix(name, "tuned_") {
			// Skeletons of templates: their own {{ }} placeholders are
			// text to them, left for kgrag index.
			t = t.Delims("[[", "]]")
		}
		t, err = t.Parse(string(src))
		if err != nil {
			return nil, fmt.Errorf("prompts: parse %s: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
})

// DefaultResponseType is the shape of answer asked for unless the user
// says otherwise (GraphRAG's default response type).
const DefaultResponseType = "multiple paragraphs"

// LocalAnswer fills local_answer.tmpl, the system prompt of a local search
// answer: the context tables retrieval built and the shape of answer
// wanted ("multiple paragraphs", "a single sentence", "a list"). The
// question goes to the model as the user message, not in this prompt.
type LocalAnswer struct {
	Context      string
	ResponseType string
}

// PlainAnswer fills plain_answer.tmpl, the system prompt of an answer
// without any retrieved context (kgrag ask --no-context, the baseline to
// compare graph answers with).
type PlainAnswer struct {
	ResponseType string
}

// GlobalMap fills global_map.tmpl, the system prompt of one map call of
// global search: a batch of community reports as a table, and the word
// limit of the points. The question is the user message.
type GlobalMap struct {
	Context   string
	MaxLength int
}

// GlobalReduce fills global_reduce.tmpl, the system prompt of global
// search's reduce call: the ranked key points of the map calls, the shape
// and word limit of the answer, and whether the model may add general
// knowledge (GraphRAG's allow_general_knowledge).
type GlobalReduce struct {
	Context          string
	ResponseType     string
	MaxLength        int
	GeneralKnowledge bool
}

// GlobalRate fills global_rate.tmpl, the system prompt of a dynamic
// community selection call: one report to rate 0-5 for the question.
type GlobalRate struct {
	Question string
	Report   string
}

// EvalJudge fills eval_judge.tmpl, the prompt (one user message) of
// kgrag eval's judge: an answer graded 0-5 against a reference answer.
type EvalJudge struct {
	Question  string
	Reference string
	Answer    string
}

// IndexSummarize fills index_summarize.tmpl, the prompt (one user message)
// of a description summary call of kgrag index: the descriptions gathered
// for an entity (Title) or for a relationship (Source and Target, Title
// empty), sorted, and the word limit of the summary.
type IndexSummarize struct {
	Title          string
	Source, Target string
	Descriptions   []string
	MaxLength      int
}

// IndexReport fills index_report.tmpl, the prompt (one user message) of a
// community report call of kgrag index, and index_report_text.tmpl, that
// of kgrag index --method fast: the community's context (the tables of
// internal/reports: entities and relationships, or text units), the word limit of the report, and, when
// the call is made again because the reply could not be used, what was
// wrong with it (empty on a first call).
type IndexReport struct {
	Context   string
	MaxLength int
	Problem   string
}

// RecordFormat is the markers an extraction prompt asks the model to write
// records with, filled from internal/extraction/tuples' Delimiters so that the
// prompt and the parser agree: "<|>" between fields, "##" between
// records, "<|COMPLETE|>" at the end.
type RecordFormat struct {
	Tuple, Record, Completion string
}

// IndexExtract fills index_extract.tmpl, the prompt (the first user
// message) of a graph extraction conversation of kgrag index: the entity
// types to extract, listed one per line as given (the NetworkX article's ESG
// types hold commas), and the text unit's text.
type IndexExtract struct {
	RecordFormat
	EntityTypes []string
	Text        string
}

// IndexClaims fills index_claims.tmpl, the prompt (the first user
// message) of a claim extraction conversation of kgrag index: the entity
// specification (entity types or names), what claims to look for
// (GraphRAG's claim description) and the text unit's text.
type IndexClaims struct {
	RecordFormat
	EntitySpecs      []string
	ClaimDescription string
	Text             string
}

// IndexGlean fills the prompts of gleaning rounds, which the conversation
// already gives the context of: index_extract_continue and
// index_claims_continue (write what was left out) and index_extract_loop
// and index_claims_loop (answer Y or N: is anything still missing?).
type IndexGlean struct {
	RecordFormat
}

// TuneSample fills tune_domain and tune_language, kgrag prompt-tune's
// questions on a sample of the corpus: the sampled chunks, cut to a
// token budget and joined.
type TuneSample struct {
	Text string
}

// TunePersona fills tune_persona: the domain found (or given).
type TunePersona struct {
	Domain string
}

// TuneEntityTypes fills tune_entity_types: the domain, the sample and
// the most kinds of entity wanted.
type TuneEntityTypes struct {
	Domain string
	Text   string
	Max    int
}

// TuneExample fills tune_example: the record format, the entity types,
// the language descriptions are written in and a short passage of the
// corpus to extract from.
type TuneExample struct {
	RecordFormat
	EntityTypes []string
	Language    string
	Text        string
}

// TuneRole fills tune_rating and tune_role: the persona, the domain and
// the sample.
type TuneRole struct {
	Persona, Domain, Text string
}

// TunedExtract fills tuned_extract, the skeleton of the index_extract
// template kgrag prompt-tune writes. Every string must be escaped with
// Literal: the result is itself a template.
type TunedExtract struct {
	Persona, Domain, Language string
	Examples                  []TunedExample
}

// TunedExample is one worked example of a tuned extraction prompt: a
// passage of the corpus and its records, written with the {{.Tuple}},
// {{.Record}} and {{.Completion}} placeholders; N counts from 1. Types,
// when not empty, are the entity types of an example whose types are not
// the prompt's (kgrag's own, when no passage of the corpus gave one).
type TunedExample struct {
	N                   int
	Text, Output, Types string
}

// TunedSummary fills tuned_summarize, the skeleton of a tuned
// index_summarize (strings escaped with Literal).
type TunedSummary struct {
	Persona, Domain, Language string
}

// TunedReport fills tuned_report, the skeleton of a tuned index_report
// (strings escaped with Literal): Role is who writes the reports, Rating
// what the rating measures.
type TunedReport struct {
	Persona, Domain, Language, Role, Rating string
}

// NoDataAnswer is global search's answer when no map call found anything
// relevant (every point scored 0) and general knowledge is not allowed:
// no reduce call is made.
const NoDataAnswer = "I do not know: none of the community reports holds anything relevant to the question."

// Questions is a question set: the question asked first, then any
// sub-questions.
type Questions []string

// Numbered lists the questions one a line, numbered from 1.
func (q Questions) Numbered() string {
	var b strings.Builder
	for i, s := range q {
		fmt.Fprintf(&b, "%d. %s\n", i+1, s)
	}
	return b.String()
}

// ThoughtsGraph fills thoughts_graph.tmpl, the first call of graph of
// thoughts: the retrieved context and the question set the model builds
// a knowledge graph for (a JSON object of nodes and edges).
type ThoughtsGraph struct {
	Context   string
	Questions Questions
}

// ThoughtsAnswer fills thoughts_answer.tmpl, the system prompt of graph
// of thoughts' answer: the graph the first call built, as text, the
// question set it was built for and the shape of answer wanted. The
// question goes as the user message.
type ThoughtsAnswer struct {
	Graph        string
	Questions    Questions
	ResponseType string
}

// Names lists the embedded templates, sorted.
func Names() []string {
	entries, _ := fs.ReadDir(files, "templates")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".tmpl"))
	}
	sort.Strings(names)
	return names
}

// Render executes the named template with data. A missing template, a
// field the data lacks or a template error is an error naming the template.
func Render(name string, data any) (string, error) {
	all, err := parsed()
	if err != nil {
		return "", err
	}
	t, ok := all[name]
	if !ok {
		return "", fmt.Errorf("prompts: no template %q (have %s)", name, strings.Join(Names(), ", "))
	}
	return execute(t, data)
}

// execute runs t with data; the error names the template.
func execute(t *template.Template, data any) (string, error) {
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return "", fmt.Errorf("prompts: render %s: %w", t.Name(), err)
	}
	return b.String(), nil
}

// SHA256 returns the hex SHA-256 of the named template's text, which
// identifies the prompt a run used (provenance of an index run).
func SHA256(name string) (string, error) {
	src, err := files.ReadFile("templates/" + name + ".tmpl")
	if err != nil {
		return "", fmt.Errorf("prompts: no template %q (have %s)", name, strings.Join(Names(), ", "))
	}
	sum := sha256.Sum256(src)
	return hex.EncodeToString(sum[:]), nil
}
