package graphrag

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// RunFile is the file kgrag index writes beside the tables, saying what
// made them: GraphRAG itself writes no such record, so an output without
// one is an output of Microsoft GraphRAG (or of an older kgrag).
const RunFile = "kgrag_run.json"

// Run is the record of the index run that wrote an output: the tool and
// its version, when it ran, with which models and prompts, and where each
// document came from. It is what the provenance of the mapped graph says.
type Run struct {
	Tool           string    `json:"tool"`
	Version        string    `json:"version"`
	Started        time.Time `json:"started"`
	Ended          time.Time `json:"ended"`
	ChatModel      string    `json:"chat_model"`
	EmbeddingModel string    `json:"embedding_model,omitempty"`
	// Prompts maps each prompt template the run used to the SHA-256 of
	// its text.
	Prompts map[string]string `json:"prompts"`
	// Documents maps document ids to where they were read from.
	Documents map[string]RunDocument `json:"documents"`
}

// RunDocument is where a document was read from: its path under the input
// folder (for a CSV file, the file of the row).
type RunDocument struct {
	Path string `json:"path"`
}

// ReadRun reads dir's RunFile; it returns nil and no error when there is
// none, and an *Error naming the file when it does not parse.
func ReadRun(dir string) (*Run, error) {
	path := filepath.Join(dir, RunFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &Error{Op: "read", Path: path, Row: -1, Err: err}
	}
	var r Run
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, &Error{Op: "read", Path: path, Row: -1, Err: fmt.Errorf("not a kgrag run record: %w", err)}
	}
	return &r, nil
}

// WriteRun writes r as dir's RunFile.
func WriteRun(dir string, r *Run) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(dir, RunFile)
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return &Error{Op: "write", Path: path, Row: -1, Err: err}
	}
	return nil
}
