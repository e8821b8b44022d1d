package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/atomicfile"
	"github.com/kgrag/kgrag/internal/engine"
	"github.com/kgrag/kgrag/internal/eval"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/mode"
	"github.com/kgrag/kgrag/internal/tokens"
	"github.com/urfave/cli/v3"
)

// evalOptions are kgrag eval's: the graph and models as ask reads them,
// and the question set and modes.
type evalOptions struct {
	ask       askOptions
	questions string
	modes     string // comma-separated
	answer    bool
	json      bool
	// judgeModel, when set, grades every answer (and implies answer).
	judgeModel string
	// limit asks only the first limit questions (0: all).
	limit int
	// html is where the report page goes, or "".
	html string
	// corpus is a published set's corpus file; writeDocuments, when set,
	// is where the set's passages are written as documents instead of
	// running it.
	corpus, writeDocuments string
	// against is a second graph (an output folder) run the same way,
	// for the difference per mode; againstIndex its index folder.
	against, againstIndex string
}

// defaultEvalModes are the modes that build a context without a chat
// model (graph-of-thoughts' context is subgraph's; DRIFT's comes from
// answers, so it needs --answer).
const defaultEvalModes = "local,global,basic,sparql-templates,subgraph,walk"

// evalReport is kgrag eval --json's object.
type evalReport struct {
	Questions string         `json:"questions_file"`
	Answered  bool           `json:"answered"`
	Count     int            `json:"question_count"`
	Kinds     map[string]int `json:"kinds,omitempty"`
	graphReport
	// Against is the second graph's, with --against.
	Against *graphReport `json:"against,omitempty"`
}

// graphReport is every mode over one graph.
type graphReport struct {
	Source  string            `json:"source"`
	Modes   []eval.ModeReport `json:"modes"`
	Skipped map[string]string `json:"skipped,omitempty"`
}

