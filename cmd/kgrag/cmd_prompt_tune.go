package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kgrag/kgrag/internal/chunk"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/prompttune"
	"github.com/urfave/cli/v3"
)

// promptTuneOptions is everything `kgrag prompt-tune` needs.
type promptTuneOptions struct {
	input, output      string
	force              bool
	chatModel          string
	selection          string
	limit              int
	seed               uint64
	language, domain   string
	entityTypes        string
	maxEntityTypes     int
	examples           int
	exampleTokens      int
	maxPromptTokens    int
	sampleTokens       int
	chunkSize, overlap int
	textColumn         string
	temperature        float64
	maxTokens          int
	quiet              bool
	llm                llmOptions
}

func newPromptTuneCommand(term terminal) *cli.Command {
	o := &promptTuneOptions{chatModel: defaultChatModel}
	return &cli.Command{
		Name:      "prompt-tune",
		Usage:     "write extraction, summary and report prompts adapted to a corpus, for kgrag index --prompts",
		ArgsUsage: " ",
		Description: `Reads a sample of the documents under --input (chunked as kgrag index chunks
them) and asks the chat model what they are about (the domain), which
language they are in, who the expert reading them is (a persona), which
kinds of entity they name, and to extract the records of a few short
passages, as Microsoft GraphRAG 3.3.0's prompt-tune does. From the answers
it writes into --output:

   index_extract.tmpl     the extraction prompt: the entity types found and
                          worked examples drawn from the corpus
   index_summarize.tmpl   the description summary prompt
   index_report.tmpl      the community report prompt
   prompt-tune.json       what was found, the examples, the warnings

Tune when the corpus is not news-like English (GraphRAG's default types
organization, person, geo, event miss what matters in, say, case law or
lab notes), or when the model is small: worked examples from the corpus
itself help a small model keep to the record format. Replies that cannot
be used (a small model's often) are dropped, and the step falls back to
kgrag's default with a warning; examples are kept only when kgrag's own
record parser reads them. The files are Go text/templates; edit them
freely, kgrag index checks them when it opens the folder.

   kgrag prompt-tune --input ./books --output ./prompts --chat-model qwen2.5:7b
   kgrag index --input ./books --output ./ragtest/output --prompts ./prompts

With Ollama's small models, bound the sample and the replies:

   kgrag prompt-tune --input ./books --output ./prompts --chat-model llama3.2:1b \
       --limit 5 --chunk-size 300 --max-tokens 400

Keep what you know, let the model find the rest:

   kgrag prompt-tune --input ./contracts --output ./prompts \
       --domain "commercial contracts" --language English --force
` + exitStatusHelp,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "input", Destination: &o.input, Aliases: []string{"i"}, Usage: "`DIR` of documents to sample (what kgrag index --input reads)"},
			&cli.StringFlag{Name: "output", Destination: &o.output, Aliases: []string{"o"}, Usage: "`DIR` to write the prompts to (made if missing; must be empty unless --force)"},
			&cli.BoolFlag{Name: "force", Destination: &o.force, Usage: "write into a --output folder that is not empty, replacing its prompts"},
			chatModelFlag("chat model `NAME` that is asked", &o.chatModel),
			&cli.StringFlag{Name: "selection", Destination: &o.selection, Value: prompttune.SelectRandom, Usage: "`HOW` chunks are sampled: random (seeded by --seed), top (the first ones) or all"},
			&cli.IntFlag{Name: "limit", Destination: &o.limit, Value: prompttune.DefaultLimit, Usage: "`N` chunks sampled (random, top)"},
			&cli.Uint64Flag{Name: "seed", Destination: &o.seed, Value: prompttune.DefaultSeed, Usage: "seed of the random selection: the same seed samples the same chunks"},
			&cli.StringFlag{Name: "language", Destination: &o.language, Usage: "language of the corpus (e.g. English, Chinese); default: detected"},
			&cli.StringFlag{Name: "domain", Destination: &o.domain, Usage: "what the corpus is about (e.g. \"marine biology\"); default: asked of the model"},
			&cli.StringFlag{Name: "entity-types", Destination: &o.entityTypes, Usage: "comma-separated entity `TYPES` to use as given; default: found in the sample"},
			&cli.IntFlag{Name: "max-entity-types", Destination: &o.maxEntityTypes, Value: prompttune.DefaultMaxEntityTypes, Usage: "most entity types kept from the model's list"},
			&cli.IntFlag{Name: "examples", Destination: &o.examples, Value: prompttune.DefaultExamples, Usage: "most worked examples in the extraction prompt"},
			&cli.IntFlag{Name: "example-tokens", Destination: &o.exampleTokens, Value: prompttune.DefaultExampleTokens, Usage: "`TOKENS` of corpus text per example passage"},
			&cli.IntFlag{Name: "max-prompt-tokens", Destination: &o.maxPromptTokens, Value: prompttune.DefaultMaxPromptTokens, Usage: "`TOKENS` the extraction prompt may count without the passage it is sent with; examples are left out (down to one) to fit (GraphRAG's --max-tokens)"},
			&cli.IntFlag{Name: "sample-tokens", Destination: &o.sampleTokens, Value: prompttune.DefaultSampleTokens, Usage: "`TOKENS` of sampled text sent with each question (cut to fit the chat model's window)"},
			&cli.IntFlag{Name: "chunk-size", Destination: &o.chunkSize, Value: chunk.DefaultSize, Usage: "tokens per chunk, as kgrag index --chunk-size"},
			&cli.IntFlag{Name: "chunk-overlap", Destination: &o.overlap, Value: chunk.DefaultOverlap, Usage: "tokens a chunk shares with the next"},
			&cli.StringFlag{Name: "text-column", Destination: &o.textColumn, Value: "text", Usage: "CSV `COLUMN` holding a row's text"},
			&cli.FloatFlag{Name: "temperature", Destination: &o.temperature, Category: "model server", Value: 0, Usage: "sampling temperature of every call"},
			&cli.IntFlag{Name: "max-tokens", Destination: &o.maxTokens, Category: "model server", Usage: "stop each reply after `N` tokens (0: an eighth of the chat window, 256 to 2048); bounds a small model that rambles"},
			chatWindowFlag(&o.llm.chatWindow),
		}, llmFlags(&o.llm)...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usagef("kgrag prompt-tune --input DIR --output DIR", "prompt-tune takes no arguments, got %q", cmd.Args().First())
			}
			o.quiet = term.isQuiet()
			return runPromptTune(ctx, *o, term)
		},
	}
}

