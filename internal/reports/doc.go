// Package reports writes the community reports of a knowledge graph as
// Microsoft GraphRAG 3.3.0 does (index/workflows/create_community_reports):
// one LLM call per community, whose JSON reply (title, summary, findings,
// rating, rating explanation) becomes a graphrag.CommunityReport ready for
// graphrag.Write3x.
//
// A Builder makes each community's context the way GraphRAG does, byte
// for byte: its entities and relationships as CSV tables, relationships by
// combined degree, cut to the token budget (max_input_length, 8000).
// Like GraphRAG's, the tables are sparse: each member entity brings at
// most one relationship (its first as source, else as target), so a
// community's context lists only some of its relationships. A
// community whose context is over the budget all the same is given the
// reports of its sub-communities in place of their tables, largest first,
// until it fits. A Generator writes the reports bottom-up, so that those
// sub-community reports exist when they are needed, with a bounded number
// of calls at a time; it repairs almost-JSON replies (internal/jsonrepair),
// asks once more when a reply cannot be used, and counts calls, tokens and
// how replies parsed.
//
// NewTextBuilder makes the contexts of GraphRAG's fast method instead
// (create_community_reports_text): a community's text units as a
// "-----SOURCES-----" CSV table, ranked by the degrees of the community's
// entities in each, and its reports are asked for with the
// index_report_text prompt. The same Generator writes them.
//
// Two things GraphRAG 3.3.0 does are not what its code sets out to do.
// Its summarize_communities builds every level's contexts before it writes
// any report, so no sub-community report is ever there to substitute (an
// over-budget context is trimmed instead): kgrag writes bottom-up, as
// build_level_context intends. And claims never reach its contexts:
// Builder leaves them out too, so that the contexts match. See NewBuilder
// and Builder.Context.
//
// GraphRAG 3.x counts tokens with its model's tokenizer (o200k_base for
// the OpenAI models it defaults to); kgrag counts with the Encoder it is
// given, and the comparison tests cover both cl100k_base and o200k_base.
//
// Usage:
//
//	enc, _ := tokens.NewEncoder(tokens.EncodingCL100K)
//	b, err := reports.NewBuilder(ds, enc, reports.DefaultMaxInputTokens)
//	if err != nil {
//		return err
//	}
//	g, err := reports.NewGenerator(b, client, reports.DefaultOptions())
//	if err != nil {
//		return err
//	}
//	res, err := g.Run(ctx, reports.Hooks{Progress: func(p reports.Progress) {
//		fmt.Fprintf(os.Stderr, "\rreports %d/%d", p.Done, p.Total)
//	}})
//	if err != nil {
//		return err
//	}
//	res.Attach(ds) // each report on its community
//	return graphrag.Write3x(ctx, dir, ds)
package reports