func newEvalCommand(term terminal) *cli.Command {
	o := &evalOptions{ask: *newAskOptions(), modes: defaultEvalModes}
	flags := slices.DeleteFunc(askFlags(&o.ask), func(f cli.Flag) bool { return slices.Contains(askOnlyFlags, f.Names()[0]) })
	return &cli.Command{
		Name:      "eval",
		Usage:     "measure what each query mode retrieves for a question set: context recall, size and time",
		ArgsUsage: " ",
		Description: `Asks every question of --questions of each mode in --modes over the graph
(--input DIR, or --store URL --graph IRI, with the vector indexes of kgrag
embed, as kgrag ask reads them) and scores each context by its context
recall: the share of the question's gold evidence the context holds.

A question file is JSONL (one object a line) or YAML (a list):
   {"id": "mb-01", "kind": "fact", "question": "Who kills Duncan?",
    "answer": "Macbeth", "evidence": {"quotes": ["..."], "entities": ["MACBETH"],
    "text_units": ["12"]}}
kind is fact, relation, theme or absent (the text does not answer it).
A quote is held when its words are in the context text (case, whitespace
and punctuation aside), or two parts of it of three words or more are
(a quote the chunker cut across two text units); an entity when the
context's records hold one of that title (in global search, whose
context is community reports, when a report names it); a text unit by
its id or human-readable id.

Without a chat model (the default) only the contexts are built: DRIFT,
whose contexts come from answers, is left out. --answer asks the chat
model too and records the answers and model calls.

   kgrag embed --input ./output --tables all
   kgrag eval --input ./output --questions demo/eval/macbeth.jsonl
   kgrag eval --input ./output --questions q.yaml --modes local,basic --json | jq '.modes[].summary'

Ctrl-C stops the run and prints what was done.
` + exitStatusHelp,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "questions", Destination: &o.questions, Usage: "question `FILE` with gold evidence: kgrag's (.jsonl or .yaml), or a published multi-hop set as distributed (HotpotQA or 2WikiMultiHopQA JSON, MuSiQue JSONL)"},
			&cli.StringFlag{Name: "corpus", Destination: &o.corpus, Usage: "with a published set: a corpus `FILE` of more passages (HippoRAG's packing: {title: sentences} or [{title, text}])"},
			&cli.StringFlag{Name: "write-documents", Destination: &o.writeDocuments, Usage: "with a published set: write its passages to `DIR`/corpus.csv, one document each, for kgrag index --title-column title, and stop"},
			&cli.StringFlag{Name: "modes", Value: o.modes, Destination: &o.modes, Usage: "comma-separated `MODES` to run (" + strings.Join(askModes(), ", ") + ")"},
			&cli.IntFlag{Name: "limit", Destination: &o.limit, Usage: "ask only the first `N` questions (0: all): a first look before a long run with a model"},
			&cli.BoolFlag{Name: "answer", Destination: &o.answer, Usage: "ask the chat model too: answers and model calls are recorded (DRIFT needs it)"},
			&cli.StringFlag{Name: "judge-model", Destination: &o.judgeModel, Usage: "chat model `NAME` that grades each answer 0-5 against the question's reference answer (implies --answer; the same --llm-url)", Sources: cli.EnvVars("KGRAG_JUDGE_MODEL")},
			&cli.StringFlag{Name: "against", Destination: &o.against, Usage: "a second GraphRAG output `DIR` of the same text (with its own kgrag-index) run the same way: the table gives the difference per mode"},
			&cli.StringFlag{Name: "against-index", Destination: &o.againstIndex, Usage: "with --against: its vector index `PATH` (default: kgrag-index inside it)"},
			&cli.BoolFlag{Name: "json", Destination: &o.json, Usage: "print one JSON object: every question of every mode, and the summaries"},
			&cli.StringFlag{Name: "html", Destination: &o.html, Usage: "also write a report page to `FILE`: a chart of context recall per mode, then every question worst first, with its context and answer (self-contained)"},
		}, flags...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usagef("kgrag eval --input DIR --questions FILE", "eval takes no arguments, got %q", cmd.Args().First())
			}
			o.ask.finish(cmd, term)
			return runEval(ctx, *o, term)
		},
	}
}

// modeList parses --modes: known modes, each once, in the order given.
func (o evalOptions) modeList() ([]string, error) {
	var out []string
	for _, s := range strings.Split(o.modes, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		m, ok := mode.Lookup(s)
		if !ok {
			return nil, usagef("--modes "+defaultEvalModes, "--modes: unknown mode %q; the modes are %s", s, strings.Join(askModes(), ", "))
		}
		if !slices.Contains(out, m.Name) {
			out = append(out, m.Name)
		}
	}
	if len(out) == 0 {
		return nil, usagef("--modes "+defaultEvalModes, "--modes is empty")
	}
	return out, nil
}

