package sparqlq

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Kind is the kind of term a template parameter takes. Each kind has one
// function that writes its values into SPARQL: IRIRef for IRIs, Literal for
// strings, strconv for numbers. The zero Kind is invalid.
type Kind uint8

// The kinds of template parameters. The plural kinds are lists, written as
// the data of a VALUES block, one term per element.
const (
	KindIRI Kind = iota + 1
	KindString
	KindInteger
	KindDecimal
	KindIRIs
	KindStrings
	KindIntegers
)

var kindNames = [...]string{
	KindIRI:      "iri",
	KindString:   "string",
	KindInteger:  "integer",
	KindDecimal:  "decimal",
	KindIRIs:     "iris",
	KindStrings:  "strings",
	KindIntegers: "integers",
}

// String returns the name of k as written in a template header.
func (k Kind) String() string {
	if k == 0 || int(k) >= len(kindNames) {
		return fmt.Sprintf("Kind(%d)", uint8(k))
	}
	return kindNames[k]
}

// IsList reports whether k is a list kind, bound through VALUES.
func (k Kind) IsList() bool { return k >= KindIRIs && k <= KindIntegers }

func kindByName(s string) (Kind, bool) {
	for k, n := range kindNames {
		if n != "" && n == s {
			return Kind(k), true
		}
	}
	return 0, false
}

// Value is a typed parameter value for Template.Bind. Build it with one of
// the constructors (IRIParam, StringParam, IntParam, DecimalParam,
// IRIsParam, StringsParam, IntsParam); the zero Value has no kind and is
// refused by Bind. Values are escaped when bound, never before.
type Value struct {
	kind   Kind
	strs   []string
	ints   []int64
	floats []float64
}

// Kind returns the kind of v.
func (v Value) Kind() Kind { return v.kind }

// IRIParam is an IRI, written as <iri>; Bind fails when iri holds a
// character that an IRIREF forbids.
func IRIParam(iri string) Value { return Value{kind: KindIRI, strs: []string{iri}} }

// StringParam is a string, written as an escaped literal.
func StringParam(s string) Value { return Value{kind: KindString, strs: []string{s}} }

// IntParam is an integer, written as an xsd:integer token.
func IntParam(n int64) Value { return Value{kind: KindInteger, ints: []int64{n}} }

// DecimalParam is a number written as an xsd:decimal token (1.5, 2.0); Bind
// fails for NaN and infinities.
func DecimalParam(f float64) Value { return Value{kind: KindDecimal, floats: []float64{f}} }

// IRIsParam is a list of IRIs for a VALUES block.
func IRIsParam(iris []string) Value { return Value{kind: KindIRIs, strs: iris} }

// StringsParam is a list of strings for a VALUES block.
func StringsParam(ss []string) Value { return Value{kind: KindStrings, strs: ss} }

// IntsParam is a list of integers for a VALUES block.
func IntsParam(ns []int64) Value { return Value{kind: KindIntegers, ints: ns} }

// Params maps parameter names to values.
type Params map[string]Value

// Param is a parameter declared in a template's header.
type Param struct {
	Name     string
	Kind     Kind
	Optional bool // lines that use it are left out when it is not given
}

// Errors that a TemplateError wraps; test for them with errors.Is.
var (
	// ErrTemplateSyntax: the template text or its header is malformed.
	ErrTemplateSyntax = errors.New("template syntax")
	// ErrUndeclared: a placeholder or a bound parameter has no declaration.
	ErrUndeclared = errors.New("parameter not declared")
	// ErrKind: a value of the wrong kind was bound.
	ErrKind = errors.New("wrong parameter kind")
	// ErrMissing: a required parameter was not bound.
	ErrMissing = errors.New("parameter not given")
	// ErrValue: a value cannot be written as its kind (a bad IRI, NaN).
	ErrValue = errors.New("bad parameter value")
)

// TemplateError is returned by ParseTemplate, LoadTemplate and Bind. Param
// and Line are set where known.
type TemplateError struct {
	Template string
	Param    string
	Line     int
	Err      error
}

