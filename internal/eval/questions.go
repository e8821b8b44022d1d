// Package eval measures what kgrag's query modes retrieve: a question set
// with gold evidence (quotes of the text, entity titles, text unit ids)
// is asked of each mode, and each context is scored by the share of the
// evidence it holds (context recall), beside its size and what it cost.
// kgrag eval runs it; the question files are JSONL or YAML.
package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Kinds of question.
const (
	KindFact     = "fact"     // a fact about one character or thing
	KindRelation = "relation" // a relation between two
	KindTheme    = "theme"    // a theme across the text
	KindAbsent   = "absent"   // a question the text does not answer
)

// Question is one question of a set, with what a good context holds.
type Question struct {
	ID       string   `json:"id" yaml:"id"`
	Kind     string   `json:"kind,omitempty" yaml:"kind,omitempty"`
	Question string   `json:"question" yaml:"question"`
	Answer   string   `json:"answer,omitempty" yaml:"answer,omitempty"`
	Evidence Evidence `json:"evidence" yaml:"evidence"`
	// Line is where the question starts in its file (1-based).
	Line int `json:"-" yaml:"-"`
}

// Evidence is what the context should hold for the question to be
// answerable: quotes of the source text, entities by title, text units
// by id (GraphRAG's id or human_readable_id), documents by title (a
// published multi-hop set's supporting passages, each indexed as one
// document).
type Evidence struct {
	Quotes    []string `json:"quotes,omitempty" yaml:"quotes,omitempty"`
	Entities  []string `json:"entities,omitempty" yaml:"entities,omitempty"`
	TextUnits []string `json:"text_units,omitempty" yaml:"text_units,omitempty"`
	Documents []string `json:"documents,omitempty" yaml:"documents,omitempty"`
}

// Items counts the pieces of evidence.
func (e Evidence) Items() int {
	return len(e.Quotes) + len(e.Entities) + len(e.TextUnits) + len(e.Documents)
}

// LineError is a question file's line that cannot be used.
type LineError struct {
	File string
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// ReadFile reads a question set: JSONL (.jsonl, .json, one object a line)
// or YAML (.yaml, .yml, a list of questions).
func ReadFile(path string) ([]Question, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
		return readYAML(b, path)
	}
	return readJSONL(bytes.NewReader(b), path)
}

func readJSONL(r io.Reader, name string) ([]Question, error) {
	var out []Question
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		var q Question
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&q); err != nil {
			return nil, &LineError{name, n, fmt.Errorf("not a question object: %w", err)}
		}
		q.Line = n
		out = append(out, q)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("eval: read %s: %w", name, err)
	}
	return out, check(out, name)
}

func readYAML(b []byte, name string) ([]Question, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("eval: %s: %w", name, err)
	}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("eval: %s holds no questions", name)
	}
	list := doc.Content[0]
	if list.Kind != yaml.SequenceNode {
		return nil, &LineError{name, list.Line, errors.New("want a list of questions")}
	}
	out := make([]Question, 0, len(list.Content))
	for _, item := range list.Content {
		var q Question
		if err := item.Decode(&q); err != nil {
			return nil, &LineError{name, item.Line, err}
		}
		q.Line = item.Line
		out = append(out, q)
	}
	return out, check(out, name)
}

// check refuses a set kgrag cannot score: no question, a question without
// text, an unknown kind, an id given twice. Ids left out are numbered.
func check(qs []Question, name string) error {
	if len(qs) == 0 {
		return fmt.Errorf("eval: %s holds no questions", name)
	}
	seen := map[string]int{}
	for i := range qs {
		q := &qs[i]
		if q.ID == "" {
			q.ID = fmt.Sprintf("q%d", i+1)
		}
		switch {
		case strings.TrimSpace(q.Question) == "":
			return &LineError{name, q.Line, errors.New("the question is empty")}
		case q.Kind != "" && !slices.Contains([]string{KindFact, KindRelation, KindTheme, KindAbsent}, q.Kind):
			return &LineError{name, q.Line, fmt.Errorf("kind %q: want fact, relation, theme or absent", q.Kind)}
		case seen[q.ID] != 0:
			return &LineError{name, q.Line, fmt.Errorf("id %q is used on line %d too", q.ID, seen[q.ID])}
		}
		seen[q.ID] = q.Line
	}
	return nil
}
