// Package prompttune owns kgrag prompt-tune: from a sample of a corpus
// and a chat model it writes kgrag index's extraction, description
// summary and community report templates adapted to the corpus, as
// Microsoft GraphRAG 3.3.0's prompt tuning (graphrag prompt-tune) does,
// with kgrag's own prompts (prompts/templates/tune_*.tmpl, tuned_*.tmpl).
//
// The steps, one model call each unless said otherwise:
//
//  1. Sample: the corpus is read (internal/documents) and chunked
//     (internal/chunk) as kgrag index reads it, and Limit chunks are
//     picked: random (seeded), top (the first ones) or all.
//  2. Domain: the subject of the sample in a few words (skipped when
//     given).
//  3. Language: the language of the sample (skipped when given), checked
//     against the script of the text itself.
//  4. Persona: the expert the tuned prompts speak as.
//  5. Entity types: the kinds of entity the sample names (skipped when
//     given).
//  6. Examples: for short passages of the sampled chunks, the model
//     extracts records, kgrag keeps the ones its tuple parser reads whose
//     entities the passage names and whose types are listed, and writes
//     them back in the exact record format as worked examples; a passage
//     that gives no usable record is replaced by the next one, up to a
//     bound of calls.
//  7. Rating and role: what a community report's rating measures for
//     this corpus, and who writes the reports.
//
// Small models answer loosely, so every reply is cleaned (reasoning
// blocks, labels, quotes, markdown, rambling cut) and checked, and a step
// whose reply cannot be used falls back to kgrag's default with a warning
// (Result.Warnings) rather than writing a broken prompt. Where kgrag differs
// from GraphRAG on purpose: the sample text sent with each question is
// cut to a token budget (GraphRAG sends every sampled chunk whole, which
// overflows a small model's context); examples are short passages, not
// whole chunks, and are validated; the language is checked against the
// text's script; a fixed seed makes random selection repeatable.
//
// Usage:
//
//	res, err := prompttune.Tune(ctx, client, prompttune.Options{Input: "books", Limit: 15})
//	if err != nil {
//		return err
//	}
//	for _, w := range res.Warnings {
//		fmt.Fprintln(os.Stderr, "warning:", w)
//	}
//	err = res.Write("prompts", false) // then: kgrag index --prompts prompts
package prompttune