func runEval(ctx context.Context, o evalOptions, term terminal) error {
	if o.questions == "" {
		return usagef("kgrag eval --input DIR --questions demo/eval/macbeth.jsonl", "eval needs --questions FILE")
	}
	modes, err := o.modeList()
	if err != nil {
		return err
	}
	set, err := eval.ReadSet(o.questions, o.corpus)
	if err != nil {
		return err
	}
	if o.writeDocuments != "" {
		return writeEvalDocuments(o, set, term)
	}
	qs := set.Questions
	switch {
	case o.limit < 0:
		return usagef("--limit 5", "--limit %d is negative", o.limit)
	case o.limit > 0 && o.limit < len(qs):
		qs = qs[:o.limit]
	}
	if o.judgeModel != "" {
		o.answer = true
	}
	o.ask.question, o.ask.contextOnly = "(eval)", !o.answer
	// Contexts are measured as sent: cut to the chat model's window only
	// when a chat model is asked.
	o.ask.fit = o.answer
	client, err := o.ask.llm.client()
	if err != nil {
		return err
	}
	var judge *eval.Judge
	if o.judgeModel != "" {
		enc, err := tokens.NewEncoder(o.ask.params.Encoding)
		if err != nil {
			return err
		}
		// The judge's prompts fit its own model's window.
		w, err := client.Window(ctx, llm.WindowChat, o.judgeModel)
		if err != nil {
			return err
		}
		if w.Known() {
			fmt.Fprintf(term.err, "judge window: %s\n", w)
		}
		temp := float32(0)
		judge = eval.NewJudge(client, llm.ChatOptions{Model: o.judgeModel, Temperature: &temp, MaxTokens: o.ask.maxTokens}, o.ask.global.search.JSONMode, enc,
			llm.NewBudget(w, 0, o.ask.maxTokens))
	}
	rep := evalReport{Questions: o.questions, Answered: o.answer, Count: len(qs), Kinds: map[string]int{}}
	for _, q := range qs {
		if q.Kind != "" {
			rep.Kinds[q.Kind]++
		}
	}
	eo := eval.Options{Answer: o.answer, Judge: judge, KeepContext: o.html != ""}
	var err1 error
	rep.graphReport, err1 = evalGraph(ctx, o, o.ask, modes, qs, eo, client, term)
	if err1 == nil && o.against != "" {
		b := o.ask
		b.input, b.index.path, b.store = o.against, o.againstIndex, storeOptions{}
		var g graphReport
		g, err1 = evalGraph(ctx, o, b, modes, qs, eo, client, term)
		rep.Against = &g
	}
	if err1 != nil && ctx.Err() == nil && len(rep.Modes) == 0 {
		return err1
	}
	return errors.Join(writeEval(term, o, rep, qs), err1)
}

// writeEvalDocuments writes a published set's passages as
// DIR/corpus.csv, whole or not at all, and says how to index them.
func writeEvalDocuments(o evalOptions, set *eval.Set, term terminal) error {
	if len(set.Passages) == 0 {
		return usagef("kgrag eval --questions hotpotqa.json --write-documents DIR", "--write-documents: %s is in kgrag's own format, which holds no passages", o.questions)
	}
	if err := os.MkdirAll(o.writeDocuments, 0o755); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	path := filepath.Join(o.writeDocuments, "corpus.csv")
	f, err := atomicfile.Create(path)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	defer f.Abort()
	if err := eval.WriteDocuments(f, set.Passages); err != nil {
		return fmt.Errorf("eval: write %s: %w", path, err)
	}
	if err := f.Commit(); err != nil {
		return err
	}
	fmt.Fprintf(term.out, "wrote %d passages of %d %s questions to %s; index them with\n"+
		"   kgrag index --input %s --output OUT --title-column title --method fast --reports none\n",
		len(set.Passages), len(set.Questions), set.Format, path, o.writeDocuments)
	return nil
}

func hasDocuments(qs []eval.Question) bool {
	return slices.ContainsFunc(qs, func(q eval.Question) bool { return len(q.Evidence.Documents) > 0 })
}

// evalDocuments maps the documents of the --input output to their text
// units, for document evidence, and checks that it holds every document
// the questions name.
func evalDocuments(ctx context.Context, input string, qs []eval.Question) (eval.Documents, error) {
	if input == "" {
		return nil, usagef("kgrag eval --input OUT --questions hotpotqa.json", "the questions' evidence is documents, which kgrag eval maps to text units from --input: give the output folder (--store is not read for it)")
	}
	ds, err := graphrag.Open(ctx, input)
	if err != nil {
		return nil, err
	}
	hrid := make(map[string]string, len(ds.TextUnits))
	for _, u := range ds.TextUnits {
		hrid[u.ID] = u.HumanReadableID
	}
	docs := eval.Documents{}
	for _, d := range ds.Documents {
		for _, id := range d.TextUnitIDs {
			docs[d.Title] = append(docs[d.Title], id)
			if h := hrid[id]; h != "" {
				docs[d.Title] = append(docs[d.Title], h)
			}
		}
	}
	missing := 0
	first := ""
	for _, q := range qs {
		for _, t := range q.Evidence.Documents {
			if _, ok := docs[t]; !ok {
				if missing == 0 {
					first = t
				}
				missing++
			}
		}
	}
	if missing > 0 {
		return nil, fmt.Errorf("eval: %d gold documents are not in %s (the first: %q): index the set's passages, written by --write-documents, with --title-column title", missing, input, first)
	}
	return docs, nil
}

