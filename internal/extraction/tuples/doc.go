// Package tuples reads the replies a model writes to GraphRAG-style
// extraction prompts: entities and relationships (ParseGraph) and claims
// (ParseClaims) as tuple-delimited records, such as
//
//	("entity"<|>EBENEZER SCROOGE<|>PERSON<|>A miserly London moneylender)
//	##
//	("relationship"<|>EBENEZER SCROOGE<|>JACOB MARLEY<|>Marley was Scrooge's partner<|>9)
//	##
//	<|COMPLETE|>
//
// # What GraphRAG does
//
// GraphRAG 3.3.0 (graph_extractor.py, GraphExtractor._process_result)
// splits a reply at "##", takes one "(" and one ")" off each record,
// splits it at "<|>", and keeps records whose first field is exactly
// "entity" or "relationship" in double quotes with at least 4 or 5
// fields. Names and types go through clean_str (HTML entities unescaped,
// control characters removed, trimmed) and str.upper; quotes are not
// removed, so `"ALICE"` is a title of its own. The strength is float() of
// the last field, 1.0 when that fails, with no range check. Nameless
// entities and self-loops are kept (its later filter_orphan_relationships
// drops only relationships whose ends are not entity titles). Everything
// else is lost without a trace, including, in its own prompt's example
// layout, the strength of a last record followed by "\n<|COMPLETE|>"
// rather than "##" (float("9)\n<|COMPLETE|>") fails, so 9 becomes 1.0).
// Claims (claim_extractor.py, _parse_claim_tuples) are split the same
// way without a kind, fields by position, nothing upper-cased, and every
// piece kept, missing fields as None.
//
// # What this package does
//
// Small local models stray from the format all the time, so this parser
// reads more, counts what it repaired (Result.Repairs, by Repair kind)
// and says what it dropped and why (Result.Dropped). It never fails and
// never panics, and its cost is linear in the reply.
//
// Tolerated and counted: records parted by line breaks instead of "##",
// or by "), (" on one line; records without parentheses, with doubled
// ones, or with punctuation after them; list bullets, numbers, heading
// hashes or a label ("Entity 1:") before a record; code fences; prose
// before, between and after records (a <think> block too); the
// completion delimiter missing, repeated, in another case or between
// records; the tuple delimiter with blanks inside ("<| >"), or "|" in a
// Markdown table row or right after a kind word, or commas between fields
// that are all in double quotes; the kind in another case, without
// quotes, plural, or "relation"; quotes, Markdown emphasis or <brackets>
// around fields, and a stray double quote at either end of a text; a
// record continued on the next line while it lacks fields, ends with a
// delimiter or has not closed its "("; fields missing, empty or extra; a
// relationship strength that is missing, not a number ("high"), written
// "8/10", or outside (0, MaxWeight]: then the weight is DefaultWeight,
// GraphRAG's fallback of 1.0, with HasWeight false.
//
// Field rules, where a guess is needed: an entity with two fields after
// its kind has a type, unless the second reads as a description (a
// sentence ending in ".", "!" or "?", or more than six words); one with a
// name only is kept. A relationship of
// three fields after its kind has a strength there if it is a number,
// else a description. Extra fields are joined to the description with
// spaces; a number at the end of an entity is dropped.
//
// Dropped, with a Reason*: a record that begins like one but has no
// delimiter that can be split safely ("(entity, A, B, text, with commas)");
// a kind other than entity or relationship ("event", "claim", none); an
// entity without a name; a relationship without both ends, or whose ends
// are equal once normalised. The last two differ from GraphRAG on purpose.
//
// Names (titles, types, relationship ends; claim subjects, objects,
// types and statuses) are normalised as GraphRAG normalises titles (HTML
// entities unescaped, control characters removed, trimmed, upper-cased as
// Python's str.upper, so "ß" becomes "SS") and beyond that: quotes,
// emphasis and brackets at the ends removed, runs of blanks made one
// space, tabs and line breaks made blanks instead of vanishing.
// Descriptions are cleaned the same way without upper-casing, and lose
// quotes only when they wrap the whole text or stray at one end. Claim
// subjects and objects are upper-cased, unlike GraphRAG, so that they
// match entity titles.
//
// The parser reads one reply. Parse each reply (each gleaning round too)
// on its own: GraphRAG joins rounds with nothing between them, which
// glues records together when a round lacks the completion delimiter.
// Merging entities by title across chunks, summing relationship weights
// and dropping relationships whose ends were never extracted as entities
// (GraphRAG's filter_orphan_relationships) belong to the caller.
//
// All functions are pure and safe for concurrent use.
//
// Usage:
//
//	res := tuples.ParseGraph(reply, tuples.DefaultDelimiters())
//	for _, e := range res.Entities {
//		graph.AddEntity(chunkID, e.Title, e.Type, e.Description)
//	}
//	for _, r := range res.Relationships {
//		graph.AddRelationship(chunkID, r.Source, r.Target, r.Description, r.Weight)
//	}
//	for _, d := range res.Dropped {
//		slog.Debug("extraction record dropped", "reason", d.Reason, "record", d.Record)
//	}
//	stats.Dropped += len(res.Dropped)
package tuples
