// Package documents reads the input folder of kgrag's indexer as
// GraphRAG 3.3.0's input loaders (graphrag_input) read theirs: .txt and
// .md files as one document each, .csv files as one document per row
// (the text column named by an option, an optional title column), and PDF
// files by their extracted text. Each document's id is the SHA-512 of its
// text, so ids are stable across runs and equal GraphRAG's for text and
// CSV input; titles and creation dates are made as GraphRAG makes them.
//
// Files are read in sorted path order, one at a time:
//
//	sum, err := documents.Read(ctx, "input", documents.Options{TextColumn: "body"},
//		func(d documents.Document) error {
//			units := chunker.Document(d)
//			...
//			return nil
//		})
//
// A file that cannot be read (not UTF-8, a malformed PDF, a CSV file
// without the text column) is an *Error naming the file, and the row for
// CSV; Options.SkipBad skips it instead, as GraphRAG does, and lists it in
// the Summary.
package documents