// evalGraph runs modes over the graph a reads.
func evalGraph(ctx context.Context, o evalOptions, a askOptions, modes []string, qs []eval.Question, eo eval.Options,
	client *llm.Client, term terminal) (graphReport, error) {
	g := graphReport{Modes: []eval.ModeReport{}, Skipped: map[string]string{}}
	if hasDocuments(qs) {
		// Each graph maps the documents to its own text units.
		var err error
		if eo.Documents, err = evalDocuments(ctx, a.input, qs); err != nil {
			return g, err
		}
	}
	progress := term.tty && !o.ask.quiet && !o.json
	eo.Progress = func(m string, done, total int) {
		if progress {
			fmt.Fprintf(term.err, "\r%s: %d/%d questions\x1b[K", m, done, total)
		}
	}
	var src *source // read once, at the first mode that needs it
	defer func() {
		if src != nil {
			src.close()
		}
	}()
	for _, name := range modes {
		if name == mode.Drift && !o.answer {
			g.Skipped[name] = "its contexts come from the model's answers: run with --answer"
			continue
		}
		mo := a
		mo.mode = name
		if err := mo.validate(); err != nil {
			return g, err
		}
		res := &askResult{Timings: map[string]float64{}}
		eng, closeIdx, err := evalEngine(ctx, mo, client, &src, res, term)
		if missingIndex(err) {
			g.Skipped[name] = strings.TrimPrefix(err.Error(), "ask: ")
			continue
		} else if err != nil {
			return g, err
		}
		g.Source = src.name
		mr, err := eval.Run(ctx, eng, qs, eo)
		closeIdx()
		if progress {
			fmt.Fprint(term.err, "\r\x1b[K")
		}
		if err == nil && emptyContexts(mr) {
			// Global search over a graph without community reports: no
			// context to score, which a recall of 0 would not say.
			g.Skipped[name] = "every context was empty (global search: the graph holds no community reports)"
			continue
		}
		g.Modes = append(g.Modes, mr)
		if err != nil {
			// Interrupted: what was done is printed, then why it stopped.
			return g, fmt.Errorf("eval: stopped in %s after %d questions: %w", name, len(mr.Results), err)
		}
	}
	return g, nil
}

// evalEngine opens the engine of mo.mode with its vector indexes over
// *src, reading the graph into *src first if no mode has yet; closeIdx
// releases the indexes, the caller the source.
func evalEngine(ctx context.Context, mo askOptions, client *llm.Client, src **source, res *askResult, term terminal) (_ engine.Engine, closeIdx func(), err error) {
	deps, closeIdx, err := modeDeps(ctx, mo, client)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			closeIdx()
		}
	}()
	if *src == nil {
		s, err := openSource(ctx, mo, term.err)
		if err != nil {
			return nil, nil, err
		}
		*src = &s
	}
	eng, err := engineOver(mo, deps, **src, res)
	if err != nil {
		return nil, nil, err
	}
	return eng, closeIdx, nil
}

// missingIndex reports an error that says a mode's vector index is not
// there: the mode is skipped, the others run.
func missingIndex(err error) bool {
	var mi *engine.MissingIndexError
	return err != nil && (errors.As(err, &mi) || strings.Contains(err.Error(), "kgrag embed"))
}

