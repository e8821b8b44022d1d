package sparqlq

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// queryFS holds the query templates that ship with kgrag.
//
//go:embed queries/*.rq
var queryFS embed.FS

// TemplateNames lists the embedded templates by name ("entities", ...),
// sorted.
func TemplateNames() []string {
	files, _ := fs.Glob(queryFS, "queries/*.rq")
	names := make([]string, 0, len(files))
	for _, f := range files {
		names = append(names, strings.TrimSuffix(path.Base(f), ".rq"))
	}
	sort.Strings(names)
	return names
}

// LoadTemplate parses the embedded template name (with or without ".rq").
// It returns *TemplateError for a template that does not parse and an error
// wrapping fs.ErrNotExist for an unknown name.
func LoadTemplate(name string) (*Template, error) {
	name = strings.TrimSuffix(name, ".rq")
	b, err := queryFS.ReadFile("queries/" + name + ".rq")
	if err != nil {
		return nil, fmt.Errorf("sparqlq: template %s: %w", name, err)
	}
	return ParseTemplate(name, string(b))
}

// Bound is the embedded template name bound with p: the text of a query
// or update, for Client.Select, Ask or Update, or to join with others
// (" ;\n") into one update request. Every SPARQL request kgrag sends is an
// embedded template bound this way, but the bodies of batch uploads,
// which are N-Triples.
func Bound(name string, p Params) (string, error) {
	t, err := LoadTemplate(name)
	if err != nil {
		return "", err
	}
	text, err := t.Bind(p)
	return strings.TrimRight(text, "\n"), err
}
