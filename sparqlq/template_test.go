package sparqlq_test

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kgrag/kgrag/sparqlq"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// injections are values that would change a query if spliced in raw.
var injections = []string{
	`" } ; DROP ALL ; #`,
	`"> . ?s ?p ?o <`,
	`\" UNION { ?s ?p ?o }`,
	"x\" }\nDROP ALL ;\n#",
	"x\r\n} UNION { ?s ?p ?o } #",
	`# } } } SELECT * WHERE { ?s ?p ?o }`,
	`\u0022 } UNION { ?s ?p ?o } #`,
	`\\u0022 } UNION { ?s ?p ?o } #`,
	`\U00000022) } #`,
	`\`,
	`\\`,
	`'''"""`,
	"tab\there\u2028\u2029\x0b",
	`{{ids}}`,
	`<http://ormynet.com/ns/msft-graphrag#id>`,
	"\xff\xfe invalid utf-8",
}

func mustParse(t *testing.T, text string) *sparqlq.Template {
	t.Helper()
	tpl, err := sparqlq.ParseTemplate("test", text)
	if err != nil {
		t.Fatalf("ParseTemplate: %v", err)
	}
	return tpl
}

// TestEmbeddedTemplates parses every embedded template, so that a broken
// one fails CI, and checks that each declares the graph parameter.
func TestEmbeddedTemplates(t *testing.T) {
	names := sparqlq.TemplateNames()
	want := []string{"communities", "community_reports", "entities", "entity_by_number", "entity_lookup",
		"global_reports", "graph_count_entities", "graph_count_triples", "graph_delete_some", "graph_drop", "graph_has_entities", "graph_has_triples",
		"graphs_list", "graphs_with_entities", "load_commit_insert", "load_commit_move", "load_commit_move_only", "load_state", "load_state_clear", "load_state_set",
		"local_entities", "local_relationships", "local_reports", "local_text_units",
		"lock_beat", "lock_committed", "lock_live", "lock_mark_committed", "lock_name_temp", "lock_remove", "lock_take", "lock_temps", "lock_unname_temp",
		"relationships", "store_ping", "subgraph_relationships", "text_units",
		"walk_entities", "walk_relationships", "walk_units"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("TemplateNames() mismatch (-want +got):\n%s", diff)
	}
	// The data templates read one graph, optional (entities, ...) or
	// required (the search ones and the walk's, which use GRAPH, faster
	// than FROM); the
	// store's own requests (graph_, graphs_, load_, lock_, store_) name
	// their graphs themselves.
	data := func(name string) bool {
		for _, p := range []string{"graph_", "graphs_", "load_", "lock_", "store_"} {
			if strings.HasPrefix(name, p) {
				return false
			}
		}
		return true
	}
	for _, name := range names {
		tpl, err := sparqlq.LoadTemplate(name)
		if err != nil {
			t.Errorf("LoadTemplate(%q): %v", name, err)
			continue
		}
		if tpl.Doc() == "" {
			t.Errorf("template %s has no doc comment", name)
		}
		if !data(name) {
			continue
		}
		optional := !strings.HasPrefix(name, "local_") && !strings.HasPrefix(name, "global_") && !strings.HasPrefix(name, "entity_") &&
			!strings.HasPrefix(name, "walk_")
		found := false
		for _, p := range tpl.Params() {
			if p.Name == "graph" && p.Kind == sparqlq.KindIRI && p.Optional == optional {
				found = true
			}
		}
		if !found {
			t.Errorf("template %s does not declare # param graph iri (optional: %v)", name, optional)
		}
	}
	if _, err := sparqlq.LoadTemplate("nope"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadTemplate(nope) = %v; want ErrNotExist", err)
	}
}

func TestBindKinds(t *testing.T) {
	tests := []struct {
		name, text string
		params     sparqlq.Params
		want       string
	}{
		{"iri", "# param g iri\nASK { GRAPH {{g}} { } }\n",
			sparqlq.Params{"g": sparqlq.IRIParam("http://ex/g#1")}, "ASK { GRAPH <http://ex/g#1> { } }\n"},
		{"string", "# param s string\nASK { ?x ?p {{s}} }\n",
			sparqlq.Params{"s": sparqlq.StringParam("a\"b\\c\nd")}, "ASK { ?x ?p \"a\\\"b\\\\c\\nd\" }\n"},
		{"string-backslash-u", "# param s string\nASK { ?x ?p {{s}} }\n",
			sparqlq.Params{"s": sparqlq.StringParam(`\u0022`)}, `ASK { ?x ?p "\\\u00750022" }` + "\n"},
		{"integer", "# param n integer\nSELECT * {} LIMIT {{n}}\n",
			sparqlq.Params{"n": sparqlq.IntParam(-42)}, "SELECT * {} LIMIT -42\n"},
		{"decimal", "# param d decimal\nASK { FILTER({{d}} > 0) }\n",
			sparqlq.Params{"d": sparqlq.DecimalParam(2)}, "ASK { FILTER(2.0 > 0) }\n"},
		{"decimal-fraction", "# param d decimal\nASK { FILTER({{d}} > 0) }\n",
			sparqlq.Params{"d": sparqlq.DecimalParam(-0.125)}, "ASK { FILTER(-0.125 > 0) }\n"},
		{"strings", "# param ids strings values\nSELECT * { VALUES ?id { {{ids}} } }\n",
			sparqlq.Params{"ids": sparqlq.StringsParam([]string{"a", `"b"`, "c d"})},
			`SELECT * { VALUES ?id { "a" "\"b\"" "c d" } }` + "\n"},
		{"strings-empty", "# param ids strings values\nSELECT * { VALUES ?id { {{ids}} } }\n",
			sparqlq.Params{"ids": sparqlq.StringsParam(nil)}, "SELECT * { VALUES ?id {  } }\n"},
		{"iris", "# param gs iris values\nSELECT * { VALUES ?g { {{gs}} } }\n",
			sparqlq.Params{"gs": sparqlq.IRIsParam([]string{"urn:a", "http://ex/b"})},
			"SELECT * { VALUES ?g { <urn:a> <http://ex/b> } }\n"},
		{"integers", "# param ns integers values\nSELECT * { VALUES ?n { {{ns}} } }\n",
			sparqlq.Params{"ns": sparqlq.IntsParam([]int64{0, 7, -1})},
			"SELECT * { VALUES ?n { 0 7 -1 } }\n"},
		{"optional-given", "# param g iri optional\nSELECT *\nFROM {{g}}\nWHERE {}\n",
			sparqlq.Params{"g": sparqlq.IRIParam("urn:g")}, "SELECT *\nFROM <urn:g>\nWHERE {}\n"},
		{"optional-absent", "# param g iri optional\nSELECT *\nFROM {{g}}\nWHERE {}\n",
			sparqlq.Params{}, "SELECT *\nWHERE {}\n"},
		{"twice", "# param s string\nASK { ?a ?b {{s}} . ?c ?d {{s}} }\n",
			sparqlq.Params{"s": sparqlq.StringParam("x")}, `ASK { ?a ?b "x" . ?c ?d "x" }` + "\n"},
		{"header-dropped-comments-kept", "# doc\n# param s string\n\nASK {\n  # body comment\n  ?a ?b {{s}} }",
			sparqlq.Params{"s": sparqlq.StringParam("x")}, "ASK {\n  # body comment\n  ?a ?b \"x\" }"},
		{"braces", "# param s string\nASK { { ?a ?b {{s}} }}\n",
			sparqlq.Params{"s": sparqlq.StringParam("x")}, "ASK { { ?a ?b \"x\" }}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mustParse(t, tt.text).Bind(tt.params)
			if err != nil {
				t.Fatalf("Bind: %v", err)
			}
			if got != tt.want {
				t.Errorf("Bind(%v) = %q; want %q", tt.params, got, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, text string
		want       error
	}{
		{"undeclared", "ASK { ?s ?p {{x}} }", sparqlq.ErrUndeclared},
		{"unused", "# param x string\nASK {}", sparqlq.ErrTemplateSyntax},
		{"unknown-kind", "# param x text\nASK { ?s ?p {{x}} }", sparqlq.ErrTemplateSyntax},
		{"list-without-values", "# param x strings\nASK { VALUES ?x { {{x}} } }", sparqlq.ErrTemplateSyntax},
		{"values-on-scalar", "# param x string values\nASK { VALUES ?x { {{x}} } }", sparqlq.ErrTemplateSyntax},
		{"unknown-modifier", "# param x string required\nASK { ?s ?p {{x}} }", sparqlq.ErrTemplateSyntax},
		{"duplicate", "# param x string\n# param x string\nASK { ?s ?p {{x}} }", sparqlq.ErrTemplateSyntax},
		{"short-decl", "# param x\nASK {}", sparqlq.ErrTemplateSyntax},
		{"in-string", "# param x string\nASK { ?s ?p \"{{x}}\" }", sparqlq.ErrTemplateSyntax},
		{"in-iri", "# param x iri\nASK { GRAPH <{{x}}> {} }", sparqlq.ErrTemplateSyntax},
		{"glued", "# param x string\nASK { ?s ?p a{{x}} }", sparqlq.ErrTemplateSyntax},
		{"spaces", "# param x string\nASK { ?s ?p {{ x }} }", sparqlq.ErrTemplateSyntax},
		{"unclosed", "# param x string\nASK { ?s ?p {{x }", sparqlq.ErrTemplateSyntax},
		{"double-brace", "ASK {{ ?s ?p ?o }}", sparqlq.ErrTemplateSyntax},
		{"in-comment", "# param x string\nASK { ?s ?p {{x}} }\n# {{x}}\n", sparqlq.ErrTemplateSyntax},
		{"list-outside-values", "# param x strings values\nASK { FILTER(?x IN ({{x}})) }", sparqlq.ErrTemplateSyntax},
		{"list-two-vars", "# param x strings values\nASK { VALUES (?a ?b) { {{x}} } }", sparqlq.ErrTemplateSyntax},
		{"list-more-data", "# param x strings values\nASK { VALUES ?a { \"z\" {{x}} } }", sparqlq.ErrTemplateSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tpl, err := sparqlq.ParseTemplate("bad.rq", tt.text)
			if !errors.Is(err, tt.want) {
				t.Fatalf("ParseTemplate(%q) = %v, %v; want %v", tt.text, tpl, err, tt.want)
			}
			var te *sparqlq.TemplateError
			if !errors.As(err, &te) || te.Template != "bad.rq" || !strings.Contains(err.Error(), "template bad.rq") {
				t.Errorf("error %q does not name the template", err)
			}
		})
	}
}

func TestBindErrors(t *testing.T) {
	tpl := mustParse(t, "# param g iri optional\n# param ids strings values\n# param n integer\n"+
		"SELECT *\nFROM {{g}}\nWHERE { VALUES ?id { {{ids}} } }\nLIMIT {{n}}\n")
	ok := sparqlq.Params{"ids": sparqlq.StringsParam([]string{"a"}), "n": sparqlq.IntParam(1)}
	with := func(k string, v sparqlq.Value) sparqlq.Params {
		p := sparqlq.Params{}
		for k, v := range ok {
			p[k] = v
		}
		p[k] = v
		return p
	}
	without := func(k string) sparqlq.Params {
		p := with("", sparqlq.Value{})
		delete(p, "")
		delete(p, k)
		return p
	}
	tests := []struct {
		name   string
		params sparqlq.Params
		param  string
		want   error
	}{
		{"undeclared", with("limit", sparqlq.IntParam(3)), "limit", sparqlq.ErrUndeclared},
		{"string-for-iri", with("g", sparqlq.StringParam("http://ex/g")), "g", sparqlq.ErrKind},
		{"string-for-list", with("ids", sparqlq.StringParam("a")), "ids", sparqlq.ErrKind},
		{"iris-for-strings", with("ids", sparqlq.IRIsParam([]string{"urn:a"})), "ids", sparqlq.ErrKind},
		{"decimal-for-integer", with("n", sparqlq.DecimalParam(1)), "n", sparqlq.ErrKind},
		{"zero-value", with("n", sparqlq.Value{}), "n", sparqlq.ErrKind},
		{"missing", without("n"), "n", sparqlq.ErrMissing},
		{"bad-iri", with("g", sparqlq.IRIParam("http://ex/g> } ; DROP ALL ; <x")), "g", sparqlq.ErrValue},
		{"empty-iri", with("g", sparqlq.IRIParam("")), "g", sparqlq.ErrValue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := tpl.Bind(tt.params)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Bind = %q, %v; want %v", q, err, tt.want)
			}
			var te *sparqlq.TemplateError
			if !errors.As(err, &te) || te.Param != tt.param || !strings.Contains(err.Error(), "parameter "+tt.param) {
				t.Errorf("error %q does not name parameter %s", err, tt.param)
			}
		})
	}
	nan := mustParse(t, "# param d decimal\nASK { FILTER({{d}} > 0) }")
	for _, f := range []float64{zero / zero, 1 / zero, -1 / zero} {
		if q, err := nan.Bind(sparqlq.Params{"d": sparqlq.DecimalParam(f)}); !errors.Is(err, sparqlq.ErrValue) {
			t.Errorf("Bind(decimal %v) = %q, %v; want ErrValue", f, q, err)
		}
	}
}

var zero = 0.0

// goldenParams binds every embedded template for the golden files: all
// parameters, then only the required ones.
var goldenIDs = append([]string{"a02f511b-716c-4ca1-b1e9-f36aaea71659", "8a97f84b"}, injections[:8]...)

func goldenCases() []struct {
	file, tpl string
	params    sparqlq.Params
} {
	graph := sparqlq.IRIParam("http://kgrag.test/tpl")
	ids := sparqlq.StringsParam(goldenIDs)
	return []struct {
		file, tpl string
		params    sparqlq.Params
	}{
		{"entities", "entities", sparqlq.Params{"graph": graph, "ids": ids}},
		{"entities-default-graph", "entities", sparqlq.Params{"ids": ids}},
		{"relationships", "relationships", sparqlq.Params{"graph": graph, "ids": ids}},
		{"text_units", "text_units", sparqlq.Params{"graph": graph, "ids": ids, "limit": sparqlq.IntParam(3)}},
		{"text_units-no-limit", "text_units", sparqlq.Params{"graph": graph, "ids": ids}},
		{"communities", "communities", sparqlq.Params{"graph": graph, "ids": ids, "level": sparqlq.IntParam(1), "limit": sparqlq.IntParam(3)}},
		{"communities-all-levels", "communities", sparqlq.Params{"graph": graph, "ids": ids}},
		{"community_reports", "community_reports", sparqlq.Params{"graph": graph, "level": sparqlq.IntParam(0)}},
		{"community_reports-all", "community_reports", sparqlq.Params{}},
	}
}

func TestGolden(t *testing.T) {
	for _, tc := range goldenCases() {
		t.Run(tc.file, func(t *testing.T) {
			tpl, err := sparqlq.LoadTemplate(tc.tpl)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tpl.Bind(tc.params)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "templates", tc.file+".rq")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGolden -update)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
			}
		})
	}
}

// TestBindInjection checks, for every injection string, that the bound
// query is the harmless one with only the literal changed: the text
// outside the literal is identical, and the literal reads back as the
// value.
func TestBindInjection(t *testing.T) {
	tpl := mustParse(t, "# param ids strings values\n# param s string\n"+
		"SELECT * WHERE { VALUES ?id { {{ids}} } ?e ?p {{s}} }\n")
	harmless, err := tpl.Bind(sparqlq.Params{"ids": sparqlq.StringsParam([]string{"X"}), "s": sparqlq.StringParam("X")})
	if err != nil {
		t.Fatal(err)
	}
	for _, inj := range injections {
		got, err := tpl.Bind(sparqlq.Params{"ids": sparqlq.StringsParam([]string{inj}), "s": sparqlq.StringParam(inj)})
		if err != nil {
			t.Fatalf("Bind(%q): %v", inj, err)
		}
		lit := sparqlq.Literal(inj)
		if strings.Count(got, lit) != 2 {
			t.Fatalf("Bind(%q) = %q; want the literal %s twice", inj, got, lit)
		}
		if back := strings.ReplaceAll(got, lit, `"X"`); back != harmless {
			t.Errorf("Bind(%q) changes the query outside its literals:\n%s", inj, got)
		}
		if v, rest, err := readLiteral(lit); err != nil || rest != "" || v != strings.ToValidUTF8(inj, "\uFFFD") {
			t.Errorf("Literal(%q) = %s reads back as %q, rest %q, %v", inj, lit, v, rest, err)
		}
	}
}
