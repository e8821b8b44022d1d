// Package extraction is the model-calling half of kgrag index's graph
// extraction: for each text unit it holds the conversation GraphRAG
// 3.3.0's GraphExtractor (and, when claims are on, ClaimExtractor) holds
// with the model, with kgrag's own prompts (prompts/templates/
// index_extract*.tmpl, index_claims*.tmpl), and reads every reply with
// internal/extract.
//
// # The conversation
//
// As GraphRAG's _process_document builds it, for one text unit:
//
//  1. user: the extraction prompt, filled with the entity types and the
//     text (for the graph, the text stripped of surrounding white space
//     as Python's str.strip does; for claims, as it is);
//     assistant: the first records.
//  2. Up to MaxGleanings rounds of:
//     user: the continue prompt (records were missed, add them);
//     assistant: more records;
//     and, unless that was the last round, user: the loop prompt (is
//     anything still missing? Y or N), whose answer ends the rounds
//     unless it is yes. The loop question stays in the history and its
//     answer does not, exactly as in GraphRAG, so a later round sends the
//     loop question and the continue prompt as two user messages in a
//     row.
//
// Calls per unit and stage: 1 without gleanings; with g rounds, 1 + g +
// (g-1) when the model keeps saying yes, 3 when it says no at once (g
// above 1), 2 when g is 1 (GraphRAG's default: no loop question).
//
// Where this differs from GraphRAG, on purpose:
//
//   - Every reply is parsed on its own (tuples.ParseGraph, ParseClaims)
//     and the rounds' records are concatenated in order, repeats kept.
//     GraphRAG concatenates the reply texts first, which glues the last
//     record of one round to the first of the next when a reply ends
//     with the completion delimiter, as its own prompt asks.
//   - Claims of the gleaning rounds are kept. GraphRAG 3.3.0's
//     ClaimExtractor builds them and then parses only the first reply.
//   - A loop answer of "y", "Yes." or "**Y**" goes on; GraphRAG goes on
//     only on exactly "Y". Anything that is neither yes nor no stops, as
//     in GraphRAG, and is counted (Stats.UnclearAnswers).
//   - A blank text costs no call.
//   - The claim prompt lists the entity specification one per line;
//     GraphRAG writes the Python list's repr into it.
//   - A failed call fails the unit with a *UnitError naming it; GraphRAG
//     logs it and goes on with the unit empty. Run goes on too, unless
//     the failure would fail every call (see Run).
//
// Defaults are GraphRAG's (DefaultOptions): entity types organization,
// person, geo and event; one gleaning round; claims off, and when on,
// the claim description "Any claims or facts that could be relevant to
// information discovery." with the default entity types as the entity
// specification.
//
// Merging records across text units is internal/graphbuild's job:
// Result.Extraction and Extractions give its input.
//
// Usage:
//
//	x, err := extraction.New(client, enc, extraction.DefaultOptions())
//	if err != nil {
//		return err
//	}
//	batch, err := x.Run(ctx, units, extraction.RunOptions{Concurrency: 4, Progress: bar.Set})
//	if err != nil {
//		return err // the server is down, or every unit failed
//	}
//	for _, f := range batch.Failed {
//		slog.Warn("text unit skipped", "id", f.TextUnitID, "err", f.Err)
//	}
//	g := graphbuild.Merge(extraction.Extractions(batch.Results))
package extraction
