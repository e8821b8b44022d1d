package eval

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Passage is one passage of a published multi-hop set: each is indexed as
// one document, titled Title.
type Passage struct {
	Title, Text string
}

// Document is the passage as kgrag index reads it: its title as a
// sentence of its own, then its text (a title run into the first
// sentence would make one noun phrase of both).
func (p Passage) Document() string {
	t := strings.TrimSpace(p.Title)
	if t != "" && !strings.ContainsAny(t[len(t)-1:], ".!?") {
		t += "."
	}
	return t + "\n" + strings.TrimSpace(p.Text)
}

// Set is a question set with, for a published multi-hop set, the passages
// its questions are asked over.
type Set struct {
	Questions []Question
	// Passages are the corpus (empty for kgrag's own format): the
	// questions' context passages, and those of the corpus file.
	Passages []Passage
	// Format names the format read: "kgrag", "hotpotqa" (HotpotQA and
	// 2WikiMultiHopQA) or "musique".
	Format string
}

// The formats ReadSet reads.
const (
	FormatKgrag    = "kgrag"
	FormatHotpotQA = "hotpotqa"
	FormatMuSiQue  = "musique"
)

// ReadSet reads a question set: kgrag's own (see ReadFile), or a
// published multi-hop set as it is distributed:
//   - HotpotQA and 2WikiMultiHopQA: a JSON list of records with question,
//     answer, supporting_facts (pairs of passage title and sentence) and
//     context (pairs of title and sentences);
//   - MuSiQue: JSON lines (or a JSON list) of records with question,
//     answer and paragraphs (title, paragraph_text, is_supporting).
//
// The gold evidence of a published question is its supporting passages,
// as documents by title. corpus, when not "", is a file of more passages
// (HippoRAG's packing: an object from title to sentences, or a list of
// {title, text}); the questions' own context passages are added to it.
// A title given to two passages of different text is made unique by a
// number: "Lilu (2)".
func ReadSet(questions, corpus string) (*Set, error) {
	b, err := os.ReadFile(questions)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	format, err := sniff(b)
	if err != nil {
		return nil, fmt.Errorf("eval: %s: %w", questions, err)
	}
	if format == FormatKgrag {
		if corpus != "" {
			return nil, fmt.Errorf("eval: --corpus goes with a published multi-hop set (HotpotQA, 2Wiki, MuSiQue); %s is in kgrag's own format", questions)
		}
		qs, err := ReadFile(questions)
		if err != nil {
			return nil, err
		}
		return &Set{Questions: qs, Format: format}, nil
	}
	c := newCorpus()
	if corpus != "" {
		if err := c.readFile(corpus); err != nil {
			return nil, err
		}
	}
	var qs []Question
	switch format {
	case FormatHotpotQA:
		qs, err = readHotpot(b, questions, c)
	case FormatMuSiQue:
		qs, err = readMuSiQue(b, questions, c)
	}
	if err != nil {
		return nil, err
	}
	if err := check(qs, questions); err != nil {
		return nil, err
	}
	return &Set{Questions: qs, Passages: c.passages, Format: format}, nil
}

// sniff tells the format of a question file from its first record.
func sniff(b []byte) (string, error) {
	b = bytes.TrimSpace(b)
	var first map[string]json.RawMessage
	switch {
	case len(b) == 0:
		return "", errors.New("the file is empty")
	case b[0] == '[':
		var list []map[string]json.RawMessage
		if err := json.Unmarshal(b, &list); err != nil {
			return "", fmt.Errorf("not a JSON list of question records: %w", err)
		}
		if len(list) == 0 {
			return "", errors.New("the list holds no questions")
		}
		first = list[0]
	case b[0] == '{':
		line, _, _ := bytes.Cut(b, []byte("\n"))
		if json.Unmarshal(line, &first) != nil {
			return FormatKgrag, nil // let ReadFile say what is wrong
		}
	default:
		return FormatKgrag, nil // YAML
	}
	_, facts := first["supporting_facts"]
	_, context := first["context"]
	_, paragraphs := first["paragraphs"]
	switch {
	case facts && context:
		return FormatHotpotQA, nil
	case paragraphs:
		return FormatMuSiQue, nil
	}
	return FormatKgrag, nil
}

// corpus gathers passages, a unique title each.
type corpus struct {
	passages []Passage
	// byTitle are the passages given each original title, by text.
	byTitle map[string]map[string]string
	count   map[string]int
}

func newCorpus() *corpus {
	return &corpus{byTitle: map[string]map[string]string{}, count: map[string]int{}}
}

// add returns the unique title of the passage (title, text), adding it
// when new.
func (c *corpus) add(title, text string) string {
	title, text = strings.TrimSpace(title), strings.TrimSpace(text)
	texts := c.byTitle[title]
	if texts == nil {
		texts = map[string]string{}
		c.byTitle[title] = texts
	}
	if key, ok := texts[text]; ok {
		return key
	}
	c.count[title]++
	key := title
	if n := c.count[title]; n > 1 {
		key = fmt.Sprintf("%s (%d)", title, n)
	}
	texts[text] = key
	c.passages = append(c.passages, Passage{Title: key, Text: text})
	return key
}