func (o promptTuneOptions) validate() error {
	const try = "kgrag prompt-tune --input ./docs --output ./prompts"
	switch {
	case o.input == "":
		return usagef(try, "--input is required: the folder of documents to sample")
	case o.output == "":
		return usagef(try, "--output is required: the folder to write the prompts to")
	case o.chatModel == "":
		return usagef("--chat-model "+defaultChatModel, "--chat-model is empty: name the chat model")
	case o.selection != prompttune.SelectRandom && o.selection != prompttune.SelectTop && o.selection != prompttune.SelectAll:
		return usagef("--selection random", "--selection must be random, top or all, not %q", o.selection)
	case o.limit < 1:
		return usagef("--limit 15", "--limit must be at least 1")
	case o.maxEntityTypes < 1:
		return usagef("--max-entity-types 8", "--max-entity-types must be at least 1")
	case o.examples < 1:
		return usagef("--examples 3", "--examples must be at least 1")
	case o.exampleTokens < 20:
		return usagef("--example-tokens 200", "--example-tokens must be at least 20")
	case o.maxPromptTokens < 1 || o.sampleTokens < 50:
		return usagef("--max-prompt-tokens 2000 --sample-tokens 1000", "--max-prompt-tokens must be positive and --sample-tokens at least 50")
	case o.temperature < 0 || o.temperature > 2:
		return usagef("--temperature 0", "--temperature %v is out of range: 0 to 2", o.temperature)
	case o.maxTokens < 0:
		return usagef("--max-tokens 400", "--max-tokens must not be negative")
	}
	if err := (chunk.Options{Size: o.chunkSize, Overlap: o.overlap}).Validate(); err != nil {
		return usagef("--chunk-size 1200 --chunk-overlap 100", "%v", err)
	}
	return o.llm.validate()
}

func runPromptTune(ctx context.Context, o promptTuneOptions, term terminal) error {
	if err := o.validate(); err != nil {
		return err
	}
	// Found now, not after the model calls.
	if err := prompttune.CheckOutput(o.output, o.force); err != nil {
		return err
	}
	client, err := o.llm.client()
	if err != nil {
		return err
	}
	temp := float32(o.temperature)
	opts := prompttune.Options{
		Input: o.input, Chunk: chunk.Options{Size: o.chunkSize, Overlap: o.overlap},
		Selection: o.selection, Limit: o.limit, Seed: o.seed,
		Domain: o.domain, Language: o.language, EntityTypes: splitList(o.entityTypes), MaxEntityTypes: o.maxEntityTypes,
		Examples: o.examples, ExampleTokens: o.exampleTokens, MaxPromptTokens: o.maxPromptTokens, SampleTokens: o.sampleTokens,
		Chat: llm.ChatOptions{Model: o.chatModel, Temperature: &temp, MaxTokens: o.maxTokens},
	}
	opts.Documents.TextColumn = o.textColumn
	w, err := client.Window(ctx, llm.WindowChat, o.chatModel)
	if err != nil {
		return err
	}
	if w.Known() && !o.quiet {
		fmt.Fprintf(term.err, "chat window: %s\n", w)
	}
	opts.Budget = llm.NewBudget(w, 0, o.maxTokens)
	start := time.Now()
	if !o.quiet {
		opts.Progress = func(step, detail string) {
			if detail != "" {
				detail = ": " + detail
			}
			fmt.Fprintf(term.err, "prompt-tune: %s%s (%s)\n", step, detail, time.Since(start).Round(100*time.Millisecond))
		}
	}
	res, err := prompttune.Tune(ctx, client, opts)
	if err != nil {
		return err
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(term.err, "kgrag: warning: %s\n", w)
	}
	if err := res.Write(o.output, o.force); err != nil {
		return err
	}
	fmt.Fprintf(term.err, "prompt-tune: domain %q, language %s, %d entity types (%s), %d examples from the corpus; %d model calls in %s; prompts in %s\n",
		res.Domain, res.Language, len(res.EntityTypes), strings.Join(res.EntityTypes, ", "), len(res.Examples), res.Calls,
		time.Since(start).Round(100*time.Millisecond), o.output)
	fmt.Fprintf(term.out, "%s\n", o.output)
	return nil
}

// splitList splits a comma-separated flag value, leaving out blanks.
func splitList(s string) []string {
	var out []string
	for t := range strings.SplitSeq(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}