func (e *TemplateError) Error() string {
	var b strings.Builder
	b.WriteString("sparqlq: template ")
	b.WriteString(e.Template)
	if e.Line > 0 {
		fmt.Fprintf(&b, ": line %d", e.Line)
	}
	if e.Param != "" {
		b.WriteString(": parameter ")
		b.WriteString(e.Param)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *TemplateError) Unwrap() error { return e.Err }

// Template is a parsed SPARQL query template: a text with typed
// placeholders. It is immutable and safe for concurrent use.
//
// A template opens with a header of comment lines. Lines of the form
//
//	# param NAME KIND [values] [optional]
//
// declare its parameters; the other header lines document it. KIND is one
// of iri, string, integer, decimal, or a list kind (iris, strings,
// integers), which must be marked values. In the body, {{NAME}} stands for
// one term (or, for a list, the terms of a VALUES block) and must stand
// alone: preceded by a space, a line start, '(', '{' or ',', and followed by
// a space, a line end, ')', '}', ',', '.' or ';'. A list placeholder must be
// the whole data block of a one-variable VALUES, as in
// VALUES ?id { {{ids}} }. A line that uses an optional parameter is left out
// when the parameter is not bound. Every declared parameter must be used,
// every placeholder declared, and "{{" may appear only in a placeholder, so a
// broken template fails when it is parsed.
type Template struct {
	name   string
	doc    string
	params []Param
	lines  []tline
}

type tline struct {
	parts []tpart
	needs []string // optional parameters the line is emitted for
}

// tpart is literal text (param == "") or a placeholder.
type tpart struct {
	text  string
	param string
}

var (
	identRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	valuesRE = regexp.MustCompile(`(?i)\bVALUES\s+[?$][A-Za-z0-9_]+\s*\{\s*$`)
)

// ParseTemplate parses the text of a template. name is used in errors.
func ParseTemplate(name, text string) (*Template, error) {
	t := &Template{name: name}
	fail := func(line int, param string, err error) (*Template, error) {
		return nil, &TemplateError{Template: name, Param: param, Line: line, Err: err}
	}
	syntax := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrTemplateSyntax, fmt.Sprintf(format, args...))
	}
	lines := strings.SplitAfter(text, "\n")
	decl := map[string]Param{}
	i := 0
	var doc []string
	for ; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if l != "" && !strings.HasPrefix(l, "#") {
			break
		}
		c := strings.TrimSpace(strings.TrimPrefix(l, "#"))
		f := strings.Fields(c)
		if len(f) == 0 || f[0] != "param" {
			if c != "" || len(doc) > 0 {
				doc = append(doc, c)
			}
			continue
		}
		if len(f) < 3 {
			return fail(i+1, "", syntax("want # param NAME KIND [values] [optional]"))
		}
		p := Param{Name: f[1]}
		if !identRE.MatchString(p.Name) {
			return fail(i+1, p.Name, syntax("bad parameter name"))
		}
		if _, dup := decl[p.Name]; dup {
			return fail(i+1, p.Name, syntax("declared twice"))
		}
		k, ok := kindByName(f[2])
		if !ok {
			return fail(i+1, p.Name, syntax("unknown kind %q", f[2]))
		}
		p.Kind = k
		values := false
		for _, m := range f[3:] {
			switch {
			case m == "values" && !values:
				values = true
			case m == "optional" && !p.Optional:
				p.Optional = true
			default:
				return fail(i+1, p.Name, syntax("unknown modifier %q", m))
			}
		}
		if values != k.IsList() {
			return fail(i+1, p.Name, syntax("a list kind goes with values, and only a list kind"))
		}
		decl[p.Name] = p
		t.params = append(t.params, p)
	}
	t.doc = strings.TrimSpace(strings.Join(doc, "\n"))

	used := map[string]bool{}
	var before strings.Builder // the body so far, for the VALUES check
	for ; i < len(lines); i++ {
		ln := i + 1
		line := lines[i]
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			if strings.Contains(line, "{{") {
				return fail(ln, "", syntax("placeholder in a comment"))
			}
			t.lines = append(t.lines, tline{parts: []tpart{{text: line}}})
			before.WriteString(line)
			continue
		}
		var tl tline
		rest := line
		for {
			j := strings.Index(rest, "{{")
			if j < 0 {
				break
			}
			k := strings.Index(rest[j:], "}}")
			if k < 0 {
				return fail(ln, "", syntax("%q opens no placeholder (write \"{ {\" in SPARQL)", "{{"))
			}
			pname := rest[j+2 : j+k]
			if !identRE.MatchString(pname) {
				return fail(ln, "", syntax("malformed placeholder %q", rest[j:j+k+2]))
			}
			p, ok := decl[pname]
			if !ok {
				return fail(ln, pname, ErrUndeclared)
			}
			prefix, after := rest[:j], rest[j+k+2:]
			if !boundaryBefore(prefix) || !boundaryAfter(after) {
				return fail(ln, pname, syntax("a placeholder must stand alone as a term"))
			}
			before.WriteString(prefix)
			if p.Kind.IsList() {
				if !valuesRE.MatchString(before.String()) || !strings.HasPrefix(strings.TrimLeft(after, " \t\r\n"), "}") {
					return fail(ln, pname, syntax("a list placeholder must be the data of a one-variable VALUES block"))
				}
			}
			before.WriteString("{{" + pname + "}}")
			if prefix != "" {
				tl.parts = append(tl.parts, tpart{text: prefix})
			}
			tl.parts = append(tl.parts, tpart{param: pname})
			if p.Optional && !contains(tl.needs, pname) {
				tl.needs = append(tl.needs, pname)
			}
			used[pname] = true
			rest = after
		}
		before.WriteString(rest)
		if rest != "" {
			tl.parts = append(tl.parts, tpart{text: rest})
		}
		t.lines = append(t.lines, tl)
	}
	for _, p := range t.params {
		if !used[p.Name] {
			return fail(0, p.Name, syntax("declared but never used"))
		}
	}
	return t, nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func boundaryBefore(prefix string) bool {
	if prefix == "" {
		return true
	}
	switch prefix[len(prefix)-1] {
	case ' ', '\t', '(', '{', ',':
		return true
	}
	return false
}