// writeEval prints the report: JSON, or a table with the skipped modes
// and the questions that failed; and with --html writes the page.
func writeEval(term terminal, o evalOptions, rep evalReport, qs []eval.Question) error {
	if o.html != "" {
		if err := writeEvalHTML(o.html, rep, qs); err != nil {
			return err
		}
	}
	if o.json {
		enc := json.NewEncoder(term.out)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return writeEvalTable(term.out, rep)
}

func writeEvalTable(w io.Writer, rep evalReport) error {
	fmt.Fprintf(w, "%d questions from %s over %s\n\n", rep.Count, rep.Questions, rep.Source)
	if err := writeModes(w, rep.graphReport, rep.Answered); err != nil {
		return err
	}
	b := rep.Against
	if b == nil {
		return nil
	}
	fmt.Fprintf(w, "\nagainst %s:\n\n", b.Source)
	if err := writeModes(w, *b, rep.Answered); err != nil {
		return err
	}
	fmt.Fprintf(w, "\ncontext recall, %s against %s:\n\n", b.Source, rep.Source)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MODE\tTHIS\tAGAINST\tDIFFERENCE")
	// A mode run on one graph only (global search where one has no
	// community reports) still gets its row, with a dash for the other.
	for _, name := range evalModeUnion(rep.Modes, b.Modes) {
		this, okThis := modeRecall(rep.Modes, name)
		that, okThat := modeRecall(b.Modes, name)
		switch {
		case okThis && okThat:
			fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%+.2f\n", name, this, that, that-this)
		case okThis:
			fmt.Fprintf(tw, "%s\t%.2f\t-\t-\n", name, this)
		default:
			fmt.Fprintf(tw, "%s\t-\t%.2f\t-\n", name, that)
		}
	}
	return tw.Flush()
}

// evalModeUnion is the modes either a or b holds, in the registry's
// order.
func evalModeUnion(a, b []eval.ModeReport) []string {
	var out []string
	for _, m := range mode.All() {
		_, inA := modeRecall(a, m.Name)
		_, inB := modeRecall(b, m.Name)
		if inA || inB {
			out = append(out, m.Name)
		}
	}
	return out
}

// modeRecall is the context recall of mode name among ms.
func modeRecall(ms []eval.ModeReport, name string) (float64, bool) {
	i := slices.IndexFunc(ms, func(x eval.ModeReport) bool { return x.Mode == name })
	if i < 0 {
		return 0, false
	}
	return ms[i].Summary.Recall, true
}

// writeModes prints one graph's table, its skipped modes and the
// questions that failed.
func writeModes(w io.Writer, g graphReport, answered bool) error {
	kinds := []string{eval.KindFact, eval.KindRelation, eval.KindTheme}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprint(tw, "MODE\tCONTEXT RECALL")
	for _, k := range kinds {
		fmt.Fprintf(tw, "\t%s", strings.ToUpper(k))
	}
	parts := evalParts(g.Modes)
	for _, p := range parts {
		fmt.Fprintf(tw, "\t%s", p.name)
	}
	fmt.Fprint(tw, "\tMEAN TOKENS\tP50 MS\tQUESTIONS/S\tFAILED")
	if answered {
		fmt.Fprint(tw, "\tMODEL CALLS\tANSWER OVERLAP\tJUDGE 0-5")
	}
	fmt.Fprintln(tw)
	for _, m := range g.Modes {
		s := m.Summary
		fmt.Fprintf(tw, "%s\t%.2f", m.Mode, s.Recall)
		for _, k := range kinds {
			if r, ok := recallOfKind(m, k); ok {
				fmt.Fprintf(tw, "\t%.2f", r)
			} else {
				fmt.Fprint(tw, "\t-")
			}
		}
		for _, p := range parts {
			fmt.Fprintf(tw, "\t%s", orDash(p.of(s)))
		}
		fmt.Fprintf(tw, "\t%.0f\t%.1f\t%.1f\t%d", s.MeanTokens, s.P50Millis, s.PerSecond, s.Failed)
		if answered {
			fmt.Fprintf(tw, "\t%d\t%s\t%s", s.LLMCalls, orDash(s.Overlap), orDash(s.Score))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(g.Skipped)) {
		fmt.Fprintf(w, "skipped %s: %s\n", name, g.Skipped[name])
	}
	for _, m := range g.Modes {
		for _, r := range m.Results {
			if r.Err != "" {
				fmt.Fprintf(w, "%s, %s: %s\n", m.Mode, r.ID, r.Err)
			}
			if r.JudgeErr != "" {
				fmt.Fprintf(w, "%s, %s: not graded: %s\n", m.Mode, r.ID, r.JudgeErr)
			}
			if v := r.Verdict; v != nil && v.AnswerCut > 0 {
				fmt.Fprintf(w, "%s, %s: graded on the answer's first %d tokens: the rest did not fit the judge's window\n", m.Mode, r.ID, v.AnswerCut)
			}
		}
	}
	return nil
}

// evalPart is a column of the table: recall of one kind of evidence, or
// recall@k.
type evalPart struct {
	name string
	of   func(eval.Summary) *float64
}

// evalParts are the columns some mode of ms has a value for: quote,
// entity, text unit and document recall apart, then recall@2 and @5.
func evalParts(ms []eval.ModeReport) []evalPart {
	all := []evalPart{
		{"QUOTES", func(s eval.Summary) *float64 { return s.QuoteRecall }},
		{"ENTITIES", func(s eval.Summary) *float64 { return s.EntityRecall }},
		{"TEXT UNITS", func(s eval.Summary) *float64 { return s.TextUnitRecall }},
		{"DOCUMENTS", func(s eval.Summary) *float64 { return s.DocumentRecall }},
		{"R@2", func(s eval.Summary) *float64 { return s.RecallAt2 }},
		{"R@5", func(s eval.Summary) *float64 { return s.RecallAt5 }},
	}
	var out []evalPart
	for _, p := range all {
		if slices.ContainsFunc(ms, func(m eval.ModeReport) bool { return p.of(m.Summary) != nil }) {
			out = append(out, p)
		}
	}
	// One kind alone is the context recall column again.
	kinds := 0
	for _, p := range out {
		if !strings.HasPrefix(p.name, "R@") {
			kinds++
		}
	}
	if kinds == 1 {
		out = slices.DeleteFunc(out, func(p evalPart) bool { return !strings.HasPrefix(p.name, "R@") })
	}
	return out
}

// recallOfKind is a mode's mean context recall over the questions of one
// kind that have evidence.
func recallOfKind(m eval.ModeReport, kind string) (float64, bool) {
	sum, n := 0.0, 0
	for _, r := range m.Results {
		if r.Kind == kind && r.Recall.Total > 0 {
			sum += r.Recall.Share()
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}

// emptyContexts says every question of m got an empty context.
func emptyContexts(m eval.ModeReport) bool {
	for _, r := range m.Results {
		if r.Tokens > 0 || r.Err != "" {
			return false
		}
	}
	return len(m.Results) > 0
}

// orDash prints a mean, or "-" where there is none.
func orDash(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f", *v)
}

// writeEvalHTML writes the report page to path, whole or not at all.
func writeEvalHTML(path string, rep evalReport, qs []eval.Question) error {
	p := eval.Page{Title: fmt.Sprintf("kgrag eval: %d questions from %s", rep.Count, rep.Questions), Questions: qs,
		Graphs: []eval.PageGraph{{Source: rep.Source, Modes: rep.Modes}}}
	if b := rep.Against; b != nil {
		p.Graphs = append(p.Graphs, eval.PageGraph{Source: b.Source, Modes: b.Modes})
	}
	f, err := atomicfile.Create(path)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	defer f.Abort()
	if err := eval.WriteHTML(f, p); err != nil {
		return fmt.Errorf("eval: write %s: %w", path, err)
	}
	return f.Commit()
}
