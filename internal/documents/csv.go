package documents

import (
	"errors"
	"io"
	"strings"
)

// csvReader splits CSV text into records as Python's csv.reader does with
// the excel dialect (GraphRAG's CSV loader uses csv.DictReader with no
// options): comma, double quote, doubled quotes, no escape character, not
// strict. It is a port of the state machine of CPython 3.11's _csv.c, so
// that odd files split as GraphRAG splits them (encoding/csv rejects a
// bare quote, which Python keeps; Python reads "ab"c as abc). The text has
// universal newlines already, as Python's text mode gives csv.
type csvReader struct {
	s    string
	pos  int
	line int // lines read, as Python's reader.line_num

	state  csvState
	fields []string
	field  strings.Builder
	// fieldLen says whether the field has a character (Python's
	// field_len), which an empty builder cannot tell from a quoted "".
	fieldLen int
}

type csvState int

const (
	startRecord csvState = iota
	startField
	inField
	inQuotedField
	quoteInQuotedField
	eatCRNL
)

// errCSVNewline is Python's error for a carriage return inside an unquoted
// field, which universal newlines leave none of.
var errCSVNewline = errors.New("new-line character seen in unquoted field")

// eol stands for the end of a line, which _csv.c feeds as a character
// after each line's last one.
const eol = -1

// next returns the next record and the line it starts on (from 1), an
// empty record for a blank line, as Python does, and io.EOF at the end.
func (r *csvReader) next() (fields []string, line int, err error) {
	r.fields = nil
	r.field.Reset()
	r.fieldLen = 0
	r.state = startRecord
	line = r.line + 1
	for {
		if r.pos >= len(r.s) {
			// At the end, a quoted field left open ends the record.
			if r.fieldLen != 0 || r.state == inQuotedField {
				r.save()
				return r.fields, line, nil
			}
			return nil, line, io.EOF
		}
		end := strings.IndexByte(r.s[r.pos:], '\n')
		if end < 0 {
			end = len(r.s)
		} else {
			end += r.pos + 1
		}
		r.line++
		for _, c := range r.s[r.pos:end] {
			if err := r.process(c); err != nil {
				return nil, line, err
			}
		}
		r.pos = end
		if err := r.process(eol); err != nil {
			return nil, line, err
		}
		if r.state == startRecord {
			if r.fields == nil {
				r.fields = []string{}
			}
			return r.fields, line, nil
		}
	}
}

func (r *csvReader) save() {
	r.fields = append(r.fields, r.field.String())
	r.field.Reset()
	r.fieldLen = 0
}

func (r *csvReader) add(c rune) {
	r.field.WriteRune(c)
	r.fieldLen++
}

// endLine ends the record at a newline character or the end of the line.
func (r *csvReader) endLine(c rune) {
	r.save()
	if c == eol {
		r.state = startRecord
	} else {
		r.state = eatCRNL
	}
}

// process is _csv.c's parse_process_char for the excel dialect.
func (r *csvReader) process(c rune) error {
	newline := c == '\n' || c == '\r'
	switch r.state {
	case startRecord:
		if c == eol {
			return nil // blank line: an empty record
		}
		if newline {
			r.state = eatCRNL
			return nil
		}
		r.state = startField
		return r.process(c)
	case startField:
		switch {
		case newline || c == eol:
			r.endLine(c)
		case c == '"':
			r.state = inQuotedField
		case c == ',':
			r.save()
		default:
			r.add(c)
			r.state = inField
		}
	case inField:
		switch {
		case newline || c == eol:
			r.endLine(c)
		case c == ',':
			r.save()
			r.state = startField
		default:
			r.add(c)
		}
	case inQuotedField:
		switch c {
		case eol:
		case '"':
			r.state = quoteInQuotedField
		default:
			r.add(c)
		}
	case quoteInQuotedField:
		switch {
		case c == '"': // "" stands for "
			r.add(c)
			r.state = inQuotedField
		case c == ',':
			r.save()
			r.state = startField
		case newline || c == eol:
			r.endLine(c)
		default: // not strict: "ab"c reads abc
			r.add(c)
			r.state = inField
		}
	case eatCRNL:
		switch {
		case newline:
		case c == eol:
			r.state = startRecord
		default:
			return errCSVNewline
		}
	}
	return nil
}