// readFile reads a corpus file: an object from title to its sentences
// (or text), or a list of {title, text}.
func (c *corpus) readFile(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		dec := json.NewDecoder(bytes.NewReader(b))
		if _, err := dec.Token(); err != nil {
			return fmt.Errorf("eval: corpus %s: %w", path, err)
		}
		// Decoded token by token to keep the file's order.
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return fmt.Errorf("eval: corpus %s: %w", path, err)
			}
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return fmt.Errorf("eval: corpus %s: passage %q: %w", path, tok, err)
			}
			text, err := sentences(v)
			if err != nil {
				return fmt.Errorf("eval: corpus %s: passage %q: %w", path, tok, err)
			}
			c.add(tok.(string), text)
		}
		return nil
	}
	var list []struct {
		Title string `json:"title"`
		Text  string `json:"text"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return fmt.Errorf("eval: corpus %s: want an object from title to sentences, or a list of {title, text}: %w", path, err)
	}
	for i, p := range list {
		if strings.TrimSpace(p.Text) == "" {
			return fmt.Errorf("eval: corpus %s: passage %d (%q) has no text", path, i+1, p.Title)
		}
		c.add(p.Title, p.Text)
	}
	return nil
}

// sentences joins a list of sentences (HotpotQA's, which carry their own
// leading spaces) or takes a string as it is.
func sentences(v json.RawMessage) (string, error) {
	var list []string
	if err := json.Unmarshal(v, &list); err == nil {
		return strings.Join(list, ""), nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", errors.New("want a list of sentences or a text")
	}
	return s, nil
}

// readHotpot reads HotpotQA's (and 2WikiMultiHopQA's) records.
func readHotpot(b []byte, name string, c *corpus) ([]Question, error) {
	var recs []struct {
		ID              string            `json:"_id"`
		Question        string            `json:"question"`
		Answer          string            `json:"answer"`
		SupportingFacts []json.RawMessage `json:"supporting_facts"`
		Context         []json.RawMessage `json:"context"`
	}
	if err := json.Unmarshal(b, &recs); err != nil {
		return nil, fmt.Errorf("eval: %s: %w", name, err)
	}
	out := make([]Question, 0, len(recs))
	for i, r := range recs {
		fail := func(err error) error { return &LineError{name, i + 1, err} }
		keys := map[string]string{} // title -> unique title, this question's
		for j, raw := range r.Context {
			var pair []json.RawMessage
			var title string
			if json.Unmarshal(raw, &pair) != nil || len(pair) != 2 || json.Unmarshal(pair[0], &title) != nil {
				return nil, fail(fmt.Errorf("record %d: context %d: want [title, sentences]", i+1, j+1))
			}
			text, err := sentences(pair[1])
			if err != nil {
				return nil, fail(fmt.Errorf("record %d: context %q: %w", i+1, title, err))
			}
			keys[title] = c.add(title, text)
		}
		q := Question{ID: r.ID, Question: r.Question, Answer: r.Answer, Line: i + 1}
		for j, raw := range r.SupportingFacts {
			var pair []json.RawMessage
			var title string
			if json.Unmarshal(raw, &pair) != nil || len(pair) < 1 || json.Unmarshal(pair[0], &title) != nil {
				return nil, fail(fmt.Errorf("record %d: supporting fact %d: want [title, sentence]", i+1, j+1))
			}
			key, ok := keys[title]
			if !ok {
				// The corpus file may hold it (HippoRAG's packing keeps
				// the context); a title it gives once is taken.
				if texts := c.byTitle[title]; len(texts) == 1 {
					for _, k := range texts {
						key, ok = k, true
					}
				}
			}
			if !ok {
				return nil, fail(fmt.Errorf("record %d: supporting passage %q is in neither its context nor the corpus", i+1, title))
			}
			if !containsString(q.Evidence.Documents, key) {
				q.Evidence.Documents = append(q.Evidence.Documents, key)
			}
		}
		out = append(out, q)
	}
	return out, nil
}

// readMuSiQue reads MuSiQue's records, JSON lines or a JSON list.
func readMuSiQue(b []byte, name string, c *corpus) ([]Question, error) {
	type rec struct {
		ID         string `json:"id"`
		Question   string `json:"question"`
		Answer     string `json:"answer"`
		Paragraphs []struct {
			Title        string `json:"title"`
			Text         string `json:"paragraph_text"`
			IsSupporting bool   `json:"is_supporting"`
		} `json:"paragraphs"`
	}
	var recs []rec
	var lines []int
	b = bytes.TrimSpace(b)
	if b[0] == '[' {
		if err := json.Unmarshal(b, &recs); err != nil {
			return nil, fmt.Errorf("eval: %s: %w", name, err)
		}
		for i := range recs {
			lines = append(lines, i+1)
		}
	} else {
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		for n := 1; sc.Scan(); n++ {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			var r rec
			if err := json.Unmarshal(line, &r); err != nil {
				return nil, &LineError{name, n, fmt.Errorf("not a MuSiQue record: %w", err)}
			}
			recs = append(recs, r)
			lines = append(lines, n)
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("eval: read %s: %w", name, err)
		}
	}
	out := make([]Question, 0, len(recs))
	for i, r := range recs {
		q := Question{ID: r.ID, Question: r.Question, Answer: r.Answer, Line: lines[i]}
		for _, p := range r.Paragraphs {
			key := c.add(p.Title, p.Text)
			if p.IsSupporting && !containsString(q.Evidence.Documents, key) {
				q.Evidence.Documents = append(q.Evidence.Documents, key)
			}
		}
		out = append(out, q)
	}
	return out, nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// WriteDocuments writes passages as the CSV file kgrag index reads with
// --title-column title: a title and a text column, one passage a row.
func WriteDocuments(w io.Writer, passages []Passage) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"title", "text"}); err != nil {
		return err
	}
	for _, p := range passages {
		if err := cw.Write([]string{p.Title, p.Document()}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
