// Package oracle runs GraphRAG 3.3.0's own input loaders, tokenizer and
// chunker (scripts/oracle/graphrag_chunks.py in the venv of
// scripts/graphrag-py.sh) for the tests of internal/tokens, internal/chunk
// and internal/documents. It is for tests only: every function takes a
// testing.TB and fails it on error.
//
//	res := oracle.Run(t, oracle.Job{Op: "encode", Encoding: "o200k_base", Texts: texts})
//	ids := res[0].IDs
package oracle

import (
	"path/filepath"
	"testing"

	"github.com/kgrag/kgrag/internal/test"
)

// Job is one request to the oracle; Op says which of the other fields it
// reads (see the script's doc).
type Job struct {
	Op       string   `json:"op"` // encode, decode, replace, chunk or load
	Encoding string   `json:"encoding,omitempty"`
	Texts    []string `json:"texts,omitempty"`
	IDs      [][]int  `json:"ids,omitempty"`
	Hex      []string `json:"hex,omitempty"`

	// chunk
	Size            int        `json:"size"`
	Overlap         int        `json:"overlap"`
	PrependMetadata []string   `json:"prepend_metadata,omitempty"`
	Documents       []Document `json:"documents,omitempty"`

	// load
	Dir         string `json:"dir,omitempty"`
	Type        string `json:"type,omitempty"` // text (default) or csv
	FilePattern string `json:"file_pattern,omitempty"`
	TextColumn  string `json:"text_column,omitempty"`
	TitleColumn string `json:"title_column,omitempty"`
}

// Document is a row of GraphRAG's documents table as its loader makes it.
type Document struct {
	ID              string         `json:"id"`
	HumanReadableID int            `json:"human_readable_id"`
	Title           string         `json:"title"`
	Text            string         `json:"text"`
	CreationDate    string         `json:"creation_date"`
	RawData         map[string]any `json:"raw_data"`
}

// TextUnit is a row of GraphRAG's final text_units table (without the
// entity, relationship and covariate ids).
type TextUnit struct {
	ID              string `json:"id"`
	HumanReadableID int    `json:"human_readable_id"`
	DocumentID      string `json:"document_id"`
	Text            string `json:"text"`
	NTokens         int    `json:"n_tokens"`
}

// Result is the oracle's answer to one Job. Error is set when GraphRAG's
// code raised.
type Result struct {
	IDs       [][]int    `json:"ids"`
	Texts     []string   `json:"texts"`
	TextUnits []TextUnit `json:"text_units"`
	Documents []Document `json:"documents"`
	Error     string     `json:"error"`
}

// Run runs jobs in one interpreter and returns the answers in order. It
// skips t (fails it under KGRAG_TEST_DISALLOW_SKIP=1) when GraphRAG's venv
// is not ready or KGRAG_EXTERNAL is not 1 (test.GraphRAGPython).
func Run(t testing.TB, jobs ...Job) []Result {
	t.Helper()
	py := test.GraphRAGPython(t)
	return test.PythonJSONL[Result](t, py, []string{filepath.Join(test.RepoRoot(t), "scripts", "oracle", "graphrag_chunks.py")}, jobs)
}
