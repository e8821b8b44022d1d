// Package nounphrase finds the noun phrases of English text without a
// model server, as Microsoft GraphRAG 3.3.0's fast indexing method does
// with its default extractor (extract_graph_nlp, text_analyzer
// extractor_type regex_english): the text is tokenised and tagged with
// Penn Treebank parts of speech, adjacent tags are merged by TextBlob's
// fast noun-phrase grammar (proper noun + proper noun, noun + noun,
// adjective + noun, ...), and a phrase is kept when it holds a proper
// noun, has more than one word or a hyphenated word, and every word is
// plain letters, digits and hyphens of at most MaxWordLength characters.
// Phrases are upper-cased and words on the stop list (GraphRAG's
// EN_STOP_WORDS) are left out of them.
//
// Tagging is github.com/jdkato/prose/v2's averaged perceptron, the same
// kind of tagger as NLTK's that TextBlob calls; GraphRAG's own extractor
// chunks with a tagger trained on the Brown corpus, so the phrases of a
// text are alike but not the same (the comparison test says how alike).
// One correction makes up for the second tagger GraphRAG has: a
// capitalised word at the head of a line or sentence that the text also
// writes in lower case is not a proper noun (Options.KeepInitialCapitals
// turns it off).
//
// An Extractor is safe for concurrent use; its model is loaded once, by
// New.
//
//	x, err := nounphrase.New(nounphrase.DefaultOptions())
//	if err != nil {
//		return err
//	}
//	phrases := x.Extract("Marley was dead: to begin with. Old Marley was as dead as a door-nail.")
//	// [DOOR-NAIL MARLEY OLD MARLEY]
package nounphrase
