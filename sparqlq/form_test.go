package sparqlq

import "testing"

func TestQueryForm(t *testing.T) {
	tests := []struct {
		q, want string
		fails   bool
	}{
		{q: "SELECT * WHERE { ?s ?p ?o }", want: FormSelect},
		{q: "  select ?s { ?s ?p ?o }", want: FormSelect},
		{q: "ASK { ?s ?p ?o }", want: FormAsk},
		{q: "PREFIX gr: <http://ormynet.com/ns/msft-graphrag#>\nSELECT ?e { ?e a gr:Entity }", want: FormSelect},
		{q: "# SELECT in a comment\nINSERT DATA { <a> <b> <c> }", want: "INSERT"},
		{q: "PREFIX x: <http://e.org/#SELECT>\n# ASK\nDELETE WHERE { ?s ?p ?o }", want: "DELETE"},
		{q: "BASE <http://e.org/> PREFIX : <#> WITH <g> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }", want: "WITH"},
		{q: "prefix:<http://e.org/>drop graph :g", want: "DROP"},
		{q: "LOAD <http://e.org/data.ttl>", want: "LOAD"},
		{q: "CLEAR ALL", want: "CLEAR"},
		{q: "CONSTRUCT WHERE { ?s ?p ?o }", want: FormConstruct},
		{q: "DESCRIBE <x>", want: FormDescribe},
		{q: "", fails: true},
		{q: "# only a comment", fails: true},
		{q: "{ ?s ?p ?o }", fails: true},
		{q: "PREFIX gr: <http://unclosed SELECT * {}", fails: true},
	}
	for _, tt := range tests {
		got, err := QueryForm(tt.q)
		if (err != nil) != tt.fails || got != tt.want {
			t.Errorf("QueryForm(%q) = %q, %v; want %q (error %v)", tt.q, got, err, tt.want, tt.fails)
		}
	}
}
