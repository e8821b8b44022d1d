package prompts

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"text/template"
	"text/template/parse"
)

// replaceable lists the templates a prompts folder may replace, with the
// data each is filled with and the fields it must use: a prompt that never
// shows the model the passage (or the descriptions, or the community's
// tables) would run and quietly build nothing, so such a file is refused.
var replaceable = map[string]struct {
	data     any
	required []string
}{
	"index_extract":          {IndexExtract{}, []string{"Text"}},
	"index_extract_continue": {IndexGlean{}, nil},
	"index_extract_loop":     {IndexGlean{}, nil},
	"index_claims":           {IndexClaims{}, []string{"Text"}},
	"index_claims_continue":  {IndexGlean{}, nil},
	"index_claims_loop":      {IndexGlean{}, nil},
	"index_summarize":        {IndexSummarize{}, []string{"Descriptions"}},
	"index_report":           {IndexReport{}, []string{"Context"}},
	"index_report_text":      {IndexReport{}, []string{"Context"}},
}

// Replaceable lists, sorted, the templates a prompts folder (Open) may
// replace: kgrag index's.
func Replaceable() []string {
	var out []string
	for n := range replaceable {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Set is the templates of one run: the embedded ones, some of them
// replaced by the files of a prompts folder (kgrag prompt-tune writes
// one). A nil *Set is the embedded templates alone, so that a zero
// Options of the stages that take one renders kgrag's own prompts. A Set
// never changes once opened and is safe for concurrent use.
type Set struct {
	dir  string
	over map[string]*template.Template
	src  map[string][]byte
}

// FileError is a prompts folder's file that cannot be used: it names the
// file and, where one is at fault, the placeholder.
type FileError struct {
	Path        string
	Placeholder string // "{{.Name}}", or "" when no one placeholder is at fault
	Err         error
}

func (e *FileError) Error() string {
	if e.Placeholder != "" {
		return fmt.Sprintf("prompts: %s: placeholder %s: %v", e.Path, e.Placeholder, e.Err)
	}
	return fmt.Sprintf("prompts: %s: %v", e.Path, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

// Open reads the prompt templates in dir, NAME.tmpl for each NAME of
// Replaceable, and checks every one: it must parse as a text/template,
// use only the placeholders its data has and every one it must have, and
// render. Templates the folder lacks stay the embedded ones; files that
// do not end in .tmpl are not read (a tuned folder's prompt-tune.json).
// A .tmpl file of another name is an error, so that a misspelt file is
// not silently ignored. The error is a *FileError naming the file.
func Open(dir string) (*Set, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("prompts: folder %s: %w", dir, err)
	}
	s := &Set{dir: dir, over: map[string]*template.Template{}, src: map[string][]byte{}}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".tmpl")
		if !ok || e.IsDir() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		spec, known := replaceable[name]
		if !known {
			return nil, &FileError{Path: path, Err: fmt.Errorf("not a template kgrag index uses; a prompts folder may hold %s",
				strings.Join(withSuffix(Replaceable(), ".tmpl"), ", "))}
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, &FileError{Path: path, Err: err}
		}
		t, err := checkTemplate(name, string(src), spec.data, spec.required)
		if err != nil {
			var fe *FileError
			if errors.As(err, &fe) {
				fe.Path = path
				return nil, fe
			}
			return nil, &FileError{Path: path, Err: err}
		}
		s.over[name], s.src[name] = t, src
	}
	return s, nil
}

// Dir is the folder the Set was opened from; "" for a nil Set.
func (s *Set) Dir() string {
	if s == nil {
		return ""
	}
	return s.dir
}

// Replaced lists, sorted, the templates the folder replaced.
func (s *Set) Replaced() []string {
	if s == nil {
		return nil
	}
	var out []string
	for n := range s.over {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Render executes the named template, the folder's when it replaced it,
// else the embedded one, as the package's Render does.
func (s *Set) Render(name string, data any) (string, error) {
	if s == nil || s.over[name] == nil {
		return Render(name, data)
	}
	return execute(s.over[name], data)
}

// SHA256 is the hex SHA-256 of the named template's text as the Set has
// it, which identifies the prompt a run used.
func (s *Set) SHA256(name string) (string, error) {
	if s == nil || s.src[name] == nil {
		return SHA256(name)
	}
	sum := sha256.Sum256(s.src[name])
	return hex.EncodeToString(sum[:]), nil
}

// Check parses src as the template name (one of Replaceable) and checks
// its placeholders as Open does; the error is a *FileError with no path.
func Check(name, src string) error {
	spec, ok := replaceable[name]
	if !ok {
		return fmt.Errorf("prompts: %q is not a replaceable template (have %s)", name, strings.Join(Replaceable(), ", "))
	}
	_, err := checkTemplate(name, src, spec.data, spec.required)
	return err
}

// RenderText checks src as the template name as Check does and renders
// it with data: what kgrag prompt-tune measures a template it is writing
// with.
func RenderText(name, src string, data any) (string, error) {
	spec, ok := replaceable[name]
	if !ok {
		return "", fmt.Errorf("prompts: %q is not a replaceable template (have %s)", name, strings.Join(Replaceable(), ", "))
	}
	t, err := checkTemplate(name, src, spec.data, spec.required)
	if err != nil {
		return "", err
	}
	return execute(t, data)
}

// graphragPlaceholders are the placeholders of GraphRAG's prompt files,
// which a user may copy into a kgrag prompts folder: named, so the error
// can say what kgrag calls them.
var graphragPlaceholders = map[string]string{
	"{input_text}": "{{.Text}}", "{entity_types}": "{{range .EntityTypes}}- {{.}}\n{{end}}",
	"{tuple_delimiter}": "{{.Tuple}}", "{record_delimiter}": "{{.Record}}", "{completion_delimiter}": "{{.Completion}}",
	"{entity_name}": "{{.Title}}", "{description_list}": "{{range .Descriptions}}- {{.}}\n{{end}}",
	"{input_data}": "{{.Context}}", "{max_report_length}": "{{.MaxLength}}", "{max_length}": "{{.MaxLength}}",
}

func checkTemplate(name, src string, data any, required []string) (*template.Template, error) {
	for g, k := range graphragPlaceholders {
		if strings.Contains(src, g) {
			return nil, &FileError{Placeholder: g, Err: fmt.Errorf("is GraphRAG's; kgrag templates are Go text/templates: write %s", k)}
		}
	}
	t, err := template.New(name).Option("missingkey=error").Parse(src)
	if err != nil {
		return nil, &FileError{Err: fmt.Errorf("not a valid template: %w", err)}
	}
	allowed := fieldsOf(data)
	used := map[string]bool{}
	var unknown []string
	walkFields(t.Tree.Root, func(f string) {
		used[f] = true
		if !slices.Contains(allowed, f) && !slices.Contains(unknown, f) {
			unknown = append(unknown, f)
		}
	})
	if len(unknown) > 0 {
		return nil, &FileError{Placeholder: "{{." + unknown[0] + "}}",
			Err: fmt.Errorf("unknown: %s can use %s", name, strings.Join(withPrefix(allowed, "{{."), ", "))}
	}
	for _, r := range required {
		if !used[r] {
			return nil, &FileError{Placeholder: "{{." + r + "}}", Err: fmt.Errorf("missing: %s must use it, or the model never sees %s", name, what(r))}
		}
	}
	// A trial run catches what the walk cannot see (a field of an element
	// used as a list, a function called with the wrong arguments).
	if _, err := execute(t, sampleData(data)); err != nil {
		return nil, &FileError{Err: fmt.Errorf("does not render: %w", err)}
	}
	return t, nil
}

// what says what a required field holds, for the error.
func what(field string) string {
	switch field {
	case "Text":
		return "the passage"
	case "Descriptions":
		return "the descriptions to combine"
	case "Context":
		return "the community's tables"
	}
	return "it"
}

// fieldsOf lists the exported fields of a data struct, embedded ones'
// included.
func fieldsOf(data any) []string {
	var out []string
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Anonymous {
				walk(f.Type)
				continue
			}
			out = append(out, f.Name)
		}
	}
	walk(reflect.TypeOf(data))
	return out
}

// walkFields calls fn with the first name of each field the template
// reads from its data: {{.X}} and $.X anywhere, and .X outside range and
// with blocks, where dot is something else.
func walkFields(n parse.Node, fn func(string)) {
	var walk func(n parse.Node, top bool)
	walkPipe := func(p *parse.PipeNode, top bool) {
		if p == nil {
			return
		}
		for _, c := range p.Cmds {
			for _, a := range c.Args {
				walk(a, top)
			}
		}
	}
	walk = func(n parse.Node, top bool) {
		switch n := n.(type) {
		case *parse.ListNode:
			if n == nil {
				return
			}
			for _, c := range n.Nodes {
				walk(c, top)
			}
		case *parse.ActionNode:
			walkPipe(n.Pipe, top)
		case *parse.FieldNode:
			if top {
				fn(n.Ident[0])
			}
		case *parse.VariableNode:
			if n.Ident[0] == "$" && len(n.Ident) > 1 {
				fn(n.Ident[1])
			}
		case *parse.ChainNode:
			walk(n.Node, top)
		case *parse.PipeNode:
			walkPipe(n, top)
		case *parse.IfNode:
			walkPipe(n.Pipe, top)
			walk(n.List, top)
			walk(n.ElseList, top)
		case *parse.RangeNode:
			walkPipe(n.Pipe, top)
			walk(n.List, false)
			walk(n.ElseList, top)
		case *parse.WithNode:
			walkPipe(n.Pipe, top)
			walk(n.List, false)
			walk(n.ElseList, top)
		}
	}
	walk(n, true)
}

// sampleData fills a data struct's lists and strings so that a trial
// render goes through range blocks and both branches' fields exist.
func sampleData(data any) any {
	v := reflect.New(reflect.TypeOf(data)).Elem()
	var fill func(v reflect.Value)
	fill = func(v reflect.Value) {
		for i := range v.NumField() {
			f := v.Field(i)
			switch f.Kind() {
			case reflect.Struct:
				fill(f)
			case reflect.String:
				f.SetString("x")
			case reflect.Slice:
				f.Set(reflect.ValueOf([]string{"x", "y"}))
			case reflect.Int:
				f.SetInt(100)
			case reflect.Bool:
				f.SetBool(true)
			}
		}
	}
	fill(v)
	return v.Interface()
}

// Literal escapes text so that a template outputs it as it is: kgrag
// prompt-tune writes passages and model text into the templates it
// writes, and a "{{" in them must not start an action.
func Literal(text string) string { return literal.Replace(text) }

var literal = strings.NewReplacer("{{", `{{"{{"}}`, "}}", `{{"}}"}}`)

func withSuffix(names []string, suffix string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n + suffix
	}
	return out
}

func withPrefix(names []string, prefix string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n + "}}"
	}
	return out
}