func boundaryAfter(after string) bool {
	if after == "" {
		return true
	}
	switch after[0] {
	case ' ', '\t', '\r', '\n', ')', '}', ',', '.', ';':
		return true
	}
	return false
}

// Name returns the template's name.
func (t *Template) Name() string { return t.name }

// Doc returns the header comment lines that are not declarations.
func (t *Template) Doc() string { return t.doc }

// Params returns the declared parameters in header order.
func (t *Template) Params() []Param { return append([]Param(nil), t.params...) }

func (t *Template) param(name string) (Param, bool) {
	for _, p := range t.params {
		if p.Name == name {
			return p, true
		}
	}
	return Param{}, false
}

// Bind returns the query with every placeholder replaced by its value,
// escaped by the value's kind. The header is left out. It returns
// *TemplateError wrapping ErrUndeclared for a parameter the template does
// not declare, ErrKind for a value of another kind, ErrMissing for a
// required parameter not given and ErrValue for a value its kind cannot
// write.
func (t *Template) Bind(params Params) (string, error) {
	terms := make(map[string]string, len(params))
	for name, v := range params {
		p, ok := t.param(name)
		if !ok {
			return "", &TemplateError{Template: t.name, Param: name, Err: ErrUndeclared}
		}
		if v.kind != p.Kind {
			return "", &TemplateError{Template: t.name, Param: name,
				Err: fmt.Errorf("%w: got %s, want %s", ErrKind, v.kind, p.Kind)}
		}
		s, err := v.render()
		if err != nil {
			return "", &TemplateError{Template: t.name, Param: name, Err: err}
		}
		terms[name] = s
	}
	for _, p := range t.params {
		if _, ok := terms[p.Name]; !ok && !p.Optional {
			return "", &TemplateError{Template: t.name, Param: p.Name, Err: ErrMissing}
		}
	}
	var b strings.Builder
lines:
	for _, l := range t.lines {
		for _, n := range l.needs {
			if _, ok := terms[n]; !ok {
				continue lines
			}
		}
		for _, p := range l.parts {
			if p.param == "" {
				b.WriteString(p.text)
			} else {
				b.WriteString(terms[p.param])
			}
		}
	}
	return b.String(), nil
}

// render writes v as SPARQL terms, list elements separated by spaces.
func (v Value) render() (string, error) {
	var out []string
	switch v.kind {
	case KindIRI, KindIRIs:
		for i, s := range v.strs {
			r, err := IRIRef(s)
			if err != nil {
				return "", fmt.Errorf("%w: element %d: %w", ErrValue, i, err)
			}
			out = append(out, r)
		}
	case KindString, KindStrings:
		for _, s := range v.strs {
			out = append(out, Literal(s))
		}
	case KindInteger, KindIntegers:
		for _, n := range v.ints {
			out = append(out, strconv.FormatInt(n, 10))
		}
	case KindDecimal:
		f := v.floats[0]
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return "", fmt.Errorf("%w: %v is not a decimal", ErrValue, f)
		}
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		out = append(out, s)
	default:
		return "", fmt.Errorf("%w: a value of %s (build values with IRIParam, StringParam, ...)", ErrKind, v.kind)
	}
	return strings.Join(out, " "), nil
}

// SelectTemplate binds params into t and runs the query with Select.
func (c *Client) SelectTemplate(ctx context.Context, t *Template, params Params) (*Results, error) {
	q, err := t.Bind(params)
	if err != nil {
		return nil, err
	}
	res, err := c.Select(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("sparqlq: template %s: %w", t.name, err)
	}
	return res, nil
}
